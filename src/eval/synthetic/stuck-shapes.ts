import { type Project, pytest } from './coding-shapes.js';
import type { CallLog } from './harness.js';
import type { Prng } from './prng.js';

/**
 * How coding agents get stuck, after some honest work: nothing changes between the calls, so the
 * same call gets the same answer again. A guard must stop each of these.
 */

/** The same test, re-run with nothing changed in between. */
export function rerunUnchanged(log: CallLog, rng: Prng, p: Project): void {
  const n = rng.int(4, 12);
  for (let i = 0; i < n; i++) log.shell(pytest(p), `F\n${p.test}: AssertionError\n1 failed`, 1);
}

/** The same in-place edit applied again and again: it prints nothing and changes nothing. */
export function sameEdit(log: CallLog, rng: Prng, p: Project): void {
  const n = rng.int(4, 10);
  for (let i = 0; i < n; i++)
    log.quiet(`sed -i 's/return value/return str(value)/' /repo/src/pkg/${p.module}.py`);
}

/** Writes the same file and runs it, again and again, getting the same answer. */
export function rewriteAndRun(log: CallLog, rng: Prng, p: Project): void {
  const n = rng.int(3, 8);
  for (let i = 0; i < n; i++) {
    log.write('/repo/repro.py', `from pkg.${p.module} import ${p.symbol}\nprint(${p.symbol}("1"))\n`);
    log.shell('cd /repo && python repro.py', 'Traceback (most recent call last):\nKeyError: 1\n', 1);
  }
  log.shell('cd /repo && python repro.py', 'Traceback (most recent call last):\nKeyError: 1\n', 1);
  log.shell('cd /repo && python repro.py', 'Traceback (most recent call last):\nKeyError: 1\n', 1);
}

/** Reads the same file over and over. */
export function rereadFile(log: CallLog, rng: Prng, p: Project): void {
  const n = rng.int(3, 9);
  for (let i = 0; i < n; i++)
    log.shell(`cat /repo/src/pkg/${p.module}.py`, `def ${p.symbol}(value):\n    return value\n`);
}

/** Rephrases one search, gets the same answer, then repeats the last phrasing verbatim. */
export function rephraseSearch(log: CallLog, rng: Prng, p: Project): void {
  const answer = `src/pkg/${p.module}.py:42:    return ${p.symbol}(value, strict=True)\n`;
  const phrasings = [
    `grep -rn "${p.symbol}(" /repo/src`,
    `grep -rn "${p.symbol}(" /repo/src/`,
    `grep -rn '${p.symbol}(' /repo/src/`,
    `grep -rn "${p.symbol}(" /repo/src/pkg`,
  ];
  for (const q of phrasings) log.shell(q, answer);
  const last = phrasings[phrasings.length - 1] ?? '';
  for (let i = 0; i < rng.int(3, 6); i++) log.shell(last, answer);
}
