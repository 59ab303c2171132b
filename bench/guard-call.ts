import { hash } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type RecordedEvent, resolvePolicy } from '../src/domain/index.js';
import { EventCodec, MemorySchemaStore } from '../src/events/index.js';
import { EmbeddedLog, TOPICS } from '../src/log/index.js';
import { ManualClock, RunActor } from '../src/machines/index.js';
import { type Bench, percentile, result } from './bench-result.js';
import { argsOf, deps, guardedCall, unbounded } from './synthetic.js';

/** The least any guard must do to recognise a call: JSON with sorted keys, nothing else. */
function sortedJson(v: unknown): string {
  if (v === null || typeof v !== 'object') return JSON.stringify(v);
  if (Array.isArray(v)) return `[${v.map(sortedJson).join(',')}]`;
  const o = v as Record<string, unknown>;
  return `{${Object.keys(o)
    .sort()
    .map((k) => `${JSON.stringify(k)}:${sortedJson(o[k])}`)
    .join(',')}}`;
}

const CALLS = 20_000;
const WARMUP = 2_000;
const FLUSH_EVERY = 64;

/**
 * CPU on the hot path of one guarded no-op call: the before decision, the machine transition,
 * encoding, the append handed to the embedded log (group commit: appends are awaited in groups,
 * so the fsync is shared and off this thread), then the same for the result. The floor is what
 * any guard must do: canonical JSON and a sha256 of the same arguments.
 */
export const guardCallBench: Bench = {
  name: 'guard-call',
  async run() {
    const dir = mkdtempSync(join(tmpdir(), 'lg-bench-'));
    try {
      const log = await EmbeddedLog.open(dir);
      const codec = await EventCodec.create(new MemorySchemaStore(), `${TOPICS.runs}-value`);
      const clock = new ManualClock(0);
      const actor = new RunActor('bench-run', deps, clock);
      const startRecs = actor.propose({
        type: 'StartRun',
        runId: 'bench-run',
        policy: resolvePolicy(unbounded),
      });
      if (!startRecs.ok) throw startRecs.error;
      actor.commit(startRecs.value);
      const guardTimes: number[] = [];
      const floorTimes: number[] = [];
      let pending: Promise<unknown>[] = [];
      const append = (recs: RecordedEvent[]) => {
        pending.push(
          log.append(
            TOPICS.runs,
            recs.map((r) => ({ key: r.runId, value: codec.encode(r) })),
          ),
        );
      };
      for (let i = 0; i < CALLS + WARMUP; i++) {
        clock.advance(1);
        const args = argsOf(i);
        const t0 = performance.now();
        guardedCall(actor, i, append);
        const t1 = performance.now();
        hash('sha256', `search\n${sortedJson(args)}`, 'hex');
        const t2 = performance.now();
        if (i >= WARMUP) {
          guardTimes.push((t1 - t0) * 1000);
          floorTimes.push((t2 - t1) * 1000);
        }
        if (pending.length >= FLUSH_EVERY) {
          await Promise.all(pending);
          pending = [];
        }
      }
      await Promise.all(pending);
      if (actor.state.status !== 'RUNNING' || actor.state.steps !== CALLS + WARMUP)
        throw new Error(`bench run ended early: ${actor.state.status}`);
      await log.close();
      return [
        result(
          'guard-call-p50',
          'us',
          percentile(guardTimes, 50),
          'canonical JSON + sha256 p50',
          percentile(floorTimes, 50),
        ),
        result(
          'guard-call-p99',
          'us',
          percentile(guardTimes, 99),
          'canonical JSON + sha256 p99',
          percentile(floorTimes, 99),
        ),
      ];
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  },
};
