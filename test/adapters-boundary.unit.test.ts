import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';

/** Every import specifier of every source file, by path relative to the repo. */
function importsOf(dir: string): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const entry of readdirSync(dir, { withFileTypes: true, recursive: true })) {
    if (!entry.isFile() || !entry.name.endsWith('.ts')) continue;
    const path = join(entry.parentPath, entry.name);
    const text = readFileSync(path, 'utf8');
    out.set(
      relative('.', path),
      [...text.matchAll(/\bfrom\s+'([^']+)'/g)].map((m) => m[1] ?? ''),
    );
  }
  return out;
}

/** Each adapter file and the framework modules it alone may import. */
const FRAMEWORKS: Readonly<Record<string, readonly string[]>> = {
  'src/adapters/ai.ts': ['ai'],
  'src/adapters/openai-agents.ts': ['@openai/agents'],
  'src/adapters/langchain.ts': ['langchain'],
  'src/adapters/langgraph.ts': [
    '@langchain/core/messages',
    '@langchain/langgraph',
    '@langchain/langgraph/prebuilt',
  ],
  // The ToolMessage path shared by the langchain and langgraph adapters (both have @langchain/core).
  'src/adapters/tool-message.ts': ['@langchain/core/messages'],
};
const isFramework = (spec: string) =>
  spec === 'ai' ||
  spec.startsWith('ai/') ||
  spec.startsWith('@openai/') ||
  /^(@langchain\/|langchain)/.test(spec);

describe('adapters stay at the edge', () => {
  const graph = importsOf('src');

  it('a framework is imported only by its own adapter file, so the root package loads without any', () => {
    for (const [file, frameworks] of Object.entries(FRAMEWORKS))
      expect(graph.get(file)).toEqual(expect.arrayContaining([...frameworks]));
    for (const [file, specs] of graph)
      for (const spec of specs.filter(isFramework))
        expect(FRAMEWORKS[file] ?? [], `${file} -> ${spec}`).toContain(spec);
  });

  it('nothing outside src/adapters imports an adapter', () => {
    for (const [file, specs] of graph)
      if (!file.startsWith('src/adapters/')) expect(specs.filter((s) => s.includes('adapters/'))).toEqual([]);
  });

  it('adapters use the runtime and domain public faces only', () => {
    for (const [file, specs] of graph) {
      if (!file.startsWith('src/adapters/')) continue;
      const inner = specs.filter((s) => s.startsWith('../'));
      expect(inner.filter((s) => s !== '../runtime/index.js' && s !== '../domain/index.js')).toEqual([]);
    }
  });
});
