/**
 * The pair the integration tests need, Kafka + schema registry, started together (in parallel:
 * both JVMs take 10-40 s to boot on 2 cores) and stopped together. The state is plain JSON so
 * `infra:up` can hand it to a later `infra:down` through `.infra/run/current.json`.
 */
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { type KafkaNode, kafkaAnswers, startKafka } from './kafka.js';
import { currentStateFile, runMarker, runRoot } from './paths.js';
import { commandLineContains, killGroup } from './proc.js';
import { type RegistryNode, registryAnswers, startRegistry } from './registry.js';

export interface InfraState {
  id: string;
  runDir: string;
  startedAt: string;
  kafka: Omit<KafkaNode, 'child'>;
  registry: Omit<RegistryNode, 'child'>;
}

export interface StartInfraOptions {
  readyTimeoutMs?: number;
}

function newRunDir(): { id: string; runDir: string } {
  const id = `${new Date().toISOString().replace(/[:.]/g, '-')}-${randomBytes(3).toString('hex')}`;
  const runDir = join(runRoot, id);
  mkdirSync(runDir, { recursive: true });
  return { id, runDir };
}

/** Starts a fresh, empty Kafka + registry pair. On failure nothing keeps running; logs stay. */
export async function startInfra(opts: StartInfraOptions = {}): Promise<InfraState> {
  const { id, runDir } = newRunDir();
  const [kafka, registry] = await Promise.allSettled([
    startKafka({ runDir, readyTimeoutMs: opts.readyTimeoutMs }),
    startRegistry({ runDir, readyTimeoutMs: opts.readyTimeoutMs }),
  ]);
  if (kafka.status === 'fulfilled' && registry.status === 'fulfilled') {
    const { child: _k, ...k } = kafka.value;
    const { child: _r, ...r } = registry.value;
    return { id, runDir, startedAt: new Date().toISOString(), kafka: k, registry: r };
  }
  const errors: string[] = [];
  for (const result of [kafka, registry]) {
    if (result.status === 'rejected')
      errors.push(String(result.reason instanceof Error ? result.reason.message : result.reason));
    else await killGroup(result.value.pid);
  }
  if (kafka.status === 'fulfilled') rmSync(kafka.value.dataDir, { recursive: true, force: true });
  throw new Error(`local Kafka/registry failed to start (logs kept in ${runDir}):\n${errors.join('\n')}`);
}

/**
 * Stops exactly the recorded processes (each pid only if its command line still carries this
 * run's marker, so a reused pid is never killed) and deletes their data. Idempotent. The run's
 * logs are deleted too unless `keepLogs` or LOOPGUARD_KEEP_INFRA_LOGS=1.
 */
export async function stopInfra(state: InfraState, opts: { keepLogs?: boolean } = {}): Promise<void> {
  await Promise.all(
    [state.kafka.pid, state.registry.pid]
      .filter((pid) => isRunProcess(state, pid))
      .map((pid) => killGroup(pid)),
  );
  rmSync(state.kafka.dataDir, { recursive: true, force: true });
  if (!(opts.keepLogs || process.env.LOOPGUARD_KEEP_INFRA_LOGS === '1')) {
    rmSync(state.runDir, { recursive: true, force: true });
  }
}

/** The pair `infra:up` recorded for `infra:down`, if there is one. */
export function recordedInfra(): InfraState | undefined {
  if (!existsSync(currentStateFile)) return undefined;
  return JSON.parse(readFileSync(currentStateFile, 'utf8')) as InfraState;
}

/** Whether `pid` is still a process of the run `state` records, not a reused pid. */
export function isRunProcess(state: InfraState, pid: number): boolean {
  return commandLineContains(pid, runMarker(state.runDir));
}

/** Checks an externally provided pair answers; throws a message naming what did not. */
export async function verifyInfra(brokers: string[], registryUrl: string): Promise<void> {
  const problems: string[] = [];
  await kafkaAnswers(brokers, 10_000).catch((err: unknown) => {
    problems.push(`KAFKA_BROKERS=${brokers.join(',')} does not answer an admin listTopics: ${String(err)}`);
  });
  await registryAnswers(registryUrl, 10_000).catch((err: unknown) => {
    problems.push(
      `SCHEMA_REGISTRY_URL=${registryUrl} does not answer GET /subjects with 200: ${String(err)}`,
    );
  });
  if (problems.length > 0) throw new Error(problems.join('\n'));
}
