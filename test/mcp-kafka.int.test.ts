/**
 * `loopguard mcp --kafka`: an MCP session recorded on the real broker and registry. The payment is
 * deduplicated by the Kafka ledger, and the run's stop lands (through the copy projector) on the
 * stops topic that `stops` and `alert` read, under its own topic prefix.
 */
import { randomUUID } from 'node:crypto';
import { rmSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { main } from '../src/cli/main.js';
import { kafkaEnv } from './setup/kafka-env.js';
import { captureIo } from './support/capture-io.js';
import { mcpSession } from './support/mcp-session.js';

async function cli(args: string[]) {
  const io = captureIo();
  const code = await main(args, io, { env: {} });
  return { code, out: io.stdout() };
}

describe('loopguard mcp on Kafka', () => {
  it('dedupes the payment through the Kafka ledger and publishes the stop', async () => {
    const { brokers, registryUrl } = kafkaEnv();
    const kafka = ['--kafka', '--brokers', brokers.join(','), '--registry', registryUrl];
    const prefix = ['--topic-prefix', `mcp-${randomUUID()}.`];
    const s = await mcpSession({
      log: [...kafka, ...prefix],
      flags: ['--run-id', 'mcp-kafka'],
      // Workers on one cluster share the key of secret values; Kafka mode refuses to start without one.
      env: { LOOPGUARD_SECRET_KEY: 'mcp-kafka-test-key' },
    });
    try {
      await s.call('pay', { order: 'K1', amount: 12 });
      const again = await s.call('pay', { order: 'K1', amount: 12 });
      expect(s.text(again)).toMatch(/^payment p-1: 12 for order K1\n\[loopguard\] /);
      expect(s.charges()).toBe(1);
      for (let i = 0; i < 3; i++) await s.call('search', { q: 'kafka' });
      await s.client.close();
      // The stop reaches the stops topic through the copy projector.
      expect((await cli(['project', '--once', ...kafka, ...prefix])).code).toBe(0);

      const stops = await cli(['stops', ...kafka, ...prefix, '--json']);
      expect(stops.code).toBe(0);
      const [stop, ...more] = stops.out
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l));
      expect(more).toEqual([]);
      expect([stop.run_id, stop.report.terminal_state, stop.report.guard_reason]).toEqual([
        'mcp-kafka',
        'STOPPED_LOOP_GUARD',
        'exact_repeat',
      ]);
      const audit = JSON.parse((await cli(['audit', 'mcp-kafka', ...kafka, ...prefix, '--json'])).out);
      expect(
        audit.timeline
          .filter((e: { kind: string }) => e.kind === 'call')
          .map((c: { tool: string; before: { decision: string } }) => `${c.tool}:${c.before.decision}`),
      ).toEqual([
        'pay:execute',
        'pay:return_cached_success',
        'search:execute',
        'search:execute',
        'search:stop_partial',
      ]);
    } finally {
      rmSync(s.dir, { recursive: true, force: true });
    }
  });
});
