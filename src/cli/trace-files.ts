import { readFileSync } from 'node:fs';
import { basename } from 'node:path';
import type { LoopguardError } from '../domain/index.js';
import { parseTraceText } from '../trace/parse-trace.js';
import type { TraceRun } from '../trace/trace-run.js';

export interface TraceFile {
  readonly path: string;
  readonly name: string;
  readonly runs: TraceRun[];
}

/** Reads JSONL trace files; bad lines come back as errors naming file, line and field. */
export function readTraceFiles(paths: readonly string[]): { files: TraceFile[]; errors: LoopguardError[] } {
  const files: TraceFile[] = [];
  const errors: LoopguardError[] = [];
  for (const path of paths) {
    const { runs, errors: bad } = parseTraceText(readFileSync(path, 'utf8'), path);
    files.push({ path, name: basename(path).replace(/\.jsonl$/, ''), runs });
    errors.push(...bad);
  }
  return { files, errors };
}
