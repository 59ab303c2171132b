/**
 * The Kafka adapter's retry policy, judged on kafkajs's own error objects: what Kafka's error
 * table marks retriable (a leader moved, a coordinator moved) is tried again with bounded
 * backoff; anything else, and anything past the deadline, fails at once with a coded error.
 */
import { createRequire } from 'node:module';
import {
  type Admin,
  KafkaJSConnectionError,
  KafkaJSNonRetriableError,
  KafkaJSNumberOfRetriesExceeded,
} from 'kafkajs';
import { describe, expect, it } from 'vitest';
import { LoopguardError } from '../src/domain/errors.js';
import { kafkaError } from '../src/log/kafka/kafka-error.js';
import { isRetriableKafkaError, type KafkaRetry, withKafkaRetry } from '../src/log/kafka/kafka-retry.js';
import { fetchTopicOffsets } from '../src/log/kafka/topic-registry.js';

const { createErrorFromCode } = createRequire(import.meta.url)('kafkajs/src/protocol/error.js') as {
  createErrorFromCode(code: number): Error & { type: string; retriable: boolean };
};
const NOT_LEADER_OR_FOLLOWER = 6;
const LEADER_NOT_AVAILABLE = 5;
const NOT_COORDINATOR = 16;
const TOPIC_AUTHORIZATION_FAILED = 29;
const fast = { initialBackoffMs: 1, maxBackoffMs: 4, deadlineMs: 5_000 };

/** Fails with each error in turn, then answers `done`. */
function failing(errors: unknown[]) {
  const seen: number[] = [];
  return {
    seen,
    work: async (attempt: number) => {
      seen.push(attempt);
      const e = errors[attempt - 1];
      if (e !== undefined) throw e;
      return 'done';
    },
  };
}

describe('isRetriableKafkaError', () => {
  it("follows Kafka's error table, through kafkajs's wrappers and ours", () => {
    expect(isRetriableKafkaError(createErrorFromCode(NOT_LEADER_OR_FOLLOWER))).toBe(true);
    expect(isRetriableKafkaError(createErrorFromCode(LEADER_NOT_AVAILABLE))).toBe(true);
    expect(isRetriableKafkaError(createErrorFromCode(NOT_COORDINATOR))).toBe(true);
    expect(isRetriableKafkaError(createErrorFromCode(TOPIC_AUTHORIZATION_FAILED))).toBe(false);
    expect(isRetriableKafkaError(new KafkaJSConnectionError('Connection refused'))).toBe(true);
    expect(isRetriableKafkaError(new KafkaJSNonRetriableError('no'))).toBe(false);
    const gaveUp = new KafkaJSNumberOfRetriesExceeded(createErrorFromCode(NOT_LEADER_OR_FOLLOWER), {
      retryCount: 5,
      retryTime: 100,
    });
    expect(isRetriableKafkaError(gaveUp)).toBe(true);
    expect(isRetriableKafkaError(kafkaError(createErrorFromCode(NOT_LEADER_OR_FOLLOWER), 'x'))).toBe(true);
    expect(isRetriableKafkaError(new LoopguardError('kafka_timeout', 'late', { retriable: true }))).toBe(
      false,
    );
    expect(isRetriableKafkaError(new Error('a handler failed'))).toBe(false);
  });
});

