/**
 * Explicit mapping between domain events and wire records. The domain shape may change without a
 * schema change and vice versa; this file is the one place that knows both. Round trip is exact:
 * fromWire(toWire(x)) deep-equals x, nulls and policy objects included.
 */
import { LoopguardError } from '../domain/errors.js';
import type {
  DomainEvent,
  EventOf,
  EventType,
  Evidence,
  RecordedEvent,
  StopReport,
} from '../domain/events.js';
import { MAX_LONG, MIN_LONG, nameProblem } from '../domain/input-check.js';
import type { RunPolicy } from '../domain/policy.js';
import { NAMESPACE } from './envelope-schema.js';

/** A record as avsc reads and writes it (decoded values are untyped). */
// biome-ignore lint/suspicious/noExplicitAny: avsc decodes to untyped values; they are typed where they become domain events.
export type WireFields = Record<string, any>;

export interface WireEnvelope {
  readonly eventId: string;
  readonly runId: string;
  readonly seq: number;
  readonly atMs: number;
  readonly type: string;
  /** Wrapped union: `{ 'io.loopguard.events.<type>': fields }`. */
  readonly payload: Readonly<Record<string, WireFields>>;
}

/** Fails loudly with the field's name instead of writing a long avsc would misread. */
function long(n: number, field: string): number {
  if (!Number.isInteger(n) || n > MAX_LONG || n < MIN_LONG) {
    throw new LoopguardError('bad_event', `${field} must be an integer in [${MIN_LONG}, ${MAX_LONG}]: ${n}`);
  }
  return n;
}
const nlong = (n: number | null, field: string): number | null => (n === null ? null : long(n, field));

/**
 * For events whose domain shape is already the wire shape: check the longs and hand the event to
 * avsc as it is (its writers read only the schema's fields, so `type` is ignored). No copy: this
 * runs for every event of every guarded call.
 */
const checked =
  <E>(check: (e: E) => unknown) =>
  (e: E): WireFields => {
    check(e);
    return e as WireFields;
  };

const evidenceOut = (e: Evidence): WireFields => ({
  fingerprints: e.fingerprints,
  counts: e.counts,
  thresholds: e.thresholds,
});
const evidenceIn = (w: WireFields): Evidence => ({
  fingerprints: [...w.fingerprints],
  counts: { ...w.counts },
  thresholds: { ...w.thresholds },
});

const reportOut = (r: StopReport): WireFields => ({
  ...r,
  evidence: evidenceOut(r.evidence),
  spend: {
    ...r.spend,
    steps: long(r.spend.steps, 'spend.steps'),
    toolCalls: long(r.spend.toolCalls, 'spend.toolCalls'),
    tokens: long(r.spend.tokens, 'spend.tokens'),
    elapsedMs: long(r.spend.elapsedMs, 'spend.elapsedMs'),
  },
});
const reportIn = (w: WireFields): StopReport => ({
  terminalState: w.terminalState,
  guardReason: w.guardReason,
  message: w.message,
  completed: [...w.completed],
  completedOperations: [...w.completedOperations],
  inDoubtOperations: [...w.inDoubtOperations],
  gaps: [...w.gaps],
  lastSafeCheckpoint: w.lastSafeCheckpoint,
  unmetPrecondition: w.unmetPrecondition,
  resumeCondition: w.resumeCondition,
  nextAllowedAction: w.nextAllowedAction,
  evidence: evidenceIn(w.evidence),
  spend: {
    steps: w.spend.steps,
    toolCalls: w.spend.toolCalls,
    tokens: w.spend.tokens,
    costUsd: w.spend.costUsd,
    elapsedMs: w.spend.elapsedMs,
  },
  children: w.children.map((c: WireFields) => ({ runId: c.runId, state: c.state })),
});

const policyIn = (json: string): RunPolicy => JSON.parse(json) as RunPolicy;

type Mapper<T extends EventType> = {
  readonly out: (e: EventOf<T>) => WireFields;
  readonly in: (w: WireFields) => Omit<EventOf<T>, 'type'>;
};

