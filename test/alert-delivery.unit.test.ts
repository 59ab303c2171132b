/**
 * Alert delivery without a broker: exponential, capped backoff that never gives up, shutdown
 * leaves the alert undelivered (so uncommitted), heartbeats during long waits, and the webhook's
 * request shape. Time is injected: the sleeps are recorded, never waited.
 */
import { describe, expect, it } from 'vitest';
import {
  backoffMs,
  deliverWithRetry,
  type Sleep,
  stdoutSink,
  toFleetLoopAlert,
  toStopAlert,
  webhookSink,
} from '../src/alert/index.js';
import { LoopguardError, type RecordedEvent } from '../src/domain/index.js';
import { stopReport } from './support/stop-report.js';

const report = stopReport({ spend: { steps: 2, toolCalls: 3, tokens: 0, costUsd: 0, elapsedMs: 10 } });
const stopped: RecordedEvent = {
  eventId: 'r1/7',
  runId: 'r1',
  seq: 7,
  atMs: 42,
  event: { type: 'RunStopped', report },
};
const alert = toStopAlert(stopped);
if (alert === null) throw new Error('fixture is a stop');
/** `report` as the alert carries it: every field name snake_case, like every `--json` of the CLI. */
const SNAKE_REPORT = {
  terminal_state: 'STOPPED_LOOP_GUARD',
  guard_reason: 'exact_repeat',
  message: 'stopped',
  completed: [],
  completed_operations: [],
  in_doubt_operations: [],
  gaps: [],
  last_safe_checkpoint: null,
  unmet_precondition: null,
  resume_condition: 'new input',
  next_allowed_action: 'answer',
  evidence: { fingerprints: [], counts: {}, thresholds: {} },
  spend: { steps: 2, tool_calls: 3, tokens: 0, cost_usd: 0, elapsed_ms: 10 },
  children: [],
};

/** Every field name in `v`, at any depth (the keys of `counts` are data: fingerprints). */
function fieldNames(v: unknown, out: string[] = []): string[] {
  if (Array.isArray(v)) for (const x of v) fieldNames(x, out);
  else if (typeof v === 'object' && v !== null)
    for (const [k, x] of Object.entries(v)) {
      out.push(k);
      if (k !== 'counts') fieldNames(x, out);
    }
  return out;
}

function recordingSleep(): Sleep & { waits: number[] } {
  const waits: number[] = [];
  const sleep = async (ms: number, signal?: AbortSignal) => {
    if (signal?.aborted) throw new LoopguardError('alert_aborted', 'aborted');
    waits.push(ms);
  };
  return Object.assign(sleep, { waits });
}

/** An attempt that fails `n` times, then succeeds. */
function failing(n: number) {
  let calls = 0;
  const attempt = async () => {
    calls++;
    if (calls <= n) throw new LoopguardError('webhook_refused', `HTTP 503 (${calls})`, { retriable: true });
  };
  return Object.assign(attempt, { calls: () => calls });
}

describe('deliverWithRetry', () => {
  it('given a receiver that fails 4 times, when delivering, then it waits 100, 200, 400, 800 ms and succeeds on attempt 5', async () => {
    const sleep = recordingSleep();
    const retries: number[] = [];
    const attempts = await deliverWithRetry(failing(4), {
      retry: { baseMs: 100, maxMs: 10_000 },
      sleep,
      heartbeatEveryMs: 60_000,
      onRetry: (n) => retries.push(n),
    });
    expect(attempts).toBe(5);
    expect(sleep.waits).toEqual([100, 200, 400, 800]);
    expect(retries).toEqual([1, 2, 3, 4]);
  });

  it('given a receiver down for 40 attempts, then the wait stops growing at the cap and it never gives up', async () => {
    const sleep = recordingSleep();
    const attempt = failing(40);
    expect(
      await deliverWithRetry(attempt, { retry: { baseMs: 100, maxMs: 1000 }, sleep, heartbeatEveryMs: 1e9 }),
    ).toBe(41);
    expect(sleep.waits.slice(0, 5)).toEqual([100, 200, 400, 800, 1000]);
    expect(new Set(sleep.waits.slice(4))).toEqual(new Set([1000]));
    expect(backoffMs(1000, { baseMs: 100, maxMs: 1000 })).toBe(1000);
  });

  it('given a shutdown during the backoff, then it rejects with alert_aborted and tries no more', async () => {
    const ctl = new AbortController();
    const attempt = failing(100);
    const sleep: Sleep = async (_ms, signal) => {
      ctl.abort();
      if (signal?.aborted) throw new LoopguardError('alert_aborted', 'aborted');
    };
    await expect(deliverWithRetry(attempt, { sleep, signal: ctl.signal })).rejects.toMatchObject({
      code: 'alert_aborted',
    });
    expect(attempt.calls()).toBe(1);
  });

  it('heartbeats between slices of a long wait, so the consumer group keeps the member', async () => {
    const sleep = recordingSleep();
    let beats = 0;
    await deliverWithRetry(failing(1), {
      retry: { baseMs: 2500, maxMs: 2500 },
      sleep,
      heartbeatEveryMs: 1000,
      heartbeat: async () => {
        beats++;
      },
    });
    expect(sleep.waits).toEqual([1000, 1000, 500]);
    expect(beats).toBe(3);
  });
});

