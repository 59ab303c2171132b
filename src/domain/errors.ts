/**
 * Every failure loopguard reports has a stable `code` (one of ERROR_CODES) and a message naming
 * what was wrong. `retriable` (whether the same input may succeed later) defaults from the code's
 * entry; a throw site overrides it only where its case differs.
 */
import { type CodeOf, ERROR_CODES, type ErrorCode, type ErrorFamily } from './error-codes.js';

export type { CodeOf, ErrorCode, ErrorFamily } from './error-codes.js';
export { ERROR_CODES, isErrorCode } from './error-codes.js';

export interface ErrorOptions {
  readonly retriable?: boolean;
  readonly details?: Record<string, unknown>;
  readonly cause?: unknown;
}

export class LoopguardError extends Error {
  readonly code: ErrorCode;
  readonly retriable: boolean;
  readonly details: Readonly<Record<string, unknown>>;

  constructor(code: ErrorCode, message: string, opts: ErrorOptions = {}) {
    super(message, opts.cause === undefined ? undefined : { cause: opts.cause });
    // Subclasses keep this name: clients and tests match `name: 'LoopguardError'`; the class is for instanceof.
    this.name = 'LoopguardError';
    this.code = code;
    this.retriable = opts.retriable ?? ERROR_CODES[code].retriable;
    this.details = opts.details ?? {};
  }
}

/** Someone else wrote first: an expected version, a claim or an id was taken. */
export class ConflictError extends LoopguardError {
  constructor(code: CodeOf<'conflict'>, message: string, opts: ErrorOptions = {}) {
    super(code, message, opts);
  }
}

/** The input is not valid; `field` names which part of it (`args.items[2].q`). */
export class InvalidInputError extends LoopguardError {
  readonly field: string;

  constructor(code: CodeOf<'invalid_input'>, field: string, message: string, opts: ErrorOptions = {}) {
    super(code, message, { ...opts, details: { ...opts.details, field } });
    this.field = field;
  }
}

/** The input is fine but the run or store is not in a state to take it. */
export class IllegalStateError extends LoopguardError {
  constructor(code: CodeOf<'illegal_state'>, message: string, opts: ErrorOptions = {}) {
    super(code, message, opts);
  }
}

/** A dependency (the log, Kafka, the registry, a webhook) did not answer or failed. */
export class UnavailableError extends LoopguardError {
  constructor(code: CodeOf<'unavailable'>, message: string, opts: ErrorOptions = {}) {
    super(code, message, opts);
  }
}

export const familyOf = (code: ErrorCode): ErrorFamily => ERROR_CODES[code].family;

/**
 * An error of the class its code's family names, for sites that pass a code through (a rewrap
 * that adds context, a code received from the service): the rewrapped error stays a ConflictError.
 */
export function errorOf(code: ErrorCode, message: string, opts: ErrorOptions = {}): LoopguardError {
  switch (ERROR_CODES[code].family) {
    case 'conflict':
      return new ConflictError(code as CodeOf<'conflict'>, message, opts);
    case 'invalid_input': {
      const field = opts.details?.field;
      return new InvalidInputError(
        code as CodeOf<'invalid_input'>,
        typeof field === 'string' ? field : '',
        message,
        opts,
      );
    }
    case 'illegal_state':
      return new IllegalStateError(code as CodeOf<'illegal_state'>, message, opts);
    case 'unavailable':
      return new UnavailableError(code as CodeOf<'unavailable'>, message, opts);
    default:
      return new LoopguardError(code, message, opts);
  }
}

export type Result<T, E = LoopguardError> =
  | { readonly ok: true; readonly value: T }
  | { readonly ok: false; readonly error: E };

export const ok = <T>(value: T): Result<T, never> => ({ ok: true, value });
export const err = <E>(error: E): Result<never, E> => ({ ok: false, error });

/** Maps anything thrown by foreign code to a LoopguardError, keeping the original as `cause`. */
export function toLoopguardError(
  e: unknown,
  code: ErrorCode = 'internal',
  retriable?: boolean,
): LoopguardError {
  if (e instanceof LoopguardError) return e;
  const message = e instanceof Error ? e.message : String(e);
  return errorOf(code, message, { retriable, cause: e });
}
