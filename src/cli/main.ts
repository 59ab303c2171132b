#!/usr/bin/env node
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Command, CommanderError } from 'commander';
import { LoopguardError } from '../domain/index.js';
import { commandContext } from './command-context.js';
import { escapeControls } from './escape-controls.js';
import { type Io, processIo, terminalSafe } from './io.js';
import { kafkaCommands } from './kafka-commands.js';
import type { Env } from './kafka-config.js';
import { logCommands } from './log-commands.js';
import { standaloneCommands } from './standalone-commands.js';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const VERSION = (JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { version: string }).version;

/**
 * Exit codes: 0 done; 1 bad input (a malformed trace line, an unknown run) or a runtime failure
 * (the log, Kafka, a port in use); 2 a usage error (an unknown command or flag, a missing or bad
 * flag value), reported before anything starts.
 */
export const EXIT = { ok: 0, failed: 1, usage: 2 } as const;

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

/** The program: one command each, with its own options and help; unknown flags are usage errors. */
function program(
  io: Io,
  env: Env,
  opts: MainOptions,
  upstream: readonly string[] | null,
  done: (code: number) => void,
): Command {
  const p = new Command('loopguard')
    .description('a runtime guard for AI-agent tool calls')
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
  const c = commandContext(io, env, opts.signal, upstream, done);
  logCommands(p, c);
  kafkaCommands(p, c);
  standaloneCommands(p, c, (argv, out) => main(argv, out));
  return p;
}

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
    // `loopguard help COMMAND` asked for help (exit code 0); a missing command is help shown as an error.
    if (e.code === 'commander.help' && e.exitCode === 0) return EXIT.ok;
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
