import {
  type AlertSink,
  DEFAULT_ALERT_GROUP,
  DEFAULT_RETRY,
  type RetryPolicy,
  startAlertSubscriber,
  stdoutSink,
  webhookSink,
} from '../alert/index.js';
import { LoopguardError } from '../domain/index.js';
import { KafkaCopyProjector } from '../log/kafka/kafka-copy-projector.js';
import type { LoopguardMetrics } from '../telemetry/index.js';
import type { Io } from './io.js';
import type { KafkaConfig } from './kafka-config.js';
import { type MetricsServer, serviceMetrics, startMetricsServer } from './metrics-server.js';
import { openKafkaStore } from './open-kafka-store.js';

export interface AlertFlags {
  readonly webhook?: string;
  readonly group?: string;
  readonly 'retry-base-ms'?: number;
  readonly 'retry-max-ms'?: number;
  readonly 'session-timeout-ms'?: number;
  readonly 'metrics-port'?: number;
  /** `Name: value`, repeatable: where a webhook's credentials go. */
  readonly 'webhook-header'?: readonly string[];
  readonly 'dead-letter-after'?: number;
}

/** Attempts before an alert goes to the dead-letter topic: about 8 minutes at the default pace. */
const DEFAULT_DEAD_LETTER_AFTER = 20;

function webhookHeaders(lines: readonly string[] = []): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const line of lines) {
    const at = line.indexOf(':');
    const name = at > 0 ? line.slice(0, at).trim() : '';
    if (!/^[A-Za-z0-9-]+$/.test(name))
      throw new LoopguardError(
        'usage',
        '--webhook-header must be "Name: value" (its value is not shown here)',
      );
    headers[name.toLowerCase()] = line.slice(at + 1).trim();
  }
  return headers;
}

/** The sink, counting each stop it delivered in `loopguard_stops_total`. */
function counted(sink: AlertSink, metrics: LoopguardMetrics): AlertSink {
  return {
    name: sink.name,
    deliver: async (alert, signal) => {
      await sink.deliver(alert, signal);
      if (!('kind' in alert)) metrics.stopped(alert.terminal_state, alert.reason);
    },
  };
}

function sinkFor(flags: AlertFlags, io: Io): AlertSink {
  if (flags.webhook === undefined) return stdoutSink((t) => io.out(t));
  // Not echoed: a mistyped URL may still hold a token.
  if (!URL.canParse(flags.webhook)) throw new LoopguardError('usage', '--webhook must be an http(s) URL');
  const url = new URL(flags.webhook);
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new LoopguardError('usage', `--webhook must be an http(s) URL, got ${url.protocol}`);
  return webhookSink(url.toString(), { headers: webhookHeaders(flags['webhook-header']) });
}

/**
 * `loopguard alert --kafka [--webhook URL] [--group G]`: runs until the signal aborts (SIGINT,
 * SIGTERM). Progress and failed attempts go to stderr, so stdout carries only alerts.
 */
export async function alertCommand(
  cfg: KafkaConfig,
  flags: AlertFlags,
  io: Io,
  signal: AbortSignal,
): Promise<number> {
  const retry: RetryPolicy = {
    baseMs: flags['retry-base-ms'] ?? DEFAULT_RETRY.baseMs,
    maxMs: flags['retry-max-ms'] ?? DEFAULT_RETRY.maxMs,
    maxAttempts: flags['dead-letter-after'] ?? DEFAULT_DEAD_LETTER_AFTER,
  };
  const sessionTimeoutMs = flags['session-timeout-ms'] ?? 15_000;
  const metricsPort = flags['metrics-port'];
  const metrics = metricsPort === undefined ? null : serviceMetrics();
  const sink = metrics === null ? sinkFor(flags, io) : counted(sinkFor(flags, io), metrics);
  const groupId = flags.group ?? DEFAULT_ALERT_GROUP;
  const store = await openKafkaStore(cfg);
  const stopsTopic = store.log.physicalName('loopguard.stops');
  let server: MetricsServer | null = null;
  try {
    if (metrics !== null) {
      server = await startMetricsServer(metrics, metricsPort ?? 0);
      io.err(`alert: metrics on ${server.url}`);
    }
    // The stops this subscriber delivers are copied from the runs topic by this projector (or by
    // any other process of its group, `loopguard project`).
    const projector = await KafkaCopyProjector.start({
      log: store.log,
      events: store.events,
      onLog: (line) => io.err(`alert: ${line}`),
    });
    try {
      const sub = await startAlertSubscriber({
        log: store.log,
        events: store.events,
        sink,
        groupId,
        retry,
        signal,
        sessionTimeoutMs,
        onRetry: (id, failures, e, waitMs) =>
          io.err(
            `alert: ${id}: attempt ${failures} failed (${e.code}: ${e.message}); retrying in ${waitMs} ms`,
          ),
        onDeadLettered: (id, e) => io.err(`alert: ${id}: ${e.message}; put on loopguard.dlq`),
        onError: (e) => io.err(`alert: consumer: ${e.code}: ${e.message}`),
        ...(metrics ? { onLag: (p: number, lag: number) => metrics.consumerLag(stopsTopic, p, lag) } : {}),
      });
      io.err(
        `alert: group ${groupId} on ${stopsTopic} at ${cfg.brokers.join(',')}, delivering to ${sink.name}`,
      );
      await sub.done;
      io.err(`alert: stopped after ${sub.delivered} deliveries`);
      return 0;
    } finally {
      await projector.stop();
    }
  } finally {
    await server?.close();
    await store.close();
  }
}
