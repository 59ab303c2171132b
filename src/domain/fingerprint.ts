import { canonicalJson } from './canonical-json.js';
import { err, ok, type Result } from './errors.js';
import { inputError, nameProblem } from './input-check.js';
import { type Hashing, normalisedKey } from './redact.js';

export interface CanonicalCall {
  readonly tool: string;
  /** Canonical JSON of the arguments: keys sorted, strings trimmed, volatile fields dropped, secrets redacted. */
  readonly argsJson: string;
  readonly fingerprint: string;
}

/** Fields that differ on every call without changing what is asked: they would hide exact repeats. */
const VOLATILE: ReadonlySet<string> = new Set([
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

const isVolatile = (key: string): boolean => VOLATILE.has(normalisedKey(key));

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
  const bad = nameProblem(tool);
  if (bad !== null) return err(inputError('invalid_call', 'tool', bad));
  const drop =
    volatileArgs.length === 0 ? isVolatile : (k: string) => isVolatile(k) || volatileArgs.includes(k);
  const canon = canonicalJson(args ?? {}, 'args', { hashing, trim: true, drop, invalid: 'invalid_args' });
  if (!canon.ok) return canon;
  const argsJson = canon.value.json;
  const name = tool.trim();
  return ok({ tool: name, argsJson, fingerprint: hashing.digest(`${name}\n${argsJson}`).slice(0, 32) });
}
