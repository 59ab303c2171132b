import { describe, expect, it } from 'vitest';
import type { DomainEvent, RecordedEvent } from '../src/domain/index.js';
import { DEFAULT_FLEET_LOOP, FleetLoopProjection } from '../src/projections/index.js';

const MIN = 60_000;
const seqs = new Map<string, number>();

const rec = (runId: string, atMs: number, event: DomainEvent): RecordedEvent => {
  const seq = (seqs.get(runId) ?? 0) + 1;
  seqs.set(runId, seq);
  return { eventId: `${runId}/${seq}`, runId, seq, atMs, event };
};

/** A run of `tenant` that asks `args` of `tool` and is held back by `rule` at `atMs`. */
function heldBack(
  runId: string,
  atMs: number,
  opts: { tenant?: string; tool?: string; args?: string; rule?: string } = {},
) {
  return [
    rec(runId, atMs - 10, {
      type: 'RunStarted',
      runId,
      taskType: null,
      tenant: opts.tenant ?? null,
      policy: null as never,
      progressVersion: 0,
      meta: {},
      parentRunId: null,
    }),
    rec(runId, atMs - 5, {
      type: 'ToolCallRequested',
      callId: 'c3',
      tool: opts.tool ?? 'search_docs',
      argsJson: opts.args ?? '{"page":3,"q":"refund policy"}',
      fingerprint: 'fp',
      operationKey: null,
      sideEffect: false,
      costEstimateUsd: null,
      afterUserTurn: false,
      progressVersion: null,
      similarTo: null,
      similarity: null,
    }),
    rec(runId, atMs, {
      type: 'GuardDecided',
      callId: 'c3',
      phase: 'before',
      decision: 'stop_partial',
      rule: opts.rule ?? 'exact_repeat',
      message: 'stopped',
      evidence: { fingerprints: [], counts: {}, thresholds: {} },
      waitUntilMs: null,
      warning: null,
      resultJson: null,
    }),
  ];
}

const fold = (p: FleetLoopProjection, records: RecordedEvent[]) => records.flatMap((r) => p.apply(r));

describe('FleetLoopProjection', () => {
  it('defaults to 5 distinct runs within 10 minutes', () => {
    expect(DEFAULT_FLEET_LOOP).toEqual({ threshold: 5, windowMs: 10 * MIN });
  });

  it('given 3 runs of 2 tenants stopped the same way within the window, when the third lands, then one detection', () => {
    const p = new FleetLoopProjection({ threshold: 3, windowMs: 5 * MIN });
    const out = fold(p, [
      ...heldBack('a1', 1 * MIN, { tenant: 'acme' }),
      // Another page of the same question: paging and id fields are not part of the intent.
      ...heldBack('b1', 2 * MIN, { tenant: 'globex', args: '{"page":7,"q":"refund policy"}' }),
      ...heldBack('a2', 3 * MIN, { tenant: 'acme' }),
    ]);
    expect(out).toEqual([
      {
        eventId: 'fleet:a2/3',
        runId: 'fleet:search_docs exact_repeat {"q":"refund policy"}',
        seq: 1,
        atMs: 3 * MIN,
        event: {
          type: 'FleetLoopDetected',
          signature: 'search_docs exact_repeat {"q":"refund policy"}',
          tool: 'search_docs',
          rule: 'exact_repeat',
          intent: '{"q":"refund policy"}',
          runIds: ['a1', 'b1', 'a2'],
          tenants: ['acme', 'globex'],
          threshold: 3,
          windowMs: 5 * MIN,
          firstAtMs: 1 * MIN,
          lastAtMs: 3 * MIN,
        },
      },
    ]);
  });

  it('given hits spread wider than the window, then nothing: the window slides on event time', () => {
    const p = new FleetLoopProjection({ threshold: 3, windowMs: 5 * MIN });
    expect(fold(p, [...heldBack('r1', 0), ...heldBack('r2', 4 * MIN), ...heldBack('r3', 9 * MIN)])).toEqual(
      [],
    );
  });

  it('given other tools, rules or intents, then each is its own signature', () => {
    const p = new FleetLoopProjection({ threshold: 3, windowMs: 5 * MIN });
    expect(
      fold(p, [
        ...heldBack('r1', 1 * MIN),
        ...heldBack('r2', 1 * MIN, { tool: 'web_search' }),
        ...heldBack('r3', 1 * MIN, { rule: 'short_cycle' }),
        ...heldBack('r4', 1 * MIN, { args: '{"q":"shipping"}' }),
      ]),
    ).toEqual([]);
  });

  it('given one run hitting a signature many times, then it counts once', () => {
    const p = new FleetLoopProjection({ threshold: 2, windowMs: 5 * MIN });
    expect(fold(p, [...heldBack('r1', 1 * MIN), ...heldBack('r1', 2 * MIN)])).toEqual([]);
  });

  it('given the loop goes on, then it fires again once per window, not for every run', () => {
    const p = new FleetLoopProjection({ threshold: 2, windowMs: 5 * MIN });
    const out = fold(p, Array.from({ length: 12 }, (_, i) => heldBack(`r${i}`, (i + 1) * MIN)).flat());
    expect(out.map((d) => [d.atMs / MIN, d.seq])).toEqual([
      [2, 1],
      [7, 2],
      [12, 3],
    ]);
  });

  it('given decisions that let the call run or carry no rule, then no hit', () => {
    const p = new FleetLoopProjection({ threshold: 1, windowMs: 5 * MIN });
    const [start, req] = heldBack('r1', MIN);
    const execute = rec('r1', MIN, {
      type: 'GuardDecided',
      callId: 'c3',
      phase: 'before',
      decision: 'execute',
      rule: null,
      message: 'ok',
      evidence: { fingerprints: [], counts: {}, thresholds: {} },
      waitUntilMs: null,
      warning: null,
      resultJson: null,
    });
    expect(fold(p, [start, req, execute] as RecordedEvent[])).toEqual([]);
  });

  it('given a hit older than the window the latest hits span (another partition, late), then it does not count', () => {
    const p = new FleetLoopProjection({ threshold: 3, windowMs: 5 * MIN });
    expect(
      fold(p, [...heldBack('r1', 10 * MIN), ...heldBack('r2', 11 * MIN), ...heldBack('r3', 4 * MIN)]),
    ).toEqual([]);
    expect(fold(p, heldBack('r4', 12 * MIN)).map((d) => d.event.runIds)).toEqual([['r1', 'r2', 'r4']]);
  });

  it('given a detection published before a restart, then the next one waits a window and numbers on', () => {
    const first = new FleetLoopProjection({ threshold: 2, windowMs: 5 * MIN });
    const [published] = fold(first, [...heldBack('r1', 1 * MIN), ...heldBack('r2', 2 * MIN)]);
    expect(published?.seq).toBe(1);

    const restarted = new FleetLoopProjection({ threshold: 2, windowMs: 5 * MIN });
    restarted.restore(published as RecordedEvent);
    const out = fold(restarted, [
      ...heldBack('r3', 3 * MIN),
      ...heldBack('r4', 4 * MIN),
      ...heldBack('r5', 7 * MIN),
    ]);
    expect(out.map((d) => [d.atMs / MIN, d.seq])).toEqual([[7, 2]]);
  });
});
