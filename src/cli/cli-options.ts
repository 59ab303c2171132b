import { type Command, InvalidArgumentError, Option } from 'commander';

/**
 * Options several commands share. A number is checked while the command line is parsed: a bad one
 * is a usage error naming the flag and repeating what was given, before anything starts (no log
 * opened, no port bound); the commands get the number.
 */
const intOption = (flags: string, description: string, ok: (n: number) => boolean, what: string): Option => {
  const flag = flags.replace(/^--([\w-]+).*$/, '$1');
  return new Option(flags, description).argParser((value: string) => {
    const n = value.trim() === '' ? Number.NaN : Number(value);
    if (!Number.isInteger(n) || !ok(n))
      throw new InvalidArgumentError(`--${flag} must be ${what}, got ${value}`);
    return n;
  });
};

/** A TCP port from 0 (any free one) to 65535. */
export const portOption = (flags: string, description: string): Option =>
  intOption(flags, description, (n) => n >= 0 && n <= 65535, 'a port number from 0 to 65535');

/** A positive integer (a count, a duration in ms). */
export const positiveOption = (flags: string, description: string): Option =>
  intOption(flags, description, (n) => n > 0, 'a positive integer');

/** An integer >= 0. */
export const countOption = (flags: string, description: string): Option =>
  intOption(flags, description, (n) => n >= 0, 'an integer >= 0');

/** Kafka connection options: `--kafka`, `--brokers`, `--registry`, `--topic-prefix`. */
export function kafkaOptions(cmd: Command): Command {
  return cmd
    .option(
      '--kafka',
      'use Kafka and a schema registry (default when KAFKA_BROKERS and SCHEMA_REGISTRY_URL are set)',
    )
    .option('--brokers <host:port,...>', 'Kafka brokers (default: KAFKA_BROKERS)')
    .option('--registry <url>', 'schema registry URL (default: SCHEMA_REGISTRY_URL)')
    .option('--topic-prefix <prefix>', 'prefix of every topic (isolation on a shared cluster)');
}

/** Where the log is: the embedded data dir, or Kafka. */
export function logOptions(cmd: Command): Command {
  return kafkaOptions(
    cmd.option('--data-dir <dir>', 'the embedded log (default: LOOPGUARD_DATA_DIR, else ./.loopguard)'),
  );
}

export const jsonOption = (cmd: Command): Command =>
  cmd.option('--json', 'one JSON object per line on stdout');

export const policyOption = (cmd: Command, what = 'the policy'): Command =>
  cmd.option('--policy <file.json>', `${what} (default: LOOPGUARD_POLICY)`);

/** Collects a repeatable option's values. */
export const repeatable = (v: string, prev: string[] = []): string[] => [...prev, v];

/** Commander's camelCase option names back to the flags' own spelling, as the commands read them. */
export function flagsOf(opts: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(opts)) out[k.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)] = v;
  return out;
}
