/**
 * Starts a throwaway single-node Kafka (KRaft, broker+controller in one JVM) on 127.0.0.1 from
 * the Maven-fetched classpath. Fresh temp data dir per start; ready only once a real client
 * round trip (admin listTopics) succeeds, since an open port is not readiness.
 */
import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Kafka, logLevel, Partitioners } from 'kafkajs';
import { fixKafkajsRequestQueue } from '../src/log/kafka/kafkajs-request-queue.js';
import { ensureKafkaLibs, KAFKA_VERSION } from './fetch.js';
import { runMarker } from './paths.js';
import { freePorts } from './ports.js';
import { killGroup, runToCompletion, spawnDetached, waitUntil } from './proc.js';

export interface KafkaNode {
  pid: number;
  /** `127.0.0.1:<port>`, the value for KAFKA_BROKERS. */
  brokers: string;
  dataDir: string;
  logFile: string;
  version: string;
  /** Present only in the process that started it (not after `infra:up` exits). */
  child?: ChildProcess;
}

export interface StartKafkaOptions {
  /** `.infra/run/<id>`: configs and `kafka.log` go here. */
  runDir: string;
  version?: string;
  readyTimeoutMs?: number;
}

// Console only: the launcher redirects stdout to the run's kafka.log. A .properties config
// because the tarball's YAML one needs jackson-dataformat-yaml wiring we don't want to rely on.
const LOG4J2 = `status = warn
appender.out.type = Console
appender.out.name = OUT
appender.out.layout.type = PatternLayout
appender.out.layout.pattern = [%d] %p %m (%c)%n
rootLogger.level = INFO
rootLogger.appenderRef.out.ref = OUT
logger.state.name = state.change.logger
logger.state.level = WARN
logger.cleaner.name = kafka.log.LogCleaner
logger.cleaner.level = WARN
`;

function serverProperties(port: number, controllerPort: number, dataDir: string): string {
  const props: Record<string, string | number> = {
    'process.roles': 'broker,controller',
    'node.id': 1,
    // Static quorum: format must then run WITHOUT --standalone (KAFKA-19489).
    'controller.quorum.voters': `1@127.0.0.1:${controllerPort}`,
    listeners: `PLAINTEXT://127.0.0.1:${port},CONTROLLER://127.0.0.1:${controllerPort}`,
    'advertised.listeners': `PLAINTEXT://127.0.0.1:${port}`,
    'controller.listener.names': 'CONTROLLER',
    'inter.broker.listener.name': 'PLAINTEXT',
    'listener.security.protocol.map': 'PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT',
    'log.dirs': dataDir,
    'num.partitions': 3,
    // One node: every internal topic must fit on one replica.
    'offsets.topic.replication.factor': 1,
    'transaction.state.log.replication.factor': 1,
    'transaction.state.log.min.isr': 1,
    'share.coordinator.state.topic.replication.factor': 1,
    'share.coordinator.state.topic.min.isr': 1,
    // Few internal partitions: creating 50 __consumer_offsets partitions slows the first join.
    'offsets.topic.num.partitions': 1,
    'transaction.state.log.num.partitions': 1,
    'share.coordinator.state.topic.num.partitions': 1,
    // Tests join groups constantly; don't wait 3 s for more members.
    'group.initial.rebalance.delay.ms': 0,
    // kafkajs speaks the classic group protocol; keep it enabled explicitly (it is the default).
    'group.coordinator.rebalance.protocols': 'classic,consumer',
  };
  return `${Object.entries(props)
    .map(([k, v]) => `${k}=${v}`)
    .join('\n')}\n`;
}

/** Kafka cluster id: 16 random bytes, base64url, not starting with '-' (reads as a CLI flag). */
function clusterId(): string {
  for (;;) {
    const id = randomBytes(16).toString('base64url');
    if (!id.startsWith('-')) return id;
  }
}

