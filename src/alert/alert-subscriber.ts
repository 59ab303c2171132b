/**
 * The stops topic, read by a consumer group, delivered to a sink. Exactly once from the
 * receiver's point of view, built from two halves: the sender is at-least-once (a stop's offset
 * is committed only after its delivery succeeded, one commit per stop, so a crash re-delivers at
 * most the stop in flight) and the receiver dedupes on the event id it gets with every alert.
 */
import { LoopguardError } from '../domain/errors.js';
import { TOPICS } from '../log/event-log.js';
import type { EventStore } from '../log/event-store.js';
import { DecodingConsumer, deadLetterHeaders } from '../log/kafka/decoding-consumer.js';
import type { KafkaLog } from '../log/kafka/kafka-log.js';
import type { AlertSink } from './alert-sinks.js';
import { DEFAULT_RETRY, deliverWithRetry, type RetryPolicy, type Sleep } from './deliver-with-retry.js';
import { toFleetLoopAlert } from './fleet-loop-alert.js';
import { toStopAlert } from './stop-alert.js';

export const DEFAULT_ALERT_GROUP = 'loopguard-alert';

export interface AlertSubscriberOptions {
  readonly log: KafkaLog;
  readonly events: EventStore;
  readonly sink: AlertSink;
  readonly groupId?: string;
  readonly retry?: RetryPolicy;
  readonly sleep?: Sleep;
  /** Ends the subscription; a delivery in flight is abandoned uncommitted. */
  readonly signal: AbortSignal;
  /** A restarted subscriber waits up to this long for the broker to drop its dead predecessor. */
  readonly sessionTimeoutMs?: number;
  readonly onDelivered?: (eventId: string, attempts: number) => void;
  readonly onRetry?: (eventId: string, failures: number, error: LoopguardError, waitMs: number) => void;
  readonly onError?: (error: LoopguardError) => void;
  /** Records of a stops partition still to read after each one handled. */
  readonly onLag?: (partition: number, lag: number) => void;
  /** An alert given up after `retry.maxAttempts`, now on the dead-letter topic. */
  readonly onDeadLettered?: (eventId: string, error: LoopguardError) => void;
  /** Jitter of the retry waits (default Math.random: senders that failed together spread out). */
  readonly random?: () => number;
}

export interface AlertSubscription {
  /** Alerts delivered by this process (a re-delivery after a restart counts again). */
  readonly delivered: number;
  /** Resolves after the signal aborted and the group was left. */
  readonly done: Promise<void>;
}

export async function startAlertSubscriber(opts: AlertSubscriberOptions): Promise<AlertSubscription> {
  let delivered = 0;
  const consumer = await DecodingConsumer.start(opts.log, {
    topic: TOPICS.stops,
    groupId: opts.groupId ?? DEFAULT_ALERT_GROUP,
    decode: (value) => opts.events.decode(TOPICS.stops, value),
    commitEach: true,
    sessionTimeoutMs: opts.sessionTimeoutMs ?? 15_000,
    ...(opts.onError ? { onError: opts.onError } : {}),
    ...(opts.onLag ? { onLag: opts.onLag } : {}),
    handle: async (event, record, heartbeat) => {
      const alert = toStopAlert(event) ?? toFleetLoopAlert(event);
      if (alert === null) return;
      let attempts: number;
      try {
        attempts = await deliverWithRetry(() => opts.sink.deliver(alert, opts.signal), {
          retry: opts.retry ?? DEFAULT_RETRY,
          signal: opts.signal,
          heartbeat,
          random: opts.random ?? Math.random,
          ...(opts.sleep ? { sleep: opts.sleep } : {}),
          onRetry: (failures, error, waitMs) => opts.onRetry?.(alert.event_id, failures, error, waitMs),
        });
      } catch (e) {
        if (!(e instanceof LoopguardError) || e.code !== 'alert_undeliverable') throw e;
        // Given up: kept on the dead-letter topic (the alert as the receiver would have had it),
        // and only then committed past, so no alert is dropped without a trace.
        await opts.log.append(TOPICS.dlq, [
          {
            key: alert.event_id,
            value: Buffer.from(JSON.stringify(alert)),
            headers: deadLetterHeaders(
              { code: e.code, reason: e.message },
              opts.log.physicalName(TOPICS.stops),
              record.partition,
              record.offset,
            ),
          },
        ]);
        opts.onDeadLettered?.(alert.event_id, e);
        return;
      }
      delivered++;
      opts.onDelivered?.(alert.event_id, attempts);
    },
  });
  const done = new Promise<void>((resolve) => {
    if (opts.signal.aborted) resolve();
    else opts.signal.addEventListener('abort', () => resolve(), { once: true });
  }).then(() => consumer.stop());
  return {
    get delivered() {
      return delivered;
    },
    done,
  };
}
