/** fast-check generators of RecordedEvents of every type, for round-trip properties. */
import fc from 'fast-check';
import type { DomainEvent, Evidence, RecordedEvent, StopReport } from '../src/domain/events.js';
import { RESULT_KINDS, TERMINAL_STATES } from '../src/domain/events.js';
import { MAX_LONG, MIN_LONG } from '../src/domain/input-check.js';
import { DEFAULT_POLICY, LOOP_RULES, type RunPolicy, resolvePolicy } from '../src/domain/policy.js';

const str = fc.string({ maxLength: 12, unit: 'grapheme' });
const nstr = fc.option(str, { nil: null });
/** Run ids and tool names are names (see input-check): a decoder refuses a blank one. */
const name = str.filter((s) => s.trim() !== '');
// Avro longs are JS numbers: only integers in [MIN_LONG, MAX_LONG] survive avsc (see serde.ts).
const long = fc.integer({ min: MIN_LONG, max: MAX_LONG });
const nlong = fc.option(long, { nil: null });
const dbl = fc.double();
const ndbl = fc.option(dbl, { nil: null });
// Keys a plain object can hold as own data properties (not `__proto__`).
const mapKey = fc.stringMatching(/^[a-z][a-zA-Z0-9_.]{0,7}$/);
const strings = fc.array(str, { maxLength: 4 });

const evidence: fc.Arbitrary<Evidence> = fc.record({
  fingerprints: strings,
  counts: fc.dictionary(mapKey, dbl, { maxKeys: 4 }),
  thresholds: fc.dictionary(mapKey, dbl, { maxKeys: 4 }),
});

const action = fc.constantFrom('stop', 'warn_first', 'warn_only', 'off' as const);
const policy: fc.Arbitrary<RunPolicy> = fc
  .record({
    maxSteps: fc.option(fc.nat(), { nil: null }),
    maxCostUsd: fc.option(fc.double({ min: 0, max: 100, noNaN: true, noDefaultInfinity: true }), {
      nil: null,
    }),
    threshold: fc.double({ min: 0, max: 1, noNaN: true }),
    rule: action,
    tool: mapKey,
  })
  .map(({ maxSteps, maxCostUsd, threshold, rule, tool }) => {
    const base = resolvePolicy(DEFAULT_POLICY);
    const rules = Object.fromEntries(LOOP_RULES.map((r) => [r, rule])) as RunPolicy['rules'];
    const tools = { [tool]: { sideEffect: true, maxCalls: 3, volatileArgs: ['ts'], costUsd: null } };
    return {
      ...base,
      maxSteps,
      maxCostUsd,
      nearDuplicate: { threshold: threshold === 0 ? 0 : threshold, limit: 4 },
      rules,
      tools,
    };
  });

const report: fc.Arbitrary<StopReport> = fc.record({
  terminalState: fc.constantFrom(...TERMINAL_STATES),
  guardReason: str,
  message: str,
  completed: strings,
  completedOperations: strings,
  inDoubtOperations: strings,
  gaps: strings,
  lastSafeCheckpoint: nstr,
  unmetPrecondition: nstr,
  resumeCondition: str,
  nextAllowedAction: str,
  evidence,
  spend: fc.record({ steps: long, toolCalls: long, tokens: long, costUsd: dbl, elapsedMs: long }),
  children: fc.array(
    fc.record({ runId: str, state: fc.constantFrom(...TERMINAL_STATES, 'RUNNING' as const) }),
    {
      maxLength: 3,
    },
  ),
});

const ev = <T extends DomainEvent['type']>(
  type: T,
  fields: fc.Arbitrary<object>,
): fc.Arbitrary<DomainEvent> => fields.map((f) => ({ type, ...f }) as DomainEvent);

export const domainEventArb: fc.Arbitrary<DomainEvent> = fc.oneof(
  ev(
    'RunStarted',
    fc.record({
      runId: name,
      taskType: nstr,
      tenant: nstr,
      policy,
      progressVersion: long,
      meta: fc.dictionary(mapKey, str, { maxKeys: 3 }),
      parentRunId: nstr,
    }),
  ),
  ev(
    'ToolCallRequested',
    fc.record(
      {
        callId: str,
        tool: name,
        argsJson: str,
        fingerprint: str,
        operationKey: nstr,
        sideEffect: fc.boolean(),
        costEstimateUsd: ndbl,
        afterUserTurn: fc.boolean(),
        progressVersion: nlong,
        similarTo: nstr,
        similarity: ndbl,
        // Absent in records written before the intent was kept.
        intent: str,
      },
      {
        requiredKeys: [
          'callId',
          'tool',
          'argsJson',
          'fingerprint',
          'operationKey',
          'sideEffect',
          'costEstimateUsd',
          'afterUserTurn',
          'progressVersion',
          'similarTo',
          'similarity',
        ],
      },
    ),
  ),
  ev(
    'GuardDecided',
    fc.record({
      callId: nstr,
      phase: fc.constantFrom('before', 'after'),
      decision: fc.constantFrom('execute', 'refuse', 'stop', 'wait_bounded'),
      rule: nstr,
      message: str,
      evidence,
      waitUntilMs: nlong,
      warning: nstr,
      resultJson: nstr,
    }),
  ),
  ev(
    'ToolCallCompleted',
    fc.record({
      callId: str,
      kind: fc.constantFrom(...RESULT_KINDS),
      code: nstr,
      resultHash: str,
      terminal: fc.boolean(),
      progressVersion: nlong,
      tokens: long,
      costUsd: dbl,
      retryAfterMs: nlong,
      durationMs: long,
      informative: fc.boolean(),
      answersAsk: fc.boolean(),
      resultClass: fc.option(fc.string(), { nil: null }),
      failed: fc.boolean(),
    }),
  ),
  ev('ModelUsageRecorded', fc.record({ tokensIn: long, tokensOut: long, costUsd: dbl })),
  ev('BudgetWarning', fc.record({ budget: str, used: dbl, limit: dbl, message: str })),
  ev('RunWaiting', fc.record({ reason: str, untilMs: long, callId: nstr })),
  ev('RunStopped', fc.record({ report })),
  ev(
    'RunResumed',
    fc.record({
      preconditionChange: str,
      approvedBy: nstr,
      fromCheckpoint: nstr,
      progressVersion: long,
      policy: fc.option(policy, { nil: null }),
    }),
  ),
  ev(
    'CheckpointRecorded',
    fc.record({ checkpointId: str, progressVersion: long, completedOperations: strings }),
  ),
  ev('OperationClaimed', fc.record({ operationKey: str, callId: str })),
  ev('OperationCompleted', fc.record({ operationKey: str, callId: str, resultJson: str })),
  ev('OperationInDoubt', fc.record({ operationKey: str, callId: str, reason: str })),
  ev('OperationReleased', fc.record({ operationKey: str, callId: str, reason: str })),
);

export const recordedEventArb: fc.Arbitrary<RecordedEvent> = fc.record({
  eventId: str,
  runId: name,
  seq: long,
  atMs: long,
  event: domainEventArb,
});
