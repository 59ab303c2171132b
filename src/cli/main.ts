#!/usr/bin/env node
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Command, CommanderError, Option } from 'commander';
import { LoopguardError } from '../domain/index.js';
import { DEFAULT_DATA_DIR } from '../log/embedded/embedded-log.js';
import { TOPICS } from '../log/event-log.js';
import type { AlertFlags } from './alert-command.js';
import { auditHtmlCommand, auditOutput } from './audit-command.js';
import {
  countOption,
  flagsOf,
  jsonOption,
  kafkaOptions,
  logOptions,
  policyOption,
  portOption,
  positiveOption,
} from './cli-options.js';
import { escapeControls } from './escape-controls.js';
import { evalCommand } from './eval-command.js';
import { fleetCommand } from './fleet-command.js';
import { type Io, processIo, terminalSafe } from './io.js';
import { type Env, type KafkaFlags, kafkaConfig } from './kafka-config.js';
import type { MetricsServer } from './metrics-server.js';
import { migrateCommand } from './migrate-command.js';
import { portFlag } from './number-flags.js';
import { type OpenStore, openEmbeddedStore } from './open-store.js';
import { KAFKA_PACKAGES, needs } from './optional-package.js';
import { rebuildCommand } from './rebuild-command.js';
import { repairCommand } from './repair-command.js';
import { replayCommand } from './replay-command.js';
import { printStop } from './stops-command.js';
import { startUiServer } from './ui-server.js';
import { whatifCommand } from './whatif-command.js';

const DEFAULT_UI_PORT = 4280;

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const examples = join(root, 'examples');
/** The package's version; a build outside the package (the bench's .bench-dist) has no package.json beside it. */
const VERSION = ((): string => {
  try {
    return (JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { version: string }).version;
  } catch {
    return 'unknown';
  }
})();

/**
 * Exit codes: 0 done; 1 bad input (a malformed trace line, an unknown run) or a runtime failure
 * (the log, Kafka, a port in use); 2 a usage error (an unknown command or flag, a missing or bad
 * flag value), reported before anything starts.
 */
export const EXIT = { ok: 0, failed: 1, usage: 2 } as const;

const ABOUT = 'a runtime guard for AI-agent tool calls';

const GLOBAL_HELP = `
The log: the embedded SQLite store in --data-dir (default LOOPGUARD_DATA_DIR, else
./.loopguard), or Kafka and a schema registry with --kafka (--brokers and --registry, or
KAFKA_BROKERS and SCHEMA_REGISTRY_URL; with both set, Kafka is the default unless a data dir is
given). --policy defaults to LOOPGUARD_POLICY. loopguard COMMAND --help: a command's options.
Exit codes: 0 ok, 1 bad input or a runtime failure, 2 a usage error.`;

export interface MainOptions {
  /** Where KAFKA_BROKERS / SCHEMA_REGISTRY_URL / LOOPGUARD_* are read; process.env by default. */
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
    ? await (await needs('--kafka', KAFKA_PACKAGES, () => import('./open-kafka-store.js'))).openKafkaStore(
        kafka,
      )
    : await openEmbeddedStore(flags['data-dir'], { readOnly: access === 'read' });
  try {
    return await work(store);
  } finally {
    await store.close();
  }
}

/**
 * What starts `GET /metrics` of a long-running command. prom-client is an optional package: it is
 * loaded here, before the command starts anything, so a missing one leaves nothing running.
 */
async function metricsStarter(): Promise<(port: number) => Promise<MetricsServer>> {
  const m = await needs('--metrics-port', ['prom-client'], () => import('./metrics-server.js'));
  return (port) => m.startMetricsServer(m.serviceMetrics(), port);
}

function shutdownSignal(given: AbortSignal | undefined): AbortSignal {
  if (given) return given;
  const ctl = new AbortController();
  process.once('SIGINT', () => ctl.abort());
  process.once('SIGTERM', () => ctl.abort());
  return ctl.signal;
}

type Flags = Record<string, unknown> & KafkaFlags & { json?: boolean; policy?: string };

/**
 * The environment's defaults under the flags: LOOPGUARD_POLICY for --policy, LOOPGUARD_DATA_DIR
 * for --data-dir unless the command line asks for Kafka (then it is not an explicit data dir).
 */
