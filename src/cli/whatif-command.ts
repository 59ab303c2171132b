import { cachedDiceSimilarity, type RecordedEvent } from '../domain/index.js';
import { table } from '../eval/table.js';
import { nodeHashing } from '../runtime/node-hashing.js';
import { RecordedRunFold, type WhatIfRow, whatIf, whatIfTotals } from '../whatif/index.js';
import type { Io } from './io.js';
import { readPolicyFile } from './policy-file.js';
import { progressBar } from './progress-bar.js';

/**
 * whatif records nothing, and the arguments it reads were redacted when they were recorded: like
 * eval's, its keyed hash only has to keep equal values equal within this process.
 */
const WHATIF_KEY = 'loopguard-whatif-records-nothing';

const at = (stop: number | null, rule: string | null) =>
  stop === null ? '-' : `${stop} ${rule ?? ''}`.trim();

function formatWhatIf(rows: readonly WhatIfRow[]): string {
  const t = whatIfTotals(rows);
  const body = table(
    ['run_id', 'change', 'recorded stop', 'what-if stop', 'saved', 'lost', 'note'],
    rows.map((r) => [
      r.run_id,
      r.change,
      at(r.recorded_stop, r.recorded_rule),
      at(r.whatif_stop, r.whatif_rule),
      String(r.calls_saved),
      String(r.calls_lost),
      r.beyond_recording ? 'runs a call the recording never ran' : '',
    ]),
  );
  return `${body}\n\nruns ${t.runs}: would stop earlier ${t.earlier}, later ${t.later}, not at all ${t.not_at_all}, unchanged ${t.same}; calls saved ${t.calls_saved}, calls lost ${t.calls_lost}\n`;
}

/**
 * `loopguard whatif --policy NEW.json [--json]`: every run in the log re-decided under another
 * policy. It only reads: the log is the same afterwards.
 */
export async function whatifCommand(
  scan: (apply: (rec: RecordedEvent) => void) => Promise<number>,
  opts: { policy: string; json?: boolean; total?: number | null },
  io: Io,
): Promise<number> {
  const policy = readPolicyFile(opts.policy).policy;
  const fold = new RecordedRunFold();
  const reading = progressBar(io, 'reading', 'events', opts.total ?? null);
  let n = 0;
  await scan((rec) => {
    fold.apply(rec);
    reading.update(++n);
  });
  reading.end();
  const deps = { hashing: nodeHashing(WHATIF_KEY), similarity: cachedDiceSimilarity() };
  // By run id: a partitioned runs topic meets its runs in no fixed order, and the table must not vary.
  const ids = fold.runIds().sort();
  const deciding = progressBar(io, 're-deciding', 'runs', ids.length);
  const rows = ids.flatMap((id, i) => {
    const run = fold.run(id);
    deciding.update(i + 1);
    return run === undefined ? [] : [whatIf(run, policy, deps)];
  });
  deciding.end();
  if (opts.json) {
    for (const r of rows) io.out(`${JSON.stringify(r)}\n`);
    io.out(`${JSON.stringify(whatIfTotals(rows))}\n`);
  } else io.out(formatWhatIf(rows));
  return 0;
}
