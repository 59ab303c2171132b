/**
 * `npm run infra:down`: stops exactly the pair recorded by `infra:up` and removes its data.
 * Idempotent: with nothing recorded it says so and exits 0.
 */
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { currentStateFile } from './paths.js';
import { type InfraState, stopInfra } from './stack.js';

if (!existsSync(currentStateFile)) {
  process.stderr.write('infra:down: nothing recorded in .infra/run/current.json; nothing to stop\n');
} else {
  const state = JSON.parse(readFileSync(currentStateFile, 'utf8')) as InfraState;
  await stopInfra(state);
  rmSync(currentStateFile, { force: true });
  process.stderr.write(
    `infra:down: stopped Kafka pid ${state.kafka.pid} and registry pid ${state.registry.pid}\n`,
  );
}
