/**
 * Decides one batch of requests of one partition, in offset order, and returns the records the
 * worker's transaction must write: each run's new events (on the runs topic, tagged as a
 * run-stream append so every stream reader counts them), one decision per request, and the
 * undecodable requests on the dead-letter topic with the reason. Nothing is written here.
 */
import { randomUUID } from 'node:crypto';
import type { KafkaMessage } from 'kafkajs';
import {
  ConflictError,
  InvalidInputError,
  type LoopguardError,
  type RecordedEvent,
} from '../domain/index.js';
import { TOPICS } from '../log/event-log.js';
import type { OutMessage } from '../log/kafka/copies-of-batch.js';
import { deadLetterCause, deadLetterHeaders } from '../log/kafka/decoding-consumer.js';
import { headersToStrings } from '../log/kafka/kafka-error.js';
import { AFTER_HEADER, BATCH_HEADER } from '../log/kafka/run-batch-fold.js';
import type { Clock } from '../machines/index.js';
import { BatchRuns } from './batch-runs.js';
import { answerTo, type DecideContext, decideRequest, refusal } from './decide-request.js';
import type { ServiceConnection } from './open-service.js';
import type { PartitionRuns } from './partition-runs.js';
import { ANSWER_HEADERS } from './recent-answers.js';
import { requestBodyHash } from './request-body.js';
import { REQUEST_ID_HEADER, SERVICE_TOPICS, type WireDecision, type WireRequest } from './service-topics.js';
import { authenticate, authorize, type Checked, type RefusedFor } from './tenant-guard.js';
import { type TenantKey, tenantsOf } from './tenant-keys.js';
import type { Seen, SeenSignatures, Signed } from './tenant-replays.js';

export interface BatchContext
  extends DecideContext,
    Pick<ServiceConnection, 'requests' | 'decisions' | 'events' | 'log'> {
  readonly clock: Clock;
  readonly topic: string;
  readonly partition: number;
  /** Per-tenant credentials: every request must be signed with one (tenant-guard.ts). */
  readonly tenantKeys?: ReadonlyMap<string, TenantKey>;
  /** The signatures the worker decided within the signature window (with tenantKeys). */
  readonly replays?: SeenSignatures;
}

export interface BatchOutput {
  readonly topicMessages: { topic: string; messages: OutMessage[] }[];
  /** Every event recorded, for the worker's metrics (decisions and stops) after the commit. */
  readonly recorded: RecordedEvent[];
  readonly decided: number;
  readonly deadLettered: number;
  /** Why each request refused before it was decided was refused (tenant-guard.ts). */
  readonly refused: readonly RefusedFor[];
  /** The signed requests decided: the worker's replay memory takes them once the batch committed. */
  readonly signed: readonly Signed[];
  /** Makes the batch's actors and answers the partition's: only with its transaction. */
  readonly apply: () => void;
  /** Ledger work that must wait for the transaction (claims given back): run after its commit. */
  readonly afterCommit: readonly (() => Promise<unknown>)[];
}

/**
 * Run-stream batch ids must never repeat: a container restarts with the same host name and pid,
 * so a per-process random token is part of each id (randomness for identity, never for a decision).
 */
const INCARNATION = randomUUID().slice(0, 8);
let appends = 0;

