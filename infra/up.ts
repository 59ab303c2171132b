/**
 * `npm run infra:up`: starts a fresh, empty Kafka + registry pair that keeps running after this
 * script exits, records it in .infra/run/current.json for `infra:down`, and prints the two
 * env lines (stdout carries only these, so `eval "$(npm run -s infra:up)"`-style use works;
 * progress goes to stderr). A pair recorded by an earlier `infra:up` is stopped first.
 */
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { currentStateFile, runRoot } from './paths.js';
import { recordedInfra, startInfra, stopInfra } from './stack.js';

const earlier = recordedInfra();
if (earlier !== undefined) {
  process.stderr.write('infra:up: stopping the pair recorded by an earlier infra:up\n');
  await stopInfra(earlier);
  rmSync(currentStateFile, { force: true });
}

const started = Date.now();
process.stderr.write('infra:up: starting Kafka and Apicurio Registry (first run downloads them)...\n');
const state = await startInfra();
mkdirSync(runRoot, { recursive: true });
writeFileSync(currentStateFile, `${JSON.stringify(state, null, 2)}\n`);
process.stderr.write(
  `infra:up: Kafka ${state.kafka.version} (pid ${state.kafka.pid}) and Apicurio ${state.registry.version} ` +
    `(pid ${state.registry.pid}) ready in ${((Date.now() - started) / 1000).toFixed(1)} s; logs in ${state.runDir}\n`,
);
process.stdout.write(`KAFKA_BROKERS=${state.kafka.brokers}\nSCHEMA_REGISTRY_URL=${state.registry.url}\n`);
