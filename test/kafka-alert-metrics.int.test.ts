/**
 * `loopguard alert --metrics-port` on the real broker: the stops it delivered and its consumer lag,
 * scraped from /metrics while it runs.
 */
import { randomUUID } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { main } from '../src/cli/main.js';
import type { RecordedEvent } from '../src/domain/index.js';
import { RegistrySchemaStore } from '../src/events/registry-schema-store.js';
import { EventStore } from '../src/log/event-store.js';
import { KafkaLog } from '../src/log/kafka/kafka-log.js';
import { kafkaEnv } from './setup/kafka-env.js';
import { captureIo } from './support/capture-io.js';
import { stopReport } from './support/stop-report.js';
import { until } from './support/until.js';

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c().catch(() => undefined);
});

const stop = (
  i: number,
  terminalState: 'STOPPED_LOOP_GUARD' | 'NEEDS_HUMAN',
  rule: string,
): RecordedEvent => ({
  eventId: `run-${i}/5`,
  runId: `run-${i}`,
  seq: 5,
  atMs: 1_700_000_000_000 + i,
  event: { type: 'RunStopped', report: stopReport({ terminalState, guardReason: rule }) },
});

describe('loopguard alert --metrics-port', () => {
  it('serves the delivered stops by state and rule and a consumer lag of 0 once caught up', async () => {
    const { brokers, registryUrl } = kafkaEnv();
    const prefix = `alert-metrics-${randomUUID()}.`;
    const log = await KafkaLog.connect({ brokers, topicPrefix: prefix });
    cleanups.push(() => log.close());
    const events = await EventStore.create(log, new RegistrySchemaStore({ url: registryUrl }), {
      subjectFor: (t) => `${log.physicalName(t)}-value`,
    });
    await events.append([
      stop(1, 'STOPPED_LOOP_GUARD', 'exact_repeat'),
      stop(2, 'STOPPED_LOOP_GUARD', 'exact_repeat'),
      stop(3, 'NEEDS_HUMAN', 'permission_denied'),
    ]);

    const io = captureIo();
    const ctl = new AbortController();
    const running = main(
      [
        ...['alert', '--kafka', '--brokers', brokers.join(','), '--registry', registryUrl],
        ...['--topic-prefix', prefix, '--group', `g-${randomUUID()}`, '--metrics-port', '0'],
      ],
      io,
      { env: {}, signal: ctl.signal },
    );
    cleanups.push(async () => {
      ctl.abort();
      await running;
    });
    await until('3 alerts', () => io.stdout().trim().split('\n').length === 3, { log: io.stderr });
    const url = /metrics on (http:\S+)/.exec(io.stderr())?.[1];
    expect(url).toBeDefined();
    const topic = `${prefix}loopguard.stops`;
    let text = '';
    await until(
      'the lag gauge',
      async () => {
        text = await (await fetch(url as string)).text();
        return text.includes(`loopguard_consumer_lag{topic="${topic}"`);
      },
      { ms: 10_000, log: io.stderr },
    );
    expect(text).toContain(
      'loopguard_stops_total{terminal_state="STOPPED_LOOP_GUARD",rule="exact_repeat"} 2\n',
    );
    expect(text).toContain(
      'loopguard_stops_total{terminal_state="NEEDS_HUMAN",rule="permission_denied"} 1\n',
    );
    expect(text).toMatch(
      new RegExp(`loopguard_consumer_lag\\{topic="${topic.replaceAll('.', '\\.')}",partition="\\d+"\\} 0\\n`),
    );
    expect(text).not.toContain('run-1');
  });
});
