#!/usr/bin/env node
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { LoopguardError } from '../domain/index.js';
import { DEFAULT_DATA_DIR } from '../log/index.js';
import { alertCommand } from './alert-command.js';
import { auditHtmlCommand, auditOutput } from './audit-command.js';
import { evalCommand } from './eval-command.js';
import { fleetCommand } from './fleet-command.js';
import { type Io, processIo } from './io.js';
import { mcpCommand } from './mcp-command.js';
import { serviceMetrics, startMetricsServer } from './metrics-server.js';
import { migrateCommand } from './migrate-command.js';
import { portFlag } from './number-flags.js';
import { type Env, type KafkaFlags, kafkaConfig, openKafkaStore } from './open-kafka-store.js';
import { type OpenStore, openEmbeddedStore } from './open-store.js';
import { projectCommand } from './project-command.js';
import { rebuildCommand } from './rebuild-command.js';
import { repairCommand } from './repair-command.js';
import { replayCommand } from './replay-command.js';
import { serveCommand } from './serve-command.js';
import { printStop } from './stops-command.js';
import { startUiServer } from './ui-server.js';
import { whatifCommand } from './whatif-command.js';

const DEFAULT_UI_PORT = 4280;

const USAGE = `loopguard: a runtime guard for AI-agent tool calls

  loopguard replay FILE.jsonl... [--policy P.json] [--data-dir D | --kafka] [--json]
  loopguard rebuild [--data-dir D | --kafka] [--json]
  loopguard whatif --policy NEW.json [--data-dir D | --kafka] [--json]
  loopguard audit RUN_ID [--data-dir D | --kafka] [--json | --html FILE]
  loopguard ui [--port P] [--metrics-port P] [--data-dir D | --kafka]
  loopguard fleet [--follow] [--threshold N] [--window-ms W] [--data-dir D | --kafka [--group G]] [--json]
  loopguard stops [--follow] [--data-dir D | --kafka] [--json]
  loopguard alert --kafka [--webhook URL [--webhook-header 'Name: value']...] [--group G] [--metrics-port P]
  loopguard project --kafka [--once]
  loopguard serve --kafka [--group G] [--metrics-port P] [--policy P.json] [--partitions N]
                [--snapshot-every N] [--ended-idle-ms MS] [--from-beginning]
                [--tenant-keys KEYS.json]
  loopguard eval FILE.jsonl... [--synthetic] [--policy P.json] [--json]
  loopguard mcp [--policy P.json] [--data-dir D | --kafka] [--run-id ID] [--metrics-port P] -- COMMAND [ARGS...]
  loopguard repair [--data-dir D]
  loopguard migrate --data-dir D
  loopguard demo [--data-dir D]

The data dir defaults to ./.loopguard (the embedded, file-backed log). --kafka uses Kafka and a
schema registry: --brokers host:port[,...] and --registry URL, or KAFKA_BROKERS and
SCHEMA_REGISTRY_URL (with both set, Kafka is the default unless --data-dir is given);
--topic-prefix P prefixes every topic. alert: --retry-base-ms, --retry-max-ms, --session-timeout-ms,
--dead-letter-after N attempts (default 20) before an alert goes to loopguard.dlq.
serve: --snapshot-every N runs records between a partition's snapshots (default 1000);
--ended-idle-ms MS before an ended run leaves memory at the next snapshot (default 600000).
A new --group starts at the end of loopguard.requests; --from-beginning decides what is there.
--tenant-keys: per-tenant keys; only requests signed with one are decided, on their tenant's runs.
On Kafka the stops and ledger copies are derived from the runs topic by the copy projector, which
\`alert\` runs beside its subscriber and \`project\` runs on its own (--once: until what was
recorded when it started is copied).
mcp: an MCP server on stdio in front of the MCP server COMMAND; every tool call goes through the
guard, one run per session (its id from --run-id, else generated and printed on stderr).
`;

