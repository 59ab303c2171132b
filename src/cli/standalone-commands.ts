import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Command } from 'commander';
import { LoopguardError } from '../domain/index.js';
import { DEFAULT_SYNTHETIC_SEEDS } from '../eval/synthetic/synthetic-files.js';
import { DEFAULT_DATA_DIR } from '../log/embedded/embedded-log.js';
import { jsonOption, logOptions, policyOption, portOption, repeatable } from './cli-options.js';
import type { CommandContext } from './command-context.js';
import { type EvalOptions, evalCommand } from './eval-command.js';
import type { Io } from './io.js';
import { migrateCommand } from './migrate-command.js';
import { needs } from './optional-package.js';
import { repairCommand } from './repair-command.js';

const examples = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'examples');

const MCP_HELP = `
Every tool call goes through the guard; everything else the upstream offers passes through. A stop
ends the task, not the session: the next call runs in the session's next run (<run id>-2, ...).
The upstream gets a minimal environment (HOME, LOGNAME, PATH, SHELL, TERM, USER) plus --env names.

Example:
  loopguard mcp --data-dir ~/.loopguard/fs -- npx -y @modelcontextprotocol/server-filesystem ~/Desktop`;

/** A command line run by the CLI itself: how the demo replays and audits. */
type Main = (argv: readonly string[], io: Io) => Promise<number>;

/**
 * The commands that do not open the log through withStore: eval (no log), mcp (a guard of its
 * own, its SDK loaded only when it runs), repair and migrate (the data dir's files), demo.
 */
export function standaloneCommands(p: Command, c: CommandContext, main: Main): void {
  const { io, env, run } = c;
  policyOption(
    jsonOption(
      p
        .command('eval')
        .summary('loopguard against the stopping rules other agent tools ship, side by side')
        .argument('[files...]', 'trace files (JSON lines)')
        .option('--synthetic', 'adds the seeded synthetic agent families, scored apart')
        .option(
          '--seeds <list>',
          `with --synthetic, the seeds each family is drawn from, e.g. 11,12,20-29 (default ${DEFAULT_SYNTHETIC_SEEDS.join(',')})`,
        ),
    ),
  ).action(
    run(
      (f, files) => {
        if (files.length === 0 && !f.synthetic)
          throw new LoopguardError('usage', 'eval: give at least one FILE.jsonl, or --synthetic');
        return evalCommand(files, f as EvalOptions, io);
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
          repeatable,
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
        return mcpCommand(f, before, c.upstream, io, env, c.shutdown());
      },
      { policy: true },
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
    .action(run(async (f) => demo(f['data-dir'], io, main)));
}

/** The main job on the embedded default: bundled example runs through the guard, then an audit. */
async function demo(dataDir: string | undefined, io: Io, main: Main): Promise<number> {
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
