/**
 * Fleet loop alerts on the real broker: `fleet --kafka` detects the loop six runs share and
 * publishes it once on the stops topic; `alert --kafka` delivers it like a stop.
 */

import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { main } from '../src/cli/main.js';
import { kafkaEnv } from './setup/kafka-env.js';
import { captureIo } from './support/capture-io.js';
import { writeLoopingFleet } from './support/looping-fleet.js';

const dir = mkdtempSync(join(tmpdir(), 'lg-kfleet-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function kafkaArgs(prefix: string): string[] {
  const { brokers, registryUrl } = kafkaEnv();
  return ['--kafka', '--brokers', brokers.join(','), '--registry', registryUrl, '--topic-prefix', prefix];
}

async function run(args: string[], signal?: AbortSignal) {
  const io = captureIo();
  const code = await main(args, io, { env: {}, ...(signal ? { signal } : {}) });
  return { code, out: io.stdout(), err: io.stderr(), io };
}

describe('loopguard fleet --kafka', () => {
  it('publishes the detection once, and alert delivers it with the stops', async () => {
    const kafka = kafkaArgs(`fleet-${randomUUID()}.`);
    expect((await run(['replay', writeLoopingFleet(dir, 6), ...kafka])).code).toBe(0);

    const first = await run(['fleet', '--json', ...kafka]);
    expect(first.code).toBe(0);
    expect(first.err).toContain('1 fleet loops detected, 1 newly published');
    const detection = JSON.parse(first.out.trim());
    expect(detection).toMatchObject({
      kind: 'fleet_loop',
      tool: 'search_docs',
      rule: 'exact_repeat',
      tenants: ['acme', 'globex'],
    });
    expect(detection.runs).toHaveLength(5);
    expect((await run(['fleet', ...kafka])).err).toContain('0 newly published');

    const io = captureIo();
    const ctl = new AbortController();
    const alerting = main(['alert', '--group', `g-${randomUUID()}`, ...kafka], io, {
      env: {},
      signal: ctl.signal,
    });
    const end = Date.now() + 30_000;
    // Seven stop reports and the one detection.
    while (io.stdout().trim().split('\n').length < 8 && Date.now() < end)
      await new Promise((r) => setTimeout(r, 100));
    ctl.abort();
    expect(await alerting).toBe(0);
    const alerts = io
      .stdout()
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(alerts).toHaveLength(8);
    expect(alerts.filter((a) => a.kind === 'fleet_loop')).toEqual([detection]);
  });
});
