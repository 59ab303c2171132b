/**
 * FleetLoopDetected is a BACKWARD change, checked by the real registry: the envelope without it
 * (the schema before) registered first, the envelope with it accepted as the next version, and a
 * record the old writer wrote read by the new reader.
 */
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { EventCodec } from '../src/events/codec.js';
import { loadSchemas, typeFromJson } from '../src/events/envelope-schema.js';
import { RegistrySchemaStore } from '../src/events/registry-schema-store.js';
import { toWire } from '../src/events/serde.js';
import { frame } from '../src/events/wire.js';
import { SAMPLE_RECORDS } from './log-sample-events.js';
import { kafkaEnv } from './setup/kafka-env.js';

/** The envelope as it was before: the same, less the payload branch added at the union's end. */
function envelopeBefore(json: string): string {
  const envelope = JSON.parse(json);
  const payload = envelope.fields.find((f: { name: string }) => f.name === 'payload');
  const last = payload.type.pop();
  expect(last.name).toBe('io.loopguard.events.FleetLoopDetected');
  return JSON.stringify(envelope);
}

describe('FleetLoopDetected in the registry', () => {
  it('is accepted as a BACKWARD-compatible version, and old records still decode', async () => {
    const { registryUrl } = kafkaEnv();
    const store = new RegistrySchemaStore({ url: registryUrl });
    const subject = `fleet-schema-${randomUUID()}-value`;
    const before = envelopeBefore(loadSchemas().json);
    const oldId = await store.register(subject, before);
    const codec = await EventCodec.create(store, subject);
    expect(codec.schemaId).not.toBe(oldId);

    const stopped = SAMPLE_RECORDS.find((r) => r.event.type === 'RunStopped');
    if (stopped === undefined) throw new Error('no RunStopped sample');
    const oldBytes = frame(oldId, typeFromJson(before).toBuffer(toWire(stopped)));
    expect(await codec.decode(oldBytes)).toEqual(stopped);
    const fleet = SAMPLE_RECORDS.find((r) => r.event.type === 'FleetLoopDetected');
    if (fleet === undefined) throw new Error('no FleetLoopDetected sample');
    expect(await codec.decode(codec.encode(fleet))).toEqual(fleet);
  });
});
