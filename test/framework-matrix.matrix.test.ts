import { copyFileSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sh } from './support/sh.js';

/**
 * Every peer range the package claims, tried as a user would: the packed tarball installed in a
 * temp project, then each framework version installed beside it from the npm registry, one after
 * the other (one project, one npm cache), its scene type-checked strict with `skipLibCheck: false`
 * and run: one charge although the model pays twice, the repeated search stopped, the model told.
 * Minutes long (a build, six installs, five strict type-checks), so it is a project of its own:
 * `npm test` (CI) runs it, `vitest run --project unit` does not; `vitest run --project matrix` alone.
 */
const root = join(import.meta.dirname, '..');
const scenes = join(import.meta.dirname, 'fixtures', 'installed', 'matrix');
const tsc = join(root, 'node_modules', 'typescript', 'bin', 'tsc');
let project: string;
const timings: Record<string, number> = {};

const timed = <T>(label: string, work: () => T): T => {
  const t0 = Date.now();
  try {
    return work();
  } finally {
    timings[label] = Date.now() - t0;
  }
};
const npmInstall = (args: string[]) =>
  sh('npm', ['install', '--no-audit', '--no-fund', '--prefer-offline', '--omit=optional', ...args], project);

beforeAll(() => {
  project = mkdtempSync(join(tmpdir(), 'lg-matrix-'));
  timed('pack', () => sh('npm', ['pack', '--silent', '--pack-destination', project], root));
  const tarball = readdirSync(project).find((f) => f.endsWith('.tgz'));
  if (tarball === undefined) throw new Error(`npm pack left no tarball in ${project}`);
  writeFileSync(
    join(project, 'package.json'),
    JSON.stringify({ name: 'uses-loopguard-frameworks', private: true, type: 'module' }),
  );
  // AI SDK 5 and 6 name json-schema types in their declarations: a user type-checking them needs it.
  timed('install tarball', () => npmInstall([`./${tarball}`, 'zod@4', '@types/json-schema']));
  for (const f of readdirSync(scenes)) copyFileSync(join(scenes, f), join(project, f));
}, 300_000);
afterAll(() => {
  if (project) rmSync(project, { recursive: true, force: true });
  console.log(`framework matrix wall times (ms): ${JSON.stringify(timings)}`);
}, 120_000);

/** Type-checks the scenes as a strict user project would, declarations of every package included unless `libCheck` is off. */
const typeCheck = (files: readonly string[], libCheck = true) =>
  sh(
    process.execPath,
    [
      tsc,
      '--noEmit',
      '--strict',
      '--skipLibCheck',
      String(!libCheck),
      '--target',
      'es2022',
      '--module',
      'nodenext',
      '--moduleResolution',
      'nodenext',
      '--allowImportingTsExtensions',
      '--types',
      'node',
      '--typeRoots',
      join(root, 'node_modules', '@types'),
      ...files,
    ],
    project,
  );
/** Runs a scene (Node strips its types) and returns the JSON line it prints last. */
const runScene = (file: string): Record<string, unknown> =>
  JSON.parse(sh(process.execPath, [file], project).trim().split('\n').at(-1) ?? 'null');

const loopEnded = (out: Record<string, unknown>) => {
  expect(out).toMatchObject({ charges: 1, searches: 2, status: 'STOPPED_LOOP_GUARD', steps: 6 });
  expect(out.lastPrompt).toContain('[loopguard] stopped (exact_repeat)');
};

const cases = [
  { name: 'ai 5', packages: ['ai@5'], scenes: ['ai-v2.ts'] },
  { name: 'ai 6', packages: ['ai@6'], scenes: ['ai-v3.ts'] },
  { name: 'ai 7', packages: ['ai@7'], scenes: ['ai-v3.ts', 'ai7-approval.ts'] },
  // The Agents SDK's declarations import its optional MCP client, which --omit=optional leaves out.
  {
    name: '@openai/agents current',
    packages: ['@openai/agents@latest', '@modelcontextprotocol/client'],
    scenes: ['openai-agents.ts'],
  },
  {
    name: 'langchain and @langchain/langgraph current',
    packages: ['langchain@latest', '@langchain/core@latest', '@langchain/langgraph@latest'],
    scenes: ['langchain.ts', 'langgraph.ts'],
  },
  // Mastra takes its own mock model (spec v2, bundled in @mastra/core): no `ai` needed beside it.
  // Mastra's own declarations do not pass `skipLibCheck: false` (1.71.0: 903 errors, all inside
  // @mastra/core and @mastra/schema-compat, 3 minutes of tsc), so its scene is checked with it on;
  // loopguard/mastra's declarations import nothing from Mastra.
  {
    name: '@mastra/core current',
    packages: ['@mastra/core@latest'],
    scenes: ['mastra.ts'],
    libCheck: false,
  },
] as const;

describe('every claimed framework version, installed beside the packed tarball', () => {
  for (const c of cases)
    it(`${c.name}: type-checks strict${'libCheck' in c ? '' : ' without skipLibCheck'} and ends the loop scene`, () => {
      timed(`${c.name} install`, () => npmInstall(['--no-save', ...c.packages]));
      timed(`${c.name} tsc`, () => typeCheck(c.scenes, !('libCheck' in c) || c.libCheck));
      const [loop, second] = timed(`${c.name} run`, () => c.scenes.map(runScene));
      if (loop === undefined) throw new Error('no scene ran');
      loopEnded(loop);
      if (c.name === '@openai/agents current')
        expect(loop.finalOutput).toMatch(/^\[loopguard\] STOPPED_LOOP_GUARD \(exact_repeat\)/);
      // AI SDK 7: a tool's own needsApproval still asks the human; nothing is charged before.
      if (c.name === 'ai 7') expect(second).toEqual({ asked: true, chargesBeforeApproval: 0, charges: 1 });
      // LangGraph's createReactAgent ends on the guard's stop instead of running into GraphRecursionError.
      if (c.name.startsWith('langchain')) loopEnded(second ?? {});
    }, 300_000);
});
