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

const S = 'a-secret-of-at-least-thirty-two-characters';
const keys = parseTenantKeys({
  keys: [
    { id: 'a1', tenant: 'a', secret: S },
    { id: 'a-ops', tenant: 'a', secret: `${S}-ops`, approver: true },
  ],
});
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
    const got = authorize(key('a1'), req('TOOL_CALL', { operation_key: 'k' }), {
      started: true,
      tenant: 'a',
    });
    expect(got).toMatchObject({ ok: true, req: { operation_key: 'a:k' } });
    const start = authorize(key('a1'), req('START_RUN'), { started: false, tenant: null });
    expect(start).toMatchObject({ ok: true, req: { tenant: 'a' } });
  });

  it("refuses another tenant's run, another tenant's start, and authority the key lacks", () => {
    expect(authorize(key('a1'), req('CANCEL'), { started: true, tenant: 'b' })).toMatchObject({
      ok: false,
      reason: 'cross_tenant',
    });
    expect(
      authorize(key('a1'), req('START_RUN', { tenant: 'b' }), { started: false, tenant: null }),
    ).toMatchObject({
      ok: false,
      reason: 'cross_tenant',
    });
    expect(authorize(key('a1'), req('RESUME'), { started: true, tenant: 'a' })).toMatchObject({
      ok: false,
      reason: 'not_approver',
    });
    const resumed = authorize(key('a-ops'), req('RESUME'), { started: true, tenant: 'a' });
    expect(resumed).toMatchObject({ ok: true, req: { approved_by: 'a-ops' } });
  });

  it('authenticates only a signature of a key it holds', () => {
    expect(authenticate(keys, req('CANCEL'))).toMatchObject({ ok: false, reason: 'unauthenticated' });
    expect(authenticate(keys, signRequest(req('CANCEL'), 'nobody', S))).toMatchObject({ ok: false });
    expect(authenticate(keys, signRequest(req('CANCEL'), 'a1', S))).toMatchObject({ ok: true });
  });
});
