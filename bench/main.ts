/**
 * `npm run bench [-- --json] [--only NAME[,NAME...]] [--trials N] [--markdown] [--readme BLOCK|all]`:
 * what a guarded call costs, each figure a ratio against a baseline measured in the same run, the
 * median of N trials (3 by default) with min and max. `--markdown` prints the table for the
 * README; `--readme BLOCK` runs that block's benchmarks (README_BLOCKS) and writes their table
 * into the README's `<!-- bench:BLOCK -->` block, `--readme all` every block in turn. A
 * benchmark, not a test: it asserts nothing.
 */
import { loadavg } from 'node:os';
import { parseArgs } from 'node:util';
import { isRunProcess, recordedInfra, startInfra, stopInfra } from '../infra/stack.js';
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

/** The README's generated tables, each with the benchmarks it shows (names as `--only` takes them). */
const README_BLOCKS: Readonly<Record<string, string>> = {
  local: 'guard-call,guarded-call,run-length,run-load,embedded,memory',
  kafka: 'kafka',
  serve: 'serve',
};

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
const picks = (name: string) => {
  const exact = BENCHES.some((b) => b.name === name);
  return BENCHES.filter((b) => b.name === name || (!exact && b.name.startsWith(name)));
};
function selectionOf(only: string | undefined): Bench[] {
  const names = only?.split(',').filter((n) => n !== '');
  const unknown = names?.filter((n) => picks(n).length === 0) ?? [];
  if (unknown.length > 0 || names?.length === 0) {
    process.stderr.write(
      `bench: no benchmark named ${unknown.join(', ') || only}; known: ${BENCHES.map((b) => b.name).join(', ')}\n`,
    );
    process.exit(2);
  }
  return names === undefined ? BENCHES : BENCHES.filter((b) => names.some((n) => picks(n).includes(b)));
}

/** What this command runs: one selection, or one per README block it rewrites. */
const blocks =
  values.readme === 'all' ? Object.keys(README_BLOCKS) : values.readme === undefined ? [] : [values.readme];
const unknownBlock = blocks.find((b) => README_BLOCKS[b] === undefined);
if (unknownBlock !== undefined || (values.readme === 'all' && values.only !== undefined)) {
  process.stderr.write(
    unknownBlock !== undefined
      ? `bench: no README block ${unknownBlock}; known: ${Object.keys(README_BLOCKS).join(', ')}, all\n`
      : 'bench: --readme all runs every block with its own benchmarks; leave --only out\n',
  );
  process.exit(2);
}
const runs: { readonly block?: string; readonly benches: Bench[] }[] =
  blocks.length === 0
    ? [{ benches: selectionOf(values.only) }]
    : blocks.map((block) => ({ block, benches: selectionOf(values.only ?? README_BLOCKS[block]) }));

let infra: Awaited<ReturnType<typeof startInfra>> | undefined;
let target: Promise<KafkaTarget> | undefined;
const ctx: BenchContext = {
  log: (line) => process.stderr.write(`${line}\n`),
  kafka: () => {
    target ??= (async () => {
      const brokers = process.env.KAFKA_BROKERS;
      const registryUrl = process.env.SCHEMA_REGISTRY_URL;
      if (brokers && registryUrl) {
        const brokerPid = recordedBrokerPid(brokers);
        return {
          brokers: brokers.split(','),
          registryUrl,
          ...(brokerPid === undefined ? {} : { brokerPid }),
        };
      }
      ctx.log(
        'bench: starting a Kafka broker and schema registry (KAFKA_BROKERS / SCHEMA_REGISTRY_URL not set)',
      );
      infra = await startInfra();
      return { brokers: [infra.kafka.brokers], registryUrl: infra.registry.url, brokerPid: infra.kafka.pid };
    })();
    return target;
  },
};

/** The broker `npm run infra:up` started, when KAFKA_BROKERS names it: its CPU can be measured. */
function recordedBrokerPid(brokers: string): number | undefined {
  const state = recordedInfra();
  const ours = state?.kafka.brokers === brokers && isRunProcess(state, state.kafka.pid);
  return ours ? state.kafka.pid : undefined;
}

async function runAll(benches: readonly Bench[]): Promise<BenchResult[]> {
  const results: BenchResult[] = [];
  for (const b of benches) {
    for (let trial = 0; trial < (b.ownTrials ? 1 : trials); trial++) {
      ctx.log(`bench: ${b.name}${b.ownTrials ? '' : ` (trial ${trial + 1} of ${trials})`}`);
      results.push(...(await b.run(ctx)));
    }
  }
  return results;
}

try {
  for (const { block, benches } of runs) {
    const loadBefore = loadavg();
    const figures = figuresOf(await runAll(benches));
    if (values.json) for (const f of figures) process.stdout.write(`${JSON.stringify(f)}\n`);
    else if (values.markdown || block !== undefined) {
      const body = `${provenance(loadBefore)}:\n\n${markdownTable(figures)}`;
      process.stdout.write(body);
      // Written as each block ends, so a later block that fails keeps the tables already measured.
      if (block !== undefined) replaceReadmeBlock(block, body);
    } else process.stdout.write(textTable(figures));
  }
} finally {
  if (infra !== undefined) await stopInfra(infra);
}
