/**
 * The latest decisions each run gave, by request id, so a request published again (a client that
 * timed out and re-sent it, at least once) gets the decision it already got instead of being
 * decided a second time. The worker that decides a request tags the first record of its events
 * with these headers, so whoever folds the runs partition later (a worker taking it over after a
 * crash) rebuilds the same answers from the log: see PartitionRuns.load and recordedDecision.
 */
import { REQUEST_ID_HEADER, type WireDecision } from './service-topics.js';

export const ANSWER_HEADERS = {
  requestId: REQUEST_ID_HEADER,
  requestType: 'loopguard.request_type',
  worker: 'loopguard.worker',
  /** requestBodyHash of the request (request-body.ts): a later request under its id must match it. */
  body: 'loopguard.request_body',
} as const;

/** A decision given, with the hash of the request it answered (null when the log did not say). */
export interface Answer {
  readonly decision: WireDecision;
  readonly body: string | null;
}

/**
 * Per run. A client re-sends a request it has no decision for, and the client sends a run's
 * requests one at a time, so a repeat follows its original closely; a few more cover clients
 * that pipeline, while a run's memory stays bounded however long it runs.
 */
export const ANSWERS_KEPT = 16;

export class RecentAnswers {
  private readonly byRun = new Map<string, Map<string, Answer>>();

  get(runId: string, requestId: string): Answer | undefined {
    return this.byRun.get(runId)?.get(requestId);
  }

  /** The run's kept decisions, oldest first (adding them in this order rebuilds the same). */
  of(runId: string): WireDecision[] {
    return [...(this.byRun.get(runId)?.values() ?? [])].map((a) => a.decision);
  }

  /** The request hashes of the run's kept decisions, by request id (what a snapshot keeps beside them). */
  bodiesOf(runId: string): Record<string, string> {
    const out: Record<string, string> = {};
    for (const [id, a] of this.byRun.get(runId) ?? []) if (a.body !== null) out[id] = a.body;
    return out;
  }

  drop(runId: string): void {
    this.byRun.delete(runId);
  }

  add(d: WireDecision, body: string | null = null): void {
    const run = this.byRun.get(d.run_id) ?? new Map<string, Answer>();
    this.byRun.set(d.run_id, run);
    run.set(d.request_id, { decision: d, body });
    // Maps iterate in insertion order: the first key is the oldest answer.
    if (run.size > ANSWERS_KEPT) run.delete(run.keys().next().value as string);
  }
}
