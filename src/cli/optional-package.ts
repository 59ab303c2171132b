import { LoopguardError } from '../domain/index.js';

/**
 * The packages only some entries and commands need: optional peers of `loopguard`, so the root
 * library and the embedded commands install without them. A command that needs some loads its
 * module through `needs`, by dynamic import.
 */
const OPTIONAL = ['kafkajs', '@modelcontextprotocol/sdk', 'prom-client', '@opentelemetry/api'] as const;
export type OptionalPackage = (typeof OPTIONAL)[number];

/** What a Kafka log needs (`--kafka`, `project`). */
export const KAFKA_PACKAGES: readonly OptionalPackage[] = ['kafkajs'];

/** Whether `pkg` resolves from here (a package without a root export is still installed). */
function installed(pkg: OptionalPackage): boolean {
  try {
    import.meta.resolve(pkg);
    return true;
  } catch (e) {
    return (e as { code?: unknown }).code !== 'ERR_MODULE_NOT_FOUND';
  }
}

/** The optional package whose absence made an import fail, or null for any other failure. */
function missingPackage(e: unknown): OptionalPackage | null {
  if ((e as { code?: unknown })?.code !== 'ERR_MODULE_NOT_FOUND') return null;
  const named = /Cannot find (?:package|module) '([^']+)'/.exec(String((e as Error).message))?.[1];
  return OPTIONAL.find((p) => named === p || named?.startsWith(`${p}/`)) ?? null;
}

const missingError = (what: string, missing: readonly string[]): LoopguardError =>
  new LoopguardError(
    'missing_dependency',
    `${what} needs ${missing.length === 1 ? 'the package' : 'the packages'} ${missing.join(', ')}: npm install ${missing.join(' ')}`,
  );

/**
 * Loads the module behind `what` (a command or a flag, as the user typed it) once the optional
 * packages it imports are there; else the one-line `missing_dependency` error names every one to
 * install, instead of Node's stack trace for the first.
 */
export async function needs<T>(
  what: string,
  packages: readonly OptionalPackage[],
  load: () => Promise<T>,
): Promise<T> {
  const missing = packages.filter((p) => !installed(p));
  if (missing.length > 0) throw missingError(what, missing);
  try {
    return await load();
  } catch (e) {
    const pkg = missingPackage(e);
    if (pkg === null) throw e;
    throw missingError(what, [pkg]);
  }
}

/** `GET /metrics` for `--metrics-port` (prom-client), loaded before the command starts anything. */
export const loadMetricsServer = () =>
  needs('--metrics-port', ['prom-client'], () => import('./metrics-server.js'));
