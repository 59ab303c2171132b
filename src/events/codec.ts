/**
 * Encodes recorded events as Confluent-framed Avro and decodes them back, whichever schema
 * version wrote them: the writer schema is fetched by id once, and an avsc resolver maps it onto
 * the current reader schema; upcasters then fix what resolution cannot.
 */
import type { Resolver, Type } from 'avsc';
import { IllegalStateError, LoopguardError, toLoopguardError } from '../domain/errors.js';
import type { RecordedEvent } from '../domain/events.js';
import { type SchemaStore, unknownSchema } from '../ports/schema-store.js';
import { loadSchemas, resolverOf } from './envelope-schema.js';
import { fromWire, toWireLoose, type WireEnvelope } from './serde.js';
import { type Upcaster, upcast } from './upcast.js';
import { frame, HEADER_BYTES, MAGIC_BYTE, schemaIdOf, undecodable } from './wire.js';

export interface EventCodecOptions {
  /** Directory of the `.avsc` files; defaults to the repo's `schemas/`. */
  readonly schemasDir?: string;
  readonly upcasters?: readonly Upcaster[];
}

/** Room for a hundred ordinary events; a slab is held while any of its slices is. */
const SLAB_BYTES = 16 * 1024;

/** `null` marks the codec's own schema: no resolver needed. */
type Reading = Resolver | null;

export class EventCodec {
  private readonly readings = new Map<number, Reading>();
  private readonly pending = new Map<number, Promise<Reading>>();
  /**
   * Where events are encoded, framed in place and handed out as slices (as Node's buffer pool
   * does): no buffer and no copy per event. A slice is never written again; a full slab is left to
   * the slices that hold it.
   */
  private slab = Buffer.allocUnsafeSlow(SLAB_BYTES);
  private used = 0;

  private constructor(
    private readonly store: SchemaStore,
    private readonly type: Type,
    readonly schemaId: number,
    private readonly upcasters: readonly Upcaster[],
    /** Writer schemas at hand without I/O (a reader's database): decodeSync learns them itself. */
    private readonly schemaAtHand?: (schemaId: number) => string | undefined,
  ) {
    this.readings.set(schemaId, null);
  }

  /** Registers the current envelope schema under `subject` (e.g. `loopguard.runs-value`). */
  static async create(
    store: SchemaStore,
    subject: string,
    opts: EventCodecOptions = {},
  ): Promise<EventCodec> {
    const schemas = loadSchemas(opts.schemasDir);
    const id = await store.register(subject, schemas.json);
    return new EventCodec(store, schemas.envelope, id, opts.upcasters ?? []);
  }

  /**
   * A codec that only reads, for a reader with its schemas at hand (a database inside a
   * transaction): `schemaText` gives a writer schema's text at once (undefined: not there), so
   * `decodeSync` reads any of them without I/O. `ownId`: the current schema's id there, if any.
   */
  static reader(
    schemaText: (schemaId: number) => string | undefined,
    opts: EventCodecOptions & { readonly ownId?: number } = {},
  ): EventCodec {
    const store: SchemaStore = {
      register: () => Promise.reject(new IllegalStateError('read_only', 'a reading codec registers nothing')),
      schemaById: (id) => {
        const text = schemaText(id);
        return text === undefined ? Promise.reject(unknownSchema(id)) : Promise.resolve(text);
      },
    };
    const { envelope } = loadSchemas(opts.schemasDir);
    return new EventCodec(store, envelope, opts.ownId ?? -1, opts.upcasters ?? [], schemaText);
  }

  /**
   * Encodes straight into the slab behind the 5-byte header and returns that slice (every call's
   * path). An event that does not fit what is left is encoded again into a new slab; one larger
   * than a slab gets a buffer of its own.
   */
  encode(rec: RecordedEvent): Buffer {
    const wire = toWireLoose(rec);
    let start = this.used;
    let end = this.type.encode(wire, this.slab, start + HEADER_BYTES);
    if (end < 0) {
      // avsc answers how many bytes it lacked: the framed event is this long.
      const size = SLAB_BYTES - end - start;
      if (size > SLAB_BYTES) return frame(this.schemaId, this.type.toBuffer(wire));
      this.slab = Buffer.allocUnsafeSlow(SLAB_BYTES);
      start = 0;
      end = this.type.encode(wire, this.slab, HEADER_BYTES);
    }
    this.slab[start] = MAGIC_BYTE;
    this.slab.writeUInt32BE(this.schemaId, start + 1);
    this.used = end;
    return this.slab.subarray(start, end);
  }

  async decode(buf: Buffer): Promise<RecordedEvent> {
    const schemaId = schemaIdOf(buf);
    const reading = this.readings.has(schemaId)
      ? (this.readings.get(schemaId) ?? null)
      : await this.load(schemaId);
    return this.read(buf, schemaId, reading);
  }

  /** Whether the writer schema of a framed record is loaded, so `decodeSync` can read it. */
  knows(buf: Buffer): boolean {
    return buf.length >= HEADER_BYTES && buf[0] === MAGIC_BYTE && this.readings.has(buf.readUInt32BE(1));
  }

  /** Decodes without I/O; throws `unknown_schema` if the writer schema has not been loaded yet. */
  decodeSync(buf: Buffer): RecordedEvent {
    const schemaId = schemaIdOf(buf);
    const text = this.readings.has(schemaId) ? undefined : this.schemaAtHand?.(schemaId);
    const reading = text === undefined ? this.readings.get(schemaId) : this.learn(schemaId, text);
    if (reading === undefined) {
      throw new LoopguardError('unknown_schema', `schema ${schemaId} not loaded; use decode()`, {
        details: { schemaId },
      });
    }
    return this.read(buf, schemaId, reading);
  }

  /** The Avro body of a framed record, read in place (a rebuild decodes every record there is). */
  private read(framed: Buffer, schemaId: number, reading: Reading): RecordedEvent {
    let wire: WireEnvelope;
    try {
      const { value, offset } = this.type.decode(framed, HEADER_BYTES, reading ?? undefined);
      if (offset < 0) throw new Error('truncated buffer');
      if (offset < framed.length) throw new Error('trailing data');
      wire = value as WireEnvelope;
    } catch (e) {
      throw undecodable(/truncated/i.test((e as Error).message) ? 'truncated' : 'bad_payload', schemaId, e);
    }
    const ctx = { writerSchemaId: schemaId, readerSchemaId: this.schemaId };
    return fromWire(this.upcasters.length === 0 ? wire : upcast(wire, this.upcasters, ctx));
  }

  private load(schemaId: number): Promise<Reading> {
    let p = this.pending.get(schemaId);
    if (p === undefined) {
      p = this.resolve(schemaId).finally(() => this.pending.delete(schemaId));
      this.pending.set(schemaId, p);
    }
    return p;
  }

  private async resolve(schemaId: number): Promise<Reading> {
    let text: string;
    try {
      text = await this.store.schemaById(schemaId);
    } catch (e) {
      throw toLoopguardError(e, 'schema_store_unavailable');
    }
    return this.learn(schemaId, text);
  }

  /** How records of writer schema `schemaId` (its text) are read from now on. */
  private learn(schemaId: number, text: string): Reading {
    const resolver = resolverOf(this.type, schemaId, text);
    this.readings.set(schemaId, resolver);
    return resolver;
  }
}
