import type { TraceCall } from '../../trace/trace-run.js';
import { tracedCall } from './harness.js';
import type { Prng } from './prng.js';

/**
 * Calls of a tool-using assistant (mail, calendar, files, jobs), recorded with the parts of each
 * answer that change on every call (a counter, a line number, a timestamp, a duration, a request
 * id) apart from the rest. The rest, the answer's `stable` text, is what the labels compare: the
 * generator knows which parts it made volatile, so the ground truth does not depend on any
 * detector's idea of what is volatile.
 */
export interface AssistantCall {
  readonly call: TraceCall;
  /** The result without its volatile parts, for the labels only. */
  readonly stable: string;
}

/** How one run's tools word their failures: the same failure, three ways of saying it. */
export type ErrorStyle = 'text' | 'json' | 'markup';
export const ERROR_STYLES: readonly ErrorStyle[] = ['text', 'json', 'markup'];

/** The kinds of volatile part a repeated failure carries. */
export type Volatile = 'counter' | 'line' | 'timestamp' | 'duration' | 'request-id';
export const VOLATILES: readonly Volatile[] = ['counter', 'line', 'timestamp', 'duration', 'request-id'];

const hex = (rng: Prng, n: number): string =>
  Array.from({ length: n }, () => '0123456789abcdef'[rng.int(0, 15)]).join('');
const two = (n: number): string => String(n).padStart(2, '0');

/** The volatile part of the `i`th answer: different on every call, never what the answer says. */
export function volatilePart(kind: Volatile, rng: Prng, i: number, base: number): string {
  switch (kind) {
    case 'counter':
      return `(attempt ${i + 1})`;
    case 'line':
      return `at line ${base + 3 * i}`;
    case 'timestamp':
      return `at 2026-03-0${1 + (base % 9)}T${two(9 + (i >> 6))}:${two(i % 60)}:${two(rng.int(0, 59))}Z`;
    case 'duration':
      return `after ${rng.int(80, 4000)}ms`;
    case 'request-id':
      return `(request id ${hex(rng, 8)}-${hex(rng, 4)}-4${hex(rng, 3)}-a${hex(rng, 3)}-${hex(rng, 12)})`;
  }
}

function failure(style: ErrorStyle, message: string, volatile: string): string {
  switch (style) {
    case 'text':
      return `Error: ${message} ${volatile}`.trim();
    case 'json':
      return JSON.stringify({ ok: false, error: { message, detail: volatile } });
    case 'markup':
      return `<error>${message}</error><detail>${volatile}</detail>`;
  }
}

export class AssistantLog {
  readonly calls: AssistantCall[] = [];

  constructor(readonly style: ErrorStyle) {}

  /** A call whose answer is `stable` with `volatile` in it (where `{v}` stands, or at the end). */
  add(tool: string, args: Record<string, unknown>, stable: string, volatile = ''): void {
    const result = stable.includes('{v}') ? stable.replace('{v}', volatile) : stable;
    this.calls.push({
      call: tracedCall(this.calls.length, tool, args, result),
      stable: stable.replace('{v}', ''),
    });
  }

  /** A failing call: the same message every time, its volatile part not. */
  fail(tool: string, args: Record<string, unknown>, message: string, volatile: string): void {
    const stable = failure(this.style, message, '{v}');
    this.add(tool, args, stable, volatile);
  }
}
