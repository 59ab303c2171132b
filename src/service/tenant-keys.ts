/**
 * The per-tenant credentials a worker checks (`serve --tenant-keys FILE`): each key has an id, the
 * tenant it acts for, a secret (at least 32 characters) and whether it may approve (resume a run,
 * reissue or settle an operation: what a person signs off, never what an agent decides alone).
 *
 *   { "keys": [ { "id": "acme-agent", "tenant": "acme", "secret": "..." },
 *               { "id": "acme-ops", "tenant": "acme", "secret": "...", "approver": true } ] }
 */
import { readFileSync } from 'node:fs';
import { LoopguardError, nameProblem } from '../domain/index.js';

export interface TenantKey {
  readonly id: string;
  readonly tenant: string;
  readonly secret: string;
  readonly approver: boolean;
}

const MIN_SECRET_CHARS = 32;

const bad = (where: string, field: string, problem: string): LoopguardError =>
  new LoopguardError('bad_tenant_keys', `${where}: ${field}: ${problem}`, { details: { field } });

/** Tenant keys from their JSON; every problem names the entry and field. */
export function parseTenantKeys(json: unknown, where = 'tenant keys'): Map<string, TenantKey> {
  const list = (json as { keys?: unknown } | null)?.keys;
  if (!Array.isArray(list) || list.length === 0)
    throw bad(where, 'keys', 'expected a non-empty array of {id, tenant, secret, approver?}');
  const keys = new Map<string, TenantKey>();
  list.forEach((k: Record<string, unknown>, i) => {
    const at = `keys[${i}]`;
    for (const f of ['id', 'tenant'] as const) {
      const problem = nameProblem(k?.[f]);
      if (problem !== null) throw bad(where, `${at}.${f}`, problem);
    }
    // Operation keys are scoped as `<tenant>:<key>`: a colon in a tenant would let two scopes meet.
    if ((k.tenant as string).includes(':')) throw bad(where, `${at}.tenant`, 'must not contain ":"');
    if (typeof k.secret !== 'string' || k.secret.length < MIN_SECRET_CHARS)
      throw bad(where, `${at}.secret`, `expected a string of at least ${MIN_SECRET_CHARS} characters`);
    if (k.approver !== undefined && typeof k.approver !== 'boolean')
      throw bad(where, `${at}.approver`, 'expected true or false');
    if (keys.has(k.id as string)) throw bad(where, `${at}.id`, `${String(k.id)} is listed twice`);
    keys.set(k.id as string, {
      id: k.id as string,
      tenant: k.tenant as string,
      secret: k.secret,
      approver: k.approver === true,
    });
  });
  return keys;
}

export function readTenantKeys(path: string): Map<string, TenantKey> {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (e) {
    throw new LoopguardError('bad_tenant_keys', `${path}: ${(e as Error).message}`, { cause: e });
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (e) {
    throw new LoopguardError('bad_tenant_keys', `${path}: not JSON (${(e as Error).message})`);
  }
  return parseTenantKeys(json, path);
}

/** What a worker's log says of its tenancy when it starts. */
export function tenancyNote(keys: ReadonlyMap<string, TenantKey> | undefined): string {
  return keys === undefined
    ? 'no tenant keys: requests are not authenticated, every client may act on every run (serve --tenant-keys)'
    : `${keys.size} tenant keys: only signed requests are decided, each on its own tenant's runs`;
}

const TENANTS = new WeakMap<ReadonlyMap<string, TenantKey>, ReadonlySet<string>>();

/** Every tenant `keys` holds a key for (what an operation key's ledger name may name). */
export function tenantsOf(keys: ReadonlyMap<string, TenantKey>): ReadonlySet<string> {
  const t = TENANTS.get(keys) ?? new Set([...keys.values()].map((k) => k.tenant));
  TENANTS.set(keys, t);
  return t;
}
