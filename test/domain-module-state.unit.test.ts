/**
 * The domain and the machines keep no state of their own between calls: a decision depends on
 * the run's events, never on what else ran in the process. Checked on the source text: no
 * top-level `let`/`var`, and every top-level collection is typed read-only.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const sources = (dir: string): string[] =>
  readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((f) => f.isFile() && f.name.endsWith('.ts'))
    .map((f) => join(f.parentPath, f.name));

/** Top-level declarations that can hold state: mutable bindings, or collections not typed read-only. */
const MUTABLE = [
  /^(export )?(let|var) /,
  /^(export )?const \w+ = new (Map|Set|WeakMap|WeakSet|Array)\b/,
  /^(export )?const \w+(: [^=]*)? = (\[\]|\{\});/,
  /^(export )?const \w+: (Map|Set|WeakMap|WeakSet)</,
];

describe('no module-level mutable state', () => {
  it.each(['src/domain', 'src/machines'])('in %s', (dir) => {
    const found: string[] = [];
    for (const file of sources(dir))
      readFileSync(file, 'utf8')
        .split('\n')
        .forEach((line, i) => {
          if (MUTABLE.some((re) => re.test(line))) found.push(`${file}:${i + 1}: ${line}`);
        });
    expect(found).toEqual([]);
  });

  it('the check sees what it looks for', () => {
    for (const line of [
      'let last = null;',
      'const cache = new Map<string, number>();',
      'const ring: string[] = [];',
      'const seen = {};',
    ])
      expect(MUTABLE.some((re) => re.test(line))).toBe(true);
    expect(MUTABLE.some((re) => re.test('const PAGING: ReadonlySet<string> = new Set(['))).toBe(false);
  });
});
