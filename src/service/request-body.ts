/**
 * What a request asks, as one hash: every field but the send time (a client that re-sends after a
 * timeout may stamp it anew) and the credentials (a signature is over the same body, but may be
 * made again). A request id seen before with another body is not a repeat but a second request
 * under a used id, refused with `duplicate_request_id`, never answered with the first one's decision.
 */
import { hash } from 'node:crypto';
import type { WireRequest } from './service-topics.js';

const NOT_THE_BODY: ReadonlySet<string> = new Set(['sent_at_ms', 'key_id', 'signature']);

export const requestBodyHash = (req: WireRequest): string =>
  hash('sha256', fieldsJson(req, NOT_THE_BODY), 'hex');

/** The request's fields but `omit`, as JSON of the [name, value] pairs sorted by name: canonical. */
export function fieldsJson(req: WireRequest, omit: ReadonlySet<string>): string {
  const fields = Object.entries(req)
    .filter(([k]) => !omit.has(k))
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return JSON.stringify(fields);
}
