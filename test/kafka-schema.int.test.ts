/**
 * Schema evolution through the registry: subjects `<topic>-value` under BACKWARD compatibility,
 * a compatible new version, a refused incompatible one, and old records read with the new reader.
 */
import { randomUUID } from 'node:crypto';
import avsc from 'avsc';
import { afterEach, describe, expect, it } from 'vitest';
import { RegistrySchemaStore } from '../src/events/registry-schema-store.js';
import { frame, unframe } from '../src/events/wire.js';
import { KafkaLog } from '../src/log/kafka/kafka-log.js';
import { schemaStoreContract } from './schema-store-contract.js';
import { kafkaEnv } from './setup/kafka-env.js';

const closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of closers.splice(0)) await c().catch(() => undefined);
});

const record = (fields: object[]) => ({
  type: 'record',
  name: 'Probe',
  namespace: 'io.loopguard.test',
  fields,
});
const V1 = record([
  { name: 'id', type: 'string' },
  { name: 'n', type: 'long' },
]);
const V2 = record([
  { name: 'id', type: 'string' },
  { name: 'n', type: 'long' },
  { name: 'note', type: 'string', default: 'none' },
]);
/** A new required field without a default: a new reader cannot read old records. */
const BAD = record([
  { name: 'id', type: 'string' },
  { name: 'n', type: 'long' },
  { name: 'owner', type: 'string' },
]);

async function getJson(url: string): Promise<unknown> {
  const res = await fetch(url);
  expect(res.status).toBe(200);
  return res.json();
}

schemaStoreContract('registry', async () => {
  const { registryUrl } = kafkaEnv();
  return {
    store: new RegistrySchemaStore({ url: registryUrl }),
    other: () => new RegistrySchemaStore({ url: registryUrl }),
    close: async () => {},
  };
});

describe('RegistrySchemaStore with a real registry', () => {
  it('registers under <topic>-value with BACKWARD, evolves compatibly, refuses an incompatible change', async () => {
    const { registryUrl } = kafkaEnv();
    const store = new RegistrySchemaStore({ url: registryUrl });
    const subject = `probe-${randomUUID()}-value`;

    const v1 = await store.register(subject, JSON.stringify(V1));
    expect(await store.register(subject, JSON.stringify(V1))).toBe(v1);
    const config = (await getJson(`${registryUrl}/config/${subject}`)) as { compatibilityLevel: string };
    expect(config.compatibilityLevel).toBe('BACKWARD');

    const v2 = await store.register(subject, JSON.stringify(V2));
    expect(v2).not.toBe(v1);
    expect(await getJson(`${registryUrl}/subjects/${subject}/versions`)).toEqual([1, 2]);

    await expect(store.register(subject, JSON.stringify(BAD))).rejects.toMatchObject({
      code: 'incompatible_schema',
    });
    expect(await getJson(`${registryUrl}/subjects/${subject}/versions`)).toEqual([1, 2]);

    // A fresh store (another process) finds both versions by id.
    const other = new RegistrySchemaStore({ url: registryUrl });
    expect(JSON.parse(await other.schemaById(v1))).toEqual(V1);
    await expect(other.schemaById(0x7fff_fff0)).rejects.toMatchObject({ code: 'unknown_schema' });
  });

  it('reads records written with the old schema using the new one as reader', async () => {
    const { brokers, registryUrl } = kafkaEnv();
    const log = await KafkaLog.connect({ brokers, topicSuffix: `-${randomUUID()}` });
    closers.push(() => log.close());
    const topic = 'loopguard.probe';
    const subject = `${(await log.prepare(topic)).name}-value`;
    const store = new RegistrySchemaStore({ url: registryUrl });

    const v1 = await store.register(subject, JSON.stringify(V1));
    const writer1 = avsc.Type.forSchema(V1 as avsc.Schema);
    await log.append(topic, [{ key: 'a', value: frame(v1, writer1.toBuffer({ id: 'a', n: 1 })) }]);

    const v2 = await store.register(subject, JSON.stringify(V2));
    const reader = avsc.Type.forSchema(V2 as avsc.Schema);
    await log.append(topic, [
      { key: 'b', value: frame(v2, reader.toBuffer({ id: 'b', n: 2, note: 'new' })) },
    ]);

    const decoded = [];
    for (const r of await log.read(topic, 0)) {
      const { schemaId, body } = unframe(r.value);
      const writer = avsc.Type.forSchema(JSON.parse(await store.schemaById(schemaId)) as avsc.Schema);
      const resolver = reader.createResolver(writer);
      decoded.push({ schemaId, value: { ...reader.fromBuffer(body, resolver) } });
    }
    expect(decoded).toEqual([
      { schemaId: v1, value: { id: 'a', n: 1, note: 'none' } },
      { schemaId: v2, value: { id: 'b', n: 2, note: 'new' } },
    ]);
  });
});
