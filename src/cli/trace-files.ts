import { closeSync, openSync, readSync } from 'node:fs';
import { basename } from 'node:path';
import { LoopguardError } from '../domain/index.js';
import { parseTraceLine } from '../trace/parse-trace.js';
import type { TraceRun } from '../trace/trace-run.js';

export interface TraceFile {
  readonly path: string;
  readonly name: string;
  readonly runs: TraceRun[];
}

/** How much one input may hold: a line (one run) and a whole file. */
export interface InputLimits {
  readonly lineBytes: number;
  readonly fileBytes: number;
}

/**
 * Far past any real run or trace file: more is not a trace (`/dev/zero`, a log piped in by
 * mistake) and would cost many times its size in memory, so it is refused where it goes past.
 */
const TRACE_LIMITS: InputLimits = { lineBytes: 16 * 1024 * 1024, fileBytes: 256 * 1024 * 1024 };

const UTF8 = new TextDecoder('utf-8', { fatal: true });
const NEWLINE = 0x0a;
const CHUNK = 1024 * 1024;

const tooLarge = (path: string, line: number | null, what: string) =>
  new LoopguardError('too_large', `${path}${line === null ? '' : `:${line}`}: ${what} (too_large)`, {
    details: { file: path, ...(line === null ? {} : { line }) },
  });

const unreadable = (path: string, why: string) =>
  new LoopguardError('input_unreadable', `${path}: ${why}`, { details: { file: path } });

const mib = (n: number) => `${n / (1024 * 1024)} MiB`;

/**
 * The file's lines, read as a stream in chunks, each given to `onLine` as soon as it is whole:
 * memory holds one line, never the file. Bytes that are not UTF-8 are an error for their line,
 * never replaced by U+FFFD (two different run ids would become one); the other lines go on. A
 * line or a file over its limit ends the reading of that file with a `too_large` error.
 */
function readLines(
  path: string,
  fd: number,
  limits: InputLimits,
  onLine: (line: string | null, lineNo: number) => void,
): LoopguardError | null {
  const buf = Buffer.allocUnsafe(CHUNK);
  let parts: Buffer[] = [];
  let partBytes = 0;
  let lineNo = 1;
  let total = 0;
  const emit = (last: Buffer) => {
    const bytes = parts.length === 0 ? last : Buffer.concat([...parts, last]);
    parts = [];
    partBytes = 0;
    let text: string | null;
    try {
      text = UTF8.decode(bytes);
    } catch {
      text = null;
    }
    onLine(text, lineNo++);
  };
  for (;;) {
    const n = readSync(fd, buf, 0, CHUNK, null);
    if (n === 0) break;
    total += n;
    if (total > limits.fileBytes)
      return tooLarge(path, null, `over ${mib(limits.fileBytes)}: not a trace file`);
    let start = 0;
    while (start < n) {
      const end = buf.indexOf(NEWLINE, start);
      const stop = end === -1 || end >= n ? n : end;
      if (partBytes + (stop - start) > limits.lineBytes)
        return tooLarge(path, lineNo, `the line is over ${mib(limits.lineBytes)}`);
      if (stop === n) {
        parts.push(Buffer.from(buf.subarray(start, n)));
        partBytes += n - start;
        break;
      }
      emit(buf.subarray(start, stop));
      start = stop + 1;
    }
  }
  emit(Buffer.alloc(0));
  return null;
}

/**
 * Reads JSONL trace files as streams; a file that cannot be read, one too large, and each bad
 * line come back as errors naming file, line and field. A byte order mark before the first line
 * is not part of it.
 */
export function readTraceFiles(
  paths: readonly string[],
  limits: InputLimits = TRACE_LIMITS,
): { files: TraceFile[]; errors: LoopguardError[] } {
  const files: TraceFile[] = [];
  const errors: LoopguardError[] = [];
  for (const path of paths) {
    let fd: number;
    try {
      fd = openSync(path, 'r');
    } catch (e) {
      errors.push(unreadable(path, (e as Error).message));
      continue;
    }
    const runs: TraceRun[] = [];
    try {
      const stopped = readLines(path, fd, limits, (raw, lineNo) => {
        if (raw === null) {
          errors.push(
            new LoopguardError('invalid_trace', `${path}:${lineNo}: (line): not valid UTF-8`, {
              details: { file: path, line: lineNo, field: '(line)' },
            }),
          );
          return;
        }
        const line = lineNo === 1 && raw.startsWith('\uFEFF') ? raw.slice(1) : raw;
        if (line.trim() === '') return;
        const r = parseTraceLine(line, lineNo, path);
        if (r.ok) runs.push(r.value);
        else errors.push(r.error);
      });
      if (stopped !== null) errors.push(stopped);
    } catch (e) {
      const why = (e as NodeJS.ErrnoException).code === 'EISDIR' ? 'is a directory' : (e as Error).message;
      errors.push(unreadable(path, why));
      continue;
    } finally {
      closeSync(fd);
    }
    files.push({ path, name: basename(path).replace(/\.jsonl$/, ''), runs });
  }
  return { files, errors };
}
