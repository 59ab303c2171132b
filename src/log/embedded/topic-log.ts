/**
 * One topic of the embedded log: a directory of segment files named by their first offset, an
 * in-memory index of record positions built by scanning them, and the write path.
 */
import { constants } from 'node:fs';
import { type FileHandle, mkdir, open, readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { LoopguardError } from '../../domain/errors.js';
import type { LogRecord, StoredRecord } from '../event-log.js';
import { KeyIndex } from '../keyed-log.js';
import { decodeRecord, encodeRecord, RECORD_HEADER, type ScanResult, scanRecords } from './segment-format.js';
import { ioError, keepDamaged, nodeSegmentIo, type SegmentIo, syncDir, writeFully } from './segment-io.js';
import { WriterLock } from './writer-lock.js';

interface Segment {
  readonly base: number;
  readonly path: string;
  /** File position of each complete record known so far. */
  readonly positions: number[];
  /** Bytes of complete records; a torn tail beyond this is never read. */
  size: number;
  reader?: FileHandle;
}

const SUFFIX = '.seg';
const segmentName = (base: number): string => `${String(base).padStart(20, '0')}${SUFFIX}`;

export interface TopicOptions {
  readonly fsync: boolean;
  readonly segmentBytes: number;
  /** Never create the topic's directory (a reader of a topic nobody wrote sees it empty). */
  readonly readOnly?: boolean;
  readonly io?: SegmentIo;
  /** Where notes for people go (a torn tail cut or read around); stderr by default. */
  readonly note?: (line: string) => void;
}

export class TopicLog {
  private segments: Segment[] = [];
  /** Offsets of every key, built while scanning the segments and kept up to date by writes. */
  private readonly keys = new KeyIndex();
  private writer: { lock: WriterLock; fh: FileHandle } | undefined;
  /** The torn tail already reported, so a follower polling a dead writer's topic says it once. */
  private noted: string | undefined;

  private constructor(
    readonly name: string,
    private readonly dir: string,
    private readonly opts: TopicOptions,
  ) {}

  static async open(name: string, dir: string, opts: TopicOptions): Promise<TopicLog> {
    const t = new TopicLog(name, dir, opts);
    if (!opts.readOnly) await mkdir(dir, { recursive: true });
    await t.refresh();
    return t;
  }

  get end(): number {
    const last = this.segments.at(-1);
    return last === undefined ? 0 : last.base + last.positions.length;
  }

  get isWriter(): boolean {
    return this.writer !== undefined;
  }

  keyCount(key: string): number {
    return this.keys.count(key);
  }

  /** The records of `key` from its `fromIndex`-th on: one positioned read per record. */
  async readKey(key: string, fromIndex: number): Promise<StoredRecord[]> {
    const out: StoredRecord[] = [];
    for (const offset of this.keys.from(key, fromIndex)) {
      const seg = this.segmentOf(offset);
      const i = offset - seg.base;
      const start = seg.positions[i] as number;
      const stopAt = i + 1 < seg.positions.length ? (seg.positions[i + 1] as number) : seg.size;
      seg.reader ??= await open(seg.path, 'r');
      const buf = Buffer.allocUnsafe(stopAt - start);
      const { bytesRead } = await seg.reader.read(buf, 0, buf.length, start);
      if (bytesRead !== buf.length)
        throw new LoopguardError('log_corrupt', `${seg.path} shrank under a reader`);
      out.push(decodeRecord(this.name, buf, 0).record);
    }
    return out;
  }

  /**
   * Picks up records another process appended since the last look. Stops quietly at a torn tail:
   * for a reader that is a write in progress; only the writer may cut it (see becomeWriter).
   */
  async refresh(): Promise<void> {
    const files = await readdir(this.dir).catch((e: NodeJS.ErrnoException) => {
      if (e.code === 'ENOENT' && this.opts.readOnly) return [];
      throw e;
    });
    const names = files.filter((n) => n.endsWith(SUFFIX)).sort();
    for (const n of names) {
      const base = Number.parseInt(n, 10);
      if (this.segments.some((s) => s.base === base)) continue;
      this.segments.push({ base, path: join(this.dir, n), positions: [], size: 0 });
    }
    this.segments.sort((a, b) => a.base - b.base);
    for (const [i, seg] of this.segments.entries()) {
      const prev = this.segments[i - 1];
      const expected = prev === undefined ? 0 : prev.base + prev.positions.length;
      if (seg.base !== expected) this.missing(expected, seg);
      const size = await stat(seg.path).then(
        (st) => st.size,
        (e: unknown) => {
          if ((e as NodeJS.ErrnoException).code === 'ENOENT') this.missing(seg.base, seg);
          throw e;
        },
      );
      if (size === seg.size) continue;
      const scan = await this.scanFrom(seg, size);
      const isLast = i === this.segments.length - 1;
      if (scan.tail === 'corrupt' || (!isLast && scan.tail === 'torn')) this.corrupt(seg, scan);
      if (scan.tail === 'torn' && !this.isWriter) await this.noteTorn(seg, scan, size);
    }
  }

  /**
   * A reader says once where it stops in a torn tail, unless a live writer holds the topic (then
   * the tail is a write in progress, not damage).
   */
  private async noteTorn(seg: Segment, scan: ScanResult, size: number): Promise<void> {
    const at = `${seg.path}:${seg.size}`;
    if (this.noted === at || (await WriterLock.liveHolder(join(this.dir, 'writer.lock'))) !== null) return;
    this.noted = at;
    this.note(
      `${seg.path}: torn tail at byte ${seg.size} (${scan.reason ?? 'incomplete record'}, ${size - seg.size} bytes): reading up to the last complete record, offset ${seg.base + seg.positions.length - 1}; the next writer cuts it (or run loopguard repair)`,
    );
  }

  /** Takes the writer lock, then cuts a torn tail a crashed writer left and opens the last segment. */
  async becomeWriter(): Promise<void> {
    if (this.writer !== undefined) return;
    const lock = await WriterLock.acquire(join(this.dir, 'writer.lock'));
    try {
      await this.refresh();
      let seg = this.segments.at(-1);
      if (seg === undefined) seg = await this.createSegment(0);
      const fh = await open(seg.path, this.writeFlags());
      const { size } = await fh.stat();
      if (size > seg.size) {
        const side = await keepDamaged(seg.path, seg.size, size);
        await fh.truncate(seg.size);
        if (this.opts.fsync) await fh.datasync();
        this.note(
          `${seg.path}: cut a torn tail of ${size - seg.size} bytes at byte ${seg.size} (a write a crash interrupted, never acknowledged); kept in ${side}`,
        );
      }
      this.writer = { lock, fh };
    } catch (e) {
      await lock.release();
      throw e;
    }
  }

  /** Writes records as one batch, fsyncs once, then indexes them; returns the first offset. */
  async write(records: readonly LogRecord[]): Promise<number> {
    if (this.writer === undefined) await this.becomeWriter();
    const w = this.writer as { lock: WriterLock; fh: FileHandle };
    let seg = this.segments.at(-1) as Segment;
    if (seg.size >= this.opts.segmentBytes) seg = await this.roll(w);
    const first = this.end;
    const bufs = records.map((r, i) => encodeRecord(first + i, r));
    const data = Buffer.concat(bufs);
    try {
      // With fsync on, the file is open O_DSYNC: a write returns once its bytes are on disk, one
      // system call where write + fdatasync take two round trips through libuv's thread pool.
      await writeFully(this.opts.io ?? nodeSegmentIo, w.fh, data, seg.size, seg.path);
    } catch (e) {
      // A half-written batch must not stay ahead of the index, or the next batch would follow it.
      await w.fh.truncate(seg.size).catch(() => undefined);
      throw e instanceof LoopguardError ? e : ioError(e, seg.path, seg.size);
    }
    let p = seg.size;
    bufs.forEach((b, i) => {
      seg.positions.push(p);
      this.keys.add((records[i] as LogRecord).key, first + i);
      p += b.length;
    });
    seg.size = p;
    return first;
  }

  async read(fromOffset: number, maxRecords: number): Promise<StoredRecord[]> {
    const out: StoredRecord[] = [];
    const end = Math.min(this.end, fromOffset + maxRecords);
    let off = fromOffset;
    while (off < end) {
      const seg = this.segmentOf(off);
      const i = off - seg.base;
      const j = Math.min(end - seg.base, seg.positions.length);
      const start = seg.positions[i] as number;
      const stopAt = j < seg.positions.length ? (seg.positions[j] as number) : seg.size;
      seg.reader ??= await open(seg.path, 'r');
      const buf = Buffer.allocUnsafe(stopAt - start);
      const { bytesRead } = await seg.reader.read(buf, 0, buf.length, start);
      if (bytesRead !== buf.length)
        throw new LoopguardError('log_corrupt', `${seg.path} shrank under a reader`);
      let p = 0;
      for (let k = i; k < j; k++) {
        const { record, next } = decodeRecord(this.name, buf, p);
        out.push(record);
        p = next;
      }
      off = seg.base + j;
    }
    return out;
  }

  async close(): Promise<void> {
    for (const seg of this.segments) await seg.reader?.close();
    for (const seg of this.segments) seg.reader = undefined;
    if (this.writer !== undefined) {
      await this.writer.fh.close();
      await this.writer.lock.release();
      this.writer = undefined;
    }
  }

  /** Scans only the bytes after the known records: once per open, then whatever others appended. */
  private async scanFrom(seg: Segment, fileSize: number): Promise<ScanResult> {
    const buf = Buffer.allocUnsafe(Math.max(0, fileSize - seg.size));
    const fh = await open(seg.path, 'r');
    let bytesRead: number;
    try {
      ({ bytesRead } = await fh.read(buf, 0, buf.length, seg.size));
    } finally {
      await fh.close();
    }
    // The file may have shrunk since stat (a writer cutting a torn tail): scan what is there.
    const scan = scanRecords(buf.subarray(0, bytesRead), seg.base + seg.positions.length);
    for (const p of scan.positions) {
      this.keys.add(keyAt(buf, p), seg.base + seg.positions.length);
      seg.positions.push(seg.size + p);
    }
    seg.size += scan.validEnd;
    return scan;
  }

  private async roll(w: { fh: FileHandle }): Promise<Segment> {
    const seg = await this.createSegment(this.end);
    await w.fh.close();
    w.fh = await open(seg.path, this.writeFlags());
    return seg;
  }

  private async createSegment(base: number): Promise<Segment> {
    const seg: Segment = { base, path: join(this.dir, segmentName(base)), positions: [], size: 0 };
    await (await open(seg.path, 'a')).close();
    // The new file's directory entry must survive a crash as well as its records.
    if (this.opts.fsync) await syncDir(this.dir);
    this.segments.push(seg);
    return seg;
  }

  private segmentOf(offset: number): Segment {
    let lo = 0;
    let hi = this.segments.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if ((this.segments[mid] as Segment).base <= offset) lo = mid;
      else hi = mid - 1;
    }
    return this.segments[lo] as Segment;
  }

  private writeFlags(): number {
    return constants.O_RDWR | (this.opts.fsync ? constants.O_DSYNC : 0);
  }

  private note(line: string): void {
    (this.opts.note ?? ((l: string) => process.stderr.write(`loopguard: ${l}\n`)))(line);
  }

  private missing(offset: number, next: Segment): never {
    throw new LoopguardError(
      'log_corrupt',
      `${this.dir}: the segment holding records from offset ${offset} is missing (${offset === next.base ? `${next.path} is gone` : `the next file is ${next.path}, starting at offset ${next.base}`}); run loopguard repair to keep what comes before it`,
      { details: { path: next.path, offset } },
    );
  }

  private corrupt(seg: Segment, scan: ScanResult): never {
    throw new LoopguardError('log_corrupt', `${seg.path} at byte ${seg.size}: ${scan.reason ?? scan.tail}`, {
      details: { path: seg.path, position: seg.size },
    });
  }
}

/** The key of the record at `pos` (layout in segment-format.ts), without decoding the rest. */
function keyAt(buf: Buffer, pos: number): string {
  const p = pos + RECORD_HEADER + 8;
  return buf.toString('utf8', p + 4, p + 4 + buf.readUInt32BE(p));
}
