/** The EventLog contract against KafkaLog on a real broker; every test gets fresh topics. */
import { randomUUID } from 'node:crypto';
import { KafkaLog, type KafkaLogOptions } from '../src/log/kafka/kafka-log.js';
import { eventLogContract } from './log-contract.js';
import { kafkaEnv } from './setup/kafka-env.js';

function fixture(opts: Partial<KafkaLogOptions> = {}) {
  return async () => {
    const log = await KafkaLog.connect({ brokers: kafkaEnv().brokers, clientId: 'contract', ...opts });
    const run = randomUUID();
    return { log, topic: (base: string) => `test.${base}.${run}`, cleanup: () => log.close() };
  };
}

eventLogContract('kafka', fixture());

// No linger and tiny batches: every concurrent append still gets contiguous offsets in call order.
eventLogContract('kafka (lingerMs 0, maxBatchRecords 3)', fixture({ lingerMs: 0, maxBatchRecords: 3 }));
