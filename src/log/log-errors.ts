/** Argument checks shared by the adapters, so all of them reject the same inputs with the same codes. */
import { ConflictError, IllegalStateError, LoopguardError } from '../domain/errors.js';
import type { ClaimOwner } from '../ports/ledger.js';
import { TOPIC_NAME } from './event-log.js';

export function checkTopic(topic: string): void {
  if (!TOPIC_NAME.test(topic) || topic === '.' || topic === '..') {
    throw new LoopguardError('bad_topic', `invalid topic name ${JSON.stringify(topic)}`);
  }
}

/** An offset or a count a caller gives (`field` names it): a non-negative integer. */
export function checkOffset(field: string, n: number): void {
  if (!Number.isSafeInteger(n) || n < 0)
    throw new LoopguardError('bad_offset', `${field} must be a non-negative integer: ${n}`);
}

export function checkRead(topic: string, fromOffset: number, maxRecords: number | undefined): void {
  checkTopic(topic);
  checkOffset('fromOffset', fromOffset);
  if (maxRecords !== undefined && !(maxRecords >= 0)) {
    throw new LoopguardError('bad_offset', `maxRecords must be >= 0: ${maxRecords}`);
  }
}

export const closedError = (): LoopguardError =>
  new IllegalStateError('log_closed', 'the event log is closed');

/** A ledger step by one who does not hold the claim on `key` (`why`: the ledger rules' reason). */
export const notClaimOwner = (key: string, owner: ClaimOwner, why: string): LoopguardError =>
  new ConflictError(
    'not_claim_owner',
    `ledger: ${key} is not claimed by ${owner.runId}/${owner.callId} (${why})`,
  );