/** Field lists are spelled out on the way in so nothing the domain does not know leaks into it. */
const MAPPERS: { readonly [T in EventType]: Mapper<T> } = {
  RunStarted: {
    out: ({ policy, ...e }) => ({
      ...e,
      policyJson: JSON.stringify(policy),
      progressVersion: long(e.progressVersion, 'progressVersion'),
    }),
    in: (w) => ({
      runId: w.runId,
      taskType: w.taskType,
      tenant: w.tenant,
      policy: policyIn(w.policyJson),
      progressVersion: w.progressVersion,
      meta: { ...w.meta },
      parentRunId: w.parentRunId,
    }),
  },
  ToolCallRequested: {
    // The decider always sets the intent; an event built without one is written with a null,
    // as records from before it was kept were.
    out: (e) => {
      nlong(e.progressVersion, 'progressVersion');
      return e.intent === undefined ? { ...e, intent: null } : (e as WireFields);
    },
    in: (w) => {
      const e: { -readonly [K in keyof EventOf<'ToolCallRequested'>]?: EventOf<'ToolCallRequested'>[K] } = {
        callId: w.callId,
        tool: w.tool,
        argsJson: w.argsJson,
        fingerprint: w.fingerprint,
        operationKey: w.operationKey,
        sideEffect: w.sideEffect,
        costEstimateUsd: w.costEstimateUsd,
        afterUserTurn: w.afterUserTurn,
        progressVersion: w.progressVersion,
        similarTo: w.similarTo,
        similarity: w.similarity,
      };
      // A null intent (a record from before it was kept) stays absent: the fold derives it.
      if (w.intent !== null) e.intent = w.intent;
      return e as Omit<EventOf<'ToolCallRequested'>, 'type'>;
    },
  },
  GuardDecided: {
    out: checked((e) => nlong(e.waitUntilMs, 'waitUntilMs')),
    in: (w) => ({
      callId: w.callId,
      phase: w.phase,
      decision: w.decision,
      rule: w.rule,
      message: w.message,
      evidence: evidenceIn(w.evidence),
      waitUntilMs: w.waitUntilMs,
      warning: w.warning,
      resultJson: w.resultJson,
    }),
  },
  ToolCallCompleted: {
    out: checked((e) => {
      nlong(e.progressVersion, 'progressVersion');
      long(e.tokens, 'tokens');
      nlong(e.retryAfterMs, 'retryAfterMs');
      long(e.durationMs, 'durationMs');
    }),
    in: (w) => ({
      callId: w.callId,
      kind: w.kind,
      code: w.code,
      resultHash: w.resultHash,
      terminal: w.terminal,
      progressVersion: w.progressVersion,
      tokens: w.tokens,
      costUsd: w.costUsd,
      retryAfterMs: w.retryAfterMs,
      durationMs: w.durationMs,
      informative: w.informative,
      answersAsk: w.answersAsk,
      resultClass: w.resultClass,
      failed: w.failed,
    }),
  },
  ModelUsageRecorded: {
    out: checked((e) => {
      long(e.tokensIn, 'tokensIn');
      long(e.tokensOut, 'tokensOut');
    }),
    in: (w) => ({ tokensIn: w.tokensIn, tokensOut: w.tokensOut, costUsd: w.costUsd }),
  },
  BudgetWarning: {
    out: checked(() => {}),
    in: (w) => ({ budget: w.budget, used: w.used, limit: w.limit, message: w.message }),
  },
  RunWaiting: {
    out: checked((e) => long(e.untilMs, 'untilMs')),
    in: (w) => ({ reason: w.reason, untilMs: w.untilMs, callId: w.callId }),
  },
  RunStopped: {
    out: (e) => ({ report: reportOut(e.report) }),
    in: (w) => ({ report: reportIn(w.report) }),
  },
  RunResumed: {
    out: ({ policy, ...e }) => ({
      ...e,
      progressVersion: long(e.progressVersion, 'progressVersion'),
      policyJson: policy === null ? null : JSON.stringify(policy),
    }),
    in: (w) => ({
      preconditionChange: w.preconditionChange,
      approvedBy: w.approvedBy,
      fromCheckpoint: w.fromCheckpoint,
      progressVersion: w.progressVersion,
      policy: w.policyJson === null ? null : policyIn(w.policyJson),
    }),
  },
  CheckpointRecorded: {
    out: checked((e) => long(e.progressVersion, 'progressVersion')),
    in: (w) => ({
      checkpointId: w.checkpointId,
      progressVersion: w.progressVersion,
      completedOperations: [...w.completedOperations],
    }),
  },
  OperationClaimed: {
    out: checked(() => {}),
    in: (w) => ({ operationKey: w.operationKey, callId: w.callId }),
  },
  OperationCompleted: {
    out: checked(() => {}),
    in: (w) => ({ operationKey: w.operationKey, callId: w.callId, resultJson: w.resultJson }),
  },
  OperationInDoubt: {
    out: checked(() => {}),
    in: (w) => ({ operationKey: w.operationKey, callId: w.callId, reason: w.reason }),
  },
  OperationReleased: {
    out: checked(() => {}),
    in: (w) => ({ operationKey: w.operationKey, callId: w.callId, reason: w.reason }),
  },
  FleetLoopDetected: {
    out: checked((e) => {
      long(e.windowMs, 'windowMs');
      long(e.firstAtMs, 'firstAtMs');
      long(e.lastAtMs, 'lastAtMs');
    }),
    in: (w) => ({
      signature: w.signature,
      tool: w.tool,
      rule: w.rule,
      intent: w.intent,
      runIds: [...w.runIds],
      tenants: [...w.tenants],
      threshold: w.threshold,
      windowMs: w.windowMs,
      firstAtMs: w.firstAtMs,
      lastAtMs: w.lastAtMs,
    }),
  },
};

