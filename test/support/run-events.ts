/** Events of one run for stream tests: one event of each type, cycling, with gapless seqs. */
import type { RecordedEvent } from '../../src/domain/events.js';
import type { RunState } from '../../src/domain/run-state.js';
import { foldRun } from '../../src/machines/fold-run.js';
import { SAMPLE_EVENTS } from '../log-sample-events.js';

/** Events seq from+1 .. from+n of `runId`, cycling through one event of each type. */
export function runEvents(runId: string, from: number, n: number): RecordedEvent[] {
  return Array.from({ length: n }, (_, i) => {
    const seq = from + i + 1;
    return {
      eventId: `${runId}/${seq}`,
      runId,
      seq,
      atMs: 1_700_000_000_000 + seq,
      event: SAMPLE_EVENTS[(seq - 1) % SAMPLE_EVENTS.length] as RecordedEvent['event'],
    };
  });
}

/** `es` folded onto `from` through the run machine. */
export const foldEvents = (from: RunState, es: readonly RecordedEvent[]): RunState =>
  es.reduce(foldRun, from);
