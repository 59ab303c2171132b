/**
 * Who may do what, on a worker with tenant keys. A request is signed with a key of its tenant
 * (request-signature.ts); the worker takes the tenant and the approver from that key, never from
 * a field: a run belongs to the tenant that started it, only that tenant's keys act on it, only an
 * approver's key resumes a run or reissues or settles an operation (and is recorded as who did),
 * and operation keys are scoped by tenant (`<tenant>:<key>`), so one tenant's ledger entries are
 * out of another's reach: naming another tenant's key names an operation of one's own, and naming
 * one by its ledger name (`<other tenant>:<key>`, as decisions show it) is refused, whether or not
 * the ledger holds it (the refusal tells nothing of what exists).
 */
import { InvalidInputError, type LoopguardError } from '../domain/index.js';
import { signedWith } from './request-signature.js';
import type { WireRequest } from './service-topics.js';
import type { TenantKey } from './tenant-keys.js';
import { SIGNATURE_WINDOW_MS } from './tenant-replays.js';

/** Why a request was refused before it was decided: the label of loopguard_serve_requests_refused_total. */
export type RefusedFor =
  | 'unauthenticated'
  | 'expired'
  | 'replayed'
  | 'misrouted'
  | 'cross_tenant'
  | 'not_approver';

export type Checked =
  | { readonly ok: true; readonly req: WireRequest; readonly key: TenantKey }
  | { readonly ok: false; readonly reason: RefusedFor; readonly error: LoopguardError };

/** A refusal: `unauthenticated` for a credential that does not hold, else `forbidden`. */
const refused = (reason: RefusedFor, field: string, message: string): Checked => ({
  ok: false,
  reason,
  error: new InvalidInputError(
    reason === 'unauthenticated' || reason === 'expired' ? 'unauthenticated' : 'forbidden',
    field,
    message,
  ),
});

/** The run a request is for, as the worker holds it: whether it started, and whose it is. */
export interface RunOwner {
  readonly started: boolean;
  readonly tenant: string | null;
}

const NEEDS_APPROVER: ReadonlySet<WireRequest['type']> = new Set(['RESUME', 'REISSUE', 'SETTLE']);

/**
 * The key that signed `req` within the signature window around `nowMs` (the worker's clock), or
 * why none did. One message for every bad credential: it names no key that exists.
 */
export function authenticate(keys: ReadonlyMap<string, TenantKey>, req: WireRequest, nowMs: number): Checked {
  const key = req.key_id === null ? undefined : keys.get(req.key_id);
  if (key === undefined || !signedWith(req, key.secret))
    return refused(
      'unauthenticated',
      req.key_id === null ? 'key_id' : 'signature',
      'this service takes only requests signed with a key of their tenant (key_id and signature); this one is unsigned, or its key or signature is not one the workers hold',
    );
  // Checked after the signature: the send time is signed, so only its signer could have set it.
  if (!(Math.abs(nowMs - req.sent_at_ms) <= SIGNATURE_WINDOW_MS))
    return refused(
      'expired',
      'sent_at_ms',
      `the request was signed for ${new Date(req.sent_at_ms).toISOString()} and the worker's clock says ${new Date(nowMs).toISOString()}: a signature holds ${SIGNATURE_WINDOW_MS / 60_000} minutes either side (sign each request as it is sent, with a clock in sync)`,
    );
  return { ok: true, req, key };
}

/** The tenant whose ledger name `opKey` is (`<tenant>:<key>`), when that is a tenant other than `own`. */
function otherTenantOf(opKey: string | null, own: string, tenants: ReadonlySet<string>): string | null {
  const colon = opKey === null ? -1 : opKey.indexOf(':');
  if (opKey === null || colon < 0) return null;
  const named = opKey.slice(0, colon);
  return named !== own && tenants.has(named) ? named : null;
}

/**
 * `req` as the worker decides it for `key`'s tenant (tenant, approver and operation keys from the
 * credential), or the refusal: another tenant's run or operation (`tenants`: every tenant the
 * workers hold keys for), an authority the key does not have.
 */
export function authorize(
  key: TenantKey,
  req: WireRequest,
  run: RunOwner,
  tenants: ReadonlySet<string>,
): Checked {
  if (run.started && run.tenant !== key.tenant)
    return refused(
      'cross_tenant',
      'run_id',
      `run ${req.run_id} belongs to another tenant: key ${key.id} (tenant ${key.tenant}) cannot act on it`,
    );
  for (const field of ['operation_key', 'new_operation_key'] as const) {
    const other = otherTenantOf(req[field], key.tenant, tenants);
    if (other !== null)
      return refused(
        'cross_tenant',
        field,
        `${field} names an operation of tenant ${other} by its ledger name (<tenant>:<key>): key ${key.id} (tenant ${key.tenant}) may name only its own tenant's operations`,
      );
  }
  if (req.type === 'START_RUN' && req.tenant !== null && req.tenant !== key.tenant)
    return refused(
      'cross_tenant',
      'tenant',
      `key ${key.id} acts for tenant ${key.tenant}, not ${req.tenant}: a run's tenant is the one of the key that starts it`,
    );
  // A TOOL_CALL with a reconcile answer settles an in-doubt operation, as a SETTLE does.
  if (req.type === 'TOOL_CALL' && req.reconciled !== null && !key.approver)
    return refused(
      'not_approver',
      'reconciled',
      `a reconcile answer settles an in-doubt operation: it needs an approver's key of tenant ${key.tenant}; key ${key.id} is not one`,
    );
  if (NEEDS_APPROVER.has(req.type)) {
    if (!key.approver)
      return refused(
        'not_approver',
        'key_id',
        `a ${req.type} needs an approver's key of tenant ${key.tenant}; key ${key.id} is not one`,
      );
    const named = req.type === 'SETTLE' ? req.settled_by : req.approved_by;
    if (named !== null && named !== key.id)
      return refused(
        'not_approver',
        req.type === 'SETTLE' ? 'settled_by' : 'approved_by',
        `the approver is the key that signed the request (${key.id}), not ${named}`,
      );
  }
  const scope = (k: string | null) => (k === null ? null : `${key.tenant}:${k}`);
  return {
    ok: true,
    key,
    req: {
      ...req,
      tenant: req.type === 'START_RUN' ? key.tenant : req.tenant,
      operation_key: scope(req.operation_key),
      new_operation_key: scope(req.new_operation_key),
      approved_by: NEEDS_APPROVER.has(req.type) && req.type !== 'SETTLE' ? key.id : req.approved_by,
      settled_by: req.type === 'SETTLE' ? key.id : req.settled_by,
    },
  };
}