const OPTIONS = {
  policy: { type: 'string' },
  'data-dir': { type: 'string' },
  json: { type: 'boolean' },
  html: { type: 'string' },
  synthetic: { type: 'boolean' },
  follow: { type: 'boolean' },
  once: { type: 'boolean' },
  kafka: { type: 'boolean' },
  brokers: { type: 'string' },
  registry: { type: 'string' },
  'topic-prefix': { type: 'string' },
  webhook: { type: 'string' },
  'webhook-header': { type: 'string', multiple: true },
  'dead-letter-after': { type: 'string' },
  group: { type: 'string' },
  'retry-base-ms': { type: 'string' },
  'retry-max-ms': { type: 'string' },
  'session-timeout-ms': { type: 'string' },
  port: { type: 'string' },
  threshold: { type: 'string' },
  'window-ms': { type: 'string' },
  'metrics-port': { type: 'string' },
  partitions: { type: 'string' },
  'snapshot-every': { type: 'string' },
  'ended-idle-ms': { type: 'string' },
  'from-beginning': { type: 'boolean' },
  'tenant-keys': { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const;

const examples = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'examples');

export interface MainOptions {
  /** Where KAFKA_BROKERS / SCHEMA_REGISTRY_URL are read; process.env by default. */
  readonly env?: Env;
  /** Ends `alert` and `stops --follow`; SIGINT/SIGTERM by default. */
  readonly signal?: AbortSignal;
}

async function withStore<T>(
  flags: KafkaFlags,
  env: Env,
  work: (s: OpenStore) => Promise<T>,
  access: 'read' | 'write' = 'read',
): Promise<T> {
  const kafka = kafkaConfig(flags, env);
  const store = kafka
    ? await openKafkaStore(kafka)
    : await openEmbeddedStore(flags['data-dir'], { readOnly: access === 'read' });
  try {
    return await work(store);
  } finally {
    await store.close();
  }
}

function shutdownSignal(given: AbortSignal | undefined): AbortSignal {
  if (given) return given;
  const ctl = new AbortController();
  process.once('SIGINT', () => ctl.abort());
  process.once('SIGTERM', () => ctl.abort());
  return ctl.signal;
}

export async function main(
  argv: readonly string[],
  io: Io = processIo,
  opts: MainOptions = {},
): Promise<number> {
  // mcp parses its own flags: everything after its -- belongs to the upstream command.
  if (argv[0] === 'mcp')
    return mcpCommand(argv.slice(1), io, opts.env ?? process.env, shutdownSignal(opts.signal));
  const { values, positionals } = parseArgs({ args: [...argv], options: OPTIONS, allowPositionals: true });
  const [command, ...rest] = positionals;
  const env = opts.env ?? process.env;
  const json = values.json ?? false;
  if (values.help || command === undefined) {
    io.out(USAGE);
    return command === undefined && !values.help ? 2 : 0;
  }
  switch (command) {
    case 'replay':
      if (rest.length === 0) throw new LoopguardError('usage', 'replay: give at least one FILE.jsonl');
      return replayCommand(
        rest,
        { ...(values.policy ? { policy: values.policy } : {}), json },
        (work) =>
          withStore(
            values,
            env,
            async (s) =>
              work({
                knownRunIds: await s.knownRunIds(),
                where: s.where,
                secretKey: s.secretKey(env),
                append: (runId, r) => s.stream.append(runId, 0, r),
              }),
            'write',
          ),
        io,
      );
    case 'eval':
      if (rest.length === 0 && !values.synthetic)
        throw new LoopguardError('usage', 'eval: give at least one FILE.jsonl, or --synthetic');
      return evalCommand(
        rest,
        { ...(values.policy ? { policy: values.policy } : {}), json, synthetic: values.synthetic ?? false },
        io,
      );
    case 'rebuild':
      return withStore(values, env, async (s) =>
        rebuildCommand((p) => s.rebuild(p), { json, total: await s.eventCount() }, io),
      );
    case 'whatif': {
      const policy = values.policy;
      if (policy === undefined)
        throw new LoopguardError('usage', 'whatif: give the new policy, --policy NEW.json');
      return withStore(values, env, async (s) =>
        whatifCommand((apply) => s.scan(apply), { policy, json, total: await s.eventCount() }, io),
      );
    }
    case 'audit': {
      const runId = rest[0];
      if (runId === undefined) throw new LoopguardError('usage', 'audit: give a RUN_ID');
      const html = values.html;
      if (html !== undefined)
        return withStore(values, env, (s) => auditHtmlCommand(runId, html, (apply) => s.scan(apply), io));
      return withStore(values, env, async (s) => {
        const p = await s.rebuild();
        return auditOutput(runId, p.audit.timeline(runId), json, io, p.tree.of(runId));
      });
    }
    case 'ui': {
      const port = portFlag('port', values.port, DEFAULT_UI_PORT);
      const metricsPort = values['metrics-port'];
      const signal = shutdownSignal(opts.signal);
      return withStore(values, env, async (s) => {
        const ui = await startUiServer({ rebuild: () => s.rebuild(), scan: (apply) => s.scan(apply) }, port);
        const metrics =
          metricsPort === undefined
            ? null
            : await startMetricsServer(serviceMetrics(), portFlag('metrics-port', metricsPort, 0));
        io.err(
          `ui: ${ui.url} (read-only, ${s.where})${metrics ? `; metrics on ${metrics.url}` : ''}; Ctrl-C ends it`,
        );
        await new Promise<void>((done) =>
          signal.aborted ? done() : signal.addEventListener('abort', () => done(), { once: true }),
        );
        await Promise.all([ui.close(), metrics?.close()]);
        return 0;
      });
    }
    case 'fleet':
      // It publishes its detections on the stops topic.
      return withStore(
        values,
        env,
        (s) =>
          fleetCommand(s, { ...values, json }, io, values.follow ? shutdownSignal(opts.signal) : undefined),
        'write',
      );
    case 'stops':
      return withStore(values, env, async (s) => {
        if (!values.follow) {
          for await (const e of s.readStops()) printStop(e, json, io);
          return 0;
        }
        await s.events.followStops(0, (e) => printStop(e, json, io), shutdownSignal(opts.signal));
        return 0;
      });
    case 'alert': {
      const kafka = kafkaConfig({ ...values, kafka: true }, env);
      if (kafka === null) throw new LoopguardError('usage', 'alert: needs Kafka (--kafka)');
      return alertCommand(kafka, values, io, shutdownSignal(opts.signal));
    }
    case 'project': {
      const kafka = kafkaConfig({ ...values, kafka: true }, env);
      if (kafka === null) throw new LoopguardError('usage', 'project: needs Kafka (--kafka)');
      return projectCommand(kafka, values.once === true, io, shutdownSignal(opts.signal));
    }
    case 'serve': {
      const kafka = kafkaConfig({ ...values, kafka: true }, env);
      if (kafka === null) throw new LoopguardError('usage', 'serve: needs Kafka (--kafka)');
      return serveCommand(kafka, values, io, shutdownSignal(opts.signal));
    }
    case 'repair':
      return repairCommand(values['data-dir'] ?? DEFAULT_DATA_DIR, io);
    case 'migrate':
      return migrateCommand(values['data-dir'] ?? DEFAULT_DATA_DIR, io);
    case 'demo':
      return demo(values['data-dir'], io);
    default:
      throw new LoopguardError('usage', `unknown command ${command}\n\n${USAGE}`);
  }
}

/** The main job on the embedded default: bundled example runs through the guard, then an audit. */
async function demo(dataDir: string | undefined, io: Io): Promise<number> {
  const dir = dataDir ?? mkdtempSync(join(tmpdir(), 'loopguard-demo-'));
  try {
    io.out(`loopguard demo: replaying ${join(examples, 'runs.jsonl')} into ${dir}\n\n`);
    const code = await main(
      ['replay', join(examples, 'runs.jsonl'), '--policy', join(examples, 'policy.json'), '--data-dir', dir],
      io,
    );
    for (const runId of ['demo/exact-repeat', 'demo/duplicate-payment']) {
      io.out('\n');
      await main(['audit', runId, '--data-dir', dir], io);
    }
    io.out('\nstop reports (loopguard stops):\n');
    await main(['stops', '--data-dir', dir], io);
    return code;
  } finally {
    if (dataDir === undefined) rmSync(dir, { recursive: true, force: true });
  }
}

/** Runs the CLI on this process's arguments and sets its exit code. */
export function runCli(): void {
  // A closed pipe (`loopguard replay ... | head`) ends the output, not the process with a stack trace.
  process.stdout.on('error', (e: NodeJS.ErrnoException) => {
    if (e.code === 'EPIPE') process.exit(process.exitCode ?? 0);
    throw e;
  });
  main(process.argv.slice(2)).then(
    (code) => {
      process.exitCode = code;
    },
    (e: unknown) => {
      const err = e instanceof LoopguardError ? e : null;
      process.stderr.write(
        `loopguard: ${err ? `${err.code}: ${err.message}` : e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`,
      );
      process.exitCode = 2;
    },
  );
}

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1]) runCli();
