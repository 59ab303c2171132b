import type { EventOf, RecordedEvent, TerminalState } from '../domain/index.js';
import { RunSummaryFold } from '../projections/run-summary.js';
import type { TraceCall, TraceRun } from '../trace/trace-run.js';

/** A run as the log recorded it: the calls offered to the guard, and what the guard did with them. */
export interface RecordedRun {
  /** The recorded calls in order, as a trace the replay can re-decide. */
  readonly trace: TraceRun;
  /** Index of the first call the recorded guard did not let run (refused, stopped, waited), or null. */
  readonly stopIndex: number | null;
  /** The run summary's rule: the first decision that ended or refused something. */
  readonly rule: string | null;
  /** Indices of the calls the recorded guard let run. */
  readonly ran: readonly number[];
  /** Indices of the calls whose tool never ran in the recording: their results are unknown. */
  readonly unrun: readonly number[];
  /** The call count the agent's own record had (a replayed trace's `calls_total`), when known. */
  readonly callsTotal: number | null;
  readonly terminalState: TerminalState | null;
}

interface Acc {
  started: EventOf<'RunStarted'> | null;
  requests: { atMs: number; e: EventOf<'ToolCallRequested'> }[];
  completions: Map<string, EventOf<'ToolCallCompleted'>>;
  before: Map<string, EventOf<'GuardDecided'>>;
}

const RAN = new Set(['execute', 'return_cached_success']);

/** What a call's recorded completion gives its trace call: how it ended, its spend, how it was judged. */
function completion(done: EventOf<'ToolCallCompleted'>): Partial<TraceCall> {
  const { informative, answersAsk, resultClass, failed } = done;
  return {
    kind: done.kind,
    ...(done.code != null ? { code: done.code } : {}),
    ...(done.retryAfterMs != null ? { retry_after_ms: done.retryAfterMs } : {}),
    ...(done.costUsd > 0 ? { cost_usd: done.costUsd } : {}),
    ...(done.tokens > 0 ? { tokens: done.tokens } : {}),
    judgement: { informative, answersAsk, resultClass, failed },
  };
}

/**
 * Collects each run's requests, recorded decisions and results from the runs topic, so a what-if
 * can offer the same calls to another policy. A pure fold: nothing is written anywhere.
 */
export class RecordedRunFold {
  private readonly runs = new Map<string, Acc>();
  // The rule and the terminal state mean what replay and rebuild print (the rule: the first
  // decision that ended or refused something).
  private readonly summaries = new RunSummaryFold();

  apply(rec: RecordedEvent): void {
    this.summaries.apply(rec);
    let a = this.runs.get(rec.runId);
    if (a === undefined) {
      a = { started: null, requests: [], completions: new Map(), before: new Map() };
      this.runs.set(rec.runId, a);
    }
    const e = rec.event;
    switch (e.type) {
      case 'RunStarted':
        a.started = e;
        break;
      case 'ToolCallRequested':
        a.requests.push({ atMs: rec.atMs, e });
        break;
      case 'ToolCallCompleted':
        a.completions.set(e.callId, e);
        break;
      case 'GuardDecided':
        if (e.phase === 'before' && e.callId !== null && !a.before.has(e.callId)) a.before.set(e.callId, e);
        break;
    }
  }

  runIds(): string[] {
    return [...this.runs.keys()];
  }

  run(runId: string): RecordedRun | undefined {
    const a = this.runs.get(runId);
    if (a === undefined) return undefined;
    let stopIndex: number | null = null;
    const ran: number[] = [];
    const unrun: number[] = [];
    const calls = a.requests.map(({ atMs, e }, i): TraceCall => {
      const decision = a.before.get(e.callId);
      const done = a.completions.get(e.callId);
      if (decision?.decision === 'execute') ran.push(i);
      if (stopIndex === null && decision !== undefined && !RAN.has(decision.decision)) stopIndex = i;
      if (done === undefined) unrun.push(i);
      const progress = done?.progressVersion ?? e.progressVersion;
      return {
        step: i,
        tool: e.tool,
        args: JSON.parse(e.argsJson) as Record<string, unknown>,
        // The log keeps the result's hash, not its text; how it was judged comes along as `judgement`.
        result: '',
        // A call that never ran gets a result no other call has: it can neither fake a repeat nor
        // count as one. Decisions after the what-if runs such a call are flagged as guesses.
        result_sha256: done?.resultHash ?? `unrun:${e.callId}`,
        after_user_turn: e.afterUserTurn,
        at_ms: atMs,
        ...(progress !== null ? { progress_version: progress } : {}),
        ...(e.operationKey !== null ? { operation_key: e.operationKey } : {}),
        ...(e.sideEffect ? { side_effect: true } : {}),
        ...(done === undefined ? {} : completion(done)),
      };
    });
    const total = Number(a.started?.meta.calls_total);
    const summary = this.summaries.summary(runId);
    const terminal = summary?.terminal_state ?? null;
    const success = terminal === 'COMPLETED' ? true : terminal === 'FAILED' ? false : null;
    return {
      trace: {
        run_id: runId,
        ...(a.started?.tenant ? { source: a.started.tenant } : {}),
        ...(a.started?.taskType ? { task_type: a.started.taskType } : {}),
        outcome: { success },
        calls,
      },
      stopIndex,
      rule: summary?.rule ?? null,
      ran,
      unrun,
      callsTotal: Number.isInteger(total) ? total : null,
      terminalState: terminal,
    };
  }
}