export async function processBatch(
  messages: readonly KafkaMessage[],
  partitionRuns: PartitionRuns,
  ctx: BatchContext,
): Promise<BatchOutput> {
  // Decided on copies: nothing of this batch is the partition's until `runs.apply()`.
  const runs = new BatchRuns(partitionRuns);
  const runsOut: OutMessage[] = [];
  const decisionsOut: OutMessage[] = [];
  const dlqOut: OutMessage[] = [];
  const recorded: RecordedEvent[] = [];
  const refused: RefusedFor[] = [];
  const signed: Signed[] = [];
  const afterCommit: (() => Promise<unknown>)[] = [];
  const signedHere = new Set<string>();
  /** Whether signed bytes were decided before: in this batch, or in the worker's replay memory. */
  const seenBefore = (s: Signed): Seen =>
    signedHere.has(s.signature) ? 'replayed' : (ctx.replays?.check(s) ?? 'fresh');
  const remember = (s: Signed): void => {
    signedHere.add(s.signature);
    signed.push(s);
  };
  const refuse = (req: WireRequest, reason: RefusedFor, error: LoopguardError) => {
    // Nothing of the run is told (no status, no seq): it may be another tenant's.
    refused.push(reason);
    const field = (error.details.field as string | undefined) ?? null;
    decisionsOut.push(
      unanswered(ctx, req.run_id, req.request_id, { code: error.code, field, message: error.message }),
    );
  };
  for (const m of messages) {
    const key = m.key?.toString() ?? '';
    const headers = headersToStrings(m.headers) ?? {};
    const value = m.value ?? Buffer.alloc(0);
    let decoded: WireRequest;
    try {
      decoded = await ctx.requests.decode(value);
    } catch (e) {
      // A registry that is down is a reason to retry the batch, not to dead-letter the request.
      const cause = deadLetterCause(e);
      if (cause === undefined) throw e;
      const { code, reason } = cause;
      dlqOut.push({ key, value, headers: deadLetterHeaders(cause, ctx.topic, ctx.partition, m.offset) });
      const message = `the request could not be decoded (${reason}); it is on the dead-letter topic`;
      decisionsOut.push(
        unanswered(ctx, key, headers[REQUEST_ID_HEADER] ?? '', { code, field: 'value', message }),
      );
      continue;
    }
    // What the client asked: a repeat must match it, whatever the credential adds below.
    const body = requestBodyHash(decoded);
    let req = decoded;
    if (ctx.tenantKeys !== undefined) {
      const checked = await admitted(ctx.tenantKeys, decoded, runs, ctx.clock.now());
      if (!checked.ok) {
        refuse(decoded, checked.reason, checked.error);
        continue;
      }
      req = checked.req;
      if ((await ctx.log.partitionOfKey(SERVICE_TOPICS.requests, req.run_id)) !== ctx.partition) {
        refuse(req, 'misrouted', misrouted(req.run_id, ctx.partition));
        continue;
      }
    }
    const prior = await runs.answered(req.run_id, req.request_id);
    const signature =
      ctx.replays !== undefined && req.signature !== null
        ? { signature: req.signature, sentAtMs: req.sent_at_ms }
        : undefined;
    const seen = signature === undefined ? undefined : seenBefore(signature);
    if (prior !== undefined && (prior.body === null || prior.body === body)) {
      // Published again (a client that timed out re-sends): the decision it got, nothing recorded.
      decisionsOut.push(decisionMessage(ctx, prior.decision));
      // A re-send is signed anew: its bytes are remembered too, or once the run forgets the
      // answer they would be decided again (a second resume no approver gave).
      if (signature !== undefined && seen === 'fresh') remember(signature);
      continue;
    }
    if (signature !== undefined && seen !== undefined) {
      // Signed bytes decided before, their answer forgotten by the run: a replay, not decided again.
      if (seen !== 'fresh') {
        refuse(req, seen === 'replayed' ? 'replayed' : 'expired', replayError(seen));
        continue;
      }
      remember(signature);
    }
    const actor = await runs.actor(req.run_id);
    if (prior !== undefined) {
      // The same id with another body is a second request, not a repeat: never the first one's answer.
      decisionsOut.push(decisionMessage(ctx, refusal(actor, req, ctx, ctx.clock.now(), duplicateId(req))));
      continue;
    }
    const at = actor.state.seq;
    const { records, decision, afterCommit: later } = await decideRequest(actor, req, ctx, ctx.clock.now());
    afterCommit.push(...(later ?? []));
    // A REISSUE is the ledger's alone, recording no run event: nothing joins the transaction but its answer.
    if (req.type === 'REISSUE' && decision.decision !== 'error') runs.remember(decision, body);
    if (records.length > 0) {
      const batch = `${ctx.workerId}/${INCARNATION}/${++appends}`;
      runs.keep(actor, decision, batch, body);
      const tag = { [AFTER_HEADER]: String(at), [BATCH_HEADER]: batch };
      // The first record names the request it answers, so a later fold knows the decision too.
      const answer = {
        [ANSWER_HEADERS.requestId]: req.request_id,
        [ANSWER_HEADERS.requestType]: req.type,
        [ANSWER_HEADERS.worker]: ctx.workerId,
        [ANSWER_HEADERS.body]: body,
      };
      records.forEach((r, i) => {
        const rec = ctx.events.runRecord(r, i === 0 ? { ...tag, ...answer } : tag);
        runsOut.push({ key: rec.key, value: rec.value, headers: rec.headers ?? {} });
      });
      recorded.push(...records);
    }
    decisionsOut.push(decisionMessage(ctx, decision));
  }
  const topicMessages = [
    { topic: ctx.log.physicalName(TOPICS.runs), messages: runsOut },
    { topic: ctx.log.physicalName(SERVICE_TOPICS.decisions), messages: decisionsOut },
    { topic: ctx.log.physicalName(TOPICS.dlq), messages: dlqOut },
  ].filter((t) => t.messages.length > 0);
  return {
    topicMessages,
    recorded,
    decided: decisionsOut.length,
    deadLettered: dlqOut.length,
    refused,
    signed,
    apply: () => runs.apply(),
    afterCommit,
  };
}

