/**
 * The guard's Prometheus metrics, scraped over HTTP the way Prometheus does: decisions and stops by
 * rule, the guard's and the tools' time, operations in doubt; and never a run id or an argument.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Registry } from 'prom-client';
import { afterEach, describe, expect, it } from 'vitest';
import { startMetricsServer } from '../src/cli/metrics-server.js';
import { LoopguardMetrics } from '../src/metrics.js';
import { createGuard, type Guard } from '../src/runtime/index.js';

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function guardWith(opts: { metrics?: LoopguardMetrics } = {}): Promise<Guard> {
  const dataDir = mkdtempSync(join(tmpdir(), 'loopguard-metrics-'));
  const guard = await createGuard({
    policy: { tools: { pay: { sideEffect: true } } },
    dataDir,
    ...opts,
  });
  cleanups.push(async () => {
    await guard.close();
    rmSync(dataDir, { recursive: true, force: true });
  });
  return guard;
}

/** One sample's value from a Prometheus text exposition, by its exact name and labels. */
function sample(text: string, series: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

async function scrape(metrics: LoopguardMetrics): Promise<{ status: number; type: string; text: string }> {
  const server = await startMetricsServer(metrics, 0);
  cleanups.push(() => server.close());
  const res = await fetch(server.url);
  return { status: res.status, type: res.headers.get('content-type') ?? '', text: await res.text() };
}

describe('loopguard metrics', () => {
  it('counts decisions, stops, guard and tool time, and in-doubt operations, scraped from /metrics', async () => {
    const metrics = new LoopguardMetrics();
    const guard = await guardWith({ metrics });
    const looping = await guard.startRun({ runId: 'secret-run-id-1', tenant: 'acme' });
    for (let i = 0; i < 3; i++)
      await looping.call({ tool: 'search', args: { q: 'secret-arg' } }, async () => 'same');
    const paying = await guard.startRun({ runId: 'secret-run-id-2' });
    const r = await paying.call(
      { tool: 'pay', args: { order: 'A1' }, operationKey: 'acme:pay:A1' },
      async () => {
        throw new Error('connection reset after sending');
      },
    );
    expect(r).toMatchObject({ status: 'executed', report: { terminalState: 'NEEDS_HUMAN' } });

    const { status, type, text } = await scrape(metrics);
    expect(status).toBe(200);
    expect(type).toMatch(/^text\/plain/);
    expect(sample(text, 'loopguard_decisions_total{decision="execute",rule="none"}')).toBe(3);
    expect(sample(text, 'loopguard_decisions_total{decision="stop_partial",rule="exact_repeat"}')).toBe(1);
    expect(
      sample(text, 'loopguard_stops_total{terminal_state="STOPPED_LOOP_GUARD",rule="exact_repeat"}'),
    ).toBe(1);
    expect(text).toMatch(/^loopguard_stops_total\{terminal_state="NEEDS_HUMAN",rule="[a-z_]+"\} 1$/m);
    expect(sample(text, 'loopguard_operations_in_doubt')).toBe(1);
    // Every guarded call is timed, the refused one included; only the calls that ran have a tool time.
    expect(sample(text, 'loopguard_guard_seconds_count')).toBe(4);
    expect(sample(text, 'loopguard_tool_seconds_count{tool="search"}')).toBe(2);
    expect(sample(text, 'loopguard_tool_seconds_count{tool="pay"}')).toBe(1);
    expect(text).toContain('# TYPE loopguard_guard_seconds histogram');
    expect(text).toContain('# TYPE loopguard_consumer_lag gauge');
    // Labels are bounded sets: no run id, tenant or argument ever becomes one.
    expect(text).not.toMatch(/secret-run-id|secret-arg|acme/);
    expect(await guard.metrics()).toBe(await metrics.text());
  });

  it('a settled operation leaves the in-doubt gauge; each LoopguardMetrics has a registry of its own', async () => {
    const registry = new Registry();
    const metrics = new LoopguardMetrics(registry);
    const guard = await guardWith({ metrics });
    const run = await guard.startRun({ runId: 'r' });
    await run.call({ tool: 'pay', args: { order: 'B2' }, operationKey: 'acme:pay:B2' }, async () => {
      throw new Error('timeout');
    });
    expect(sample(await registry.metrics(), 'loopguard_operations_in_doubt')).toBe(1);
    await run.settle('acme:pay:B2', { happened: true, result: { id: 'p-9' }, settledBy: 'ops' });
    expect(sample(await registry.metrics(), 'loopguard_operations_in_doubt')).toBe(0);

    const other = await guardWith({ metrics: new LoopguardMetrics() });
    expect(sample(await other.metrics(), 'loopguard_operations_in_doubt')).toBe(0);
    expect(await other.metrics()).not.toContain('acme');
  });

  it('a guard created without metrics counts nothing, and guard.metrics() names what to install', async () => {
    const guard = await guardWith();
    const run = await guard.startRun({ runId: 'r' });
    expect((await run.call({ tool: 'search', args: { q: 'x' } }, async () => 'r')).status).toBe('executed');
    const refused = await guard.metrics().catch((e: unknown) => e);
    expect(refused).toMatchObject({ code: 'missing_dependency' });
    expect((refused as Error).message).toMatch(
      /new LoopguardMetrics\(\) \}\) from 'loopguard\/metrics' \(npm install prom-client\)/,
    );
  });

  it('serves nothing but GET /metrics', async () => {
    const server = await startMetricsServer(new LoopguardMetrics(), 0);
    cleanups.push(() => server.close());
    expect((await fetch(server.url.replace('/metrics', '/'))).status).toBe(404);
  });
});
