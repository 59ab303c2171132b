import type { Command, ResultKind } from '../domain/index.js';

const OUTCOME = Symbol.for('loopguard.outcome');

/** What a tool may return instead of a bare value, to say what kind of result it is. */
export interface ToolOutcome
  extends Pick<
    Extract<Command, { type: 'CompleteToolCall' }>,
    'code' | 'retryAfterMs' | 'terminal' | 'progressVersion' | 'tokens' | 'costUsd'
  > {
  readonly [OUTCOME]: true;
  readonly kind: ResultKind;
  readonly value: unknown;
}

type Extra = Omit<ToolOutcome, typeof OUTCOME | 'kind' | 'value'>;
const make = (kind: ResultKind, value: unknown, extra: Extra = {}): ToolOutcome => ({
  [OUTCOME]: true,
  kind,
  value,
  ...extra,
});

/** Builders a tool uses to classify its result; a plain return value is SUCCESS. */
export const outcome = {
  success: (value: unknown, extra?: Extra) => make('SUCCESS', value, extra),
  retryable: (code: string, extra?: Omit<Extra, 'code'>) => make('RETRYABLE', null, { ...extra, code }),
  precondition: (code: string, extra?: Omit<Extra, 'code'>) => make('PRECONDITION', null, { ...extra, code }),
  fatal: (code: string, extra?: Omit<Extra, 'code'>) => make('FATAL', null, { ...extra, code }),
  pending: (value: unknown, extra?: Extra) => make('PENDING', value, extra),
};

export const isToolOutcome = (v: unknown): v is ToolOutcome =>
  typeof v === 'object' && v !== null && (v as Record<symbol, unknown>)[OUTCOME] === true;

/** A thrown error with a result class, for tools that signal failure by throwing. */
export class ToolError extends Error {
  constructor(
    readonly kind: Exclude<ResultKind, 'SUCCESS' | 'PENDING'>,
    readonly code: string,
    message = code,
    readonly retryAfterMs?: number,
  ) {
    super(message);
    this.name = 'ToolError';
  }
}

/**
 * Thrown by a tool function that gave up before its tool started, answering the step timeout's
 * abort at once (an adapter's allowed call whose framework never executed it): at the timeout the
 * guard then records the call as not run, not in doubt, since nothing can have happened.
 */
export class ToolNotStarted extends Error {
  constructor(message = 'the tool never started') {
    super(message);
    this.name = 'ToolNotStarted';
  }
}
