import { LoopguardError } from '../domain/index.js';

/**
 * Numbers given as flags. A flag's value arrives as text; a bad one is an error that names the
 * flag and repeats what was given, so the user sees which of several flags to fix.
 */
const parsed = (value: string): number => (value.trim() === '' ? Number.NaN : Number(value));

/** A positive integer (a count, a duration in ms), or `fallback` when the flag is absent. */
export function positiveInt(flag: string, value: string | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  const n = parsed(value);
  if (!Number.isInteger(n) || n <= 0)
    throw new LoopguardError('usage', `--${flag} must be a positive integer, got ${value}`);
  return n;
}

/** An integer >= 0 (a count that may be 0, a duration that may be none), or undefined when the flag is absent. */
export function countFlag(flag: string, value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const n = parsed(value);
  if (!Number.isInteger(n) || n < 0)
    throw new LoopguardError('usage', `--${flag} must be an integer >= 0, got ${value}`);
  return n;
}

/** A TCP port from 0 (any free port) to 65535, or `fallback` when the flag is absent. */
export function portFlag(flag: string, value: string | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  const n = parsed(value);
  if (!Number.isInteger(n) || n < 0 || n > 65535)
    throw new LoopguardError('usage', `--${flag} must be a port number from 0 to 65535, got ${value}`);
  return n;
}
