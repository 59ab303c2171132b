/**
 * A request's body hash names what it asked across workers and versions: a repeat under its id is
 * answered only when the hashes match, and the hash is kept in the runs records and snapshots, so
 * the same request must hash the same forever, whatever order its fields come in.
 */
import { describe, expect, it } from 'vitest';
import { requestBodyHash } from '../src/service/request-body.js';
import { emptyRequest, type WireRequest } from '../src/service/service-topics.js';

const request: WireRequest = {
  ...emptyRequest('req-1', 'run-1', 'TOOL_CALL', 1_700_000_000_000),
  tool: 'search',
  args_json: '{"q":"ünï"}',
  operation_key: 'op-1',
  cost_estimate_usd: 0.25,
  key_id: 'k',
  signature: 'sig',
};

describe('requestBodyHash', () => {
  it('is the hash earlier workers recorded for the same request', () => {
    expect(requestBodyHash(request)).toBe('818f27dacde5b035a835277c8aa2be10ee83fc56ceea8c187ce4c804b801a30c');
  });

  it('leaves out the send time and the credentials, and nothing else', () => {
    const hash = requestBodyHash(request);
    expect(requestBodyHash({ ...request, sent_at_ms: 5, key_id: 'other', signature: 'other' })).toBe(hash);
    expect(requestBodyHash({ ...request, tool: 'fetch' })).not.toBe(hash);
    expect(requestBodyHash({ ...request, args_json: null })).not.toBe(hash);
  });

  it('does not depend on the order of the fields', () => {
    const reversed = Object.fromEntries(Object.entries(request).reverse()) as unknown as WireRequest;
    expect(requestBodyHash(reversed)).toBe(requestBodyHash(request));
    expect(requestBodyHash({ ...reversed, tool: 'fetch' })).toBe(
      requestBodyHash({ ...request, tool: 'fetch' }),
    );
  });
});
