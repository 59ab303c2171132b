import type { CallLog } from './harness.js';
import type { Prng } from './prng.js';

/**
 * How coding agents work, as sequences of tool calls: explore, edit in place, write files,
 * re-run one test after every change. Each shape writes into a CallLog; the legitimate ones never
 * contain three identical calls in a row with identical results (the eval's "stuck" label).
 */
export interface Project {
  readonly module: string;
  readonly test: string;
  readonly symbol: string;
}

const MODULES = ['parser', 'config', 'cache', 'router', 'units', 'dates', 'merge'];
const SYMBOLS = ['normalize', 'resolve', 'to_dict', 'parse_value', 'apply_defaults', 'split_key'];

export function project(rng: Prng): Project {
  const module = rng.pick(MODULES);
  return { module, test: `test_${rng.pick(SYMBOLS)}_${rng.int(1, 9)}`, symbol: rng.pick(SYMBOLS) };
}

const src = (p: Project) => `src/pkg/${p.module}.py`;
const testPath = (p: Project) => `tests/test_${p.module}.py::${p.test}`;
export const pytest = (p: Project) => `cd /repo && python -m pytest ${testPath(p)} -q 2>&1 | tail -5`;

/** The outcomes a test flips between while an agent works: fails, passes, fails another way. */
function outcomes(p: Project): readonly string[] {
  return [
    `F\n${p.test}: AssertionError: assert {'a': 1} == {'a': '1'}\n1 failed`,
    `.\n1 passed`,
    `E\n${p.test}: TypeError: ${p.symbol}() missing 1 required positional argument: 'strict'\n1 error`,
  ];
}

function explore(log: CallLog, rng: Prng, p: Project): void {
  log.shell('ls -la /repo', 'README.md\nsetup.py\nsrc\ntests\n');
  log.shell(`grep -rn "def ${p.symbol}" /repo/src`, `${src(p)}:${rng.int(10, 90)}:def ${p.symbol}(value):\n`);
  const pages = rng.int(1, 3);
  for (let i = 0; i < pages; i++) {
    const from = 1 + i * 60;
    log.shell(
      `sed -n '${from},${from + 59}p' /repo/${src(p)}`,
      `# lines ${from}-${from + 59} of ${p.module}.py\n`,
    );
  }
}

/** A run of in-place edits to one file, each printing nothing: similar commands, same wrapped empty answer. */
function quietEdits(log: CallLog, rng: Prng, p: Project, n: number, tag: string): void {
  for (let i = 0; i < n; i++) {
    const line = rng.int(10, 140);
    log.quiet(`sed -i '${line}s/value\\.${tag}${i}/value.get("${tag}${i}")/' /repo/${src(p)}`);
  }
}

export function boilerplateEdits(log: CallLog, rng: Prng, p: Project): void {
  explore(log, rng, p);
  const [fail, pass] = outcomes(p);
  quietEdits(log, rng, p, rng.int(3, 8), 'a');
  log.shell(pytest(p), fail ?? '', 1);
  quietEdits(log, rng, p, rng.int(2, 6), 'b');
  log.write(`/repo/tests/test_${p.module}_extra.py`, `from pkg.${p.module} import ${p.symbol}\n`);
  log.shell(pytest(p), pass ?? '');
  log.shell('cd /repo && git diff --stat', ` ${src(p)} | ${rng.int(3, 20)} ++--\n`);
}

/** Edit, run the test, edit, run the test: the output flips between two or three outcomes. */
export function flipFlop(log: CallLog, rng: Prng, p: Project): void {
  explore(log, rng, p);
  const outs = outcomes(p);
  const rounds = rng.int(6, 25);
  for (let i = 0; i < rounds; i++) {
    if (rng.chance(0.5))
      log.quiet(`sed -i '${rng.int(10, 140)}s/strict=False/strict=${i % 2 === 0}/' /repo/${src(p)}`);
    else
      log.write(
        `/repo/${src(p)}`,
        `def ${p.symbol}(value, strict=${i}):\n    return value  # attempt ${i}\n`,
      );
    const out = i === rounds - 1 ? outs[1] : outs[rng.int(0, 2)];
    log.shell(pytest(p), out ?? '', out === outs[1] ? 0 : 1);
  }
}

/** Tries a version, another, goes back to the first to compare, then finds the fix. */
export function revertAndCompare(log: CallLog, rng: Prng, p: Project): void {
  explore(log, rng, p);
  const [fail, pass, other] = outcomes(p);
  const v1 = `def ${p.symbol}(value):\n    return str(value)\n`;
  const v2 = `def ${p.symbol}(value, strict):\n    return value\n`;
  const toggles = rng.int(1, 2);
  for (let i = 0; i < toggles; i++) {
    log.write(`/repo/${src(p)}`, v1);
    log.shell(pytest(p), fail ?? '', 1);
    log.write(`/repo/${src(p)}`, v2);
    log.shell(pytest(p), other ?? '', 1);
  }
  log.shell('cd /repo && git stash', 'Saved working directory and index state WIP on main: 4f2a91c fix\n');
  log.shell(pytest(p), fail ?? '', 1);
  log.shell(
    'cd /repo && git stash pop',
    `On branch main\nChanges not staged for commit:\n\tmodified:   ${src(p)}\n`,
  );
  log.write(
    `/repo/${src(p)}`,
    `def ${p.symbol}(value, strict=False):\n    return value if strict else str(value)\n`,
  );
  log.shell(pytest(p), pass ?? '');
}

