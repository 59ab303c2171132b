import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { LoopguardError } from '../src/domain/errors.js';
import type { RecordedEvent } from '../src/domain/events.js';
import { initialState } from '../src/domain/index.js';
import { EventCodec } from '../src/events/codec.js';
import { loadSchemas, typeFromJson } from '../src/events/envelope-schema.js';
import { MemorySchemaStore } from '../src/events/memory-schema-store.js';
import { toWire } from '../src/events/serde.js';
import type { Upcaster } from '../src/events/upcast.js';
import { frame, unframe } from '../src/events/wire.js';
import { type CommandInput, foldRun, ManualClock, RunActor } from '../src/machines/index.js';
import { recordedEventArb } from './log-event-arbitraries.js';
import { SAMPLE_RECORDS } from './log-sample-events.js';
import { deps, policy } from './support/given.js';

const SUBJECT = 'loopguard.runs-value';

async function codeOf(p: Promise<unknown>): Promise<string> {
  try {
    await p;
  } catch (e) {
    expect(e).toBeInstanceOf(LoopguardError);
    return (e as LoopguardError).code;
  }
  throw new Error('expected a rejection');
}

/** The current envelope schema with some fields of one record removed: an "older" writer. */
function olderSchema(record: string, drop: readonly string[]): string {
  const schema = JSON.parse(loadSchemas().json);
  const payload = schema.fields.find((f: { name: string }) => f.name === 'payload');
  const rec = payload.type.find((t: { name: string }) => t.name === record);
  rec.fields = rec.fields.filter((f: { name: string }) => !drop.includes(f.name));
  return JSON.stringify(schema);
}

const sample = (type: string): RecordedEvent =>
  SAMPLE_RECORDS.find((r) => r.event.type === type) as RecordedEvent;

