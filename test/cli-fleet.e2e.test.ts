/**
 * Fleet loop alerts on the embedded log: six runs of two tenants loop on one search; `loopguard
 * fleet` detects it once, publishes a FleetLoopDetected on the stops topic, never twice.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openEmbeddedStore } from '../src/cli/open-store.js';
import { runCli } from './support/cli-run.js';
import { FLEET_T0, writeLoopingFleet } from './support/looping-fleet.js';

let dir: string;
let data: string;

const run = (args: string[]) => runCli(args, {});

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'lg-fleet-'));
  data = join(dir, 'data');
  expect((await run(['replay', writeLoopingFleet(dir, 6), '--data-dir', data])).code).toBe(0);
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('loopguard fleet on the embedded log', () => {
  it('detects the loop the fleet shares once, with its runs and tenants, and publishes it as an Avro event', async () => {
    const r = await run(['fleet', '--data-dir', data, '--json']);
    expect(r.code).toBe(0);
    expect(r.err).toContain('1 fleet loops detected, 1 newly published');
    const lines = r.out.trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(JSON.parse(lines[0] ?? '')).toEqual({
      kind: 'fleet_loop',
      event_id: 'fleet:fleet/loop-4/11',
      signature: 'search_docs exact_repeat {"q":"refund policy"}',
      tool: 'search_docs',
      rule: 'exact_repeat',
      intent: '{"q":"refund policy"}',
      runs: ['fleet/loop-0', 'fleet/loop-1', 'fleet/loop-2', 'fleet/loop-3', 'fleet/loop-4'],
      tenants: ['acme', 'globex'],
      threshold: 5,
      window_ms: 600_000,
      first_at_ms: FLEET_T0 + 2000,
      at_ms: FLEET_T0 + 4 * 30_000 + 2000,
    });

    // The record on the stops topic is the Avro FleetLoopDetected, decoded back by the store.
    const store = await openEmbeddedStore(data);
    try {
      const fleet = [];
      for await (const e of store.events.readStops(0))
        if (e.event.type === 'FleetLoopDetected') fleet.push(e);
      expect(fleet).toHaveLength(1);
      expect(fleet[0]).toMatchObject({
        eventId: 'fleet:fleet/loop-4/11',
        runId: 'fleet:search_docs exact_repeat {"q":"refund policy"}',
        seq: 1,
        event: { type: 'FleetLoopDetected', threshold: 5, tenants: ['acme', 'globex'] },
      });
    } finally {
      await store.close();
    }
  });

  it('run again, it publishes nothing twice; stops lists the detection beside the stop reports', async () => {
    const again = await run(['fleet', '--data-dir', data]);
    expect(again.err).toContain('1 fleet loops detected, 0 newly published');
    expect(again.out).toContain('FLEET LOOP  search_docs exact_repeat {"q":"refund policy"}');
    const stops = (await run(['stops', '--data-dir', data, '--json'])).out.trim().split('\n');
    expect(stops.filter((l) => l.includes('"kind":"fleet_loop"'))).toHaveLength(1);
    expect(stops).toHaveLength(8);

    // Runs recorded after the detection still get their stops copied onto the stops topic.
    expect((await run(['replay', writeLoopingFleet(dir, 1, 6), '--data-dir', data])).code).toBe(0);
    const store = await openEmbeddedStore(data, { readOnly: true });
    try {
      const copied: string[] = [];
      for await (const e of store.events.readStops(0)) copied.push(e.runId);
      expect(copied).toContain('fleet/loop-6');
      expect(copied.filter((id) => id.startsWith('fleet/loop-'))).toHaveLength(7);
    } finally {
      await store.close();
    }
  });

  it('a higher threshold or a shorter window finds nothing; bad flags name themselves', async () => {
    expect((await run(['fleet', '--data-dir', data, '--threshold', '8', '--json'])).out).toBe('');
    // The six runs span 150 s: no five of them fall within 60 s.
    expect((await run(['fleet', '--data-dir', data, '--window-ms', '60000', '--json'])).out).toBe('');
    await expect(run(['fleet', '--data-dir', data, '--threshold', '0'])).rejects.toThrow(/--threshold/);
    // The embedded store keeps no consumer-group positions for a follower to resume from.
    await expect(run(['fleet', '--follow', '--data-dir', data])).rejects.toThrow(/following needs Kafka/);
  });
});
