/**
 * `npm run infra:down`: stops exactly the pair recorded by `infra:up` and removes its data.
 * Idempotent: with nothing recorded it says so and exits 0.
 */
import { rmSync } from 'node:fs';
import { currentStateFile } from './paths.js';
import { recordedInfra, stopInfra } from './stack.js';

const state = recordedInfra();
if (state === undefined) {
  process.stderr.write('infra:down: nothing recorded in .infra/run/current.json; nothing to stop\n');
} else {
  await stopInfra(state);
  rmSync(currentStateFile, { force: true });
  process.stderr.write(
    `infra:down: stopped Kafka pid ${state.kafka.pid} and registry pid ${state.registry.pid}\n`,
  );
}
