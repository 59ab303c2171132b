/**
 * `node:sqlite`'s DatabaseSync, loaded without the ExperimentalWarning Node 22 prints when the
 * module is first loaded: it reached every `loopguard` command's stderr and every app that imports
 * loopguard, where it reads as a fault of theirs; it is a note to us, who pin the Node versions we
 * support. Only that warning, only while the module loads: every other one is emitted as before.
 */
import type { DatabaseSync as Database } from 'node:sqlite';

type Emit = typeof process.emitWarning;

/** Whether `process.emitWarning(warning, ...rest)` is node:sqlite's experimental note. */
export function isSqliteExperimentalWarning(warning: unknown, rest: readonly unknown[]): boolean {
  const first = rest[0];
  const type =
    warning instanceof Error
      ? warning.name
      : typeof first === 'string'
        ? first
        : (first as { type?: unknown } | undefined)?.type;
  const text = warning instanceof Error ? warning.message : warning;
  return (
    type === 'ExperimentalWarning' && typeof text === 'string' && text.startsWith('SQLite is an experimental')
  );
}

function loadQuietly(): typeof Database {
  const emit: Emit = process.emitWarning;
  process.emitWarning = function (this: unknown, warning: unknown, ...rest: unknown[]) {
    if (isSqliteExperimentalWarning(warning, rest)) return;
    (emit as (...args: unknown[]) => void).call(this, warning, ...rest);
  } as Emit;
  try {
    return process.getBuiltinModule('node:sqlite').DatabaseSync;
  } finally {
    process.emitWarning = emit;
  }
}

export const DatabaseSync: typeof Database = loadQuietly();
export type DatabaseSync = Database;
