/**
 * Reading the segment log loopguard wrote before the SQLite store, for `loopguard migrate` only.
 * Each record of a segment file carries its own length and a CRC32 of its body, so a reader can
 * tell a complete record from a torn one without any other metadata:
 *
 *   u32 bodyLength | u32 crc32(body) | body
 *   body = u32 offsetHigh | u32 offsetLow | u32 keyLength | key | i32 headersLength (-1: none)
 *          | headers (JSON) | value
 *
 * The offset is stored although it is implied by position, so a misplaced record is caught.
 */
import { crc32 } from 'node:zlib';
import type { StoredRecord } from '../event-log.js';

const RECORD_HEADER = 8;
const MIN_BODY = 16;
/** Far above any sane record; a larger length is garbage, not data. */
const MAX_BODY = 256 * 1024 * 1024;

/** The offset a record's body starts with (a u64 as two u32s). */
const offsetAt = (buf: Buffer, body: number): number =>
  buf.readUInt32BE(body) * 0x1_0000_0000 + buf.readUInt32BE(body + 4);

/** Decodes the record at `pos` (checked by scanRecords); the value shares `buf`'s memory. */
export function decodeRecord(
  topic: string,
  buf: Buffer,
  pos: number,
): { record: StoredRecord; next: number } {
  const bodyLen = buf.readUInt32BE(pos);
  const end = pos + RECORD_HEADER + bodyLen;
  let p = pos + RECORD_HEADER;
  const offset = offsetAt(buf, p);
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
 * - torn: the data ends inside a record, or with damage that no complete record follows (zeros, a
 *   bad length or CRC): what a crash during a write leaves (or a reader sees while a write is in
 *   progress)
 * - corrupt: a bad record followed by a complete one, or a record with the wrong offset: never
 *   produced by a crash, so it is reported instead of cut
 */
type TailState = 'clean' | 'torn' | 'corrupt';

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
    const next = firstOffset + positions.length;
    if (bodyLen < MIN_BODY || bodyLen > MAX_BODY) {
      if (buf.subarray(p).every((b) => b === 0)) return stop('torn', 'zero-filled tail');
      return recordAfter(buf, p, next)
        ? stop('corrupt', `invalid record length ${bodyLen}`)
        : stop('torn', `invalid record length ${bodyLen} and no complete record after it`);
    }
    const end = p + RECORD_HEADER + bodyLen;
    if (end > buf.length) return stop('torn', 'incomplete record body');
    if (crc32(buf.subarray(p + RECORD_HEADER, end)) !== buf.readUInt32BE(p + 4)) {
      return recordAfter(buf, p, next)
        ? stop('corrupt', 'CRC mismatch')
        : stop('torn', 'CRC mismatch and no complete record after it');
    }
    const offset = offsetAt(buf, p + RECORD_HEADER);
    if (offset !== next) return stop('corrupt', `record offset ${offset}, expected ${next}`);
    positions.push(p);
    p = end;
  }
  return stop('clean');
}

/**
 * Whether a complete, intact record of a later offset starts anywhere after a damaged one at
 * `from`: then the damage is in the middle (corruption), else it is what an interrupted write
 * leaves at the end. The offset check keeps the CRC work to real candidates.
 */
function recordAfter(buf: Buffer, from: number, nextOffset: number): boolean {
  for (let q = from + 1; q + RECORD_HEADER + MIN_BODY <= buf.length; q++) {
    const bodyLen = buf.readUInt32BE(q);
    if (bodyLen < MIN_BODY || q + RECORD_HEADER + bodyLen > buf.length) continue;
    const offset = offsetAt(buf, q + RECORD_HEADER);
    if (offset < nextOffset || offset > nextOffset + 1_000_000) continue;
    if (crc32(buf.subarray(q + RECORD_HEADER, q + RECORD_HEADER + bodyLen)) === buf.readUInt32BE(q + 4))
      return true;
  }
  return false;
}