function withEnvDefaults(opts: Record<string, unknown>, env: Env, takes: { policy?: boolean }): Flags {
  const flags = flagsOf(opts) as Flags;
  const kafkaAsked = flags.kafka === true || flags.brokers !== undefined || flags.registry !== undefined;
  const dataDir = flags['data-dir'] ?? (kafkaAsked ? undefined : env.LOOPGUARD_DATA_DIR);
  const policy = flags.policy ?? (takes.policy ? env.LOOPGUARD_POLICY : undefined);
  return {
    ...flags,
    ...(dataDir ? { 'data-dir': dataDir } : {}),
    ...(policy ? { policy } : {}),
  };
}

/** The program: one command each, with its own options and help; unknown flags are usage errors. */
function program(
  io: Io,
  env: Env,
  opts: MainOptions,
  upstream: readonly string[] | null,
  done: (code: number) => void,
): Command {
  const run =
    (work: (flags: Flags, args: string[]) => Promise<number> | number, takes: { policy?: boolean } = {}) =>
    async (...a: unknown[]) => {
      const cmd = a[a.length - 1] as Command;
      done(await work(withEnvDefaults(cmd.opts(), env, takes), cmd.args));
    };
  const p = new Command('loopguard')
    .description(ABOUT)
    .addHelpText('after', GLOBAL_HELP)
    .version(VERSION, '-V, --version', 'the version')
    .helpOption('-h, --help', 'this help')
    .exitOverride()
    .configureOutput({
      writeOut: (t) => io.out(t),
      writeErr: (t) => io.err(t),
      outputError: () => undefined,
      // loopguard prints no colour at all, so NO_COLOR holds everywhere.
      getOutHasColors: () => false,
      getErrHasColors: () => false,
    })
    .showSuggestionAfterError(true)
    .enablePositionalOptions();

  policyOption(
    logOptions(
      jsonOption(
        p
          .command('replay')
          .summary('runs recorded agent traces through the guard, recording every event')
          .argument('<files...>', 'trace files (JSON lines)'),
      ),
    ),
  ).action(
    run(
      (f, files) =>
        replayCommand(
          files,
          { ...(f.policy ? { policy: f.policy } : {}), json: f.json ?? false },
          (work) =>
            withStore(
              f,
              env,
              async (s) =>
                work({
                  knownRunIds: await s.knownRunIds(),
                  where: s.where,
                  secretKey: s.secretKey(env),
                  append: (runId, r) => s.stream.appendToStream(runId, r, { expectedStreamVersion: 0 }),
                }),
              'write',
            ),
          io,
        ),
      { policy: true },
    ),
  );

  logOptions(jsonOption(p.command('rebuild').summary('rebuilds every projection from the log'))).action(
    run((f) =>
      withStore(f, env, async (s) =>
        rebuildCommand((pr) => s.rebuild(pr), { json: f.json ?? false, total: await s.eventCount() }, io),
      ),
    ),
  );

  policyOption(
    logOptions(
      jsonOption(
        p.command('whatif').summary('re-decides every recorded run under another policy, writing nothing'),
      ),
    ),
    'the new policy (required)',
  ).action(
    run(
      (f) => {
        const policy = f.policy;
        if (policy === undefined)
          throw new LoopguardError('usage', 'whatif: give the new policy, --policy NEW.json');
        return withStore(f, env, async (s) =>
          whatifCommand(
            (apply) => s.scan(apply),
            { policy, json: f.json ?? false, total: await s.eventCount() },
            io,
          ),
        );
      },
      { policy: true },
    ),
  );

  logOptions(
    p
      .command('audit')
      .summary("a run's timeline: each call, its decision, the rule and evidence, the result")
      .argument('<run-id>')
      .addOption(new Option('--json', 'the timeline as one JSON object').conflicts('html'))
      .option('--html <file>', 'writes the timeline as one self-contained, script-free HTML file'),
  ).action(
    run((f, [runId]) => {
      const id = runId as string;
      const html = f.html as string | undefined;
      if (html !== undefined)
        return withStore(f, env, (s) => auditHtmlCommand(id, html, (apply) => s.scan(apply), io));
      return withStore(f, env, async (s) => {
        const pr = await s.rebuild();
        return auditOutput(id, pr.audit.timeline(id), f.json ?? false, io, pr.tree.of(id));
      });
    }),
  );

  logOptions(
    p
      .command('ui')
      .summary('serves the run list and each run timeline on 127.0.0.1, read-only')
      .addOption(portOption('--port <port>', `the port (default ${DEFAULT_UI_PORT})`))
      .addOption(
        portOption('--metrics-port <port>', 'serves GET /metrics on 127.0.0.1:port (0: any free port)'),
      ),
  ).action(
    run(async (f) => {
      const port = portFlag('port', f.port as string | undefined, DEFAULT_UI_PORT);
      const metricsPort = f['metrics-port'] as string | undefined;
      const signal = shutdownSignal(opts.signal);
      const startMetrics = metricsPort === undefined ? null : await metricsStarter();
      return withStore(f, env, async (s) => {
        // On the embedded log the list is kept and read on from its offset; Kafka's runs topic has one per partition.
        const embedded = kafkaConfig(f, env) === null;
        const runIndex = s.runIndex;
        if (runIndex !== undefined && !runIndex.indexed)
          io.err(
            'ui: this data dir has no run index yet (written by an older loopguard): list pages scan its table until any writing command or `loopguard repair` adds it',
          );
        const ui = await startUiServer(
          {
            scan: (apply) => s.scan(apply),
            ...(embedded ? { entries: (offset: number) => s.events.entries(TOPICS.runs, offset) } : {}),
            ...(runIndex === undefined
              ? {}
              : {
                  runs: {
                    page: (offset: number, limit: number) => runIndex.page(offset, limit),
                    events: (runId: string) => s.stream.readStream(runId),
                  },
                }),
          },
          port,
          '127.0.0.1',
          { allowHosts: (f['allow-host'] as string[] | undefined) ?? [] },
        );
        const metrics =
          startMetrics === null ? null : await startMetrics(portFlag('metrics-port', metricsPort, 0));
        io.err(
          `ui: ${ui.url} (read-only, ${s.where})${metrics ? `; metrics on ${metrics.url}` : ''}; Ctrl-C ends it`,
        );
        await new Promise<void>((resolve) =>
          signal.aborted ? resolve() : signal.addEventListener('abort', () => resolve(), { once: true }),
        );
        await Promise.all([ui.close(), metrics?.close()]);
        return 0;
      });
    }),
  );

  logOptions(
    jsonOption(
      p
        .command('fleet')
        .summary('finds loops many runs share and publishes each detection once on the stops topic')
        .option('--follow', 'keeps watching (needs Kafka)')
        .addOption(positiveOption('--threshold <n>', 'distinct runs on one signature (default 5)'))
        .addOption(positiveOption('--window-ms <ms>', 'the sliding window on event time (default 600000)'))
        .option('--group <group>', 'the consumer group of --follow (default loopguard-fleet)'),
    ),
  ).action(
    run((f) =>
      // It publishes its detections on the stops topic.
      withStore(
        f,
        env,
        (s) =>
          fleetCommand(
            s,
            { ...f, json: f.json ?? false },
            io,
            f.follow ? shutdownSignal(opts.signal) : undefined,
          ),
        'write',
      ),
    ),
  );

  logOptions(
    jsonOption(
      p
        .command('stops')
        .summary('stop reports and fleet loop detections')
        .option('--follow', 'as they happen'),
    ),
  ).action(
    run((f) =>
      withStore(f, env, async (s) => {
        const json = f.json ?? false;
        if (!f.follow) {
          for await (const e of s.readStops()) printStop(e, json, io);
          return 0;
        }
        await s.events.followStops(0, (e) => printStop(e, json, io), shutdownSignal(opts.signal));
        return 0;
      }),
    ),
  );

  kafkaOptions(
    p
      .command('alert')
      .summary('delivers each stop report and fleet loop detection (stdout or a webhook), on Kafka')
      .option('--webhook <url>', 'POSTs each alert there, with retries (no credentials in it)')
      .option(
        '--webhook-header <header>',
        "'Name: value' sent with every POST, where a webhook's credentials go; repeatable",
        (v: string, prev: string[] = []) => [...prev, v],
      )
      .addOption(
        positiveOption(
          '--dead-letter-after <n>',
          'delivery attempts before an alert goes to loopguard.dlq (default 20)',
        ),
      )
      .option('--group <group>', 'the consumer group (default loopguard-alert)')
      .addOption(positiveOption('--retry-base-ms <ms>', 'first retry delay'))
      .addOption(positiveOption('--retry-max-ms <ms>', 'longest retry delay'))
      .addOption(
        positiveOption('--session-timeout-ms <ms>', 'Kafka consumer session timeout (default 15000)'),
      )
      .addOption(portOption('--metrics-port <port>', 'serves GET /metrics on 127.0.0.1:port')),
  ).action(
    run(async (f) => {
      const kafka = kafkaConfig({ ...f, kafka: true }, env);
      if (kafka === null) throw new LoopguardError('usage', 'alert: needs Kafka (--kafka)');
      const { alertCommand } = await needs(
        'alert',
        [...KAFKA_PACKAGES, 'prom-client'],
        () => import('./alert-command.js'),
      );
      return alertCommand(kafka, f as AlertFlags, io, shutdownSignal(opts.signal));
    }),
  );

  kafkaOptions(
    p
      .command('project')
      .summary('the copy projector alone: derives the stops and ledger copies from the runs topic')
      .option('--once', 'until what was recorded when it started is copied'),
  ).action(
    run(async (f) => {
      const kafka = kafkaConfig({ ...f, kafka: true }, env);
      if (kafka === null) throw new LoopguardError('usage', 'project: needs Kafka (--kafka)');
      const { projectCommand } = await needs('project', KAFKA_PACKAGES, () => import('./project-command.js'));
      return projectCommand(kafka, f.once === true, io, shutdownSignal(opts.signal));
    }),
  );

  policyOption(
    kafkaOptions(
      p
        .command('serve')
        .summary('a guard worker for clients in any language, on Kafka')
        .option('--group <group>', 'the consumer group (default loopguard-serve)')
        .addOption(portOption('--metrics-port <port>', 'serves GET /metrics on 127.0.0.1:port'))
        .addOption(positiveOption('--partitions <n>', 'partitions of the topics it creates'))
        .addOption(positiveOption('--session-timeout-ms <ms>', 'Kafka consumer session timeout'))
        .addOption(
          countOption('--snapshot-every <n>', "runs records between a partition's snapshots (default 1000)"),
        )
        .addOption(countOption('--ended-idle-ms <ms>', 'before an ended run leaves memory (default 600000)'))
        .option(
          '--from-beginning',
          'a new group decides what loopguard.requests already holds (default: it starts at the end)',
        )
        .option(
          '--tenant-keys <file>',
          "per-tenant keys (JSON): only requests signed with one are decided, on their tenant's runs",
        ),
    ),
  ).action(
    run(
      async (f) => {
        const kafka = kafkaConfig({ ...f, kafka: true }, env);
        if (kafka === null) throw new LoopguardError('usage', 'serve: needs Kafka (--kafka)');
        const { serveCommand } = await needs(
          'serve',
          [...KAFKA_PACKAGES, 'prom-client'],
          () => import('./serve-command.js'),
        );
        return serveCommand(kafka, f, io, shutdownSignal(opts.signal));
      },
      { policy: true },
    ),
  );

  policyOption(
    jsonOption(
      p
        .command('eval')
        .summary('loopguard against the stopping rules other agent tools ship, side by side')
        .argument('[files...]', 'trace files (JSON lines)')
        .option('--synthetic', 'adds the seeded synthetic coding-agent runs, scored apart'),
    ),
  ).action(
    run(
      (f, files) => {
        if (files.length === 0 && !f.synthetic)
          throw new LoopguardError('usage', 'eval: give at least one FILE.jsonl, or --synthetic');
        return evalCommand(
          files,
          {
            ...(f.policy ? { policy: f.policy } : {}),
            json: f.json ?? false,
            synthetic: f.synthetic === true,
          },
          io,
        );
      },
      { policy: true },
    ),
  );

  policyOption(
    logOptions(
      p
        .command('mcp')
        .summary('an MCP server on stdio in front of the MCP server COMMAND (after --)')
        .usage('[options] -- COMMAND [ARGS...]')
        .option('--run-id <id>', "the session's first run (default: mcp-<uuid>, printed on stderr)")
        .addOption(portOption('--metrics-port <port>', 'serves GET /metrics on 127.0.0.1:port'))
        .option(
          '--env <NAME[=VALUE]>',
          "passes NAME (from loopguard's environment, or VALUE) to the upstream; repeatable",
          (v: string, prev: string[] = []) => [...prev, v],
        )
        .argument('[upstream...]', 'the upstream MCP server command, after --')
        .addHelpText('after', MCP_HELP),
    ),
  ).action(
    run(
      async (f, before) => {
        const { mcpCommand } = await needs(
          'mcp',
          ['@modelcontextprotocol/sdk'],
          () => import('./mcp-command.js'),
        );
        return mcpCommand(f, before, upstream, io, env, shutdownSignal(opts.signal));
      },
      {
        policy: true,
      },
    ),
  );

  p.command('repair')
    .summary("checks the data dir's database (integrity_check); a damaged one is kept aside and rebuilt")
    .option('--data-dir <dir>', 'the data dir (default: LOOPGUARD_DATA_DIR, else ./.loopguard)')
    .action(run(async (f) => repairCommand(f['data-dir'] ?? DEFAULT_DATA_DIR, io)));

  p.command('migrate')
    .summary('converts a data dir written by the segment log into the SQLite store, once')
    .option('--data-dir <dir>', 'the data dir (default: LOOPGUARD_DATA_DIR, else ./.loopguard)')
    .action(run(async (f) => migrateCommand(f['data-dir'] ?? DEFAULT_DATA_DIR, io)));

  p.command('demo')
    .summary('replays the bundled example runs, then audits two of them (npm start)')
    .option('--data-dir <dir>', 'where to record them (default: a temporary dir, removed after)')
    .action(run(async (f) => demo(f['data-dir'], io)));
  return p;
}

