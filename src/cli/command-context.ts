import type { Command } from 'commander';
import { flagsOf } from './cli-options.js';
import type { Io } from './io.js';
import { type Env, type KafkaFlags, kafkaAsked } from './kafka-config.js';

/** A command's parsed flags, in the flags' own spelling (kebab-case keys), with the environment's defaults. */
type Flags = Record<string, unknown> & KafkaFlags & { json?: boolean; policy?: string };

/** What each command's action is given: the output, the environment, the shutdown signal. */
export interface CommandContext {
  readonly io: Io;
  readonly env: Env;
  /** Everything after mcp's `--`: the upstream's command line; null without one. */
  readonly upstream: readonly string[] | null;
  /**
   * A commander action running `work` on the command's flags and arguments; what it returns is the
   * exit code. `takes.policy`: the command reads LOOPGUARD_POLICY as the default of --policy.
   */
  run(
    work: (flags: Flags, args: string[]) => Promise<number> | number,
    takes?: { policy?: boolean },
  ): (...a: unknown[]) => Promise<void>;
  /** What ends a long-running command: the signal given to main, else SIGINT/SIGTERM. */
  shutdown(): AbortSignal;
}

/**
 * The environment's defaults under the flags: LOOPGUARD_POLICY for --policy, LOOPGUARD_DATA_DIR
 * for --data-dir unless the command line asks for Kafka (then it is not an explicit data dir).
 */
function withEnvDefaults(opts: Record<string, unknown>, env: Env, takes: { policy?: boolean }): Flags {
  const flags = flagsOf(opts) as Flags;
  const dataDir = flags['data-dir'] ?? (kafkaAsked(flags) ? undefined : env.LOOPGUARD_DATA_DIR);
  const policy = flags.policy ?? (takes.policy ? env.LOOPGUARD_POLICY : undefined);
  return { ...flags, ...(dataDir ? { 'data-dir': dataDir } : {}), ...(policy ? { policy } : {}) };
}

/** Resolves once `signal` aborts (at once if it has): how a long-running command waits for its end. */
export const untilAborted = (signal: AbortSignal): Promise<void> =>
  new Promise((resolve) => {
    if (signal.aborted) resolve();
    else signal.addEventListener('abort', () => resolve(), { once: true });
  });

function shutdownSignal(given: AbortSignal | undefined): AbortSignal {
  if (given) return given;
  const ctl = new AbortController();
  process.once('SIGINT', () => ctl.abort());
  process.once('SIGTERM', () => ctl.abort());
  return ctl.signal;
}

/** The context of one command line; `done` receives the exit code of the command that ran. */
export function commandContext(
  io: Io,
  env: Env,
  signal: AbortSignal | undefined,
  upstream: readonly string[] | null,
  done: (code: number) => void,
): CommandContext {
  return {
    io,
    env,
    upstream,
    run:
      (work, takes = {}) =>
      async (...a: unknown[]) => {
        const cmd = a[a.length - 1] as Command;
        done(await work(withEnvDefaults(cmd.opts(), env, takes), cmd.args));
      },
    shutdown: () => shutdownSignal(signal),
  };
}
