/**
 * On-disk record layout of a segment file. Each record carries its own length and a CRC32 of its
 * body, so a reader can tell a complete record from a torn one without any other metadata:
 *
 *   u32 bodyLength | u32 crc32(body) | body
 *   body = u32 offsetHigh | u32 offsetLow | u32 keyLength | key | i32 headersLength (-1: none)
 *          | headers (JSON) | value
 *
 * The offset is stored although it is implied by position, so a misplaced record is caught.
 */
import { crc32 } from 'node:zlib';
import type { LogRecord, StoredRecord } from '../event-log.js';

export const RECORD_HEADER = 8;
const MIN_BODY = 16;
/** Far above any sane record; a larger length is garbage, not data. */
export const MAX_BODY = 256 * 1024 * 1024;

export function encodeRecord(offset: number, rec: LogRecord): Buffer {
  const key = Buffer.from(rec.key, 'utf8');
  const headers = rec.headers === undefined ? undefined : Buffer.from(JSON.stringify(rec.headers), 'utf8');
  const bodyLen = MIN_BODY + key.length + (headers?.length ?? 0) + rec.value.length;
  const buf = Buffer.allocUnsafe(RECORD_HEADER + bodyLen);
  let p = RECORD_HEADER;
  buf.writeUInt32BE(Math.floor(offset / 0x1_0000_0000), p);
  buf.writeUInt32BE(offset % 0x1_0000_0000, p + 4);
  buf.writeUInt32BE(key.length, p + 8);
  p += 12;
  p += key.copy(buf, p);
  buf.writeInt32BE(headers === undefined ? -1 : headers.length, p);
  p += 4;
  if (headers !== undefined) p += headers.copy(buf, p);
  buf.set(rec.value, p);
  buf.writeUInt32BE(bodyLen, 0);
  buf.writeUInt32BE(crc32(buf.subarray(RECORD_HEADER)), 4);
  return buf;
}

/** Decodes the record at `pos` (already validated by scanRecords); the value shares `buf`'s memory. */
export function decodeRecord(
  topic: string,
  buf: Buffer,
  pos: number,
): { record: StoredRecord; next: number } {
  const bodyLen = buf.readUInt32BE(pos);
  const end = pos + RECORD_HEADER + bodyLen;
  let p = pos + RECORD_HEADER;
  const offset = buf.readUInt32BE(p) * 0x1_0000_0000 + buf.readUInt32BE(p + 4);
  const keyLen = buf.readUInt32BE(p + 8);
  p += 12;
  const key = buf.toString('utf8', p, p + keyLen);
  p += keyLen;
  const headersLen = buf.readInt32BE(p);
  p += 4;
  let headers: Record<string, string> | undefined;
  if (headersLen >= 0) {
    headers = JSON.parse(buf.toString('utf8', p, p + headersLen)) as Record<string, string>;
    p += headersLen;
  }
  const value = buf.subarray(p, end);
  const record: StoredRecord =
    headers === undefined ? { topic, offset, key, value } : { topic, offset, key, value, headers };
  return { record, next: end };
}

/**
 * - clean: the data ends exactly after a complete record
 * - torn: the data ends inside a record, or with a last record whose CRC fails, or with zeros: what
 *   a crash during a write leaves (or what a reader sees while a write is in progress)
 * - corrupt: a bad record followed by more data, or a record with the wrong offset: never produced
 *   by a crash, so it is reported instead of cut
 */
export type TailState = 'clean' | 'torn' | 'corrupt';

export interface ScanResult {
  /** Start position (relative to the scanned buffer) of each complete record. */
  readonly positions: number[];
  /** Position just after the last complete record. */
  readonly validEnd: number;
  readonly tail: TailState;
  readonly reason?: string;
}

export function scanRecords(buf: Buffer, firstOffset: number): ScanResult {
  const positions: number[] = [];
  let p = 0;
  const stop = (tail: TailState, reason?: string): ScanResult =>
    reason === undefined ? { positions, validEnd: p, tail } : { positions, validEnd: p, tail, reason };
  while (p < buf.length) {
    const rest = buf.length - p;
    if (rest < RECORD_HEADER) return stop('torn', 'incomplete record header');
    const bodyLen = buf.readUInt32BE(p);
    if (bodyLen < MIN_BODY || bodyLen > MAX_BODY) {
      return allZero(buf, p)
        ? stop('torn', 'zero-filled tail')
        : stop('corrupt', `invalid record length ${bodyLen}`);
    }
    const end = p + RECORD_HEADER + bodyLen;
    if (end > buf.length) return stop('torn', 'incomplete record body');
    if (crc32(buf.subarray(p + RECORD_HEADER, end)) !== buf.readUInt32BE(p + 4)) {
      return end === buf.length
        ? stop('torn', 'CRC mismatch in last record')
        : stop('corrupt', 'CRC mismatch');
    }
    const offset =
      buf.readUInt32BE(p + RECORD_HEADER) * 0x1_0000_0000 + buf.readUInt32BE(p + RECORD_HEADER + 4);
    const expected = firstOffset + positions.length;
    if (offset !== expected) return stop('corrupt', `record offset ${offset}, expected ${expected}`);
    positions.push(p);
    p = end;
  }
  return stop('clean');
}

function allZero(buf: Buffer, from: number): boolean {
  for (let i = from; i < buf.length; i++) if (buf[i] !== 0) return false;
  return true;
}
