import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

/**
 * The README's framework snippets are the tested ones: each is the `readme:start NAME` region of
 * an example, copied verbatim, and each example runs here (one charge, the repeated search stopped).
 */
const root = join(import.meta.dirname, '..');
const readme = readFileSync(join(root, 'README.md'), 'utf8');
const region = (file: string, name: string): string => {
  const text = readFileSync(join(root, file), 'utf8');
  const m = new RegExp(`// readme:start ${name}\\n([\\s\\S]*?)// readme:end ${name}\\n`).exec(text);
  if (m?.[1] === undefined) throw new Error(`${file} has no readme:start ${name} region`);
  return m[1];
};
const tsx = join(root, 'node_modules', '.bin', 'tsx');

describe('the README framework snippets', () => {
  for (const [name, file] of [
    ['ai', 'examples/ai.ts'],
    ['openai-agents', 'examples/openai-agents.ts'],
    ['langchain', 'examples/langchain.ts'],
    ['langgraph', 'examples/langgraph.ts'],
    ['mastra', 'examples/mastra.ts'],
  ] as const)
    it(`${name}: the README shows ${file}'s region as written, and the example charges once and stops the loop`, () => {
      expect(readme).toContain(region(file, name));
      const out = execFileSync(tsx, [file], { cwd: root, encoding: 'utf8' });
      expect(out).toContain('card charged 1 time(s); run STOPPED_LOOP_GUARD (exact_repeat)');
    }, 60_000);
});
