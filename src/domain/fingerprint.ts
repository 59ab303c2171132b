import { err, LoopguardError, ok, type Result } from './errors.js';
import { intentOfObject, rememberIntent } from './intent.js';

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

const NO_VOLATILE: ReadonlySet<string> = new Set();

/** A value's path (`args.items[2].q`), built only when it is needed: for an error, or for a container's children. */
const pathOf = (at: string, key: string | number | null): string =>
  key === null ? at : typeof key === 'number' ? `${at}[${key}]` : `${at}.${key}`;

const NORMAL = 0;
const VOLATILE_KEY = 1;
const SECRET_KEY = 2;
/** What a key name is, remembered: argument names repeat on every call of a tool. */
const keyKinds = new Map<string, number>();
function kindOf(key: string): number {
  let kind = keyKinds.get(key);
  if (kind === undefined) {
    kind = VOLATILE.has(norm(key)) ? VOLATILE_KEY : isSecretKey(key) ? SECRET_KEY : NORMAL;
    if (keyKinds.size < 4096) keyKinds.set(key, kind);
  }
  return kind;
}

function canonical(value: unknown, at: string, key: string | number | null, ctx: Ctx): unknown {
  switch (typeof value) {
    case 'string':
      return value.trim();
    case 'boolean':
      return value;
    case 'number':
      if (!Number.isFinite(value)) throw new NotJson(pathOf(at, key), `${value} is not a JSON number`);
      return Object.is(value, -0) ? 0 : value;
    case 'bigint':
      throw new NotJson(pathOf(at, key), 'BigInt is not JSON (pass it as a string)');
    case 'function':
    case 'symbol':
      throw new NotJson(pathOf(at, key), `a ${typeof value} is not JSON`);
    case 'undefined':
      throw new NotJson(pathOf(at, key), 'undefined is not JSON');
  }
  if (value === null) return null;
  const obj = value as object;
  const path = pathOf(at, key);
  if (ctx.ancestors.has(obj)) throw new NotJson(path, 'circular reference');
  if (typeof (obj as { toJSON?: unknown }).toJSON === 'function') {
    return canonical((obj as { toJSON: () => unknown }).toJSON(), path, null, ctx);
  }
  ctx.ancestors.add(obj);
  try {
    if (Array.isArray(obj)) return obj.map((v, i) => canonical(v, path, i, ctx));
    const proto = Object.getPrototypeOf(obj);
    if (proto !== Object.prototype && proto !== null)
      throw new NotJson(path, `a ${proto?.constructor?.name ?? 'class'} instance is not JSON`);
    const out: Record<string, unknown> = {};
    for (const k of Object.keys(obj).sort()) {
      const v = (obj as Record<string, unknown>)[k];
      // JSON drops undefined members; so do we, instead of failing on an optional field left unset.
      if (v === undefined) continue;
      const kind = kindOf(k);
      if (kind === VOLATILE_KEY || ctx.volatile.has(k)) continue;
      out[k] =
        kind === SECRET_KEY
          ? `secret:${ctx.hashing.keyed(JSON.stringify(canonical(v, path, k, ctx)))}`
          : canonical(v, path, k, ctx);
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
    const value = canonical(args ?? {}, 'args', null, {
      volatile: volatileArgs.length === 0 ? NO_VOLATILE : new Set(volatileArgs),
      hashing,
      ancestors: new Set(),
    });
    const argsJson = JSON.stringify(value);
    // The near-duplicate rule and the fold both want the intent: computed here, from the object in hand.
    if (value !== null && typeof value === 'object' && !Array.isArray(value)) {
      rememberIntent(argsJson, intentOfObject(value as Record<string, unknown>, argsJson));
    }
    const name = tool.trim();
    return ok({ tool: name, argsJson, fingerprint: hashing.digest(`${name}\n${argsJson}`).slice(0, 32) });
  } catch (e) {
    if (e instanceof NotJson) {
      return err(new LoopguardError('invalid_args', `${e.path}: ${e.why}`, { details: { field: e.path } }));
    }
    throw e;
  }
}
