import { err, LoopguardError, ok, type Result } from './errors.js';

/** Hashing is injected: the domain stays free of node: modules and of hidden keys. */
export interface Hashing {
  /** A stable digest of a string (hex). */
  digest(text: string): string;
  /** A keyed digest, so equal secrets still compare equal without being readable. */
  keyed(text: string): string;
}

export interface CanonicalCall {
  readonly tool: string;
  /** Canonical JSON of the arguments: keys sorted, strings trimmed, volatile fields dropped, secrets hashed. */
  readonly argsJson: string;
  readonly fingerprint: string;
}

const norm = (key: string) => key.toLowerCase().replace(/[^a-z0-9]/g, '');

/** Fields that differ on every call without changing what is asked: they would hide exact repeats. */
const VOLATILE = new Set([
  'timestamp',
  'ts',
  'requestid',
  'traceid',
  'spanid',
  'nonce',
  'correlationid',
  'requesttime',
  'sentat',
  'clientrequestid',
]);

/**
 * Key names whose values must never appear in plain text in an event or a log. A name ending in
 * "token" is a secret ("access_token"), one ending in "tokens" is a count ("max_tokens").
 */
const SECRET = /secret|password|passwd|authorization|apikey|cookie|credential|privatekey/;
const isSecretKey = (key: string): boolean => {
  const k = norm(key);
  return k.endsWith('token') || k === 'auth' || SECRET.test(k);
};

interface Ctx {
  readonly volatile: ReadonlySet<string>;
  readonly hashing: Hashing;
  readonly ancestors: Set<object>;
}

class NotJson extends Error {
  constructor(
    readonly path: string,
    readonly why: string,
  ) {
    super(`${path}: ${why}`);
  }
}

function canonical(value: unknown, path: string, ctx: Ctx): unknown {
  switch (typeof value) {
    case 'string':
      return value.trim();
    case 'boolean':
      return value;
    case 'number':
      if (!Number.isFinite(value)) throw new NotJson(path, `${value} is not a JSON number`);
      return Object.is(value, -0) ? 0 : value;
    case 'bigint':
      throw new NotJson(path, 'BigInt is not JSON (pass it as a string)');
    case 'function':
    case 'symbol':
      throw new NotJson(path, `a ${typeof value} is not JSON`);
    case 'undefined':
      throw new NotJson(path, 'undefined is not JSON');
  }
  if (value === null) return null;
  const obj = value as object;
  if (ctx.ancestors.has(obj)) throw new NotJson(path, 'circular reference');
  if (typeof (obj as { toJSON?: unknown }).toJSON === 'function') {
    return canonical((obj as { toJSON: () => unknown }).toJSON(), path, ctx);
  }
  ctx.ancestors.add(obj);
  try {
    if (Array.isArray(obj)) return obj.map((v, i) => canonical(v, `${path}[${i}]`, ctx));
    const proto = Object.getPrototypeOf(obj);
    if (proto !== Object.prototype && proto !== null)
      throw new NotJson(path, `a ${proto?.constructor?.name ?? 'class'} instance is not JSON`);
    const out: Record<string, unknown> = {};
    for (const key of Object.keys(obj).sort()) {
      const v = (obj as Record<string, unknown>)[key];
      // JSON drops undefined members; so do we, instead of failing on an optional field left unset.
      if (v === undefined) continue;
      const n = norm(key);
      if (VOLATILE.has(n) || ctx.volatile.has(key)) continue;
      const sub = `${path}.${key}`;
      out[key] = isSecretKey(key)
        ? `secret:${ctx.hashing.keyed(JSON.stringify(canonical(v, sub, ctx)))}`
        : canonical(v, sub, ctx);
    }
    return out;
  } finally {
    ctx.ancestors.delete(obj);
  }
}

/**
 * The canonical form of one tool call. Equal when the calls ask the same thing: key order,
 * whitespace and volatile fields make no difference; page, cursor, offset, version and ids do.
 */
export function canonicalCall(
  tool: string,
  args: unknown,
  hashing: Hashing,
  volatileArgs: readonly string[] = [],
): Result<CanonicalCall> {
  if (typeof tool !== 'string' || tool.trim() === '') {
    return err(new LoopguardError('invalid_call', 'tool: expected a non-empty string'));
  }
  try {
    const value = canonical(args ?? {}, 'args', {
      volatile: new Set(volatileArgs),
      hashing,
      ancestors: new Set(),
    });
    const argsJson = JSON.stringify(value);
    const name = tool.trim();
    return ok({ tool: name, argsJson, fingerprint: hashing.digest(`${name}\n${argsJson}`).slice(0, 32) });
  } catch (e) {
    if (e instanceof NotJson) {
      return err(new LoopguardError('invalid_args', `${e.path}: ${e.why}`, { details: { field: e.path } }));
    }
    throw e;
  }
}
