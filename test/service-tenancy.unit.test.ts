/**
 * The pieces of tenancy: a signature covers every field but itself (a changed field, key id or
 * send time breaks it), tenant keys are checked field by field, and a request is scoped to its
 * key's tenant (operation keys, tenant, approver) or refused with the reason it is counted under.
 */
import { describe, expect, it } from 'vitest';
import { signedWith, signRequest } from '../src/service/request-signature.js';
import { emptyRequest, type WireRequest } from '../src/service/service-topics.js';
import { authenticate, authorize } from '../src/service/tenant-guard.js';
import { parseTenantKeys } from '../src/service/tenant-keys.js';
import { SeenSignatures, SIGNATURE_WINDOW_MS } from '../src/service/tenant-replays.js';

const S = 'a-secret-of-at-least-thirty-two-characters';
const keys = parseTenantKeys({
  keys: [
    { id: 'a1', tenant: 'a', secret: S },
    { id: 'a-ops', tenant: 'a', secret: `${S}-ops`, approver: true },
  ],
});
const TENANTS: ReadonlySet<string> = new Set(['a', 'b']);
const req = (type: WireRequest['type'], fields: Partial<WireRequest> = {}): WireRequest => ({
  ...emptyRequest('r1', 'run-1', type, 1000),
  ...fields,
});

describe('request signatures', () => {
  it('verify only with the same secret over the same fields', () => {
    const signed = signRequest(req('TOOL_CALL', { tool: 'charge', args_json: '{"amount":1}' }), 'a1', S);
    expect(signedWith(signed, S)).toBe(true);
    expect(signedWith(signed, `${S}x`)).toBe(false);
    expect(signedWith({ ...signed, args_json: '{"amount":100}' }, S)).toBe(false);
    expect(signedWith({ ...signed, key_id: 'a-ops' }, S)).toBe(false);
    expect(signedWith({ ...signed, sent_at_ms: 1001 }, S)).toBe(false);
    expect(signedWith({ ...signed, signature: 'zz' }, S)).toBe(false);
  });
});

describe('tenant keys', () => {
  it.each([
    [{}, 'keys'],
    [{ keys: [{ id: 'x', tenant: 'a', secret: 'short' }] }, 'keys[0].secret'],
    [{ keys: [{ id: 'x', tenant: 'a:b', secret: S }] }, 'keys[0].tenant'],
    [{ keys: [{ id: '', tenant: 'a', secret: S }] }, 'keys[0].id'],
    [{ keys: [{ id: 'x', tenant: 'a', secret: S, approver: 'yes' }] }, 'keys[0].approver'],
    [
      {
        keys: [
          { id: 'x', tenant: 'a', secret: S },
          { id: 'x', tenant: 'b', secret: S },
        ],
      },
      'keys[1].id',
    ],
  ])('refuses %j naming %s', (json, field) => {
    expect(() => parseTenantKeys(json)).toThrow(
      expect.objectContaining({ code: 'bad_tenant_keys', details: { field } }),
    );
  });
});