const MCP_HELP = `
Every tool call goes through the guard; everything else the upstream offers passes through. A stop
ends the task, not the session: the next call runs in the session's next run (<run id>-2, ...).
The upstream gets a minimal environment (HOME, LOGNAME, PATH, SHELL, TERM, USER) plus --env names.

Example:
  loopguard mcp --data-dir ~/.loopguard/fs -- npx -y @modelcontextprotocol/server-filesystem ~/Desktop`;

/** The usage line of the command argv names, for an error message. */
function usageOf(p: Command, argv: readonly string[]): string {
  const sub = p.commands.find((c) => c.name() === argv[0]);
  return sub
    ? `usage: loopguard ${sub.name()} ${sub.usage()} (loopguard ${sub.name()} --help)`
    : 'usage: loopguard <command> [options] (loopguard --help)';
}

/**
 * Runs one command line. Returns the exit code of a command that ran (0, or 1 for bad input);
 * throws a LoopguardError for a usage error (`usage`, with the command's usage line) and for a
 * failure; help and --version print and return 0.
 */
export async function main(
  argv: readonly string[],
  io: Io = processIo,
  opts: MainOptions = {},
): Promise<number> {
  const env = opts.env ?? process.env;
  io = terminalSafe(io);
  let code: number = EXIT.ok;
  // Everything after mcp's -- is the upstream's command line, none of it loopguard's flags.
  const sep = argv[0] === 'mcp' ? argv.indexOf('--') : -1;
  const own = sep < 0 ? argv : argv.slice(0, sep);
  const p = program(io, env, opts, sep < 0 ? null : argv.slice(sep + 1), (c) => {
    code = c;
  });
  if (argv.length === 0) {
    io.err(p.helpInformation());
    throw new LoopguardError('usage', 'give a command');
  }
  try {
    await p.parseAsync([...own], { from: 'user' });
  } catch (e) {
    if (!(e instanceof CommanderError)) throw e;
    if (e.code === 'commander.helpDisplayed' || e.code === 'commander.version') return EXIT.ok;
    if (e.code === 'commander.help' || e.code === 'commander.executeSubCommandAsync')
      throw new LoopguardError('usage', 'give a command');
    throw new LoopguardError('usage', `${e.message.replace(/^error: /, '')}\n${usageOf(p, argv)}`, {
      cause: e,
    });
  }
  return code;
}

