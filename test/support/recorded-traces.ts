/**
 * The recorded agent runs of the shared traces directory, read in place (never copied into the
 * repo), and a digest of what the guard decides on each: used by the replay-determinism tests in
 * this process and in a child process with cold caches.
 */
import { createHash } from 'node:crypto';
import { existsSync, readdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { readTraceFiles } from '../../src/cli/trace-files.js';
import { DEFAULT_POLICY, type DeciderDeps, type Policy, type RecordedEvent } from '../../src/domain/index.js';
import { replayRun } from '../../src/trace/replay.js';
import type { TraceRun } from '../../src/trace/trace-run.js';

/** Where the traces are: $LOOPGUARD_TRACES, else ../shared/traces beside the checkout, else /work/shared/traces. */
export function tracesDir(): string {
  const candidates = [
    process.env.LOOPGUARD_TRACES,
    resolve('..', 'shared', 'traces'),
    resolve('..', '..', 'shared', 'traces'),
    '/work/shared/traces',
  ].filter((d): d is string => d !== undefined && d !== '');
  const found = candidates.find((d) => existsSync(d));
  if (found === undefined)
    throw new Error(
      `the recorded traces are missing: none of ${candidates.join(', ')} exists (set LOOPGUARD_TRACES)`,
    );
  return found;
}

/** Every run of every .jsonl file there, in file then line order; a file that does not parse fails. */
export function recordedTraces(): TraceRun[] {
  const dir = tracesDir();
  const files = readdirSync(dir)
    .filter((f) => f.endsWith('.jsonl'))
    .sort();
  if (files.length === 0) throw new Error(`no .jsonl traces in ${dir}`);
  // The CLI's own reader: what `loopguard replay` and `eval` read from these files.
  const read = readTraceFiles(files.map((f) => join(dir, f)));
  if (read.errors.length > 0) throw read.errors[0];
  return read.files.flatMap((f) => f.runs);
}

/** The sha256 of a run's recorded events, every field of every envelope, in order. */
export const eventsDigest = (events: readonly RecordedEvent[]): string =>
  createHash('sha256').update(JSON.stringify(events)).digest('hex');

/** Each run re-decided under `policy`, in the order given: run id -> digest of its events. */
export function redecide(
  runs: readonly TraceRun[],
  deps: DeciderDeps,
  policy: Policy = DEFAULT_POLICY,
): Record<string, string> {
  const out: Record<string, string> = {};
  for (const run of runs) {
    if (Object.hasOwn(out, run.run_id)) throw new Error(`run ${run.run_id} is recorded twice`);
    out[run.run_id] = eventsDigest(replayRun(run, policy, deps).events);
  }
  return out;
}
