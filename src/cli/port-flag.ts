import { LoopguardError } from '../domain/index.js';

/** A TCP port from a flag: 0 (any free port) to 65535; anything else is an error naming the flag. */
export function portFlag(flag: string, value: string | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0 || n > 65535)
    throw new LoopguardError('usage', `--${flag} must be a port number from 0 to 65535, got ${value}`);
  return n;
}
