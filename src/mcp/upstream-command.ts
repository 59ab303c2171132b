import { getDefaultEnvironment } from '@modelcontextprotocol/sdk/client/stdio.js';
import { type Hashing, LoopguardError, redactText } from '../domain/index.js';

/**
 * The upstream's environment: the MCP SDK's minimal default (HOME, LOGNAME, PATH, SHELL, TERM,
 * USER on POSIX) plus the variables the user names, never the whole of ours: loopguard's own
 * secrets (LOOPGUARD_SECRET_KEY, Kafka credentials) have no business in a third-party server.
 * A named variable that is not set is an error, so a typo does not start a server without it.
 */
export function upstreamEnv(
  names: readonly string[],
  from: Readonly<Record<string, string | undefined>>,
): Record<string, string> {
  const env: Record<string, string> = getDefaultEnvironment();
  for (const name of names) {
    const eq = name.indexOf('=');
    if (eq > 0) {
      env[name.slice(0, eq)] = name.slice(eq + 1);
      continue;
    }
    const value = from[name];
    if (value === undefined)
      throw new LoopguardError('usage', `--env ${name}: not set in loopguard's environment`);
    env[name] = value;
  }
  return env;
}

/**
 * The upstream command line as it may be recorded or printed: secrets in it (a database URL with
 * its password, `--token=...`) redacted with the guard's key, as in the log.
 */
export const shownCommand = (command: string, args: readonly string[], hashing: Hashing): string =>
  redactText([command, ...args].join(' '), hashing);
