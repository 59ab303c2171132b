/**
 * Confluent wire framing: magic byte 0, 4-byte big-endian schema id, Avro body. Kept identical in
 * the embedded log so a file record and a Kafka record carry the same bytes.
 */
import { type ErrorCode, LoopguardError } from '../domain/errors.js';

export const MAGIC_BYTE = 0;
export const HEADER_BYTES = 5;

export function frame(schemaId: number, body: Uint8Array): Buffer {
  if (!Number.isInteger(schemaId) || schemaId < 0 || schemaId > 0xffffffff) {
    throw new LoopguardError('bad_schema_id', `schema id ${schemaId} does not fit 4 bytes`);
  }
  const out = Buffer.allocUnsafe(HEADER_BYTES + body.length);
  out[0] = MAGIC_BYTE;
  out.writeUInt32BE(schemaId, 1);
  out.set(body, HEADER_BYTES);
  return out;
}

/** Bytes held as a Uint8Array (a BLOB read from SQLite) as a Buffer over the same memory. */
export const asBuffer = (b: Uint8Array): Buffer => Buffer.from(b.buffer, b.byteOffset, b.byteLength);

export function unframe(buf: Uint8Array): { schemaId: number; body: Buffer } {
  const b = Buffer.isBuffer(buf) ? buf : asBuffer(buf);
  return { schemaId: schemaIdOf(b), body: b.subarray(HEADER_BYTES) };
}

/** The writer schema id of a framed record, its header checked; the body starts at HEADER_BYTES. */
export function schemaIdOf(b: Buffer): number {
  if (b.length === 0) throw new LoopguardError('truncated', 'empty payload: no wire header');
  if (b[0] !== MAGIC_BYTE) {
    throw new LoopguardError('bad_magic', `magic byte is ${b[0]}, expected ${MAGIC_BYTE}`, {
      details: { magic: b[0] },
    });
  }
  if (b.length < HEADER_BYTES) {
    throw new LoopguardError('truncated', `payload of ${b.length} bytes is shorter than the wire header`);
  }
  return b.readUInt32BE(1);
}

/** A framed record whose Avro body (of writer schema `schemaId`) does not decode. */
export const undecodable = (code: ErrorCode, schemaId: number, e: unknown): LoopguardError =>
  new LoopguardError(code, `cannot decode Avro body (schema ${schemaId}): ${(e as Error).message}`, {
    cause: e,
    details: { schemaId },
  });
