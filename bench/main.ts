/**
 * `npm run bench [-- --json] [--only NAME]`: what a guarded call costs, each figure a ratio
 * against a baseline measured in the same run. A benchmark, not a test: it asserts nothing.
 */
import { parseArgs } from 'node:util';
import { startInfra, stopInfra } from '../infra/stack.js';
import type { Bench, BenchContext, BenchResult, KafkaTarget } from './bench-result.js';
import { embeddedBenches } from './embedded-benches.js';
import { guardCallBench } from './guard-call.js';
import { guardedCallDurableBench } from './guarded-call-durable.js';
import { guardedCallProcessesBench } from './guarded-call-processes.js';
import { kafkaBenches } from './kafka-benches.js';
import { kafkaGuardedCallBench } from './kafka-guarded-call.js';
import { kafkaRunLoadBench } from './kafka-run-load.js';
import { memoryBench } from './memory.js';
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
  options: { json: { type: 'boolean' }, only: { type: 'string' } },
  allowPositionals: false,
});
const selected = BENCHES.filter(
  (b) => values.only === undefined || b.name === values.only || b.name.startsWith(`${values.only}`),
);
if (selected.length === 0) {
  process.stderr.write(
    `bench: no benchmark named ${values.only}; known: ${BENCHES.map((b) => b.name).join(', ')}\n`,
  );
  process.exit(2);
}

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

const results: BenchResult[] = [];
try {
  for (const b of selected) {
    ctx.log(`bench: ${b.name}`);
    for (const r of await b.run(ctx)) {
      results.push(r);
      if (values.json) process.stdout.write(`${JSON.stringify(r)}\n`);
    }
  }
} finally {
  if (infra !== undefined) await stopInfra(infra);
}
if (!values.json) {
  const rows = results.map((r) => [
    r.name,
    `${r.value} ${r.unit}`,
    `${r.baseline_value} ${r.unit}`,
    r.baseline,
    String(r.ratio),
  ]);
  const header = ['name', 'value', 'baseline value', 'baseline', 'ratio'];
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: string[]) => cells.map((c, i) => c.padEnd(widths[i] ?? 0)).join('  ');
  process.stdout.write(
    `${[line(header), line(widths.map((w) => '-'.repeat(w))), ...rows.map(line)].join('\n')}\n`,
  );
}
