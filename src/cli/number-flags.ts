import { LoopguardError } from '../domain/index.js';

/**
 * Numbers given as flags. A flag's value arrives as text; a bad one is an error that names the
 * flag and repeats what was given, so the user sees which of several flags to fix.
 */
function intFlag(flag: string, value: string, ok: (n: number) => boolean, what: string): number {
  const n = value.trim() === '' ? Number.NaN : Number(value);
  if (!Number.isInteger(n) || !ok(n))
    throw new LoopguardError('usage', `--${flag} must be ${what}, got ${value}`);
  return n;
}

/** A positive integer (a count, a duration in ms), or `fallback` when the flag is absent. */
export const positiveInt = (flag: string, value: string | undefined, fallback: number): number =>
  value === undefined ? fallback : intFlag(flag, value, (n) => n > 0, 'a positive integer');

/** An integer >= 0 (a count that may be 0, a duration that may be none), or undefined when the flag is absent. */
export const countFlag = (flag: string, value: string | undefined): number | undefined =>
  value === undefined ? undefined : intFlag(flag, value, (n) => n >= 0, 'an integer >= 0');

/** A TCP port from 0 (any free port) to 65535, or `fallback` when the flag is absent. */
export const portFlag = (flag: string, value: string | undefined, fallback: number): number =>
  value === undefined
    ? fallback
    : intFlag(flag, value, (n) => n >= 0 && n <= 65535, 'a port number from 0 to 65535');
