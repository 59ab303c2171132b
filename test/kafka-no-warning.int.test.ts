/**
 * A Kafka command prints no warning: the CLI run as a user runs it (its own Node process, the
 * Node of this test run), on the real broker, with stderr captured whole. kafkajs 2.2.4 arms a
 * negative timer after every broker response (its issue #1751), which Node 24 reports as a
 * TimeoutNegativeWarning; src/log/kafka/kafkajs-request-queue.ts fixes the method at fault.
 */
import { spawnSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { kafkaEnv } from './setup/kafka-env.js';

const root = join(import.meta.dirname, '..');

function loopguard(args: string[]) {
  const got = spawnSync(process.execPath, ['--import', 'tsx', join(root, 'src', 'cli', 'main.ts'), ...args], {
    cwd: root,
    encoding: 'utf8',
    env: { ...process.env, LOOPGUARD_SECRET_KEY: 'no-warning-test-key', NODE_OPTIONS: '' },
    timeout: 90_000,
  });
  return { code: got.status, out: got.stdout, err: got.stderr };
}

describe('Kafka commands on Node', () => {
  it(`replay, rebuild, audit and whatif on Kafka print nothing on stderr (Node ${process.version})`, () => {
    const { brokers, registryUrl } = kafkaEnv();
    const kafka = [
      '--kafka',
      '--brokers',
      brokers.join(','),
      '--registry',
      registryUrl,
      '--topic-prefix',
      `no-warning-${randomUUID()}.`,
    ];
    const replay = loopguard(['replay', join(root, 'test', 'fixtures', 'mixed.jsonl'), '--json', ...kafka]);
    expect(replay.err).toBe('');
    expect(replay.code).toBe(0);
    expect(replay.out).toContain('fx/repeat');
    for (const args of [
      ['rebuild', '--json'],
      ['audit', 'fx/repeat'],
      ['whatif', '--policy', join(root, 'examples', 'policy.json')],
    ]) {
      const got = loopguard([...args, ...kafka]);
      expect({ args, err: got.err }).toEqual({ args, err: '' });
      expect(got.code).toBe(0);
    }
  });
});
