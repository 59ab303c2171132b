/**
 * `npm run bench [-- --json] [--only NAME[,NAME...]] [--trials N] [--markdown] [--readme BLOCK]`: what a
 * guarded call costs, each figure a ratio against a baseline measured in the same run, the median
 * of N trials (3 by default) with min and max. `--markdown` prints the table for the README;
 * `--readme BLOCK` also writes it into the README's `<!-- bench:BLOCK -->` block. A benchmark,
 * not a test: it asserts nothing.
 */
import { loadavg } from 'node:os';
import { parseArgs } from 'node:util';
import { startInfra, stopInfra } from '../infra/stack.js';
import type { Bench, BenchContext, BenchResult, KafkaTarget } from './bench-result.js';
import { embeddedBenches } from './embedded-benches.js';
import { figuresOf, markdownTable, textTable } from './figures.js';
import { guardCallBench } from './guard-call.js';
import { guardedCallDurableBench } from './guarded-call-durable.js';
import { guardedCallProcessesBench } from './guarded-call-processes.js';
import { kafkaBenches } from './kafka-benches.js';
import { kafkaGuardedCallBench } from './kafka-guarded-call.js';
import { kafkaRunLoadBench } from './kafka-run-load.js';
import { memoryBench } from './memory.js';
import { provenance, replaceReadmeBlock } from './readme-block.js';
import { runLengthBench } from './run-length.js';
import { runLoadBench } from './run-load.js';
import { serveTakeoverBench } from './serve-takeover.js';
import { serviceBench } from './service-benches.js';

const BENCHES: Bench[] = [
  guardCallBench,
  guardedCallDurableBench,
  guardedCallProcessesBench,
  runLengthBench,
  runLoadBench,
  ...embeddedBenches,
  ...kafkaBenches,
  kafkaGuardedCallBench,
  kafkaRunLoadBench,
  serviceBench,
  serveTakeoverBench,
  memoryBench,
];

const { values } = parseArgs({
  options: {
    json: { type: 'boolean' },
    only: { type: 'string' },
    trials: { type: 'string', default: '3' },
    markdown: { type: 'boolean' },
    readme: { type: 'string' },
  },
  allowPositionals: false,
});
const trials = Number(values.trials);
if (!Number.isInteger(trials) || trials < 1) {
  process.stderr.write(`bench: --trials must be a positive integer, got ${values.trials}\n`);
  process.exit(2);
}
// A comma-separated list; each name selects its bench alone (`serve`, not also `serve-takeover`),
// else the benches it prefixes (a family).
const names = values.only?.split(',').filter((n) => n !== '');
const picks = (name: string) => {
  const exact = BENCHES.some((b) => b.name === name);
  return BENCHES.filter((b) => b.name === name || (!exact && b.name.startsWith(name)));
};
const unknown = names?.filter((n) => picks(n).length === 0) ?? [];
if (unknown.length > 0 || names?.length === 0) {
  process.stderr.write(
    `bench: no benchmark named ${unknown.join(', ') || values.only}; known: ${BENCHES.map((b) => b.name).join(', ')}\n`,
  );
  process.exit(2);
}
const selected =
  names === undefined ? BENCHES : BENCHES.filter((b) => names.some((n) => picks(n).includes(b)));

let infra: Awaited<ReturnType<typeof startInfra>> | undefined;
let target: Promise<KafkaTarget> | undefined;
const ctx: BenchContext = {
  log: (line) => process.stderr.write(`${line}\n`),
  kafka: () => {
    target ??= (async () => {
      const brokers = process.env.KAFKA_BROKERS;
      const registryUrl = process.env.SCHEMA_REGISTRY_URL;
      if (brokers && registryUrl) return { brokers: brokers.split(','), registryUrl };
      ctx.log(
        'bench: starting a Kafka broker and schema registry (KAFKA_BROKERS / SCHEMA_REGISTRY_URL not set)',
      );
      infra = await startInfra();
      return { brokers: [infra.kafka.brokers], registryUrl: infra.registry.url };
    })();
    return target;
  },
};

const loadBefore = loadavg();
const results: BenchResult[] = [];
try {
  for (const b of selected) {
    for (let trial = 0; trial < (b.ownTrials ? 1 : trials); trial++) {
      ctx.log(`bench: ${b.name}${b.ownTrials ? '' : ` (trial ${trial + 1} of ${trials})`}`);
      results.push(...(await b.run(ctx)));
    }
  }
} finally {
  if (infra !== undefined) await stopInfra(infra);
}
const figures = figuresOf(results);
if (values.json) for (const f of figures) process.stdout.write(`${JSON.stringify(f)}\n`);
else if (values.markdown || values.readme !== undefined) {
  const body = `${provenance(loadBefore)}:\n\n${markdownTable(figures)}`;
  process.stdout.write(body);
  if (values.readme !== undefined) replaceReadmeBlock(values.readme, body);
} else process.stdout.write(textTable(figures));
