/**
 * The CLI fed hostile input: every bad input is a clear error naming file:line:field, the other
 * runs and files go on, the exit code is 1, and nothing half-written or secret lands in the data dir.
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli, tempDirs } from './support/cli-run.js';

const tmp = tempDirs('lg-hostile-');

const run = (args: string[], env: Record<string, string> = {}) => runCli(args, env);

const call = (step: number, tool: string, args: unknown, extra: Record<string, unknown> = {}) => ({
  step,
  tool,
  args,
  result: `r${step}`,
  result_sha256: `h${step}`,
  ...extra,
});
const line = (runId: string, calls: unknown[], extra: Record<string, unknown> = {}) =>
  JSON.stringify({ run_id: runId, outcome: { success: true }, calls, ...extra });

function traceFile(dir: string, lines: (string | Buffer)[], name = 'runs.jsonl'): string {
  const path = join(dir, name);
  writeFileSync(path, Buffer.concat(lines.map((l) => Buffer.concat([Buffer.from(l), Buffer.from('\n')]))));
  return path;
}

/** Every byte the data dir holds, as text. */
function dataDirText(dir: string): string {
  let text = '';
  for (const name of readdirSync(dir, { recursive: true }) as string[]) {
    const p = join(dir, name);
    if (statSync(p).isFile()) text += readFileSync(p).toString('latin1');
  }
  return text;
}

const nested = (depth: number): unknown => {
  let v: unknown = 'leaf';
  for (let i = 0; i < depth; i++) v = { a: v };
  return v;
};

describe('replay: hostile traces', () => {
  it('tools named after object internals replay like any other', async () => {
    const dir = tmp();
    const tools = ['constructor', '__proto__', 'toString', 'valueOf', 'hasOwnProperty'];
    const file = traceFile(dir, [
      line(
        'internals',
        tools.map((t, i) => call(i, t, { q: i })),
      ),
    ]);
    const r = await run(['replay', file, '--json', '--data-dir', join(dir, 'data')]);
    expect(r.err).toBe('');
    expect(r.code).toBe(0);
    expect(JSON.parse(r.out)).toMatchObject({
      run_id: 'internals',
      terminal_state: 'COMPLETED',
      calls_executed: 5,
    });
  });

  it('args keyed __proto__ stay distinct: no false exact_repeat', async () => {
    const dir = tmp();
    const calls = ['1', '2', '3'].map(
      (v, i) => `{"step":${i},"tool":"s","args":{"__proto__":"${v}"},"result":"same","result_sha256":"same"}`,
    );
    const file = traceFile(dir, [
      `{"run_id":"proto","outcome":{"success":true},"calls":[${calls.join(',')}]}`,
    ]);
    const r = await run(['replay', file, '--json', '--data-dir', join(dir, 'data')]);
    expect(JSON.parse(r.out)).toMatchObject({ terminal_state: 'COMPLETED', rule: null, calls_executed: 3 });
  });

  it('deep args, bad numbers and blank run ids: each named by file:line:field, the other runs recorded and printed', async () => {
    const dir = tmp();
    const file = traceFile(dir, [
      line('ok/before', [call(0, 's', { q: 1 })]),
      line('deep', [call(0, 's', nested(3000))]),
      line('tokens', [call(0, 's', {}, { tokens: 1.5 })]),
      line('huge-tokens', [call(0, 's', {}, { tokens: 1e308 })]),
      line('at', [call(0, 's', {}, { at_ms: 1e20 })]),
      line('retry', [call(0, 's', {}, { kind: 'RETRYABLE', retry_after_ms: 1e300 })]),
      line('version', [call(0, 's', {}, { progress_version: 1.5 })]),
      line('   ', [call(0, 's', {})]),
      line('ok/after', [call(0, 's', { q: 2 })]),
    ]);
    const data = join(dir, 'data');
    const r = await run(['replay', file, '--json', '--data-dir', data]);
    expect(r.code).toBe(1);
    expect(
      r.out
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l).run_id),
    ).toEqual(['ok/before', 'ok/after']);
    expect(r.err).toMatch(/runs\.jsonl:2: calls\[0\]\.args(\.a)+: nested deeper than 64 levels/);
    expect(r.err).toMatch(/runs\.jsonl:3: calls\[0\]\.tokens: expected an integer/);
    expect(r.err).toMatch(/runs\.jsonl:4: calls\[0\]\.tokens: expected an integer/);
    expect(r.err).toMatch(/runs\.jsonl:5: calls\[0\]\.at_ms: expected an integer/);
    expect(r.err).toMatch(/runs\.jsonl:6: calls\[0\]\.retry_after_ms: expected an integer/);
    expect(r.err).toMatch(/runs\.jsonl:7: calls\[0\]\.progress_version: expected an integer/);
    expect(r.err).toMatch(/runs\.jsonl:8: run_id: expected a non-empty string/);
    const stops = await run(['stops', '--json', '--data-dir', data]);
    expect(stops.out.trim().split('\n')).toHaveLength(2);
  });

  it('a missing file and a directory: named, the other files go on, exit 1', async () => {
    const dir = tmp();
    const good = traceFile(dir, [line('ok', [call(0, 's', {})])]);
    const r = await run([
      'replay',
      join(dir, 'missing.jsonl'),
      dir,
      good,
      '--json',
      '--data-dir',
      join(dir, 'data'),
    ]);
    expect(r.code).toBe(1);
    expect(JSON.parse(r.out)).toMatchObject({ run_id: 'ok' });
    expect(r.err).toContain(`rejected: ${join(dir, 'missing.jsonl')}: ENOENT`);
    expect(r.err).toContain(`rejected: ${dir}: is a directory`);
    expect(r.err).not.toMatch(/\n\s+at /);
  });

  it('creates no data dir when nothing is to be written', async () => {
    const dir = tmp();
    const data = join(dir, 'data');
    const r = await run(['replay', join(dir, 'missing.jsonl'), '--data-dir', data]);
    expect(r.code).toBe(1);
    expect(existsSync(data)).toBe(false);
  });

  it('a byte order mark before line 1 is not part of it', async () => {
    const dir = tmp();
    const file = traceFile(dir, [`\uFEFF${line('bom', [call(0, 's', {})])}`]);
    const r = await run(['replay', file, '--json', '--data-dir', join(dir, 'data')]);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.out)).toMatchObject({ run_id: 'bom' });
  });

  it('bytes that are not UTF-8 are an error for their line, never replaced so that two run ids collide', async () => {
    const dir = tmp();
    const bad = (b: number) =>
      Buffer.concat([Buffer.from('{"run_id":"id-'), Buffer.from([b]), Buffer.from(`","calls":[]}`)]);
    const file = traceFile(dir, [bad(0xff), bad(0xfe), line('fine', [])]);
    const r = await run(['replay', file, '--json', '--data-dir', join(dir, 'data')]);
    expect(r.code).toBe(1);
    expect(
      r.out
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l).run_id),
    ).toEqual(['fine']);
    expect(r.err).toContain('runs.jsonl:1: (line): not valid UTF-8');
    expect(r.err).toContain('runs.jsonl:2: (line): not valid UTF-8');
  });
});

