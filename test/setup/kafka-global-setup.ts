/**
 * Vitest globalSetup of the `int` project. With KAFKA_BROKERS and SCHEMA_REGISTRY_URL both
 * set (e.g. from `npm run infra:up`), it checks they answer and uses them, leaving them running.
 * Otherwise it starts a fresh, empty pair from infra/ and stops exactly that pair afterwards.
 * It never skips: if nothing usable is there and nothing can be started, the run fails.
 */
import type { TestProject } from 'vitest/node';
import { type InfraState, startInfra, stopInfra, verifyInfra } from '../../infra/stack.js';
import { parseBrokers } from './kafka-env.js';

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const givenBrokers = process.env.KAFKA_BROKERS;
  const givenRegistry = process.env.SCHEMA_REGISTRY_URL;

  if (givenBrokers || givenRegistry) {
    if (!givenBrokers || !givenRegistry) {
      throw new Error(
        'Set both KAFKA_BROKERS and SCHEMA_REGISTRY_URL (to use a running pair) or neither ' +
          `(to start one); got KAFKA_BROKERS=${givenBrokers ?? '<unset>'} SCHEMA_REGISTRY_URL=${givenRegistry ?? '<unset>'}`,
      );
    }
    try {
      await verifyInfra(parseBrokers(givenBrokers), givenRegistry);
    } catch (err) {
      throw new Error(
        `KAFKA_BROKERS/SCHEMA_REGISTRY_URL are set but not usable (unset both to let the tests start their own):\n${
          err instanceof Error ? err.message : String(err)
        }`,
      );
    }
    project.provide('kafkaBrokers', givenBrokers);
    project.provide('schemaRegistryUrl', givenRegistry);
    return async () => {}; // not ours to stop
  }

  const started = Date.now();
  const state: InfraState = await startInfra();
  console.log(
    `[int] Kafka ${state.kafka.version} at ${state.kafka.brokers}, Apicurio ${state.registry.version} at ` +
      `${state.registry.url}, ready in ${((Date.now() - started) / 1000).toFixed(1)} s`,
  );
  // Safety net if vitest dies without running teardown (e.g. a second Ctrl-C): kill the JVMs'
  // process groups synchronously on exit so no broker outlives the run.
  const killOnExit = (): void => {
    for (const pid of [state.kafka.pid, state.registry.pid]) {
      try {
        process.kill(-pid, 'SIGKILL');
      } catch {
        /* already gone */
      }
    }
  };
  process.once('exit', killOnExit);

  // Workers are forked after global setup and inherit process.env; provide() is the
  // documented channel and what kafkaEnv() reads first.
  process.env.KAFKA_BROKERS = state.kafka.brokers;
  process.env.SCHEMA_REGISTRY_URL = state.registry.url;
  project.provide('kafkaBrokers', state.kafka.brokers);
  project.provide('schemaRegistryUrl', state.registry.url);

  return async () => {
    process.off('exit', killOnExit);
    await stopInfra(state);
    delete process.env.KAFKA_BROKERS;
    delete process.env.SCHEMA_REGISTRY_URL;
  };
}
