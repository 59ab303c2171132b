/**
 * The folder layout's rules, read from the imports of src/ itself: no cycle between folders (an
 * adapter's folder never imports the layer above it, so the Ledger port cannot live in runtime/
 * while its Kafka adapter lives in log/), the domain imports nothing outside domain/, and the
 * ports import the domain only. Type imports count: a port that names a runtime type is a leak.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const SRC = fileURLToPath(new URL('../src', import.meta.url));

/** Every relative import of src/, as [importing file, imported file], both relative to src/. */
function imports(): [string, string][] {
  const files = readdirSync(SRC, { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('.ts'));
  return files.flatMap((file) =>
    [
      ...readFileSync(join(SRC, file), 'utf8').matchAll(
        /(?:import|export)\s[^'"]*?from\s+'(\.{1,2}\/[^']+)'/g,
      ),
    ].map((m): [string, string] => [file, relative(SRC, resolve(SRC, dirname(file), m[1] as string))]),
  );
}

/** The top folder of src/ a file is in; '.' for the entry points. */
const folderOf = (file: string): string => (file.includes('/') ? (file.split('/')[0] as string) : '.');

/** Folder pairs (a, b) where a imports b and b reaches a back. */
function folderCycles(edges: readonly [string, string][]): string[] {
  const out = new Map<string, Set<string>>();
  for (const [a, b] of edges) if (a !== b) out.set(a, (out.get(a) ?? new Set()).add(b));
  const reaches = (from: string, to: string): boolean => {
    const seen = new Set<string>();
    const todo = [from];
    for (let x = todo.pop(); x !== undefined; x = todo.pop())
      for (const y of out.get(x) ?? []) {
        if (y === to) return true;
        if (seen.has(y)) continue;
        seen.add(y);
        todo.push(y);
      }
    return false;
  };
  return [...out].flatMap(([a, bs]) => [...bs].filter((b) => reaches(b, a)).map((b) => `${a} -> ${b}`));
}

describe('src/ layout', () => {
  const edges = imports();
  const folders = edges.map(([a, b]): [string, string] => [folderOf(a), folderOf(b)]);

  it('reads the imports it checks', () => {
    expect(edges.length).toBeGreaterThan(500);
    expect(folders).toContainEqual(['log', 'ports']);
  });

  it('has no import cycle between folders', () => {
    expect(folderCycles(folders)).toEqual([]);
  });

  it('finds a cycle when there is one', () => {
    expect(folderCycles([...folders, ['ports', 'runtime']]).sort()).toContain('runtime -> ports');
  });

  it('keeps the domain pure and the ports on the domain alone', () => {
    const outside = (from: string, allowed: readonly string[]) =>
      edges
        .filter(([a, b]) => folderOf(a) === from && !allowed.includes(folderOf(b)))
        .map((e) => e.join(' -> '));
    expect(outside('domain', ['domain'])).toEqual([]);
    expect(outside('ports', ['ports', 'domain'])).toEqual([]);
  });
});