describe('EventCodec', () => {
  it('round-trips every generated event exactly (nulls, maps, policies, doubles)', async () => {
    const codec = await EventCodec.create(new MemorySchemaStore(), SUBJECT);
    await fc.assert(
      fc.asyncProperty(recordedEventArb, async (rec) => {
        const bytes = codec.encode(rec);
        // structuredClone turns fast-check's null-prototype records into plain objects, which is
        // what decode must return; toStrictEqual then also checks prototypes, NaN and -0.
        const expected = structuredClone(rec);
        expect(await codec.decode(bytes)).toStrictEqual(expected);
        expect(codec.decodeSync(bytes)).toStrictEqual(expected);
      }),
      { numRuns: 1000 },
    );
  });

  it('frames with magic byte 0 and a big-endian schema id', () => {
    const buf = frame(0x01020304, Buffer.from([9, 8]));
    expect([...buf]).toEqual([0, 1, 2, 3, 4, 9, 8]);
    expect(unframe(buf)).toEqual({ schemaId: 0x01020304, body: Buffer.from([9, 8]) });
  });

  it('rejects bad magic, short headers, truncated bodies and unknown schema ids with codes', async () => {
    const codec = await EventCodec.create(new MemorySchemaStore(), SUBJECT);
    const good = codec.encode(sample('RunStopped'));
    expect(await codeOf(codec.decode(Buffer.from([1, ...good.subarray(1)])))).toBe('bad_magic');
    expect(await codeOf(codec.decode(Buffer.alloc(0)))).toBe('truncated');
    expect(await codeOf(codec.decode(good.subarray(0, 3)))).toBe('truncated');
    expect(await codeOf(codec.decode(good.subarray(0, good.length - 4)))).toBe('truncated');
    expect(await codeOf(codec.decode(frame(99, good.subarray(5))))).toBe('unknown_schema');
    expect(() => codec.decodeSync(frame(99, good.subarray(5)))).toThrow(LoopguardError);
    expect(await codeOf(codec.decode(Buffer.concat([good, Buffer.from([0])])))).toBe('bad_payload');
  });

  it('refuses to encode a fractional or unsafe value into a long', async () => {
    const codec = await EventCodec.create(new MemorySchemaStore(), SUBJECT);
    expect(() => codec.encode({ ...sample('RunWaiting'), seq: 1.5 })).toThrow(/seq must be an integer/);
    expect(() => codec.encode({ ...sample('RunWaiting'), atMs: -(2 ** 52) - 1 })).toThrow(/atMs must be/);
    expect(() => codec.encode({ ...sample('RunWaiting'), atMs: 2 ** 53 })).toThrow(/atMs must be/);
  });

  it('reads a record written with an older schema (fields since added with defaults)', async () => {
    const store = new MemorySchemaStore();
    const old = olderSchema('io.loopguard.events.ToolCallRequested', ['similarTo', 'similarity']);
    const oldId = await store.register(SUBJECT, old);
    const codec = await EventCodec.create(store, SUBJECT);
    expect(codec.schemaId).not.toBe(oldId);

    const rec = sample('ToolCallRequested');
    const bytes = frame(oldId, typeFromJson(old).toBuffer(toWire(rec)));
    expect(await codec.decode(bytes)).toEqual({
      ...rec,
      event: { ...rec.event, similarTo: null, similarity: null },
    });
    // The resolver is cached: the same old record now decodes without I/O.
    expect(codec.decodeSync(bytes).event).toMatchObject({ type: 'ToolCallRequested', similarTo: null });
  });

  it('reads a call recorded before its intent was kept, and folds it as the call that carries it', async () => {
    const store = new MemorySchemaStore();
    const old = olderSchema('io.loopguard.events.ToolCallRequested', ['intent']);
    const oldId = await store.register(SUBJECT, old);
    const codec = await EventCodec.create(store, SUBJECT);
    const oldType = typeFromJson(old);
    const actor = new RunActor('r-intent', deps, new ManualClock(1_000));
    const history: RecordedEvent[] = [];
    const run = (cmd: CommandInput) => {
      const recs = actor.propose(cmd);
      if (!recs.ok) throw recs.error;
      actor.commit(recs.value);
      history.push(...recs.value);
    };
    run({ type: 'StartRun', runId: 'r-intent', policy: policy() });
    for (const [i, args] of [
      { q: 'refund', page: 1 },
      { q: 'refund', page: 2 },
      { q: 'refunds' },
    ].entries()) {
      run({ type: 'RequestToolCall', callId: `c${i}`, tool: 'search', args });
      run({ type: 'CompleteToolCall', callId: `c${i}`, kind: 'SUCCESS', resultHash: `h${i}` });
    }
    const requested = history.find((r) => r.event.type === 'ToolCallRequested');
    expect(requested?.event).toMatchObject({ intent: '{"q":"refund"}' });
    const before = await Promise.all(
      history.map((r) =>
        codec.decode(
          r.event.type === 'ToolCallRequested' ? frame(oldId, oldType.toBuffer(toWire(r))) : codec.encode(r),
        ),
      ),
    );
    const now = await Promise.all(history.map((r) => codec.decode(codec.encode(r))));
    expect(now).toEqual(history);
    for (const r of before)
      if (r.event.type === 'ToolCallRequested') expect(r.event).not.toHaveProperty('intent');
    const folded = (recs: readonly RecordedEvent[]) => recs.reduce(foldRun, initialState('r-intent'));
    expect(folded(before)).toEqual(folded(history));
    expect(folded(before)).toEqual(actor.state);
  });

  it('applies upcasters to records of older writers', async () => {
    const store = new MemorySchemaStore();
    const old = olderSchema('io.loopguard.events.RunStarted', ['meta']);
    const oldId = await store.register(SUBJECT, old);
    const fromOld: Upcaster = {
      type: 'RunStarted',
      applies: (_f, ctx) => ctx.writerSchemaId === oldId,
      up: (f) => ({ type: 'RunStarted', fields: { ...f, meta: { upcastFrom: String(oldId) } } }),
    };
    const codec = await EventCodec.create(store, SUBJECT, { upcasters: [fromOld] });
    const rec = sample('RunStarted');
    const decoded = await codec.decode(frame(oldId, typeFromJson(old).toBuffer(toWire(rec))));
    expect(decoded.event).toEqual({ ...rec.event, meta: { upcastFrom: String(oldId) } });
    expect(await codec.decode(codec.encode(rec))).toEqual(rec);
  });

  it('reports a writer schema that cannot be resolved to the current one', async () => {
    const store = new MemorySchemaStore();
    const id = await store.register(
      SUBJECT,
      JSON.stringify({ type: 'record', name: 'Other', fields: [{ name: 'x', type: 'int' }] }),
    );
    const codec = await EventCodec.create(store, SUBJECT);
    expect(await codeOf(codec.decode(frame(id, Buffer.from([2]))))).toBe('incompatible_schema');
  });

  it('gives the same id to the same schema under every subject', async () => {
    const store = new MemorySchemaStore();
    const a = await EventCodec.create(store, 'loopguard.runs-value');
    const b = await EventCodec.create(store, 'loopguard.stops-value');
    expect(a.schemaId).toBe(b.schemaId);
  });
});