/** The payload union's branch name of each event type. */
const BRANCH: ReadonlyMap<string, string> = new Map(
  Object.keys(MAPPERS).map((t) => [t, `${NAMESPACE}.${t}`]),
);

/**
 * The wire record as avsc's writer takes it, on the hot path: payload fields may include the
 * domain's `type`, which the writer ignores (it reads only the schema's fields). Use `toWire` for
 * the exact wire shape.
 */
export function toWireLoose(rec: RecordedEvent): WireEnvelope {
  const { type } = rec.event;
  const mapper = MAPPERS[type] as Mapper<EventType> | undefined;
  if (mapper === undefined) throw new LoopguardError('bad_event', `unknown event type ${String(type)}`);
  const payload: Record<string, WireFields> = {};
  payload[BRANCH.get(type) as string] = mapper.out(rec.event as never);
  return {
    eventId: rec.eventId,
    runId: rec.runId,
    seq: long(rec.seq, 'seq'),
    atMs: long(rec.atMs, 'atMs'),
    type,
    payload,
  };
}

/** The wire record of an event, exactly the schema's fields. */
export function toWire(rec: RecordedEvent): WireEnvelope {
  const loose = toWireLoose(rec);
  const branch = BRANCH.get(rec.event.type) as string;
  const { type: _type, ...fields } = loose.payload[branch] as WireFields;
  return { ...loose, payload: { [branch]: fields } };
}

/**
 * A record from another writer passes the boundary check every input passes: the names a fold
 * keys its state by must be names.
 */
function namesProblem(runId: unknown, tool: unknown): { field: string; problem: string } | null {
  const run = nameProblem(runId);
  if (run !== null) return { field: 'runId', problem: run };
  const t = tool === undefined ? null : nameProblem(tool);
  return t === null ? null : { field: 'tool', problem: t };
}

export function fromWire(w: WireEnvelope): RecordedEvent {
  const type = w.type as EventType;
  const branch = BRANCH.get(type);
  const fields = branch === undefined ? undefined : w.payload[branch];
  if (branch === undefined || fields === undefined) {
    throw new LoopguardError(
      'bad_payload',
      `envelope type ${type} does not match payload ${Object.keys(w.payload)[0]}`,
    );
  }
  const bad = namesProblem(w.runId, type === 'ToolCallRequested' ? fields.tool : undefined);
  if (bad !== null)
    throw new LoopguardError('bad_payload', `${type} ${w.eventId}: ${bad.field}: ${bad.problem}`, {
      details: { field: bad.field },
    });
  // Assigned, not spread: a spread of the mapped fields costs more than the whole decode of them.
  const event = MAPPERS[type].in(fields) as Record<string, unknown>;
  event.type = type;
  return {
    eventId: w.eventId,
    runId: w.runId,
    seq: w.seq,
    atMs: w.atMs,
    event: event as unknown as DomainEvent,
  };
}