/** One admin round trip against `brokers`; throws if the cluster does not answer. */
export async function kafkaAnswers(brokers: string[], timeoutMs = 5_000): Promise<string[]> {
  fixKafkajsRequestQueue();
  const admin = new Kafka({
    clientId: 'loopguard-infra-probe',
    brokers,
    logLevel: logLevel.NOTHING,
    connectionTimeout: Math.min(timeoutMs, 3_000),
    requestTimeout: timeoutMs,
    retry: { retries: 0 },
  }).admin();
  try {
    await admin.connect();
    return await admin.listTopics();
  } finally {
    await admin.disconnect().catch(() => undefined);
  }
}

/**
 * Has the broker create and load __consumer_offsets and __transaction_state now, with one
 * group lookup and one committed transaction on a scratch topic (deleted after, so tests see
 * an empty cluster). Otherwise the first group join / transaction in a test waits on "The
 * coordinator is loading" (kafkajs retries, but logs each retry at ERROR level).
 */
async function warmUpCoordinators(brokers: string): Promise<void> {
  fixKafkajsRequestQueue();
  const k = new Kafka({ clientId: 'loopguard-infra-warmup', brokers: [brokers], logLevel: logLevel.NOTHING });
  const admin = k.admin();
  const producer = k.producer({
    transactionalId: 'loopguard-infra-warmup',
    idempotent: true,
    maxInFlightRequests: 1,
    createPartitioner: Partitioners.DefaultPartitioner,
  });
  const topic = 'loopguard-infra-warmup';
  try {
    await admin.connect();
    await admin.createTopics({
      waitForLeaders: true,
      topics: [{ topic, numPartitions: 1, replicationFactor: 1 }],
    });
    await admin.describeGroups(['loopguard-infra-warmup']); // FindCoordinator(group)
    await producer.connect(); // InitProducerId via the transaction coordinator
    const tx = await producer.transaction();
    await tx.send({ topic, acks: -1, messages: [{ value: 'warm-up' }] });
    await tx.commit();
    await admin.deleteTopics({ topics: [topic] });
  } finally {
    await producer.disconnect().catch(() => undefined);
    await admin.disconnect().catch(() => undefined);
  }
}

export async function startKafka(opts: StartKafkaOptions): Promise<KafkaNode> {
  const version = opts.version ?? KAFKA_VERSION;
  const libs = await ensureKafkaLibs(version);
  const [port, controllerPort] = (await freePorts(2)) as [number, number];
  const dataDir = mkdtempSync(join(tmpdir(), 'loopguard-kafka-'));
  const configFile = join(opts.runDir, 'server.properties');
  const log4jFile = join(opts.runDir, 'log4j2.properties');
  const logFile = join(opts.runDir, 'kafka.log');
  writeFileSync(configFile, serverProperties(port, controllerPort, dataDir));
  writeFileSync(log4jFile, LOG4J2);

  const jvm = [
    '-Xms256m',
    '-Xmx512m',
    '-XX:+UseG1GC',
    '-Djava.awt.headless=true',
    `-Dlog4j2.configurationFile=${log4jFile}`,
    runMarker(opts.runDir),
    '-cp',
    join(libs, '*'),
  ];
  await runToCompletion(
    'java',
    [...jvm, 'kafka.tools.StorageTool', 'format', '-t', clusterId(), '-c', configFile],
    {
      cwd: opts.runDir,
      logFile,
    },
  );
  const child = spawnDetached('java', [...jvm, 'kafka.Kafka', configFile], { cwd: opts.runDir, logFile });
  if (child.pid === undefined) throw new Error('could not spawn java for Kafka');
  const brokers = `127.0.0.1:${port}`;
  try {
    await waitUntil(
      async () => {
        await kafkaAnswers([brokers], 3_000);
        return true;
      },
      {
        what: `Kafka ${version} at ${brokers}`,
        timeoutMs: opts.readyTimeoutMs ?? 120_000,
        intervalMs: 500,
        child,
        logFile,
      },
    );
    await warmUpCoordinators(brokers);
  } catch (err) {
    // Leave no JVM behind; the log in runDir stays for diagnosis.
    await killGroup(child.pid);
    rmSync(dataDir, { recursive: true, force: true });
    throw err;
  }
  return { pid: child.pid, brokers, dataDir, logFile, version, child };
}