describe('EventCodec.encode buffer handling', () => {
  it('encodes an event larger than its scratch buffer, and later small ones unaffected', async () => {
    const codec = await EventCodec.create(new MemorySchemaStore(), 'big-value');
    const big = {
      eventId: 'r/1',
      runId: 'r',
      seq: 1,
      atMs: 5,
      event: {
        type: 'BudgetWarning' as const,
        budget: 'steps',
        used: 1,
        limit: 2,
        message: 'x'.repeat(200_000),
      },
    };
    const small = { ...big, eventId: 'r/2', seq: 2, event: { ...big.event, message: 'short' } };
    const bigBytes = codec.encode(big);
    const smallBytes = codec.encode(small);
    expect(bigBytes.length).toBeGreaterThan(200_000);
    expect(await codec.decode(bigBytes)).toEqual(big);
    expect(await codec.decode(smallBytes)).toEqual(small);
    // Each result owns its bytes: encoding again must not rewrite an earlier buffer.
    codec.encode(big);
    expect(await codec.decode(smallBytes)).toEqual(small);
  });

  it('keeps every earlier result intact over many events, of every size up to a slab and beyond', async () => {
    const codec = await EventCodec.create(new MemorySchemaStore(), 'many-value');
    const recs = Array.from({ length: 3000 }, (_, i) => {
      const r = SAMPLE_RECORDS[i % SAMPLE_RECORDS.length] as RecordedEvent;
      if (i % 97 !== 0) return { ...r, eventId: `e/${i}`, seq: i + 1 };
      const message = 'm'.repeat((i * 131) % 40_000);
      return {
        ...r,
        eventId: `e/${i}`,
        seq: i + 1,
        event: { type: 'BudgetWarning' as const, budget: 'steps', used: 1, limit: 2, message },
      };
    });
    const encoded = recs.map((r) => codec.encode(r));
    expect(encoded.map((b) => codec.decodeSync(b))).toEqual(recs);
  });
});

describe('toWire', () => {
  it('gives exactly the schema fields: the domain type is the envelope field, not a payload field', () => {
    for (const rec of SAMPLE_RECORDS) {
      const fields = Object.values(toWire(rec).payload)[0] ?? {};
      expect(Object.hasOwn(fields, 'type')).toBe(false);
    }
  });
});

describe('EventCodec: records from another writer pass the boundary check', () => {
  it.each([
    ['runId', { ...sample('ToolCallRequested'), runId: '  ' }],
    ['tool', { ...sample('ToolCallRequested'), event: { ...sample('ToolCallRequested').event, tool: '' } }],
  ])(
    'a blank %s is a bad_payload naming the field (a dead letter on Kafka), not a state key',
    async (field, rec) => {
      const codec = await EventCodec.create(new MemorySchemaStore(), SUBJECT);
      const buf = codec.encode(rec as RecordedEvent);
      await expect(codec.decode(buf)).rejects.toMatchObject({
        code: 'bad_payload',
        details: { field },
      });
    },
  );
});
