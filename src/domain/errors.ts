/**
 * Errors are values: every failure loopguard reports has a stable `code` (for programs) and a
 * message naming what was wrong (for people). `retriable` says whether the same input may
 * succeed later (a broker that is down) or never will (a malformed policy).
 */
export class LoopguardError extends Error {
  readonly code: string;
  readonly retriable: boolean;
  readonly details: Readonly<Record<string, unknown>>;

  constructor(
    code: string,
    message: string,
    opts: { retriable?: boolean; details?: Record<string, unknown>; cause?: unknown } = {},
  ) {
    super(message, opts.cause === undefined ? undefined : { cause: opts.cause });
    this.name = 'LoopguardError';
    this.code = code;
    this.retriable = opts.retriable ?? false;
    this.details = opts.details ?? {};
  }
}

export type Result<T, E = LoopguardError> =
  | { readonly ok: true; readonly value: T }
  | { readonly ok: false; readonly error: E };

export const ok = <T>(value: T): Result<T, never> => ({ ok: true, value });
export const err = <E>(error: E): Result<never, E> => ({ ok: false, error });

/** Maps anything thrown by foreign code to a LoopguardError, keeping the original as `cause`. */
export function toLoopguardError(e: unknown, code = 'internal', retriable = false): LoopguardError {
  if (e instanceof LoopguardError) return e;
  const message = e instanceof Error ? e.message : String(e);
  return new LoopguardError(code, message, { retriable, cause: e });
}
