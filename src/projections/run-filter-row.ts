import type { RecordedEvent, RunStatus } from '../domain/index.js';
import { movesStatus, STATUS_MOVING_TYPES } from '../machines/index.js';
import { ruleAfter } from './run-summary.js';

/**
 * What the run list filters a run by: its status, its rule (its summary's) and its tenant. The
 * embedded store keeps one per run, written in the transaction of the run's appends, so a filtered
 * page is a query, not a fold of the log.
 */
export interface RunFilterRow {
  readonly status: RunStatus;
  readonly rule: string | null;
  readonly tenant: string | null;
}

/** A run's row before its first event. */
export const NEW_RUN_ROW: RunFilterRow = { status: 'NEW', rule: null, tenant: null };

/** The event types that may change some row: a keeper need not read the others at all. */
export const ROW_EVENT_TYPES: ReadonlySet<string> = new Set([
  ...STATUS_MOVING_TYPES,
  'RunStarted',
  'GuardDecided',
]);

/** Whether an event of `type` may change `row`: a keeper passes over the others without decoding. */
export function mayChangeRow(row: RunFilterRow, type: string): boolean {
  return (
    movesStatus(row.status, type) || type === 'RunStarted' || (type === 'GuardDecided' && row.rule === null)
  );
}

/**
 * The row after `rec`, given the status the run machine took the run to on it; the tenant from any
 * start (a reader's fold takes one the machine refused too). The same row when nothing changed.
 */
export function rowAfter(row: RunFilterRow, rec: RecordedEvent, status: RunStatus): RunFilterRow {
  const e = rec.event;
  const rule = ruleAfter(row.rule, e);
  const tenant = e.type === 'RunStarted' ? e.tenant : row.tenant;
  return status === row.status && rule === row.rule && tenant === row.tenant ? row : { status, rule, tenant };
}
