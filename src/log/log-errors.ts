/** Argument checks shared by the adapters, so all of them reject the same inputs with the same codes. */
import { IllegalStateError, LoopguardError } from '../domain/errors.js';
import { TOPIC_NAME } from './event-log.js';

export function checkTopic(topic: string): void {
  if (!TOPIC_NAME.test(topic) || topic === '.' || topic === '..') {
    throw new LoopguardError('bad_topic', `invalid topic name ${JSON.stringify(topic)}`);
  }
}

export function checkRead(topic: string, fromOffset: number, maxRecords: number | undefined): void {
  checkTopic(topic);
  if (!Number.isSafeInteger(fromOffset) || fromOffset < 0) {
    throw new LoopguardError('bad_offset', `fromOffset must be a non-negative integer: ${fromOffset}`);
  }
  if (maxRecords !== undefined && !(maxRecords >= 0)) {
    throw new LoopguardError('bad_offset', `maxRecords must be >= 0: ${maxRecords}`);
  }
}

export const closedError = (): LoopguardError =>
  new IllegalStateError('log_closed', 'the event log is closed');