describe('withKafkaRetry', () => {
  it('retries a leader change and a coordinator move, with growing backoff, and returns the answer', async () => {
    const f = failing([createErrorFromCode(NOT_LEADER_OR_FOLLOWER), createErrorFromCode(NOT_COORDINATOR)]);
    const retries: KafkaRetry[] = [];
    const policy = { initialBackoffMs: 5, maxBackoffMs: 1_000, deadlineMs: 5_000 };
    await expect(withKafkaRetry('op', f.work, { policy, onRetry: (r) => retries.push(r) })).resolves.toBe(
      'done',
    );
    expect(f.seen).toEqual([1, 2, 3]);
    expect(retries.map((r) => r.attempt)).toEqual([1, 2]);
    const [first, second] = retries.map((r) => r.backoffMs);
    expect(first).toBeGreaterThanOrEqual(4);
    expect(first).toBeLessThanOrEqual(6);
    expect(second).toBeGreaterThanOrEqual(8);
    expect(second).toBeLessThanOrEqual(12);
  });

  it('fails at once, as a coded error naming the operation, on what Kafka does not mark retriable', async () => {
    const f = failing([createErrorFromCode(TOPIC_AUTHORIZATION_FAILED)]);
    const got = await withKafkaRetry('fetching offsets of t', f.work, { policy: fast }).catch((e) => e);
    expect(f.seen).toEqual([1]);
    expect(got).toBeInstanceOf(LoopguardError);
    expect(got).toMatchObject({ code: 'kafka_unavailable', retriable: false });
    expect(got.message).toContain('fetching offsets of t');
  });

  it('is bounded: past the deadline the last retriable error leaves, with the attempts made', async () => {
    const always = async () => {
      throw createErrorFromCode(NOT_LEADER_OR_FOLLOWER);
    };
    let now = 0;
    const slept: number[] = [];
    const clock = {
      now: () => now,
      sleep: async (ms: number) => {
        slept.push(ms);
        now += ms;
      },
    };
    const got = await withKafkaRetry('op', always, {
      policy: { initialBackoffMs: 100, maxBackoffMs: 400, deadlineMs: 1_500 },
      clock,
      random: () => 0.5,
    }).catch((e) => e);
    expect(got).toMatchObject({ code: 'kafka_unavailable', retriable: true });
    expect(got.message).toMatch(/not the leader|NOT_LEADER/i);
    // 100, 200, 400, 400, 400 reach the deadline exactly; one more would pass it.
    expect(slept).toEqual([100, 200, 400, 400, 400]);
    expect(got.details.attempts).toBe(6);
  });
});

describe('fetchTopicOffsets', () => {
  const createAdmin = createRequire(import.meta.url)('kafkajs/src/admin/index.js') as (o: unknown) => Admin;
  /**
   * kafkajs's own admin over a cluster that, for the first `lost` attempts, answers the request of
   * the low offsets with nothing (no leader known for it: a leader moving, or the client's metadata
   * refreshed between the two requests) or, with `wrongPartition`, about another partition.
   */
  function adminLosingLeader(lost: number, wrongPartition = false) {
    let requests = 0;
    const logger = { namespace: () => logger, info() {}, warn() {}, error() {}, debug() {} };
    const cluster = {
      addTargetTopic: async () => {},
      refreshMetadataIfNecessary: async () => {},
      refreshMetadata: async () => {},
      findTopicPartitionMetadata: () => [{ partitionId: 0 }],
      fetchTopicsOffset: async ([{ topic, fromBeginning }]: [{ topic: string; fromBeginning: boolean }]) => {
        requests++;
        const offset = fromBeginning ? '3' : '9';
        if (!fromBeginning || requests > 2 * lost) return [{ topic, partitions: [{ partition: 0, offset }] }];
        return wrongPartition ? [{ topic, partitions: [{ partition: 1, offset }] }] : [];
      },
    };
    return createAdmin({ logger, cluster, retry: { retries: 0 }, instrumentationEmitter: { emit() {} } });
  }

  it("retries kafkajs's empty answer when it knew no leader for the second request, and returns the offsets", async () => {
    await expect(adminLosingLeader(2).fetchTopicOffsets('t')).rejects.toThrow(TypeError);
    await expect(fetchTopicOffsets(adminLosingLeader(2), 't', fast)).resolves.toEqual([
      { partition: 0, offset: '9', high: '9', low: '3' },
    ]);
  });

  it('fails at once on a TypeError of another kind', async () => {
    const got = await fetchTopicOffsets(adminLosingLeader(1, true), 't', fast).catch((e) => e);
    expect(got).toMatchObject({ code: 'kafka_unavailable' });
    expect(got.message).toMatch(/fetching offsets of t: Cannot read properties of undefined/);
    expect(got.message).not.toMatch(/attempts/);
  });
});
