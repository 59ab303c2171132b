import { hash } from 'node:crypto';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';

/**
 * The most of one upstream result the run records. The client always gets the whole result; the
 * log keeps results to judge repeats and answer retries, and a record must fit the log (an event
 * is at most 1 MiB, a result at most 256 KiB of JSON), so reading a 300 KB file must not end the
 * session.
 */
const STORED_RESULT_CHARS = 64 * 1024;

/** What stands in the log for a result too large to store whole. */
export interface TruncatedResult {
  readonly truncated: true;
  /** Length of the whole result's JSON, in UTF-16 code units. */
  readonly chars: number;
  /** SHA-256 of the whole result's JSON: two different large results never look the same. */
  readonly sha256: string;
  /** The start of the whole result's JSON. */
  readonly head: string;
}

/** The result as the run stores it: itself when small enough, else its start, length and hash. */
export function storedResult(result: CallToolResult): CallToolResult | TruncatedResult {
  const json = JSON.stringify(result);
  if (json.length <= STORED_RESULT_CHARS) return result;
  return {
    truncated: true,
    chars: json.length,
    sha256: hash('sha256', json, 'hex'),
    head: json.slice(0, STORED_RESULT_CHARS / 4),
  };
}
