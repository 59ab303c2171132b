/**
 * The CLI follows the conventions: per-command help, --version, unknown or misplaced flags refused
 * with the command's usage, distinct exit codes (0 ok, 1 bad input or failure, 2 usage), errors
 * on one line (JSON under --json), and the LOOPGUARD_DATA_DIR / LOOPGUARD_POLICY defaults.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCliAsProcess, tempDirs } from './support/cli-run.js';

const root = join(import.meta.dirname, '..');
const fixture = (name: string) => join(import.meta.dirname, 'fixtures', name);
const tmp = tempDirs('lg-cli-conv-');
const version = (JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { version: string }).version;

const run = runCliAsProcess;

const COMMANDS = [
  'replay',
  'rebuild',
  'whatif',
  'audit',
  'ui',
  'fleet',
  'stops',
  'alert',
  'project',
  'serve',
  'eval',
  'mcp',
  'repair',
  'demo',
];

describe('loopguard CLI conventions', () => {
  it.each(COMMANDS)('%s --help prints its own usage and options, exit 0', async (command) => {
    const r = await run([command, '--help']);
    expect([r.code, r.err]).toEqual([0, '']);
    expect(r.out).toMatch(new RegExp(`^Usage: loopguard ${command} `));
    expect(r.out).toContain('-h, --help');
    const help = await run(['help', command]);
    expect(help.out).toBe(r.out);
    // Asked for, help is a success: no usage error after it.
    expect([help.code, help.err]).toEqual([0, '']);
  });

  it('the global help lists every command; --version prints the version', async () => {
    const r = await run(['--help']);
    expect(r.code).toBe(0);
    for (const c of COMMANDS) expect(r.out).toMatch(new RegExp(`\\n  ${c} `));
    expect(r.out).toContain('Exit codes: 0 ok, 1 bad input or a runtime failure, 2 a usage error');
    expect(await run(['--version'])).toEqual({ code: 0, out: `${version}\n`, err: '' });
  });

  it('mcp --help describes the upstream after --', async () => {
    const r = await run(['mcp', '--help']);
    expect(r.out).toContain('Usage: loopguard mcp [options] -- COMMAND [ARGS...]');
    expect(r.out).toContain('--env <NAME[=VALUE]>');
  });

  it.each([
    [['replay', 'x.jsonl', '--bogus'], "unknown option '--bogus'", 'loopguard replay [options] <files...>'],
    // A flag of another command is refused, not ignored.
    [['demo', '--follow'], "unknown option '--follow'", 'loopguard demo [options]'],
    [['replay', 'x.jsonl', '--policy'], "option '--policy <file.json>' argument missing", 'loopguard replay'],
    [['replay'], "missing required argument 'files'", 'loopguard replay'],
    [['rebuild', 'extra'], 'too many arguments', 'loopguard rebuild'],
    [
      ['serve', '--metrics-port', '70000'],
      '--metrics-port must be a port number from 0 to 65535, got 70000',
      'loopguard serve',
    ],
    [['fleet', '--threshold', '0'], '--threshold must be a positive integer, got 0', 'loopguard fleet'],
    [
      ['audit', 'r1', '--json', '--html', 'x.html'],
      "cannot be used with option '--html <file>'",
      'loopguard audit',
    ],
    [['frobnicate'], "unknown command 'frobnicate'", 'loopguard <command>'],
  ])(
    '%j is a usage error (exit 2) with the command usage, before anything starts',
    async (args, says, usage) => {
      const r = await run(args);
      expect(r.code).toBe(2);
      if (args.includes('--json')) {
        expect(JSON.parse(r.out)).toEqual({
          error: { code: 'usage', message: expect.stringContaining(says) },
        });
        return;
      }
      expect(r.out).toBe('');
      const [first, second, ...more] = r.err.trimEnd().split('\n');
      expect(first).toMatch(/^loopguard: usage: /);
      expect(first).toContain(says);
      expect(second).toContain(`usage: ${usage}`);
      expect(more).toEqual([]);
    },
  );

  it('exit 0 when done, 1 for bad input or a failure (one line, no stack), 2 for usage', async () => {
    const data = tmp();
    expect((await run(['replay', fixture('mixed.jsonl'), '--data-dir', data])).code).toBe(0);
    const bad = await run(['replay', fixture('bad.jsonl'), '--data-dir', tmp()]);
    expect(bad.code).toBe(1);
    const unknownRun = await run(['audit', 'no-such-run', '--data-dir', data]);
    expect([unknownRun.code, unknownRun.err]).toEqual([
      1,
      'loopguard: unknown_run: audit: no run no-such-run in this data dir\n',
    ]);
    const aFile = join(data, 'a-file');
    writeFileSync(aFile, 'not a directory');
    const fileAsDir = await run(['replay', fixture('mixed.jsonl'), '--data-dir', aFile]);
    expect([fileAsDir.code, fileAsDir.err]).toEqual([
      1,
      expect.stringMatching(/^loopguard: no_data_dir: data dir .*a-file cannot be made: EEXIST[^\n]*\n$/),
    ]);
    const missingDir = await run(['rebuild', '--data-dir', join(data, 'missing')]);
    expect(missingDir.code).toBe(1);
    expect(missingDir.err).toMatch(/^loopguard: [a-z_]+: [^\n]+\n$/);
    expect((await run([])).code).toBe(2);
  });

  it('under --json an error is one JSON object on stdout', async () => {
    const usage = await run(['stops', '--json', '--nope']);
    expect([usage.code, JSON.parse(usage.out)]).toEqual([
      2,
      { error: { code: 'usage', message: "unknown option '--nope'" } },
    ]);
    const data = tmp();
    await run(['replay', fixture('mixed.jsonl'), '--data-dir', data]);
    const unknown = await run(['audit', 'no-such-run', '--json', '--data-dir', data]);
    expect([unknown.code, JSON.parse(unknown.out), unknown.err]).toEqual([
      1,
      { error: { code: 'unknown_run', message: 'audit: no run no-such-run in this data dir' } },
      '',
    ]);
    const unwritable = await run([
      'audit',
      'fx/repeat',
      '--html',
      join(data, 'no-dir', 'x.html'),
      '--data-dir',
      data,
    ]);
    expect(unwritable.code).toBe(1);
    expect(unwritable.err).toMatch(/^loopguard: output_unwritable: audit --html .*x\.html: ENOENT[^\n]*\n$/);
    const failed = await run(['rebuild', '--json', '--data-dir', join(tmp(), 'missing')]);
    expect(failed.code).toBe(1);
    expect(JSON.parse(failed.out).error).toMatchObject({
      code: expect.any(String),
      message: expect.any(String),
    });
  });

  it('LOOPGUARD_DATA_DIR and LOOPGUARD_POLICY are the defaults of --data-dir and --policy', async () => {
    const data = join(tmp(), 'from-env');
    const policy = join(tmp(), 'policy.json');
    // A one-step budget stops the two three-call runs at their first step: seen only under the env's policy.
    writeFileSync(policy, JSON.stringify({ maxSteps: 1 }));
    const env = { LOOPGUARD_DATA_DIR: data, LOOPGUARD_POLICY: policy };
    const r = await run(['replay', fixture('mixed.jsonl'), '--json'], env);
    expect(r.code).toBe(0);
    expect(existsSync(data)).toBe(true);
    const runs = r.out
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(runs.filter((x: { rule: string | null }) => x.rule === 'step_budget')).toHaveLength(2);
    const rebuilt = await run(['rebuild', '--json'], { LOOPGUARD_DATA_DIR: data });
    expect(
      rebuilt.out
        .split('\n')
        .slice(0, runs.length)
        .map((l) => JSON.parse(l)),
    ).toEqual(runs);
    // A flag beats the environment.
    const other = tmp();
    expect((await run(['replay', fixture('mixed.jsonl'), '--data-dir', other], env)).code).toBe(0);
    expect(existsSync(join(other, 'loopguard.db'))).toBe(true);
  });

  it('the installed command prints one line for a usage error and exits 2', () => {
    const r = spawnSync(
      process.execPath,
      ['--import', 'tsx', join(root, 'src/cli/main.ts'), 'replay', '--bogus'],
      {
        cwd: root,
        encoding: 'utf8',
      },
    );
    expect(r.status).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr).not.toMatch(/ERR_PARSE_ARGS|at .*\.js:\d+/);
    expect(r.stderr.trim().split('\n')).toHaveLength(2);
  });

  it('every --json output names its fields in snake_case, reports and timelines included', async () => {
    const examples = join(root, 'examples');
    const data = tmp();
    const policy = join(examples, 'policy.json');
    expect(
      (await run(['replay', join(examples, 'runs.jsonl'), '--policy', policy, '--data-dir', data])).code,
    ).toBe(0);
    const keys = new Set<string>();
    const walk = (v: unknown, dataKeyed = false): void => {
      if (Array.isArray(v)) for (const x of v) walk(x);
      else if (typeof v === 'object' && v !== null)
        for (const [k, x] of Object.entries(v)) {
          if (!dataKeyed) keys.add(k);
          walk(x, k === 'stops_by_rule' || k === 'counts');
        }
    };
    for (const args of [
      ['stops'],
      ['audit', 'demo/duplicate-payment'],
      ['audit', 'demo/exact-repeat'],
      ['rebuild'],
      ['whatif', '--policy', policy],
      ['replay', join(examples, 'runs.jsonl'), '--policy', policy, '--data-dir', tmp()],
    ]) {
      const r = await run([...args, ...(args[0] === 'replay' ? [] : ['--data-dir', data]), '--json']);
      for (const line of r.out.trim().split('\n')) walk(JSON.parse(line));
    }
    for (const line of (await run(['eval', join(examples, 'runs.jsonl'), '--json'])).out.trim().split('\n'))
      walk(JSON.parse(line));
    expect(keys).toContain('terminal_state');
    expect(keys).toContain('guard_reason');
    expect([...keys].filter((k) => /[A-Z]/.test(k))).toEqual([]);
  });
});
