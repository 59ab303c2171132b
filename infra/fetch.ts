/**
 * Downloads (once) what the local test infrastructure runs, through Maven so that only Maven
 * Central is needed: Kafka's runtime classpath and Apicurio Registry's Quarkus app. Results go
 * to `.infra/cache/`, written to a temp folder first and renamed into place, so an interrupted
 * or concurrent download never leaves a half-filled cache that looks complete.
 */
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, renameSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { findJava } from './java.js';
import { cacheDir, infraDir } from './paths.js';

const execFileAsync = promisify(execFile);

/** Kafka 4.1.x: KRaft only, Java 17; kafkajs 2.2.4 verified against it (test/infra.int.test.ts). */
export const KAFKA_VERSION: string = process.env.LOOPGUARD_KAFKA_VERSION ?? '4.1.2';

export interface ApicurioChoice {
  version: string;
  /** Lowest Java major version the build runs on. */
  minJava: number;
}
/**
 * Tried in order, skipping those whose Java is missing. 3.3.3 needs Java 21+ (the machine's
 * default is 17; a Temurin 25 usually sits in /usr/lib/jvm). 2.6.13.Final runs on Java 17.
 * 3.3.2 and 3.0.9 are not candidates: Maven Central here lacks their parent POM, so Maven
 * refuses to resolve them.
 */
export const APICURIO_CHOICES: readonly ApicurioChoice[] = process.env.LOOPGUARD_APICURIO_VERSION
  ? [{ version: process.env.LOOPGUARD_APICURIO_VERSION, minJava: 17 }]
  : [
      { version: '3.3.3', minJava: 21 },
      { version: '2.6.13.Final', minJava: 17 },
    ];

const DEPENDENCY_PLUGIN = 'org.apache.maven.plugins:maven-dependency-plugin:3.8.1';

async function mvn(args: string[]): Promise<void> {
  try {
    // -B: no colours/progress in CI logs; -q: only errors. ~/.m2 is the local repo.
    await execFileAsync('mvn', ['-B', '-q', '-f', join(infraDir, 'pom.xml'), ...args], {
      maxBuffer: 64 * 1024 * 1024,
    });
  } catch (err) {
    const e = err as { stdout?: string; stderr?: string; message: string };
    throw new Error(`mvn ${args.join(' ')} failed: ${e.message}\n${e.stdout ?? ''}${e.stderr ?? ''}`);
  }
}

/** Fills `finalDir` via `fill(tmpDir)` unless it already exists; atomic rename at the end. */
async function cached(finalDir: string, fill: (tmpDir: string) => Promise<void>): Promise<string> {
  if (existsSync(finalDir)) return finalDir;
  mkdirSync(cacheDir, { recursive: true });
  const tmpDir = `${finalDir}.tmp-${process.pid}-${Date.now()}`;
  try {
    await fill(tmpDir);
    try {
      renameSync(tmpDir, finalDir);
    } catch (err) {
      // Another process finished the same download first: use theirs.
      if (!existsSync(finalDir)) throw err;
    }
    return finalDir;
  } finally {
    rmSync(tmpDir, { recursive: true, force: true });
  }
}

/** Directory of jars for `java -cp '<dir>/*'` running Kafka `version`. */
export async function ensureKafkaLibs(version: string = KAFKA_VERSION): Promise<string> {
  const dir = await cached(join(cacheDir, `kafka-${version}`), async (tmp) => {
    await mvn([
      `-Dkafka.version=${version}`,
      `${DEPENDENCY_PLUGIN}:copy-dependencies`,
      '-DincludeScope=runtime',
      `-DoutputDirectory=${join(tmp, 'libs')}`,
    ]);
    const jars = readdirSync(join(tmp, 'libs'));
    for (const needed of [`kafka_2.13-${version}.jar`, 'log4j-core-', 'log4j-slf4j-impl-']) {
      if (!jars.some((j) => j.startsWith(needed))) throw new Error(`Kafka classpath lacks ${needed}*.jar`);
    }
  });
  return join(dir, 'libs');
}

export interface ApicurioDist {
  version: string;
  /** Unpacked folder (the jar's working set: `lib/`, `quarkus/`, ...). */
  dir: string;
  /** Runnable jar: `quarkus-run.jar` (3.x fast-jar) or `*-runner.jar` (2.x legacy jar). */
  jar: string;
  /** A java binary new enough for this version. */
  java: string;
}

function runnableJar(dir: string): string | undefined {
  if (!existsSync(dir)) return undefined;
  const jar = readdirSync(dir).find((f) => f === 'quarkus-run.jar' || f.endsWith('-runner.jar'));
  return jar === undefined ? undefined : join(dir, jar);
}

async function fetchApicurio(version: string): Promise<string> {
  return cached(join(cacheDir, `apicurio-${version}`), async (tmp) => {
    const download = join(tmp, 'download');
    await mvn([
      `${DEPENDENCY_PLUGIN}:copy`,
      `-Dartifact=io.apicurio:apicurio-registry-app:${version}:tar.gz:all`,
      `-DoutputDirectory=${download}`,
    ]);
    const tarball = readdirSync(download).find((f) => f.endsWith('.tar.gz'));
    if (tarball === undefined) throw new Error(`no tar.gz downloaded for Apicurio ${version}`);
    await execFileAsync('tar', ['-xzf', join(download, tarball), '-C', tmp]);
    rmSync(download, { recursive: true, force: true }); // the copy in ~/.m2 is enough
    if (runnableJar(tmp) === undefined)
      throw new Error(`Apicurio ${version}: no runnable jar in the tarball`);
  });
}

/** First Apicurio of APICURIO_CHOICES that has a fitting Java and downloads (or is cached). */
export async function ensureApicurio(): Promise<ApicurioDist> {
  const errors: string[] = [];
  for (const { version, minJava } of APICURIO_CHOICES) {
    const java = findJava(minJava);
    if (java === undefined) {
      errors.push(`Apicurio ${version}: skipped, no Java >= ${minJava} found (set LOOPGUARD_JAVA_HOME)`);
      continue;
    }
    try {
      const dir = await fetchApicurio(version);
      const jar = runnableJar(dir);
      if (jar === undefined) throw new Error(`Apicurio ${version}: cache ${dir} has no runnable jar`);
      return { version, dir, jar, java };
    } catch (err) {
      errors.push(err instanceof Error ? err.message : String(err));
    }
  }
  throw new Error(`could not fetch Apicurio Registry:\n${errors.join('\n')}`);
}
