import { LoopguardError } from '../domain/index.js';

/**
 * The packages only some entries and commands need: optional peers of `loopguard`, so the root
 * library installs without them. A command that needs one loads its module with `needs`.
 */
export const OPTIONAL_PACKAGES = [
  'kafkajs',
  '@kafkajs/confluent-schema-registry',
  '@modelcontextprotocol/sdk',
  'prom-client',
  '@opentelemetry/api',
] as const;

/** The optional package whose absence made an import fail, or null for any other failure. */
export function missingPackage(e: unknown): string | null {
  if ((e as { code?: unknown })?.code !== 'ERR_MODULE_NOT_FOUND') return null;
  const named = /Cannot find (?:package|module) '([^']+)'/.exec(String((e as Error).message))?.[1];
  return OPTIONAL_PACKAGES.find((p) => named === p || named?.startsWith(`${p}/`)) ?? null;
}

/**
 * Loads the module behind `what` (a command or a flag, as the user typed it); when an optional
 * package it imports is not installed, the one-line `missing_dependency` error names the package
 * to install instead of Node's stack trace.
 */
export async function needs<T>(what: string, load: () => Promise<T>): Promise<T> {
  try {
    return await load();
  } catch (e) {
    const pkg = missingPackage(e);
    if (pkg === null) throw e;
    throw new LoopguardError('missing_dependency', `${what} needs the package ${pkg}: npm install ${pkg}`);
  }
}
