import { closeSync, fsyncSync, mkdtempSync, openSync, readSync, rmSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { rebuildFromStream } from '../src/cli/rebuild-from-stream.js';
import type { RecordedEvent } from '../src/domain/index.js';
import { loadSchemas } from '../src/events/envelope-schema.js';
import { EventCodec, MemorySchemaStore } from '../src/events/index.js';
import { HEADER_BYTES } from '../src/events/wire.js';
import { EmbeddedLog, EventStore, TOPICS } from '../src/log/index.js';
import type { SchemaStore } from '../src/ports/schema-store.js';
import { Projections, RunsProjection } from '../src/projections/index.js';
import { type Bench, result } from './bench-result.js';
import { defaults, searchRun } from './synthetic.js';
import { describeTrials, trials } from './trials.js';

const WAVE = 256;
const TRIALS = 3;

/** Realistic events: synthetic runs of 12 calls replayed through the guard. */
export function sampleEvents(minEvents: number): RecordedEvent[] {
  const out: RecordedEvent[] = [];
  for (let r = 0; out.length < minEvents; r++) out.push(...searchRun(`bench/${r}`, 12, defaults));
  return out;
}

async function encoded(events: readonly RecordedEvent[]) {
  const schemas = new MemorySchemaStore();
  const codec = await EventCodec.create(schemas, `${TOPICS.runs}-value`);
  return { schemas, codec, records: events.map((e) => ({ key: e.runId, value: codec.encode(e) })) };
}

/** Appending: loopguard's embedded log (many concurrent single-record appends, group commit) against plain fs writes of the same bytes, one fsync per wave. */
async function appendBench(dir: string, records: { key: string; value: Buffer }[]) {
  const log = await EmbeddedLog.open(join(dir, 'log'));
  const t0 = performance.now();
  for (let i = 0; i < records.length; i += WAVE) {
    await Promise.all(records.slice(i, i + WAVE).map((r) => log.append(TOPICS.runs, [r])));
  }
  const ours = records.length / ((performance.now() - t0) / 1000);
  await log.close();
  const file = join(dir, 'plain.bin');
  const fd = openSync(file, 'w');
  const t1 = performance.now();
  for (let i = 0; i < records.length; i += WAVE) {
    const parts: Buffer[] = [];
    for (const r of records.slice(i, i + WAVE)) {
      const len = Buffer.alloc(4);
      len.writeUInt32BE(r.value.length);
      parts.push(len, r.value);
    }
    writeSync(fd, Buffer.concat(parts));
    fsyncSync(fd);
  }
  const plain = records.length / ((performance.now() - t1) / 1000);
  closeSync(fd);
  return { ours, plain, file };
}

/**
 * Reading back: the log's records, and the rebuild `loopguard rebuild` runs (read, decode, every
 * projection), against plain fs reads of the same bytes and against avsc decoding alone.
 */
async function readBenches(
  dir: string,
  schemas: SchemaStore,
  codec: EventCodec,
  file: string,
  count: number,
) {
  const log = await EmbeddedLog.open(join(dir, 'log'));
  const t0 = performance.now();
  let n = 0;
  for (let from = 0; ; ) {
    const page = await log.read(TOPICS.runs, from, 4096);
    if (page.length === 0) break;
    n += page.length;
    from = (page.at(-1)?.offset ?? from) + 1;
  }
  const read = n / ((performance.now() - t0) / 1000);
  // The rebuild `loopguard rebuild` runs on the embedded store: every event of the runs topic
  // through the store port into fresh projections.
  const events = await EventStore.create(log, schemas);
  const stream = log.runStream(events);
  const { projections: p, eventsPerSecond: rebuild } = await rebuildFromStream(stream);
  await stream.close();
  // The values the rebuild reads, on their own.
  const tr = performance.now();
  let values = 0;
  for (let from = 0; ; ) {
    const page = await log.readValues(TOPICS.runs, from, 4096);
    if (page.values.length === 0) break;
    values += page.values.length;
    from = page.next;
  }
  const readValues = values / ((performance.now() - tr) / 1000);
  // What a rebuild cannot do without: avsc decoding the same record bodies, held in memory (no
  // framing, no mapping to domain events, no projection).
  const { envelope } = loadSchemas();
  const bodies = (await log.read(TOPICS.runs, 0, count)).map((r) => r.value.subarray(HEADER_BYTES));
  const t3 = performance.now();
  for (const b of bodies) envelope.fromBuffer(b);
  const decodeOnly = bodies.length / ((performance.now() - t3) / 1000);
  // The rebuild's other parts on their own, to say what bounds it: the full decode (framing, avsc,
  // mapping to domain events) and every projection fold over events already decoded.
  const framed = (await log.read(TOPICS.runs, 0, count)).map((r) => r.value);
  const t4 = performance.now();
  const decoded = framed.map((v) => codec.decodeSync(v));
  const fullDecode = decoded.length / ((performance.now() - t4) / 1000);
  const t5 = performance.now();
  const folds = new Projections();
  for (const e of decoded) folds.apply(e);
  const projections = decoded.length / ((performance.now() - t5) / 1000);
  // The run fold alone (the machine's step and the run's state, its summary): what the runs
  // projection does, which every rebuild must, whatever the other projections cost.
  const t6 = performance.now();
  const runs = new RunsProjection();
  for (const e of decoded) runs.apply(e);
  const runFold = decoded.length / ((performance.now() - t6) / 1000);
  await log.close();
  if (n !== count || p.events !== count || values !== count)
    throw new Error(`read ${n} records and ${values} values, rebuilt ${p.events}, expected ${count}`);
  const t2 = performance.now();
  const fd = openSync(file, 'r');
  const chunk = Buffer.alloc(1 << 20);
  let carry = Buffer.alloc(0);
  let plainCount = 0;
  for (;;) {
    const got = readSync(fd, chunk, 0, chunk.length, null);
    if (got === 0) break;
    let buf = Buffer.concat([carry, chunk.subarray(0, got)]);
    while (buf.length >= 4 && buf.length >= 4 + buf.readUInt32BE(0)) {
      buf.subarray(4, 4 + buf.readUInt32BE(0));
      buf = buf.subarray(4 + buf.readUInt32BE(0));
      plainCount++;
    }
    carry = Buffer.from(buf);
  }
  closeSync(fd);
  const plain = plainCount / ((performance.now() - t2) / 1000);
  return { read, rebuild, plain, decodeOnly, readValues, fullDecode, projections, runFold };
}

let shared: { dir: string; schemas: SchemaStore; codec: EventCodec; file: string; count: number } | undefined;

export const embeddedBenches: Bench[] = [
  {
    name: 'embedded-append',
    async run(ctx) {
      const dir = mkdtempSync(join(tmpdir(), 'lg-bench-embedded-'));
      const { schemas, codec, records } = await encoded(sampleEvents(100_000));
      const { ours, plain, file } = await appendBench(dir, records);
      ctx.log(
        `  ${records.length} events, mean ${Math.round(records.reduce((s, r) => s + r.value.length, 0) / records.length)} bytes`,
      );
      shared = { dir, schemas, codec, file, count: records.length };
      return [
        result('embedded-append', 'events/s', ours, 'fs write + fsync per wave of 256, same bytes', plain),
      ];
    },
  },
  {
    name: 'embedded-rebuild',
    async run(ctx) {
      if (shared === undefined) await embeddedBenches[0]?.run(ctx);
      const s = shared;
      if (s === undefined) throw new Error('embedded-append did not leave a log to read');
      try {
        // Several trials over the same log; each figure is the median, each ratio the median of the
        // trials' ratios (min and max to the log).
        const runs: Awaited<ReturnType<typeof readBenches>>[] = [];
        for (let t = 0; t < TRIALS; t++)
          runs.push(await readBenches(s.dir, s.schemas, s.codec, s.file, s.count));
        const med = (k: keyof (typeof runs)[number]) => trials(runs.map((r) => r[k])).median;
        const vsDecode = trials(runs.map((r) => r.rebuild / r.decodeOnly));
        ctx.log(describeTrials('rebuild / avsc decoding alone', 'x', vsDecode));
        ctx.log(describeTrials('rebuild', 'events/s', trials(runs.map((r) => r.rebuild))));
        ctx.log(describeTrials('avsc decoding alone', 'events/s', trials(runs.map((r) => r.decodeOnly))));
        const [read, rebuild, plain, decodeOnly, readValues, fullDecode, projections, runFold] = (
          [
            'read',
            'rebuild',
            'plain',
            'decodeOnly',
            'readValues',
            'fullDecode',
            'projections',
            'runFold',
          ] as const
        ).map(med) as [number, number, number, number, number, number, number, number];
        return [
          result('embedded-read', 'events/s', read, 'fs read of the same bytes', plain),
          result('embedded-rebuild', 'events/s', rebuild, 'fs read of the same bytes', plain),
          result(
            'embedded-rebuild-vs-decode',
            'events/s',
            rebuild,
            'avsc decoding alone of the same records (in memory)',
            decodeOnly,
          ),
          result('rebuild-part-read', 'events/s', readValues, 'avsc decoding alone', decodeOnly),
          result('rebuild-part-decode', 'events/s', fullDecode, 'avsc decoding alone', decodeOnly),
          result('rebuild-part-projections', 'events/s', projections, 'avsc decoding alone', decodeOnly),
          result('rebuild-part-run-fold', 'events/s', runFold, 'avsc decoding alone', decodeOnly),
        ];
      } finally {
        rmSync(s.dir, { recursive: true, force: true });
        shared = undefined;
      }
    },
  },
];