describe('alert sinks', () => {
  it('the webhook POSTs the alert as JSON with Idempotency-Key = event id', async () => {
    const seen: { url: string; init: RequestInit }[] = [];
    const fetchOk = (async (url: string, init: RequestInit) => {
      seen.push({ url, init });
      return new Response('ok', { status: 200 });
    }) as unknown as typeof fetch;
    await webhookSink('http://receiver.test/hook', { fetch: fetchOk }).deliver(alert);
    expect(seen).toHaveLength(1);
    const headers = new Headers(seen[0]?.init.headers);
    expect(seen[0]?.init.method).toBe('POST');
    expect(headers.get('idempotency-key')).toBe('r1/7');
    expect(headers.get('content-type')).toBe('application/json');
    expect(JSON.parse(String(seen[0]?.init.body))).toEqual({
      event_id: 'r1/7',
      run_id: 'r1',
      terminal_state: 'STOPPED_LOOP_GUARD',
      reason: 'exact_repeat',
      at_ms: 42,
      report: SNAKE_REPORT,
    });
  });

  it('a non-2xx answer or no answer is a failed, retriable delivery', async () => {
    const refuse = (async () => new Response('busy', { status: 503 })) as unknown as typeof fetch;
    await expect(webhookSink('http://x.test/', { fetch: refuse }).deliver(alert)).rejects.toMatchObject({
      code: 'webhook_refused',
      retriable: true,
    });
    const down = (async () => {
      throw new TypeError('fetch failed');
    }) as unknown as typeof fetch;
    await expect(webhookSink('http://x.test/', { fetch: down }).deliver(alert)).rejects.toMatchObject({
      code: 'webhook_unreachable',
      retriable: true,
    });
  });

  it('stdout gets one JSON line per alert; events other than RunStopped are not alerts', async () => {
    let out = '';
    await stdoutSink((t) => {
      out += t;
    }).deliver(alert);
    expect(out.endsWith('\n')).toBe(true);
    expect(JSON.parse(out)).toMatchObject({ event_id: 'r1/7', run_id: 'r1', reason: 'exact_repeat' });
    // Snake case all the way down, as every --json of the CLI (json-output.ts); a fleet loop alert too.
    const fleet = toFleetLoopAlert({
      eventId: 'fleet/1',
      runId: 'fleet',
      seq: 1,
      atMs: 50,
      event: {
        type: 'FleetLoopDetected',
        signature: 'sig',
        tool: 'search',
        rule: 'exact_repeat',
        intent: '{}',
        runIds: ['r1', 'r2'],
        tenants: ['acme'],
        threshold: 2,
        windowMs: 600_000,
        firstAtMs: 40,
        lastAtMs: 50,
      },
    } as RecordedEvent);
    for (const a of [JSON.parse(out), fleet]) {
      const names = fieldNames(a);
      expect(names.length).toBeGreaterThan(5);
      expect(names.filter((k) => !/^[a-z][a-z0-9_]*$/.test(k))).toEqual([]);
    }
    expect(
      toStopAlert({ ...stopped, event: { type: 'CheckpointRecorded', checkpointId: 'c' } } as RecordedEvent),
    ).toBeNull();
  });
});
