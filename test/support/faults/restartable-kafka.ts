/**
 * A dedicated single broker that a test may stop and start again on the same port and data dir,
 * so clients reconnect to "the same cluster after a restart". startKafka formats and starts it;
 * a restart runs the same JVM command on the same config without formatting again.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ensureKafkaLibs } from '../../../infra/fetch.js';
import { type KafkaNode, kafkaAnswers, startKafka } from '../../../infra/kafka.js';
import { killGroup, spawnDetached, waitUntil } from '../../../infra/proc.js';

export interface RestartableKafka {
  readonly brokers: string;
  stop(): Promise<void>;
  start(): Promise<void>;
  close(): Promise<void>;
}

export async function startRestartableKafka(): Promise<RestartableKafka> {
  const runDir = mkdtempSync(join(tmpdir(), 'loopguard-restart-'));
  let node: KafkaNode = await startKafka({ runDir });
  let pid = node.pid;
  const jvm = async () => [
    '-Xms256m',
    '-Xmx512m',
    '-XX:+UseG1GC',
    '-Djava.awt.headless=true',
    `-Dlog4j2.configurationFile=${join(runDir, 'log4j2.properties')}`,
    `-Dloopguard.infra.run=${runDir}`,
    '-cp',
    join(await ensureKafkaLibs(node.version), '*'),
  ];
  return {
    brokers: node.brokers,
    stop: () => killGroup(pid),
    async start() {
      const child = spawnDetached(
        'java',
        [...(await jvm()), 'kafka.Kafka', join(runDir, 'server.properties')],
        {
          cwd: runDir,
          logFile: node.logFile,
        },
      );
      if (child.pid === undefined) throw new Error('could not spawn java for Kafka');
      pid = child.pid;
      node = { ...node, pid, child };
      await waitUntil(
        async () => {
          await kafkaAnswers([node.brokers], 3_000);
          return true;
        },
        {
          what: `Kafka restarted at ${node.brokers}`,
          timeoutMs: 120_000,
          intervalMs: 500,
          child,
          logFile: node.logFile,
        },
      );
    },
    async close() {
      await killGroup(pid);
      rmSync(node.dataDir, { recursive: true, force: true });
      rmSync(runDir, { recursive: true, force: true });
    },
  };
}
