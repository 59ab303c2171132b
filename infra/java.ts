/**
 * Finds a Java runtime of at least a given major version. Kafka 4.x runs on the machine's
 * default Java 17, but Apicurio Registry 3.3.x is compiled for Java 21 (class file 65), so the
 * registry launcher looks for a newer JDK beside the default one.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';

/** Major version of `javaBin` (e.g. 17, 25), or undefined if it does not run. */
export function javaMajor(javaBin: string): number | undefined {
  // `java -version` prints to stderr.
  const res = spawnSync(javaBin, ['-version'], { encoding: 'utf8', timeout: 15_000 });
  return res.status === 0 ? parseMajor(`${res.stderr}${res.stdout}`) : undefined;
}

function parseMajor(text: string): number | undefined {
  const m = /version "(\d+)(?:\.(\d+))?/.exec(text);
  if (!m?.[1]) return undefined;
  const major = Number(m[1]);
  return major === 1 && m[2] ? Number(m[2]) : major; // "1.8.0" means 8
}

/** Candidate java binaries: explicit overrides first, then PATH's java, then /usr/lib/jvm/*. */
function candidates(): string[] {
  const homes = [process.env.LOOPGUARD_JAVA_HOME, process.env.JAVA_HOME].filter((h): h is string => !!h);
  const jvmRoot = '/usr/lib/jvm';
  const installed = existsSync(jvmRoot) ? readdirSync(jvmRoot).map((d) => join(jvmRoot, d)) : [];
  return [
    ...homes.map((h) => join(h, 'bin', 'java')),
    'java',
    ...installed.map((h) => join(h, 'bin', 'java')),
  ];
}

const memo = new Map<number, string | null>();

/** First java binary with major version >= `min`, or undefined. Memoised per `min`. */
export function findJava(min: number): string | undefined {
  if (!memo.has(min)) {
    const hit = candidates().find(
      (bin) => (bin === 'java' || existsSync(bin)) && (javaMajor(bin) ?? 0) >= min,
    );
    memo.set(min, hit ?? null);
  }
  return memo.get(min) ?? undefined;
}