describe('replay: hostile policy files', () => {
  it('a BOM before a policy is skipped; bytes that are not UTF-8 are refused, naming the file', async () => {
    const dir = tmp();
    const trace = traceFile(dir, [line('p', [call(0, 's', {})])]);
    const bom = join(dir, 'bom.json');
    writeFileSync(bom, `\uFEFF${JSON.stringify({ maxSteps: 5 })}`);
    expect((await run(['replay', trace, '--policy', bom, '--data-dir', join(dir, 'a')])).code).toBe(0);
    const latin1 = join(dir, 'latin1.json');
    writeFileSync(
      latin1,
      Buffer.concat([Buffer.from('{"tools":{"caf'), Buffer.from([0xe9]), Buffer.from('":{}}}')]),
    );
    await expect(
      run(['replay', trace, '--policy', latin1, '--data-dir', join(dir, 'b')]),
    ).rejects.toMatchObject({
      code: 'invalid_policy',
      message: `--policy ${latin1}: not valid UTF-8`,
    });
    expect(existsSync(join(dir, 'b'))).toBe(false);
  });
});

describe('replay: no secret in plain text in the data dir', () => {
  const SECRETS = [
    'sk-live-4eC39HqLyjWDarjtT1zdp7dc',
    'hunter2hunter2',
    'abc123cookie456',
    'Zq8vR2mT7xK4pL9wN3bY6cF1',
    'opkeytoken99887766',
  ];

  it('args, results, operation keys, codes and the outcome detail are all redacted', async () => {
    const dir = tmp();
    const data = join(dir, 'data');
    const file = traceFile(dir, [
      JSON.stringify({
        run_id: 'secrets',
        outcome: { success: false, detail: 'failed with password=hunter2hunter2' },
        calls: [
          call(0, 'http', { q: SECRETS[0], url: 'https://x.io/a?access_token=hunter2hunter2' }),
          call(1, 'http', {
            headers: ['Cookie: session=abc123cookie456', `Authorization: Bearer ${SECRETS[3]}`],
          }),
          call(2, 'http', {
            body: '{"api_key": "hunter2hunter2"}',
            token_value: 'v1',
            tokenId: 'v2',
            pwd: 'hunter2hunter2',
          }),
          call(
            3,
            'pay',
            { n: 1 },
            {
              side_effect: true,
              operation_key: `pay:token=${SECRETS[4]}`,
              result: `charged with ${SECRETS[0]}`,
            },
          ),
          call(4, 'http', { n: 2 }, { kind: 'FATAL', code: `denied for Bearer ${SECRETS[3]}` }),
        ],
      }),
    ]);
    const r = await run(['replay', file, '--json', '--data-dir', data]);
    expect(r.err).toBe('');
    const text = dataDirText(data);
    for (const s of SECRETS) expect(text).not.toContain(s);
    expect(text).toContain('redacted:');
  });

  it('without LOOPGUARD_SECRET_KEY the data dir gets its own random key, readable by its owner only', async () => {
    const dir = tmp();
    const file = traceFile(dir, [line('k', [call(0, 's', { password: 'p' })])]);
    const a = join(dir, 'a');
    const b = join(dir, 'b');
    await run(['replay', file, '--data-dir', a]);
    await run(['replay', file, '--data-dir', b]);
    const keyA = readFileSync(join(a, 'secret.key'), 'utf8');
    expect(keyA).toMatch(/^[0-9a-f]{64}\n$/);
    expect(statSync(join(a, 'secret.key')).mode & 0o777).toBe(0o600);
    expect(readFileSync(join(b, 'secret.key'), 'utf8')).not.toBe(keyA);
    // The same password hashes differently under the two keys: the log alone cannot confirm a guess.
    const audit = async (d: string) => (await run(['audit', 'k', '--json', '--data-dir', d])).out;
    expect(await audit(a)).not.toBe(await audit(b));
  });

  it('with LOOPGUARD_SECRET_KEY set, that key is used and no key file is written', async () => {
    const dir = tmp();
    const file = traceFile(dir, [line('k', [call(0, 's', { password: 'p' })])]);
    const data = join(dir, 'data');
    mkdirSync(data);
    await run(['replay', file, '--data-dir', data], { LOOPGUARD_SECRET_KEY: 'operator-key' });
    expect(existsSync(join(data, 'secret.key'))).toBe(false);
  });
});
