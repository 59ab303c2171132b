import { closeSync, openSync, readSync } from 'node:fs';
import { DEFAULT_POLICY, LoopguardError, type Policy, parsePolicy } from '../domain/index.js';

/**
 * The policy from `--policy FILE`, or the defaults (a bad file is an error naming the field), and
 * the JSON it came from (for what the file states explicitly).
 */
export function readPolicyFile(path: string | undefined): { policy: Policy; json: unknown } {
  if (path === undefined) return { policy: DEFAULT_POLICY, json: {} };
  const bytes = readBounded(path);
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

/** A policy is a few KiB; one over this is not a policy (`--policy /dev/zero`), refused before it fills memory. */
const MAX_POLICY_BYTES = 1024 * 1024;

function readBounded(path: string): Uint8Array {
  let fd: number;
  try {
    fd = openSync(path, 'r');
  } catch (e) {
    throw new LoopguardError('policy_unreadable', `--policy ${path}: ${(e as Error).message}`);
  }
  try {
    const buf = Buffer.allocUnsafe(MAX_POLICY_BYTES + 1);
    let n = 0;
    for (;;) {
      const got = readSync(fd, buf, n, buf.length - n, null);
      if (got === 0) break;
      n += got;
      if (n > MAX_POLICY_BYTES)
        throw new LoopguardError(
          'too_large',
          `--policy ${path}: over ${MAX_POLICY_BYTES / 1024} KiB: not a policy file`,
          { details: { file: path } },
        );
    }
    return buf.subarray(0, n);
  } catch (e) {
    if (e instanceof LoopguardError) throw e;
    throw new LoopguardError('policy_unreadable', `--policy ${path}: ${(e as Error).message}`);
  } finally {
    closeSync(fd);
  }
}