const duplicateId = (req: WireRequest): LoopguardError =>
  new ConflictError(
    'duplicate_request_id',
    `request_id ${req.request_id} of run ${req.run_id} was already used for another request; a repeat must be the same request (a new request needs a new id)`,
    { details: { field: 'request_id' } },
  );

function decisionMessage(ctx: BatchContext, d: WireDecision): OutMessage {
  return { key: d.run_id, value: ctx.decisions.encode(d), headers: { [REQUEST_ID_HEADER]: d.request_id } };
}

/**
 * With tenant keys a run's requests are decided only on the requests partition its id keys them to
 * (murmur2, as the TypeScript client, kafkajs and Kafka's Java client partition): that partition's
 * owner remembers the signatures decided for the run (tenant-replays.ts, recall-signatures.ts), and
 * a replay published under another key would meet a worker that never saw the original.
 */
const misrouted = (runId: string, partition: number): LoopguardError =>
  new InvalidInputError(
    'forbidden',
    'run_id',
    `run ${runId}'s requests belong to another requests partition than ${partition}: with tenant keys a worker decides a run's requests only on the partition the run id keys them to; publish them keyed by the run id with the murmur2 partitioner (the TypeScript client and kafkajs do; librdkafka: partitioner=murmur2_random)`,
  );

const replayError = (seen: 'replayed' | 'too_old'): LoopguardError =>
  seen === 'replayed'
    ? new InvalidInputError(
        'unauthenticated',
        'signature',
        'this signed request was decided before: a signature is good for one request (a re-send is signed anew)',
      )
    : new InvalidInputError(
        'unauthenticated',
        'sent_at_ms',
        'this signed request is older than what the worker remembers of the signature window: sign it anew',
      );

/** Who signed `req` and what it may do on its run, as the request the worker decides. */
async function admitted(
  keys: ReadonlyMap<string, TenantKey>,
  req: WireRequest,
  runs: BatchRuns,
  nowMs: number,
): Promise<Checked> {
  const auth = authenticate(keys, req, nowMs);
  if (!auth.ok) return auth;
  const { state } = await runs.actor(req.run_id);
  return authorize(auth.key, req, { started: state.seq > 0, tenant: state.tenant }, tenantsOf(keys));
}

/** An error decision that says nothing of the run (the request was not decided at all), to send. */
function unanswered(
  ctx: BatchContext,
  runId: string,
  requestId: string,
  e: { readonly code: string; readonly field: string | null; readonly message: string },
): OutMessage {
  const run = { status: 'UNKNOWN', seq: 0 };
  return decisionMessage(ctx, {
    ...answerTo({ request_id: requestId, run_id: runId }, ctx.workerId, ctx.clock.now(), run),
    decision: 'error',
    message: e.message,
    error_code: e.code,
    error_field: e.field,
  });
}
