/**
 * The default, file-backed EventLog. Each topic is a directory of append-only segment files under
 * the data dir (`<dir>/topics/<topic>/<first offset>.seg`); every record carries its length and a
 * CRC32 (see segment-format.ts).
 *
 * Durability: append() resolves only after its records are written and fsynced. Appends made while
 * a write is pending join the next batch (group commit), so one fsync covers many appends.
 * Crash safety: a torn last record is detected by length/CRC, never returned, and cut when the
 * next writer takes over the topic; everything acknowledged before the crash is on disk.
 * Processes: any number may read a data dir (they pick up new records on read and while following);
 * one process at a time writes a topic, enforced by a pid lock file per topic.
 */
import { mkdir, readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { LoopguardError } from '../../domain/errors.js';
import type { LogRecord, StoredRecord } from '../event-log.js';
import { checkKeyed, type KeyedLog, keyConflict } from '../keyed-log.js';
import { checkRead, checkTopic, closedError } from '../log-errors.js';
import { pollFollow } from '../poll-follow.js';
import { MAX_BODY, recordBytes } from './segment-format.js';
import type { SegmentIo } from './segment-io.js';
import { TopicLog } from './topic-log.js';

export interface EmbeddedLogOptions {
  /** 'batch' (default): fsync every group commit. 'none': leave flushing to the OS (tests, benches). */
  readonly fsync?: 'batch' | 'none';
  /** Extra time a batch waits for more appends before it is written; 0 (default) = next event-loop turn. */
  readonly groupCommitMs?: number;
  /** A segment is closed and a new one started once it reaches this size. */
  readonly segmentBytes?: number;
  /** How often a follower looks for records written by another process. */
  readonly pollMs?: number;
  /**
   * The largest record (header, key, headers and value) an append may write; a larger one is
   * refused before anything is written. Default 1 MiB, Kafka's default message limit.
   */
  readonly maxRecordBytes?: number;
  /** The write primitive (tests inject short writes and a full disk). */
  readonly io?: SegmentIo;
  /** Where notes for people go (torn tails); stderr by default. */
  readonly note?: (line: string) => void;
  /**
   * Open for reading only: nothing is created or written (not even the data dir, which must
   * exist), appends are refused with `read_only`, and a torn tail is read around, never cut.
   */
  readonly readOnly?: boolean;
}

interface Pending {
  readonly records: readonly LogRecord[];
  /** For a conditional append: how many records its key must have when the batch is written. */
  readonly expect?: { readonly key: string; readonly count: number };
  readonly resolve: (offsets: number[]) => void;
  readonly reject: (e: unknown) => void;
}

interface TopicState {
  readonly log: TopicLog;
  queue: Pending[];
  flushing: Promise<void> | undefined;
}

export const DEFAULT_DATA_DIR = './.loopguard';
const DEFAULT_MAX_RECORD_BYTES = 1024 * 1024;
const DEFAULT_SEGMENT_BYTES = 64 * 1024 * 1024;
const FOLLOW_PAGE = 1000;

export class EmbeddedLog implements KeyedLog {
  private readonly topics = new Map<string, Promise<TopicState>>();
  private readonly wakers = new Map<string, Set<() => void>>();
  private closed = false;

  private constructor(
    private readonly dir: string,
    private readonly opts: Required<Omit<EmbeddedLogOptions, 'io' | 'note'>> &
      Pick<EmbeddedLogOptions, 'io' | 'note'>,
  ) {}

  /** Opens (creating if needed) the data dir and indexes every existing topic by scanning it. */
  static async open(dir: string = DEFAULT_DATA_DIR, opts: EmbeddedLogOptions = {}): Promise<EmbeddedLog> {
    const log = new EmbeddedLog(dir, {
      fsync: opts.fsync ?? 'batch',
      groupCommitMs: opts.groupCommitMs ?? 0,
      segmentBytes: opts.segmentBytes ?? DEFAULT_SEGMENT_BYTES,
      pollMs: opts.pollMs ?? 100,
      readOnly: opts.readOnly ?? false,
      maxRecordBytes: Math.min(opts.maxRecordBytes ?? DEFAULT_MAX_RECORD_BYTES, MAX_BODY),
      ...(opts.io ? { io: opts.io } : {}),
      ...(opts.note ? { note: opts.note } : {}),
    });
    if (opts.readOnly) {
      const exists = await stat(dir).then(
        (st) => st.isDirectory(),
        () => false,
      );
      if (!exists)
        throw new LoopguardError('no_data_dir', `data dir ${dir} does not exist (reading never creates it)`, {
          details: { dir },
        });
    } else await mkdir(join(dir, 'topics'), { recursive: true });
    const names = await readdir(join(dir, 'topics')).catch((e: NodeJS.ErrnoException) => {
      if (e.code === 'ENOENT') return [];
      throw e;
    });
    for (const name of names) await log.topic(name);
    return log;
  }

  append(topic: string, records: readonly LogRecord[]): Promise<number[]> {
    return this.enqueue(topic, records, undefined);
  }

  appendKeyed(
    topic: string,
    key: string,
    expectedCount: number,
    records: readonly LogRecord[],
  ): Promise<number[]> {
    checkKeyed(key, expectedCount, records);
    return this.enqueue(topic, records, { key, count: expectedCount });
  }

  async readKey(topic: string, key: string, fromIndex: number): Promise<StoredRecord[]> {
    checkRead(topic, fromIndex, undefined);
    if (this.closed) throw closedError();
    const t = await this.topic(topic);
    if (!t.log.isWriter) await t.log.refresh();
    return t.log.readKey(key, fromIndex);
  }

  private async enqueue(
    topic: string,
    records: readonly LogRecord[],
    expect: Pending['expect'],
  ): Promise<number[]> {
    checkTopic(topic);
    if (this.closed) throw closedError();
    if (this.opts.readOnly)
      throw new LoopguardError('read_only', `${this.dir} is open for reading only; nothing was written`);
    if (records.length === 0 && expect === undefined) return [];
    for (const [i, r] of records.entries()) {
      const bytes = recordBytes(r);
      if (bytes > this.opts.maxRecordBytes)
        throw new LoopguardError(
          'record_too_large',
          `${topic}: record ${i} of the append (key ${JSON.stringify(r.key)}) takes ${bytes} bytes, over the limit of ${this.opts.maxRecordBytes} (maxRecordBytes); nothing was written`,
          { details: { topic, key: r.key, bytes, limit: this.opts.maxRecordBytes } },
        );
    }
    const t = await this.topic(topic);
    if (this.closed) throw closedError();
    return new Promise((resolve, reject) => {
      t.queue.push(
        expect === undefined ? { records, resolve, reject } : { records, expect, resolve, reject },
      );
      t.flushing ??= this.flushSoon(t);
    });
  }

  async read(topic: string, fromOffset: number, maxRecords?: number): Promise<StoredRecord[]> {
    checkRead(topic, fromOffset, maxRecords);
    if (this.closed) throw closedError();
    const t = await this.topic(topic);
    if (!t.log.isWriter) await t.log.refresh();
    return t.log.read(fromOffset, maxRecords ?? Number.POSITIVE_INFINITY);
  }

  async follow(
    topic: string,
    fromOffset: number,
    onRecord: (r: StoredRecord) => Promise<void> | void,
    signal: AbortSignal,
  ): Promise<void> {
    checkRead(topic, fromOffset, undefined);
    const t = await this.topic(topic);
    await pollFollow(
      {
        read: (from) => this.read(topic, from, FOLLOW_PAGE),
        hasMore: (next) => t.log.end > next || this.closed,
        subscribe: (wake) => this.subscribe(topic, wake),
        pollMs: this.opts.pollMs,
        closed: () => this.closed,
      },
      fromOffset,
      onRecord,
      signal,
    );
  }

  async endOffset(topic: string): Promise<number> {
    checkTopic(topic);
    if (this.closed) throw closedError();
    const t = await this.topic(topic);
    if (!t.log.isWriter) await t.log.refresh();
    return t.log.end;
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    const states = await Promise.allSettled(this.topics.values());
    for (const s of states) {
      if (s.status !== 'fulfilled') continue;
      while (s.value.flushing !== undefined) await s.value.flushing;
      await s.value.log.close();
    }
    for (const set of this.wakers.values()) for (const wake of set) wake();
  }

  private topic(name: string): Promise<TopicState> {
    let t = this.topics.get(name);
    if (t === undefined) {
      const opts = {
        fsync: this.opts.fsync === 'batch',
        segmentBytes: this.opts.segmentBytes,
        readOnly: this.opts.readOnly,
        ...(this.opts.io ? { io: this.opts.io } : {}),
        ...(this.opts.note ? { note: this.opts.note } : {}),
      };
      t = TopicLog.open(name, join(this.dir, 'topics', name), opts).then((log) => ({
        log,
        queue: [],
        flushing: undefined,
      }));
      // A failed open (e.g. corrupt segment) is retried on the next call rather than cached.
      t.catch(() => this.topics.delete(name));
      this.topics.set(name, t);
    }
    return t;
  }

  /** Waits a turn (or groupCommitMs) so appends issued meanwhile share the write and the fsync. */
  private async flushSoon(t: TopicState): Promise<void> {
    await new Promise<void>((r) => {
      if (this.opts.groupCommitMs > 0) setTimeout(r, this.opts.groupCommitMs);
      else setImmediate(r);
    });
    try {
      while (t.queue.length > 0) {
        const queued = t.queue;
        t.queue = [];
        try {
          // Conditions are checked as writer, after picking up what other processes wrote, so the
          // check and the write cannot be separated by another writer.
          await t.log.becomeWriter();
          const batch = admitted(queued, t.log);
          if (batch.length === 0) continue;
          const first = await t.log.write(batch.flatMap((p) => p.records));
          let next = first;
          for (const p of batch) {
            p.resolve(p.records.map(() => next++));
          }
          for (const wake of this.wakers.get(t.log.name) ?? []) wake();
        } catch (e) {
          for (const p of queued) p.reject(e);
        }
      }
    } finally {
      t.flushing = undefined;
    }
  }

  private subscribe(topic: string, wake: () => void): () => void {
    const set = this.wakers.get(topic) ?? new Set();
    this.wakers.set(topic, set);
    set.add(wake);
    return () => set.delete(wake);
  }
}

/**
 * The appends of a batch that may be written, in order: a conditional append whose key does not
 * have the expected count (counting the records admitted before it) is rejected with `conflict`.
 */
function admitted(queued: readonly Pending[], log: TopicLog): Pending[] {
  const planned = new Map<string, number>();
  const countOf = (key: string): number => planned.get(key) ?? log.keyCount(key);
  const out: Pending[] = [];
  for (const p of queued) {
    const actual = p.expect === undefined ? 0 : countOf(p.expect.key);
    if (p.expect !== undefined && actual !== p.expect.count) {
      p.reject(keyConflict(log.name, p.expect.key, p.expect.count, actual));
      continue;
    }
    for (const r of p.records) planned.set(r.key, countOf(r.key) + 1);
    out.push(p);
  }
  return out;
}