describe('authorize', () => {
  const key = (id: string) => keys.get(id) as NonNullable<ReturnType<typeof keys.get>>;
  it('scopes operation keys and the tenant to the key', () => {
    const got = authorize(
      key('a1'),
      req('TOOL_CALL', { operation_key: 'k' }),
      {
        started: true,
        tenant: 'a',
      },
      TENANTS,
    );
    expect(got).toMatchObject({ ok: true, req: { operation_key: 'a:k' } });
    const start = authorize(key('a1'), req('START_RUN'), { started: false, tenant: null }, TENANTS);
    expect(start).toMatchObject({ ok: true, req: { tenant: 'a' } });
  });

  it("refuses another tenant's run, another tenant's start, and authority the key lacks", () => {
    expect(authorize(key('a1'), req('CANCEL'), { started: true, tenant: 'b' }, TENANTS)).toMatchObject({
      ok: false,
      reason: 'cross_tenant',
    });
    expect(
      authorize(key('a1'), req('START_RUN', { tenant: 'b' }), { started: false, tenant: null }, TENANTS),
    ).toMatchObject({
      ok: false,
      reason: 'cross_tenant',
    });
    expect(authorize(key('a1'), req('RESUME'), { started: true, tenant: 'a' }, TENANTS)).toMatchObject({
      ok: false,
      reason: 'not_approver',
    });
    const resumed = authorize(key('a-ops'), req('RESUME'), { started: true, tenant: 'a' }, TENANTS);
    expect(resumed).toMatchObject({ ok: true, req: { approved_by: 'a-ops' } });
  });

  it("refuses naming another tenant's operation by its ledger name, whether or not it exists", () => {
    const started = { started: true, tenant: 'a' };
    // The ledger name of b's operation `charge-1` is `b:charge-1`: a's keys may not name it, in a
    // lookup (a call's operation key) or a reissue (either key). Nothing here asks the ledger, so
    // the answer is the same for a key b used and one it never did.
    for (const fields of [
      { operation_key: 'b:charge-1' },
      { operation_key: 'b:never-used' },
      { operation_key: 'a:x', new_operation_key: 'b:charge-1' },
    ] as const) {
      const field = 'new_operation_key' in fields ? 'new_operation_key' : 'operation_key';
      expect(authorize(key('a-ops'), req('REISSUE', fields), started, TENANTS)).toMatchObject({
        ok: false,
        reason: 'cross_tenant',
        error: { code: 'forbidden', details: { field } },
      });
    }
    const lookup = authorize(key('a1'), req('TOOL_CALL', { operation_key: 'b:charge-1' }), started, TENANTS);
    expect(lookup).toMatchObject({ ok: false, reason: 'cross_tenant', error: { code: 'forbidden' } });
    if (lookup.ok) throw new Error('refused above');
    expect(lookup.error.message).not.toContain('charge-1');
    // A colon alone names no tenant, and a name that is no tenant's is the key's own operation.
    for (const k of ['order:7', 'c:7', 'a:7'])
      expect(authorize(key('a1'), req('TOOL_CALL', { operation_key: k }), started, TENANTS)).toMatchObject({
        ok: true,
        req: { operation_key: `a:${k}` },
      });
  });

  it('authenticates only a signature of a key it holds, made within the window of the worker clock', () => {
    const now = 1000;
    expect(authenticate(keys, req('CANCEL'), now)).toMatchObject({ ok: false, reason: 'unauthenticated' });
    expect(authenticate(keys, signRequest(req('CANCEL'), 'nobody', S), now)).toMatchObject({ ok: false });
    expect(authenticate(keys, signRequest(req('CANCEL'), 'a1', S), now)).toMatchObject({ ok: true });
    const signedAt = (ms: number) => signRequest(req('CANCEL', { sent_at_ms: ms }), 'a1', S);
    for (const ms of [now - SIGNATURE_WINDOW_MS, now + SIGNATURE_WINDOW_MS])
      expect(authenticate(keys, signedAt(ms), now)).toMatchObject({ ok: true });
    for (const ms of [now - SIGNATURE_WINDOW_MS - 1, now + SIGNATURE_WINDOW_MS + 1])
      expect(authenticate(keys, signedAt(ms), now)).toMatchObject({
        ok: false,
        reason: 'expired',
        error: { code: 'unauthenticated', details: { field: 'sent_at_ms' } },
      });
  });
});

describe('seen signatures', () => {
  const at = (signature: string, sentAtMs: number) => ({ signature: signature.padEnd(64, '0'), sentAtMs });

  it('knows a signature decided within the window, and forgets it once the window passed it', () => {
    const seen = new SeenSignatures(1000, 100);
    expect(seen.check(at('aa', 10))).toBe('fresh');
    seen.add([at('aa', 10), at('bb', 20)], 20);
    expect(seen.check(at('aa', 10))).toBe('replayed');
    expect(seen.check(at('cc', 15))).toBe('fresh');
    // At 1015 'aa' (sent at 10) is outside the window (the worker refuses it as expired): forgotten.
    seen.add([at('cc', 1015)], 1015);
    expect(seen.size).toBe(2);
    expect(seen.check(at('bb', 20))).toBe('replayed');
  });

  it('past its cap forgets the oldest and refuses whatever was sent no later than they were', () => {
    const seen = new SeenSignatures(1_000_000, 2);
    seen.add([at('aa', 10), at('bb', 20), at('cc', 30)], 30);
    expect(seen.size).toBe(2);
    // 'aa' is no longer known: not a replay it could tell, so anything sent by then is too old.
    expect(seen.check(at('aa', 10))).toBe('too_old');
    expect(seen.check(at('dd', 10))).toBe('too_old');
    expect(seen.check(at('dd', 11))).toBe('fresh');
    expect(seen.check(at('bb', 20))).toBe('replayed');
  });

  it('past its cap forgets by send time: a request stamped ahead never raises the floor past the present', () => {
    const now = 1_000_000_000;
    const seen = new SeenSignatures(SIGNATURE_WINDOW_MS, 4);
    // Stamped almost the whole window ahead (admitted), and added first.
    seen.add([at('ahead', now + SIGNATURE_WINDOW_MS - 1000)], now);
    seen.add(
      ['b', 'c', 'd', 'e'].map((s) => at(s, now - 10)),
      now,
    );
    // Another tenant's request sent now is fresh (it was too_old until the ahead one's time + 5 min).
    expect(seen.check(at('fresh', now + 1))).toBe('fresh');
    expect(seen.check(at('ahead', now + SIGNATURE_WINDOW_MS - 1000))).toBe('replayed');
    expect(seen.check(at('old', now - 10))).toBe('too_old');
  });
});
