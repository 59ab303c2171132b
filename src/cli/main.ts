#!/usr/bin/env node
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { LoopguardError } from '../domain/index.js';
import { auditOutput } from './audit-command.js';
import { evalCommand } from './eval-command.js';
import { type Io, processIo } from './io.js';
import { type OpenStore, openEmbeddedStore } from './open-store.js';
import { rebuildCommand, rebuildProjections } from './rebuild-command.js';
import { replayCommand } from './replay-command.js';
import { printStop } from './stops-command.js';

const USAGE = `loopguard: a runtime guard for AI-agent tool calls

  loopguard replay FILE.jsonl... [--policy P.json] [--data-dir D] [--json]
  loopguard rebuild [--data-dir D] [--json]
  loopguard audit RUN_ID [--data-dir D] [--json]
  loopguard stops [--follow] [--data-dir D] [--json]
  loopguard eval FILE.jsonl... [--policy P.json] [--json]
  loopguard demo [--data-dir D]

The data dir defaults to ./.loopguard (the embedded, file-backed log).
`;

const OPTIONS = {
  policy: { type: 'string' },
  'data-dir': { type: 'string' },
  json: { type: 'boolean' },
  follow: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
} as const;

const examples = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'examples');

async function withStore<T>(dataDir: string | undefined, work: (s: OpenStore) => Promise<T>): Promise<T> {
  const store = await openEmbeddedStore(dataDir);
  try {
    return await work(store);
  } finally {
    await store.close();
  }
}

async function knownRunIds(store: OpenStore): Promise<Set<string>> {
  const ids = new Set<string>();
  for await (const e of store.events.readRuns(0)) ids.add(e.runId);
  return ids;
}

export async function main(argv: readonly string[], io: Io = processIo): Promise<number> {
  const { values, positionals } = parseArgs({ args: [...argv], options: OPTIONS, allowPositionals: true });
  const [command, ...rest] = positionals;
  const dataDir = values['data-dir'];
  const json = values.json ?? false;
  if (values.help || command === undefined) {
    io.out(USAGE);
    return command === undefined && !values.help ? 2 : 0;
  }
  switch (command) {
    case 'replay':
      if (rest.length === 0) throw new LoopguardError('usage', 'replay: give at least one FILE.jsonl');
      return withStore(dataDir, async (s) =>
        replayCommand(
          rest,
          { ...(values.policy ? { policy: values.policy } : {}), json },
          { knownRunIds: await knownRunIds(s), append: (r) => s.events.append(r) },
          io,
        ),
      );
    case 'eval':
      if (rest.length === 0) throw new LoopguardError('usage', 'eval: give at least one FILE.jsonl');
      return evalCommand(rest, { ...(values.policy ? { policy: values.policy } : {}), json }, io);
    case 'rebuild':
      return withStore(dataDir, (s) => rebuildCommand(s.events.readRuns(0), { json }, io));
    case 'audit': {
      const runId = rest[0];
      if (runId === undefined) throw new LoopguardError('usage', 'audit: give a RUN_ID');
      return withStore(dataDir, async (s) =>
        auditOutput(runId, (await rebuildProjections(s.events.readRuns(0))).audit.timeline(runId), json, io),
      );
    }
    case 'stops':
      return withStore(dataDir, async (s) => {
        if (!values.follow) {
          for await (const e of s.events.readStops(0)) printStop(e, json, io);
          return 0;
        }
        const ctl = new AbortController();
        process.once('SIGINT', () => ctl.abort());
        process.once('SIGTERM', () => ctl.abort());
        await s.events.followStops(0, (e) => printStop(e, json, io), ctl.signal);
        return 0;
      });
    case 'demo':
      return demo(dataDir, io);
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
