import { randomBytes } from 'node:crypto';
import {
  closeSync,
  fsyncSync,
  linkSync,
  mkdirSync,
  openSync,
  readFileSync,
  unlinkSync,
  writeSync,
} from 'node:fs';
import { join } from 'node:path';
import { LoopguardError } from '../domain/index.js';

/** The key file of an embedded data dir: 32 random bytes, hex, readable by its owner only. */
export const SECRET_KEY_FILE = 'secret.key';

const KEY_TEXT = /^[0-9a-f]{64}$/;

function readKey(path: string): string | undefined {
  let text: string;
  try {
    text = readFileSync(path, 'utf8').trim();
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw new LoopguardError('secret_key_unreadable', `${path}: ${(e as Error).message}`, { cause: e });
  }
  if (!KEY_TEXT.test(text))
    throw new LoopguardError('secret_key_unreadable', `${path}: expected 64 hex characters (a 32-byte key)`);
  return text;
}

/**
 * The key of the data dir's keyed hashes, created on first use. Written to a private temporary
 * file and published by a hard link, so a reader never sees half a key and of two processes
 * starting at once exactly one key wins; the loser reads it.
 */
function dataDirSecretKey(dataDir: string): string {
  const path = join(dataDir, SECRET_KEY_FILE);
  const existing = readKey(path);
  if (existing !== undefined) return existing;
  mkdirSync(dataDir, { recursive: true });
  const tmp = `${path}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
  // On disk before it is published: after a crash the key is whole or absent, never empty.
  const fd = openSync(tmp, 'wx', 0o600);
  try {
    writeSync(fd, `${randomBytes(32).toString('hex')}\n`);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  try {
    linkSync(tmp, path);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
  } finally {
    unlinkSync(tmp);
  }
  const key = readKey(path);
  if (key === undefined)
    throw new LoopguardError('secret_key_unreadable', `${path}: vanished after it was written`);
  return key;
}

export type SecretKeySource =
  | { readonly kind: 'embedded'; readonly dataDir: string }
  | { readonly kind: 'shared'; readonly where: string };

/**
 * The key for secret values: the caller's, else LOOPGUARD_SECRET_KEY, else (embedded log) the
 * data dir's own random key. A shared log (Kafka) has no data dir every worker sees, and workers
 * with different keys would record one secret two ways, so there a key must be given.
 */
export function chooseSecretKey(
  given: string | undefined,
  source: SecretKeySource,
  env: Readonly<Record<string, string | undefined>> = process.env,
): string {
  if (given !== undefined && given !== '') return given;
  const fromEnv = env.LOOPGUARD_SECRET_KEY;
  if (fromEnv !== undefined && fromEnv !== '') return fromEnv;
  if (source.kind === 'embedded') return dataDirSecretKey(source.dataDir);
  throw new LoopguardError(
    'secret_key_required',
    `${source.where}: set LOOPGUARD_SECRET_KEY (the same value for every worker) so secret values are hashed with a key that is not public`,
  );
}
