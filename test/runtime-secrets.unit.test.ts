/**
 * No secret in plain text anywhere in the data dir (events, ledger, key file aside), whichever
 * field carried it, and a keyed hash whose key is not public.
 */
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { MemorySchemaStore } from '../src/events/memory-schema-store.js';
import type { PolicyInput } from '../src/index.js';
import { MemoryLog } from '../src/log/memory-log.js';
import { createGuard, type Guard, outcome, SECRET_KEY_FILE, ToolError } from '../src/runtime/index.js';

const dirs: string[] = [];
const guards: Guard[] = [];
const tmp = () => {
  const d = mkdtempSync(join(tmpdir(), 'loopguard-secrets-'));
  dirs.push(d);
  return d;
};
beforeEach(() => {
  vi.stubEnv('LOOPGUARD_SECRET_KEY', '');
});
afterEach(async () => {
  vi.unstubAllEnvs();
  for (const g of guards.splice(0)) await g.close();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

async function open(dataDir: string, policy: PolicyInput = {}) {
  const guard = await createGuard({ policy, dataDir });
  guards.push(guard);
  return guard;
}

function dataDirText(dir: string): string {
  let text = '';
  for (const name of readdirSync(dir, { recursive: true }) as string[]) {
    const p = join(dir, name);
    if (statSync(p).isFile() && name !== SECRET_KEY_FILE) text += readFileSync(p).toString('latin1');
  }
  return text;
}

const SECRETS = [
  'sk-live-4eC39HqLyjWDarjtT1zdp7dc',
  'hunter2hunter2',
  'Zq8vR2mT7xK4pL9wN3bY6cF1',
  'cookie998877',
];

describe('the library records no secret in plain text', () => {
  it('in args, results, operation keys, codes, reasons and settled results', async () => {
    const dataDir = tmp();
    const guard = await open(dataDir, { tools: { pay: { sideEffect: true } } });
    const run = await guard.startRun({ runId: 'r' });
    await run.call({ tool: 'http', args: { q: SECRETS[0], passphrase: 'hunter2hunter2' } }, () => ({
      headers: [`Authorization: Bearer ${SECRETS[2]}`, 'Set-Cookie: sid=cookie998877'],
    }));
    await run.call(
      { tool: 'pay', args: { o: 1 }, operationKey: `pay?access_token=${SECRETS[1]}` },
      () => `receipt for ${SECRETS[0]}`,
    );
    await run.call({ tool: 'pay', args: { o: 2 }, operationKey: 'pay:2' }, () => {
      throw new ToolError('RETRYABLE', `rate limited for key ${SECRETS[0]}`);
    });
    await run.call({ tool: 'get', args: { o: 3 } }, () => outcome.fatal(`password=${SECRETS[1]}`));
    const text = dataDirText(dataDir);
    for (const s of SECRETS) expect(text).not.toContain(s);
    expect(text).toContain('redacted:');
  });

  it('cancel reasons and finish gaps', async () => {
    const dataDir = tmp();
    const guard = await open(dataDir);
    await (await guard.startRun({ runId: 'a' })).cancel(`stopped, token: ${SECRETS[2]}`);
    await (await guard.startRun({ runId: 'b' })).finish({
      verified: false,
      gaps: [`login with ${SECRETS[0]}`],
    });
    const text = dataDirText(dataDir);
    for (const s of SECRETS) expect(text).not.toContain(s);
  });

  it('in a reissue note: its reason and approver', async () => {
    const dataDir = tmp();
    const guard = await open(dataDir, { tools: { pay: { sideEffect: true } } });
    const run = await guard.startRun({ runId: 'r' });
    await run.call({ tool: 'pay', args: { o: 1 }, operationKey: 'pay:1' }, () => 'paid');
    const note = await run.reissue('pay:1', 'pay:1b', {
      reason: `refund failed, password=${SECRETS[1]}`,
      approvedBy: `ops ${SECRETS[0]}`,
    });
    expect(note.reason).toContain('redacted:');
    expect(note.approvedBy).toContain('redacted:');
    await guard.close();
    const text = dataDirText(dataDir);
    expect(SECRETS.filter((s) => text.includes(s))).toEqual([]);
    expect(text.includes('refund failed, password=redacted:')).toBe(true);
  });

  it("in the ledger's in-doubt reason: the thrown error's name", async () => {
    const dataDir = tmp();
    const guard = await open(dataDir, { tools: { pay: { sideEffect: true } } });
    const run = await guard.startRun({ runId: 'r' });
    const r = await run.call({ tool: 'pay', args: { o: 1 }, operationKey: 'pay:1' }, () => {
      throw Object.assign(new Error('connection reset'), { name: SECRETS[0] });
    });
    expect(r.status).toBe('executed');
    expect(run.state.operations['pay:1']?.status).toBe('in_doubt');
    await guard.close();
    const text = dataDirText(dataDir);
    expect(SECRETS.filter((s) => text.includes(s))).toEqual([]);
  });

  it('an operation key is deduplicated by its redacted form, and reconcile gets the key as given', async () => {
    const guard = await open(tmp(), { tools: { pay: { sideEffect: true } } });
    const run = await guard.startRun({ runId: 'r' });
    const key = `pay:${SECRETS[2]}`;
    let n = 0;
    await run.call({ tool: 'pay', args: { o: 1 }, operationKey: key }, () => {
      n++;
      return 'paid';
    });
    const again = await run.call({ tool: 'pay', args: { o: 1 }, operationKey: key }, () => {
      n++;
      return 'paid';
    });
    expect(again.status).toBe('cached');
    expect(n).toBe(1);
  });
});

describe('the key of the keyed hash', () => {
  it('is created once per data dir, 0600, random, and kept across guards', async () => {
    const a = tmp();
    const b = tmp();
    await open(a);
    await open(b);
    const keyA = readFileSync(join(a, SECRET_KEY_FILE), 'utf8');
    expect(statSync(join(a, SECRET_KEY_FILE)).mode & 0o777).toBe(0o600);
    expect(readFileSync(join(b, SECRET_KEY_FILE), 'utf8')).not.toBe(keyA);
    await open(a);
    expect(readFileSync(join(a, SECRET_KEY_FILE), 'utf8')).toBe(keyA);
  });

  it('a second guard on the data dir hashes a secret the same way', async () => {
    const dataDir = tmp();
    const fingerprint = async (runId: string) => {
      const guard = await createGuard({ dataDir });
      const run = await guard.startRun({ runId });
      await run.call({ tool: 's', args: { password: 'p' } }, () => 'ok');
      const fp = run.state.recent[0]?.fingerprint;
      await guard.close();
      return fp;
    };
    const first = await fingerprint('a');
    expect(first).toBeDefined();
    expect(await fingerprint('b')).toBe(first);
  });

  it('a damaged key file is a clear error, never silently replaced', async () => {
    const dataDir = tmp();
    writeFileSync(join(dataDir, SECRET_KEY_FILE), 'not a key\n');
    await expect(createGuard({ dataDir })).rejects.toMatchObject({
      code: 'secret_key_unreadable',
      message: expect.stringContaining('expected 64 hex characters'),
    });
    expect(readFileSync(join(dataDir, SECRET_KEY_FILE), 'utf8')).toBe('not a key\n');
  });

  it('LOOPGUARD_SECRET_KEY wins, and no key file is written', async () => {
    vi.stubEnv('LOOPGUARD_SECRET_KEY', 'operator-key');
    const dataDir = tmp();
    await open(dataDir);
    expect(existsSync(join(dataDir, SECRET_KEY_FILE))).toBe(false);
  });

  it('a log of your own (Kafka) without a key is a clear error, before anything is opened', async () => {
    await expect(
      createGuard({ log: new MemoryLog(), schemaStore: new MemorySchemaStore(), dataDir: tmp() }),
    ).rejects.toMatchObject({
      code: 'secret_key_required',
      message: expect.stringContaining('LOOPGUARD_SECRET_KEY'),
    });
  });
});
