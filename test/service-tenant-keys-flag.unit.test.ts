/**
 * `serve --tenant-keys` is read before anything starts: a key file that is missing, not JSON or
 * wrong in a field stops the command with `bad_tenant_keys` naming the file and field, and never a
 * worker that trusts every client. (The brokers named here do not exist: nothing may reach them.)
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli, tempDirs } from './support/cli-run.js';

const dirs = tempDirs('lg-tenant-keys-');
const serve = (keys: string) =>
  runCli(
    [
      'serve',
      '--kafka',
      '--brokers',
      '127.0.0.1:1',
      '--registry',
      'http://127.0.0.1:1',
      '--tenant-keys',
      keys,
    ],
    { LOOPGUARD_SECRET_KEY: 'k' },
  );

describe('serve --tenant-keys', () => {
  it('refuses a missing file, a file that is not JSON, and a short secret, naming each', async () => {
    const dir = dirs();
    await expect(serve(join(dir, 'nope.json'))).rejects.toMatchObject({
      code: 'bad_tenant_keys',
      message: expect.stringContaining('nope.json'),
    });
    const notJson = join(dir, 'keys.txt');
    writeFileSync(notJson, 'acme=secret');
    await expect(serve(notJson)).rejects.toMatchObject({
      message: expect.stringMatching(/keys\.txt: not JSON/),
    });
    const short = join(dir, 'short.json');
    writeFileSync(short, JSON.stringify({ keys: [{ id: 'a', tenant: 'acme', secret: 'short' }] }));
    await expect(serve(short)).rejects.toMatchObject({
      code: 'bad_tenant_keys',
      message: expect.stringMatching(
        /short\.json: keys\[0\]\.secret: expected a string of at least 32 characters/,
      ),
    });
  }, 30_000);
});
