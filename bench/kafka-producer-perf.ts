/**
 * Kafka's own producer benchmark, `org.apache.kafka.tools.ProducerPerformance`, as the baseline
 * of the publish figures. It lives in `org.apache.kafka:kafka-tools`, which the broker's classpath
 * (infra/fetch.ts) does not carry, so its runtime classpath is laid out here once, through Maven
 * like the broker's, into `.infra/cache/kafka-tools-<version>/libs`.
 */
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { KAFKA_VERSION } from '../infra/fetch.js';
import { findJava } from '../infra/java.js';
import { cacheDir } from '../infra/paths.js';

const execFileAsync = promisify(execFile);

const POM = (version: string) => `<?xml version="1.0" encoding="UTF-8"?>
<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>dev.loopguard</groupId>
  <artifactId>loopguard-bench-kafka-tools</artifactId>
  <version>0.0.0</version>
  <packaging>pom</packaging>
  <dependencies>
    <dependency>
      <groupId>org.apache.kafka</groupId>
      <artifactId>kafka-tools</artifactId>
      <version>${version}</version>
    </dependency>
  </dependencies>
</project>
`;

/** Directory of jars for `java -cp '<dir>/*' org.apache.kafka.tools.ProducerPerformance`. */
async function ensureKafkaTools(version: string = KAFKA_VERSION): Promise<string> {
  const dir = join(cacheDir, `kafka-tools-${version}`);
  if (existsSync(dir)) return join(dir, 'libs');
  mkdirSync(cacheDir, { recursive: true });
  const tmp = `${dir}.tmp-${process.pid}-${Date.now()}`;
  try {
    mkdirSync(tmp, { recursive: true });
    writeFileSync(join(tmp, 'pom.xml'), POM(version));
    await execFileAsync(
      'mvn',
      [
        '-B',
        '-q',
        '-f',
        join(tmp, 'pom.xml'),
        'org.apache.maven.plugins:maven-dependency-plugin:3.8.1:copy-dependencies',
        '-DincludeScope=runtime',
        `-DoutputDirectory=${join(tmp, 'libs')}`,
      ],
      { maxBuffer: 64 * 1024 * 1024 },
    ).catch((e: { message: string; stdout?: string; stderr?: string }) => {
      throw new Error(
        `fetching kafka-tools ${version} through Maven failed: ${e.message}\n${e.stdout ?? ''}${e.stderr ?? ''}`,
      );
    });
    try {
      renameSync(tmp, dir);
    } catch (e) {
      if (!existsSync(dir)) throw e; // another process filled the cache first: use theirs
    }
    return join(dir, 'libs');
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
}

export interface ProducerPerfOptions {
  readonly brokers: readonly string[];
  readonly topic: string;
  readonly numRecords: number;
  readonly recordSize: number;
  readonly lingerMs: number;
}

export interface ProducerPerfResult {
  readonly recordsPerSec: number;
  readonly avgLatencyMs: number;
  /** The tool's summary line, as printed. */
  readonly summary: string;
}

/** Runs the tool to completion (acks=all, idempotent, unthrottled) and parses its summary line. */
export async function runProducerPerformance(opts: ProducerPerfOptions): Promise<ProducerPerfResult> {
  const java = findJava(17);
  if (java === undefined) throw new Error('ProducerPerformance needs Java 17 or newer');
  const libs = await ensureKafkaTools();
  const args = [
    '-cp',
    `${libs}/*`,
    'org.apache.kafka.tools.ProducerPerformance',
    '--topic',
    opts.topic,
    '--num-records',
    String(opts.numRecords),
    '--record-size',
    String(opts.recordSize),
    '--throughput',
    '-1',
    '--producer-props',
    'acks=all',
    `linger.ms=${opts.lingerMs}`,
    'enable.idempotence=true',
    `bootstrap.servers=${opts.brokers.join(',')}`,
  ];
  const { stdout } = await execFileAsync(java, args, { maxBuffer: 16 * 1024 * 1024, timeout: 300_000 });
  // "N records sent, R records/sec (M MB/sec), L ms avg latency, ..." is the last line.
  const summary = stdout
    .trim()
    .split('\n')
    .reverse()
    .find((l) => /records sent,.*records\/sec/.test(l));
  const m = summary?.match(/^(\d+) records sent, ([\d.]+) records\/sec .*?, ([\d.]+) ms avg latency/);
  if (summary === undefined || !m)
    throw new Error(`ProducerPerformance printed no summary:\n${stdout.slice(-2000)}`);
  if (Number(m[1]) !== opts.numRecords)
    throw new Error(`ProducerPerformance sent ${m[1]} of ${opts.numRecords} records`);
  return { recordsPerSec: Number(m[2]), avgLatencyMs: Number(m[3]), summary: summary.trim() };
}
