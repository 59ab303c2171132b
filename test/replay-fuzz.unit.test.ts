/**
 * Fuzz: arbitrary JSON args, tool names and numbers through `loopguard replay`. The replay never
 * throws; every rejection is a named input error (file:line: field: problem); and a rebuild of
 * the data dir afterwards prints exactly what the replay printed.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { main } from '../src/cli/main.js';
import { captureIo } from './support/capture-io.js';

const root = mkdtempSync(join(tmpdir(), 'lg-fuzz-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

const INTERNALS = ['constructor', '__proto__', 'toString', 'valueOf', 'hasOwnProperty', 'prototype'];
const loneSurrogate = fc.integer({ min: 0xd800, max: 0xdfff }).map((c) => String.fromCharCode(c));
// Mostly valid values, so most runs get replayed, with the hostile ones mixed in.
const name = fc.oneof(
  { arbitrary: fc.constantFrom(...INTERNALS, 'search', 'sk-live-4eC39HqLyjWDarjtT1zdp7dc'), weight: 4 },
  { arbitrary: fc.string({ minLength: 1, maxLength: 8 }), weight: 4 },
  { arbitrary: fc.constantFrom('', '   '), weight: 1 },
  { arbitrary: fc.tuple(fc.string({ maxLength: 3 }), loneSurrogate).map(([a, b]) => a + b), weight: 1 },
);
const number = fc.oneof(
  { arbitrary: fc.nat({ max: 100_000 }), weight: 8 },
  { arbitrary: fc.integer(), weight: 1 },
  { arbitrary: fc.double(), weight: 1 },
  {
    arbitrary: fc.constantFrom(1.5, 1e308, 1e20, 2 ** 31, 2 ** 53, -1, 0, Number.MAX_SAFE_INTEGER),
    weight: 1,
  },
);
const deep = fc.integer({ min: 1, max: 200 }).map((depth) => {
  let v: unknown = 'leaf';
  for (let i = 0; i < depth; i++) v = i % 2 === 0 ? { a: v } : [v];
  return v;
});
const args = fc.dictionary(
  fc.oneof(fc.constantFrom(...INTERNALS, 'password', 'token_value', 'page'), fc.string({ maxLength: 6 })),
  fc.oneof(fc.jsonValue({ maxDepth: 3 }), deep, number),
  { maxKeys: 4 },
);
const optional = <T>(arb: fc.Arbitrary<T>) => fc.option(arb, { nil: undefined, freq: 2 });
const call = fc.record(
  {
    step: optional(number),
    tool: name,
    args,
    result: optional(
      fc.oneof(fc.string({ maxLength: 12 }), fc.constantFrom('ok', '', 'Bearer abcdef1234567890')),
    ),
    result_sha256: fc.constantFrom('h1', 'h2', 'h3'),
    kind: optional(fc.constantFrom('SUCCESS', 'RETRYABLE', 'PRECONDITION', 'FATAL', 'PENDING', 'WEIRD')),
    code: optional(name),
    operation_key: optional(name),
    side_effect: optional(fc.boolean()),
    progress_version: optional(number),
    retry_after_ms: optional(number),
    cost_usd: optional(number),
    tokens: optional(number),
    at_ms: optional(number),
  },
  { requiredKeys: ['tool', 'args', 'result_sha256'] },
);
const run = fc.record({
  run_id: name,
  outcome: fc.record({ success: fc.constantFrom(true, false, null), detail: optional(name) }),
  calls: fc.array(call, { maxLength: 6 }),
});

/** What a rejection looks like: the file, a line, a field path, the problem; or a duplicate run id. */
const NAMED = /^rejected: \S+\.jsonl:\d+: \S.*: .+$|^rejected: \S+\.jsonl: run_id .+: already recorded/;

async function cli(args: string[]) {
  const io = captureIo();
  const code = await main(args, io, { env: { LOOPGUARD_SECRET_KEY: 'fuzz-key' } });
  return { code, out: io.stdout(), err: io.stderr() };
}

describe('replay fuzz', () => {
  it('never throws but a named input error, and a rebuild equals the live output', async () => {
    let n = 0;
    let replayed = 0;
    let rejected = 0;
    await fc.assert(
      fc.asyncProperty(fc.array(run, { minLength: 1, maxLength: 4 }), async (runs) => {
        const dir = join(root, String(n++));
        const file = join(root, `${n}.jsonl`);
        writeFileSync(file, `${runs.map((r) => JSON.stringify(r)).join('\n')}\n`);
        const replay = await cli(['replay', file, '--json', '--data-dir', dir]);
        expect(replay.code).toBe(replay.err === '' ? 0 : 1);
        const errors = replay.err.split('\n').filter(Boolean);
        for (const line of errors) expect(line).toMatch(NAMED);
        const live = replay.out.split('\n').filter(Boolean);
        replayed += live.length;
        rejected += errors.length;
        if (live.length === 0) return;
        const rebuilt = (await cli(['rebuild', '--json', '--data-dir', dir])).out.split('\n').filter(Boolean);
        expect(rebuilt.slice(0, -1).sort()).toEqual([...live].sort());
      }),
      { numRuns: 60 },
    );
    // Both sides were exercised: runs that replayed and inputs that were refused.
    expect(replayed).toBeGreaterThan(5);
    expect(rejected).toBeGreaterThan(2);
  }, 120_000);
});