/** Whether the command line asks for JSON output (errors are then JSON too). */
const wantsJson = (argv: readonly string[]): boolean => {
  const sep = argv.indexOf('--');
  return (sep < 0 ? argv : argv.slice(0, sep)).includes('--json');
};

/**
 * The CLI as a process sees it: runs main and turns what it throws into one line on stderr (or,
 * under --json, one JSON object `{"error":{"code","message"}}` on stdout) and an exit code:
 * 2 for a usage error, 1 for any other failure. A usage error adds the command's usage line.
 */
export async function cli(
  argv: readonly string[],
  io: Io = processIo,
  opts: MainOptions = {},
): Promise<number> {
  try {
    return await main(argv, io, opts);
  } catch (e) {
    const err = e instanceof LoopguardError ? e : null;
    const code = err?.code ?? 'internal';
    const [message = '', ...more] = (err?.message ?? (e instanceof Error ? e.message : String(e))).split(
      '\n',
    );
    if (wantsJson(argv)) io.out(`${JSON.stringify({ error: { code, message: escapeControls(message) } })}\n`);
    else io.err(`loopguard: ${code}: ${escapeControls(message)}${more.length ? `\n${more.join('\n')}` : ''}`);
    return code === 'usage' ? EXIT.usage : EXIT.failed;
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
  cli(process.argv.slice(2)).then((code) => {
    process.exitCode = code;
  });
}

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1]) runCli();
