/**
 * A shared log needs one key for secret values on every worker and client: without one, neither
 * a worker nor a client starts (and neither touches the broker first).
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createRemoteGuard } from '../src/client/index.js';
import type { KafkaLog } from '../src/log/kafka/kafka-log.js';
import { GuardWorker } from '../src/service/guard-worker.js';
import type { ServiceConnection } from '../src/service/open-service.js';

describe('the service without LOOPGUARD_SECRET_KEY', () => {
  let saved: string | undefined;
  beforeEach(() => {
    saved = process.env.LOOPGUARD_SECRET_KEY;
    delete process.env.LOOPGUARD_SECRET_KEY;
  });
  afterEach(() => {
    if (saved !== undefined) process.env.LOOPGUARD_SECRET_KEY = saved;
  });

  it('refuses to start a worker, naming the variable', async () => {
    // A log that fails any use: the key is checked before the worker touches Kafka.
    const log = new Proxy({}, { get: () => () => Promise.reject(new Error('touched Kafka')) }) as KafkaLog;
    const conn = { log } as unknown as ServiceConnection;
    await expect(GuardWorker.start({ ...conn, groupId: 'g' })).rejects.toMatchObject({
      code: 'secret_key_required',
      message: expect.stringContaining('LOOPGUARD_SECRET_KEY'),
    });
  });

  it('refuses to create a client, naming the variable', async () => {
    await expect(
      createRemoteGuard({ brokers: ['127.0.0.1:1'], registry: 'http://127.0.0.1:1' }),
    ).rejects.toMatchObject({
      code: 'secret_key_required',
      message: expect.stringContaining('createRemoteGuard'),
    });
  });
});
