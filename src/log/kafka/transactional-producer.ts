import type { Producer } from 'kafkajs';
import { kafkaError } from './kafka-error.js';
import { type KafkaLog, PRODUCER_CONFIG } from './kafka-log.js';
import { cacheKafkajsCoordinators } from './kafkajs-coordinator-cache.js';

/**
 * A connected transactional producer (configured as KafkaLog's) whose transactional id is
 * registered with the coordinator, which bumps its epoch and aborts whatever the previous holder
 * left open: from here on, a producer of the same id elsewhere is fenced.
 */
export async function transactionalProducer(log: KafkaLog, transactionalId: string): Promise<Producer> {
  // Each transaction would otherwise look its coordinators up four times (kafkajs-coordinator-cache.ts).
  cacheKafkajsCoordinators();
  const producer = log.kafka.producer({
    ...PRODUCER_CONFIG,
    transactionalId,
    // A transaction the worker died inside is aborted by the broker after this long at most
    // (sooner when the next owner registers the same id).
    transactionTimeout: 30_000,
    // A transaction begun as soon as the one before it committed meets the coordinator still
    // writing that one's markers: AddPartitionsToTxn answers CONCURRENT_TRANSACTIONS for a few ms.
    // The first retry comes after 20 ms (the Java client's backoff for this case) instead of
    // kafkajs's 300 ms; retries stay unlimited, as an idempotent producer's must.
    retry: { initialRetryTime: 20, retries: Number.MAX_SAFE_INTEGER },
  });
  try {
    await producer.connect();
    // kafkajs registers the transactional id on the first transaction, not on connect: begin
    // (and drop) an empty one now, so the fence is up before the caller reads offsets or state.
    const fence = await producer.transaction();
    await fence.abort();
  } catch (e) {
    await producer.disconnect().catch(() => undefined);
    throw kafkaError(e, `registering transactional id ${transactionalId}`);
  }
  return producer;
}
