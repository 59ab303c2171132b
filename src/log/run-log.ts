/**
 * A log that hands out the store port over itself, so a guard gets a run's stream without asking
 * which adapter it has: the memory and embedded logs give a LogRunStream, Kafka a KafkaRunStream.
 */
import { InvalidInputError } from '../domain/errors.js';
import type { RunStream } from '../ports/run-stream.js';
import type { EventLog } from './event-log.js';
import type { EventStore } from './event-store.js';

export interface RunLog extends EventLog {
  /**
   * A new stream over `events`, an EventStore on this log. Keep one per process and log: the
   * Kafka one follows the runs topic and remembers the runs' heads.
   */
  runStream(events: EventStore): RunStream;
}

/** `events` when it is a store on `log`: a stream over one log that decoded another's would be nonsense. */
export function storeOn(log: EventLog, events: EventStore): EventStore {
  if (events.log !== log)
    throw new InvalidInputError(
      'invalid_input',
      'events',
      'runStream(events): events is an EventStore on another log',
    );
  return events;
}
