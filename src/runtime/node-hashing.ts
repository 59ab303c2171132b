import { createHmac, hash } from 'node:crypto';
import type { Hashing } from '../domain/index.js';

/**
 * sha256 for fingerprints; HMAC-sha256 for secret values, so equal secrets compare equal in events
 * that never hold them. The key is always given: a default would be public, and a guessable
 * password could then be confirmed offline from the log.
 */
export function nodeHashing(key: string): Hashing {
  return {
    // One-shot hash: half the cost of a Hash object, and this runs on every guarded call.
    digest: (text) => hash('sha256', text, 'hex'),
    keyed: (text) => createHmac('sha256', key).update(text).digest('hex').slice(0, 24),
  };
}
