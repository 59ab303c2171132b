import { readFileSync } from 'node:fs';
import { DEFAULT_POLICY, LoopguardError, type Policy, parsePolicy } from '../domain/index.js';

/** The policy from `--policy FILE`, or the defaults; a bad file is an error naming the field. */
export function loadPolicy(path: string | undefined): Policy {
  return readPolicyFile(path).policy;
}

/** The parsed policy and the JSON it came from (for what the file states explicitly). */
export function readPolicyFile(path: string | undefined): { policy: Policy; json: unknown } {
  if (path === undefined) return { policy: DEFAULT_POLICY, json: {} };
  let bytes: Uint8Array;
  try {
    bytes = readFileSync(path);
  } catch (e) {
    throw new LoopguardError('policy_unreadable', `--policy ${path}: ${(e as Error).message}`);
  }
  let json: unknown;
  try {
    // Strict UTF-8, never a silent U+FFFD in a tool name; the decoder drops a byte order mark.
    json = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(bytes));
  } catch (e) {
    const why = e instanceof TypeError ? 'not valid UTF-8' : `not JSON (${(e as Error).message})`;
    throw new LoopguardError('invalid_policy', `--policy ${path}: ${why}`);
  }
  const parsed = parsePolicy(json);
  if (!parsed.ok)
    throw new LoopguardError('invalid_policy', `--policy ${path}: ${parsed.error.message}`, {
      details: parsed.error.details,
    });
  return { policy: parsed.value, json };
}
