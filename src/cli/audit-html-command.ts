import { writeFileSync } from 'node:fs';
import type { RecordedEvent } from '../domain/index.js';
import { RunTimelineFold } from '../projections/index.js';
import { runPage } from '../timeline/run-page.js';
import type { Io } from './io.js';

/** `loopguard audit RUN_ID --html FILE`: the run's timeline as one self-contained HTML file. */
export async function auditHtmlCommand(
  runId: string,
  file: string,
  scan: (apply: (rec: RecordedEvent) => void) => Promise<number>,
  io: Io,
): Promise<number> {
  const fold = new RunTimelineFold(runId);
  await scan((rec) => fold.apply(rec));
  const timeline = fold.timeline();
  if (timeline === undefined) {
    io.err(`audit: no run ${runId} in this log`);
    return 1;
  }
  writeFileSync(file, runPage(timeline));
  io.out(`wrote ${file}\n`);
  return 0;
}
