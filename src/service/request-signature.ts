/**
 * A request's credential: an HMAC-SHA256, under a secret the workers hold for the key id, of every
 * field of the request but the signature itself (its key id and send time included, so neither can
 * be swapped), as JSON of the [name, value] pairs sorted by name. A worker with tenant keys takes a
 * request's tenant and authority from the key that signed it, never from a field the client wrote.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import { fieldsJson } from './request-body.js';
import type { WireRequest } from './service-topics.js';

const DOMAIN = 'loopguard-request-v1\n';
const NOT_SIGNED: ReadonlySet<string> = new Set(['signature']);

/** The HMAC of what is signed: the request without its signature, canonical. */
function signatureOf(req: WireRequest, secret: string): string {
  return createHmac('sha256', secret)
    .update(DOMAIN + fieldsJson(req, NOT_SIGNED))
    .digest('hex');
}

/** `req` signed with `keyId`'s secret (what a client sends). */
export function signRequest(req: WireRequest, keyId: string, secret: string): WireRequest {
  const unsigned = { ...req, key_id: keyId, signature: null };
  return { ...unsigned, signature: signatureOf(unsigned, secret) };
}

/** Whether `req.signature` is `secret`'s over the rest of it (compared in constant time). */
export function signedWith(req: WireRequest, secret: string): boolean {
  if (req.signature === null || !/^[0-9a-f]{64}$/.test(req.signature)) return false;
  const want = Buffer.from(signatureOf({ ...req, signature: null }, secret), 'hex');
  return timingSafeEqual(want, Buffer.from(req.signature, 'hex'));
}
