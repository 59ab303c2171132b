/**
 * A result's identity: one function from what a tool answered (its class, its code, its value) to
 * the result as recorded and its hash. The library, the service and the remote client all use it,
 * so one answer has one hash wherever it was judged; repeat and no-progress detection read it.
 */
import { resultJsonOf } from './canonical-json.js';
import { ok, type Result } from './errors.js';
import type { ResultKind } from './events.js';
import type { Hashing } from './redact.js';

export interface ToolResult {
  /** The value as recorded: canonical JSON, secrets redacted (see resultJsonOf). */
  readonly resultJson: string;
  readonly resultHash: string;
}

/**
 * The hash of a recorded result. A plain success is the hash of its JSON alone, so equal values
 * are equal results however the tool returned them; any other class or a code is part of what
 * was answered (a rate limit is not a precondition failure with the same body).
 */
export function resultHash(
  kind: ResultKind,
  code: string | null,
  resultJson: string,
  hashing: Hashing,
): string {
  return hashing.digest(
    kind === 'SUCCESS' && code === null ? resultJson : `${kind}:${code ?? ''}:${resultJson}`,
  );
}

/** A tool's answer as recorded, with its hash; a value that cannot be recorded is an error naming its path. */
export function toolResult(
  kind: ResultKind,
  code: string | null,
  value: unknown,
  hashing: Hashing,
): Result<ToolResult> {
  const recorded = resultJsonOf(value, hashing);
  if (!recorded.ok) return recorded;
  const resultJson = recorded.value.json;
  return ok({ resultJson, resultHash: resultHash(kind, code, resultJson, hashing) });
}

/** What a tool that failed with `code` answered: `{"error": code}`, as every failed call records it. */
export function failedResult(kind: ResultKind, code: string, hashing: Hashing): ToolResult {
  const r = toolResult(kind, code, { error: code }, hashing);
  // A code is a short name, checked where it enters, so its object always records; were it not,
  // the answer is still a failure of this class, recorded without the code's text.
  return r.ok ? r.value : failedResult(kind, 'error', hashing);
}
