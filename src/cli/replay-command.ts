import {
  ConflictError,
  cachedDiceSimilarity,
  errorOf,
  LoopguardError,
  type Policy,
  type RecordedEvent,
} from '../domain/index.js';
import { table } from '../eval/table.js';
import type { RunSummary } from '../projections/index.js';
import { nodeHashing } from '../runtime/node-hashing.js';
import { replayRun } from '../trace/replay.js';
import type { Io } from './io.js';
import { readPolicyFile } from './policy-file.js';
import { progressBar } from './progress-bar.js';
import { readTraceFiles, type TraceFile } from './trace-files.js';

interface ReplaySink {
  /** Run ids already in the log: a second recording of one run would corrupt its history. */
  readonly knownRunIds: ReadonlySet<string>;
  /** Where the log is, for the rejection message. */
  readonly where?: string;
  /** The key of the keyed hash of secret values recorded in this log. */
  readonly secretKey: string;
  /**
   * Records a new run: rejects with `conflict` when the run id is already in the log, also when
   * another process recorded it after knownRunIds was read.
   */
  append(runId: string, records: readonly RecordedEvent[]): Promise<unknown>;
}

/** Opens the log only for work that writes: input with no run to record leaves no data dir behind. */
export type WithSink = <T>(work: (sink: ReplaySink) => Promise<T>) => Promise<T>;

const APPENDS_IN_FLIGHT = 64;

export function formatSummaries(summaries: readonly RunSummary[]): string {
  const rows = summaries.map((s) => [
    s.run_id,
    s.terminal_state ?? '-',
    s.rule ?? '-',
    s.stop_step === null ? '-' : String(s.stop_step),
    `${s.calls_executed}/${s.calls_total}`,
    String(s.calls_cached),
  ]);
  const stopped = summaries.filter((s) => s.rule !== null).length;
  const executed = summaries.reduce((n, s) => n + s.calls_executed, 0);
  const total = summaries.reduce((n, s) => n + s.calls_total, 0);
  const byState = new Map<string, number>();
  for (const s of summaries)
    byState.set(s.terminal_state ?? '-', (byState.get(s.terminal_state ?? '-') ?? 0) + 1);
  const states = [...byState].sort(([a], [b]) => (a < b ? -1 : 1)).map(([k, v]) => `${k}=${v}`);
  return `${table(['run_id', 'terminal_state', 'rule', 'stop_step', 'executed/total', 'cached'], rows)}\n\nruns ${summaries.length}; stopped by the guard ${stopped}; calls executed ${executed} of ${total}; ${states.join(' ')}\n`;
}

/** `loopguard replay FILE.jsonl... [--policy P.json] [--data-dir D] [--json]`. */
export async function replayCommand(
  paths: readonly string[],
  opts: { policy?: string; json?: boolean },
  withSink: WithSink,
  io: Io,
): Promise<number> {
  const policy = readPolicyFile(opts.policy).policy;
  const errors: LoopguardError[] = [];
  // One file at a time: memory holds one file's runs, never the corpus's (sixteen files of
  // 100 MiB, each within the limits, ran out of heap at 4.3 GB when all were read first).
  let next = 0;
  const nextFile = (): TraceFile | undefined => {
    while (next < paths.length) {
      const read = readTraceFiles([paths[next++] as string]);
      errors.push(...read.errors);
      const file = read.files[0];
      if (file !== undefined && file.runs.length > 0) return file;
    }
    return undefined;
  };
  const summaries: RunSummary[] = [];
  const first = nextFile();
  if (first !== undefined)
    await withSink((sink) =>
      replayInto(
        first,
        nextFile,
        paths.length === 1 ? first.runs.length : null,
        policy,
        sink,
        { summaries, errors },
        opts,
        io,
      ),
    );
  if (!opts.json) io.out(formatSummaries(summaries));
  for (const e of errors) io.err(`rejected: ${e.message}`);
  return errors.length > 0 ? 1 : 0;
}

async function replayInto(
  first: TraceFile,
  nextFile: () => TraceFile | undefined,
  /** The runs to replay, when known (one file); the files after the first are read as it goes. */
  total: number | null,
  policy: Policy,
  sink: ReplaySink,
  out: { readonly summaries: RunSummary[]; readonly errors: LoopguardError[] },
  opts: { json?: boolean },
  io: Io,
): Promise<void> {
  const { summaries, errors } = out;
  const deps = { hashing: nodeHashing(sink.secretKey), similarity: cachedDiceSimilarity() };
  const seen = new Set(sink.knownRunIds);
  const bar = progressBar(io, 'replaying', 'runs', total);
  // Runs are independent, so their appends may overlap and share the log's group commit (one
  // produce request on Kafka instead of one round trip per run); a run is printed only once its
  // events are durable, in input order.
  const inFlight: { done: Promise<boolean>; summary: RunSummary }[] = [];
  const settleOldest = async (): Promise<void> => {
    const oldest = inFlight.shift();
    if (oldest === undefined) return;
    if (!(await oldest.done)) return;
    summaries.push(oldest.summary);
    bar.update(summaries.length);
    if (opts.json) io.out(`${JSON.stringify(oldest.summary)}\n`);
  };
  const duplicate = (path: string, runId: string): LoopguardError =>
    new ConflictError(
      'duplicate_run',
      `${path}: run_id ${runId}: already recorded in ${sink.where ?? 'this log'}; use another ${sink.where?.startsWith('kafka') ? '--topic-prefix' : '--data-dir'}`,
    );
  for (let file: TraceFile | undefined = first; file !== undefined; file = nextFile()) {
    for (const run of file.runs) {
      if (seen.has(run.run_id)) {
        errors.push(duplicate(file.path, run.run_id));
        continue;
      }
      let replayed: ReturnType<typeof replayRun>;
      try {
        replayed = replayRun(run, policy, deps, { trace_file: file.name });
      } catch (e) {
        if (!(e instanceof LoopguardError)) throw e;
        // Nothing of this run was appended: its events go to the log only once all are decided.
        errors.push(
          errorOf(e.code, `${file.path}:${run.line ?? '?'}: ${e.message}`, {
            retriable: e.retriable,
            details: { ...e.details, file: file.path, line: run.line },
          }),
        );
        continue;
      }
      seen.add(run.run_id);
      const { summary, events } = replayed;
      const done = sink.append(run.run_id, events).then(
        () => true,
        (e: unknown) => {
          if (!(e instanceof LoopguardError && e.code === 'conflict')) throw e;
          errors.push(duplicate(file.path, run.run_id));
          return false;
        },
      );
      // Awaited in settleOldest; this only keeps a failure that comes before then from being unhandled.
      done.catch(() => undefined);
      inFlight.push({ done, summary });
      if (inFlight.length >= APPENDS_IN_FLIGHT) await settleOldest();
    }
  }
  while (inFlight.length > 0) await settleOldest();
  bar.end();
}
