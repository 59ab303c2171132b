/**
 * The reader-equivalence contract: on every adapter, what the projections' rebuild (the path of
 * `rebuild`, `audit`, `whatif`, `ui`) makes of a run equals the run's own stream (`RunStream.read`)
 * folded, after a losing writer's batch and a zombie append. Each losing batch runs one seq past
 * the head the winner left and carries 1000 tokens, so a reader that only drops "seq <= last"
 * reports 1002 tokens where the run has 2.
 *
 * The adapter says how a losing batch gets written: the local stores refuse it (`conflict`), on
 * Kafka it lands on the topic as a second writer's records would.
 */
import { describe, expect, it } from 'vitest';
import type { DomainEvent, RecordedEvent } from '../src/domain/events.js';
import type { RunStream } from '../src/ports/run-stream.js';
import { Projections } from '../src/projections/index.js';
import { SAMPLE_EVENTS } from './log-sample-events.js';

export interface ReaderFixture {
  /** A new writer of the log's run streams. */
  stream(): RunStream;
  /** Sends `events` as one batch of a writer that expected the run at `after`, the run being past it. */
  appendLost(runId: string, after: number, events: readonly RecordedEvent[]): Promise<void>;
  /** The projections as the CLI rebuilds them from the whole log. */
  rebuild(): Promise<Projections>;
  /** Every event of the log as the CLI's scan hands it to audit --html, whatif, ui and fleet. */
  scan(apply: (rec: RecordedEvent) => void): Promise<unknown>;
  /** A run id unique to this fixture's log. */
  runId(base: string): string;
  cleanup(): Promise<void>;
}

const started = SAMPLE_EVENTS[0] as DomainEvent;
const usage = (tokensIn: number, tokensOut: number): DomainEvent => ({
  type: 'ModelUsageRecorded',
  tokensIn,
  tokensOut,
  costUsd: 0,
});
const checkpoint: DomainEvent = {
  type: 'CheckpointRecorded',
  checkpointId: 'cp',
  progressVersion: 1,
  completedOperations: [],
};

function recorded(runId: string, tag: string, from: number, body: readonly DomainEvent[]): RecordedEvent[] {
  return body.map((event, i) => ({
    eventId: `${runId}/${tag}/${from + i + 1}`,
    runId,
    seq: from + i + 1,
    atMs: 1_700_000_000_000 + from + i + 1,
    event,
  }));
}

export function readerEquivalenceContract(name: string, make: () => Promise<ReaderFixture>): void {
  describe(`reader equivalence: ${name}`, () => {
    it("rebuild and scan equal each run's stream folded, past a losing batch and a zombie append", async () => {
      const f = await make();
      try {
        // A losing writer: both writers found the run empty; the winner's batch (seq 1-2) landed
        // first, the loser's (seq 1-3) after it, one seq past the winner's head.
        const lost = f.runId('lost');
        const winner = f.stream();
        await winner.appendToStream(lost, recorded(lost, 'win', 0, [started, usage(1, 1)]), {
          expectedStreamVersion: 0,
        });
        await f.appendLost(lost, 0, recorded(lost, 'lose', 0, [started, checkpoint, usage(500, 500)]));
        // A zombie: the old owner's append at seq 2 timed out for it, a new owner appended at
        // seq 2, then the old append (seq 3-4) landed.
        const zombie = f.runId('zombie');
        await winner.appendToStream(zombie, recorded(zombie, 'old', 0, [started, usage(1, 1)]), {
          expectedStreamVersion: 0,
        });
        await f
          .stream()
          .appendToStream(zombie, recorded(zombie, 'new', 2, [checkpoint]), { expectedStreamVersion: 2 });
        await f.appendLost(zombie, 2, recorded(zombie, 'old', 2, [checkpoint, usage(500, 500)]));

        const rebuilt = await f.rebuild();
        const scanned = new Map<string, string[]>();
        await f.scan((rec) => scanned.set(rec.runId, [...(scanned.get(rec.runId) ?? []), rec.eventId]));
        const reader = f.stream();
        const expected: Record<string, string[]> = {
          [lost]: [`${lost}/win/1`, `${lost}/win/2`],
          [zombie]: [`${zombie}/old/1`, `${zombie}/old/2`, `${zombie}/new/3`],
        };
        for (const [runId, ids] of Object.entries(expected)) {
          const stream = await reader.readStream(runId);
          // The run's own tokens: 2; a losing batch counted would make them 1002.
          expect(rebuilt.runs.get(runId)?.tokens).toBe(2);
          expect(stream.map((e) => e.eventId)).toEqual(ids);
          expect(scanned.get(runId)).toEqual(ids);
          const folded = new Projections().applyAll(stream);
          expect(rebuilt.runs.get(runId)).toEqual(folded.runs.get(runId));
          expect(rebuilt.runs.summary(runId)).toEqual(folded.runs.summary(runId));
          expect(rebuilt.audit.timeline(runId)).toEqual(folded.audit.timeline(runId));
          expect(rebuilt.tree.of(runId)).toEqual(folded.tree.of(runId));
          expect(rebuilt.progress.snapshot()[runId]).toEqual(folded.progress.snapshot()[runId]);
        }
        await reader.close();
        await winner.close();
      } finally {
        await f.cleanup();
      }
    });
  });
}
