import { readFileSync } from 'node:fs';
import { basename } from 'node:path';
import { LoopguardError } from '../domain/index.js';
import { parseTraceText } from '../trace/parse-trace.js';
import type { TraceRun } from '../trace/trace-run.js';

export interface TraceFile {
  readonly path: string;
  readonly name: string;
  readonly runs: TraceRun[];
}

const UTF8 = new TextDecoder('utf-8', { fatal: true });
const NEWLINE = 0x0a;

/**
 * The file's text, line by line. Bytes that are not UTF-8 are an error for their line, never
 * replaced by U+FFFD (two different run ids would become one); the other lines go on.
 */
function decodeLines(
  path: string,
  bytes: Uint8Array,
): { lines: (string | null)[]; errors: LoopguardError[] } {
  const lines: (string | null)[] = [];
  const errors: LoopguardError[] = [];
  let start = 0;
  while (start <= bytes.length) {
    let end = bytes.indexOf(NEWLINE, start);
    if (end === -1) end = bytes.length;
    try {
      lines.push(UTF8.decode(bytes.subarray(start, end)));
    } catch {
      lines.push(null);
      errors.push(
        new LoopguardError('invalid_trace', `${path}:${lines.length}: (line): not valid UTF-8`, {
          details: { file: path, line: lines.length, field: '(line)' },
        }),
      );
    }
    start = end + 1;
  }
  return { lines, errors };
}

/** Reads JSONL trace files; a file that cannot be read and each bad line come back as errors naming file, line and field. */
export function readTraceFiles(paths: readonly string[]): { files: TraceFile[]; errors: LoopguardError[] } {
  const files: TraceFile[] = [];
  const errors: LoopguardError[] = [];
  for (const path of paths) {
    let bytes: Uint8Array;
    try {
      bytes = readFileSync(path);
    } catch (e) {
      const why = (e as NodeJS.ErrnoException).code === 'EISDIR' ? 'is a directory' : (e as Error).message;
      errors.push(new LoopguardError('input_unreadable', `${path}: ${why}`, { details: { file: path } }));
      continue;
    }
    const decoded = decodeLines(path, bytes);
    const { runs, errors: bad } = parseTraceText(decoded.lines, path);
    files.push({ path, name: basename(path).replace(/\.jsonl$/, ''), runs });
    errors.push(...decoded.errors, ...bad);
  }
  return { files, errors };
}