/** Scratch scripts with similar names and bodies, each run, each answering differently. */
export function scratchScripts(log: CallLog, rng: Prng, p: Project): void {
  explore(log, rng, p);
  const n = rng.int(3, 6);
  for (let i = 0; i < n; i++) {
    const name = `/repo/check_${String.fromCharCode(97 + i)}.py`;
    const input = ['"1"', '1', 'None', '" 1 "', '1.0', '[1]'][i] ?? '0';
    log.write(
      name,
      `import sys\nsys.path.insert(0, "src")\nfrom pkg.${p.module} import ${p.symbol}\nprint(repr(${p.symbol}(${input})))\n`,
    );
    log.shell(`cd /repo && python ${name}`, `${['1', "'1'", 'None', "' 1 '", '1.0', '[1]'][(i + 1) % 6]}\n`);
  }
  log.quiet(`rm /repo/check_*.py`);
  log.shell(pytest(p), outcomes(p)[1] ?? '');
}

/** Starts a build in the background, polls its log (which grows), pages through a long file. */
export function pollAndPage(log: CallLog, rng: Prng, p: Project): void {
  log.quiet('cd /repo && nohup pip install -e . > /tmp/install.log 2>&1 &');
  const polls = rng.int(3, 8);
  for (let i = 0; i < polls; i++) log.shell('tail -n 3 /tmp/install.log', `Collecting deps ... ${i * 12}%\n`);
  log.shell('tail -n 3 /tmp/install.log', 'Successfully installed pkg-0.1\n');
  for (let i = 0; i < rng.int(3, 7); i++) {
    const from = 1 + i * 100;
    log.shell(
      `sed -n '${from},${from + 99}p' /repo/${src(p)}`,
      `# ${p.module}.py lines ${from}-${from + 99}\n`,
    );
  }
  log.shell(pytest(p), outcomes(p)[1] ?? '');
}

/** Adds a debug print, runs, takes the print out again, runs: the same output as before the print. */
export function debugPrint(log: CallLog, rng: Prng, p: Project): void {
  explore(log, rng, p);
  const [fail, pass] = outcomes(p);
  log.shell(pytest(p), fail ?? '', 1);
  const rounds = rng.int(1, 3);
  for (let i = 0; i < rounds; i++) {
    const line = rng.int(10, 90);
    log.quiet(`sed -i '${line}a\\    print("DEBUG", value)' /repo/${src(p)}`);
    log.shell(pytest(p), `DEBUG {'a': ${i}}\n${fail ?? ''}`, 1);
    log.quiet(`sed -i '/print("DEBUG", value)/d' /repo/${src(p)}`);
    log.shell(pytest(p), fail ?? '', 1);
  }
  log.write(`/repo/${src(p)}`, `def ${p.symbol}(value):\n    return {k: str(v) for k, v in value.items()}\n`);
  log.shell(pytest(p), pass ?? '');
}

/** An install that fails on the network, is retried as is, and then works; then the tests. */
export function installRetry(log: CallLog, rng: Prng, p: Project): void {
  const install = 'cd /repo && pip install -q -e ".[test]"';
  const tries = rng.int(1, 2);
  for (let i = 0; i < tries; i++)
    log.shell(
      install,
      `ERROR: Could not install packages due to an OSError: [Errno 104] Connection reset (attempt ${i + 1})\n`,
      1,
    );
  log.quiet(install);
  explore(log, rng, p);
  log.shell(pytest(p), outcomes(p)[1] ?? '');
}

/** 30 to 150 calls: heredoc writes, `sed -i`, `grep -rn`, the same test after every change. */
export function longRun(log: CallLog, rng: Prng, p: Project, target: number): void {
  explore(log, rng, p);
  const outs = outcomes(p);
  let failure = outs[0] ?? '';
  let edits = 0;
  while (log.length < target - 3) {
    // A look around first, none to three different checks: where a name is used, what the
    // working tree holds, the file as it is now. Most answer what they answered last time.
    const looks = [
      () =>
        log.shell(
          `grep -rn "${p.symbol}" /repo/src /repo/tests | head -20`,
          `${src(p)}:${10 + (edits >> 2)}: ${p.symbol}\n`,
        ),
      () => log.shell('cd /repo && git status --short', ` M ${src(p)}\n${edits > 3 ? '?? tests/\n' : ''}`),
      () => log.shell(`cat -n /repo/${src(p)} | sed -n '1,40p'`, `     1\t# ${p.module} rev ${edits >> 1}\n`),
    ];
    const first = rng.int(0, 2);
    const count = rng.pick([0, 0, 1, 1, 2, 3]);
    for (let k = 0; k < count; k++) looks[(first + k) % looks.length]?.();
    if (rng.chance(0.6))
      log.quiet(`sed -i 's/${p.symbol}(v${edits})/${p.symbol}(v${edits + 1})/' /repo/${src(p)}`);
    else log.write(`/repo/tests/test_case_${edits}.py`, `def test_case_${edits}():\n    assert True\n`);
    edits++;
    // The test after every change: the same failure for a stretch, then another, as edits land.
    if (rng.chance(0.15)) failure = rng.pick(outs.filter((o) => o !== outs[1]));
    log.shell(pytest(p), failure, 1);
  }
  log.shell(pytest(p), outs[1] ?? '');
}
