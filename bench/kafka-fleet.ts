/**
 * A fleet of agent runs for the Kafka benchmarks: realistic recorded events (a coding agent's run
 * replayed through the guard with the default policy), cut into the appends a live guarded run
 * makes, and a driver that appends many runs concurrently, each run's appends one after another
 * (record first, then act: a run waits for its ack before its next step).
 */
import { createHash } from 'node:crypto';
import { DEFAULT_POLICY, diceSimilarity, type RecordedEvent } from '../src/domain/index.js';
import { nodeHashing } from '../src/runtime/node-hashing.js';
import { replayRun } from '../src/trace/replay.js';
import type { TraceCall, TraceRun } from '../src/trace/trace-run.js';

const sha = (s: string) => createHash('sha256').update(s).digest('hex');

const FILES = ['src/orders/refund.ts', 'src/orders/refund.test.ts', 'src/billing/invoice.ts', 'README.md'];

/** Distinct edits (a real agent's edits differ; near-identical ones would be a rephrasing loop). */
const EDITS = [
  { old: 'const cents = Math.round(amount * 100);', new: 'const cents = toCents(amount);' },
  {
    old: "import { Order } from './order';",
    new: "import { Order } from './order';\nimport { toCents } from '../money';",
  },
  {
    old: 'expect(refund(order, 10.005).cents).toBe(1000);',
    new: 'expect(refund(order, 10.005).cents).toBe(1001);',
  },
  {
    old: 'if (cents > order.totalCents) throw',
    new: 'if (cents > order.totalCents - order.refundedCents) throw',
  },
  {
    old: "reason: order.reason ?? 'customer_request'",
    new: 'reason: order.reason ?? RefundReason.CustomerRequest',
  },
  {
    old: 'export function toCents(x: number)',
    new: 'export function toCents(x: number, mode: Rounding = "half-even")',
  },
  { old: "it('refunds the total')", new: "it.each(AMOUNTS)('refunds %s to the cent')" },
  {
    old: 'return invoice.lines.reduce((a, l) => a + l.amount, 0);',
    new: 'return sumCents(invoice.lines.map((l) => l.cents));',
  },
];

/**
 * A coding agent's run: search, read, edit and re-run the tests, open a pull request, notify; a
 * looping one searches for the same thing until the guard stops it.
 */
function syntheticTrace(runId: string, edits: number, loops = false): TraceRun {
  const calls: Omit<TraceCall, 'step' | 'result_sha256' | 'after_user_turn'>[] = [
    {
      tool: 'search_code',
      args: { query: 'refund amount rounding', path: 'src/', max_results: 20 },
      result: listing(runId),
    },
    { tool: 'read_file', args: { path: FILES[0] }, result: source(runId, 0) },
    { tool: 'read_file', args: { path: FILES[1] }, result: source(runId, 1) },
    { tool: 'run_tests', args: { command: 'npm test -- refund' }, result: testOutput(runId, 0, 3) },
  ];
  for (let i = 1; i <= edits; i++) {
    const file = FILES[i % 3] ?? 'src/orders/refund.ts';
    calls.push(
      {
        tool: 'edit_file',
        args: { path: file, ...(EDITS[i % EDITS.length] ?? { old: '', new: '' }) },
        result: `edited ${file}: 1 hunk, +${i % 4} -1`,
        side_effect: true,
        operation_key: `${runId}:edit:${i}`,
      },
      { tool: 'git_diff', args: { paths: ['src/'], context_lines: 3 }, result: source(runId, i) },
      {
        tool: 'run_tests',
        args: { command: 'npm test -- refund' },
        result: testOutput(runId, i, Math.max(0, 3 - i)),
      },
    );
  }
  if (loops) {
    // Stuck: the same search again and again, the same answer each time.
    for (let k = 0; k < 4; k++)
      calls.push({ tool: 'search_code', args: { query: 'toCents definition' }, result: listing(runId) });
  }
  calls.push(
    {
      tool: 'create_pull_request',
      args: { title: 'Round refunds to the cent', branch: `fix/${runId}`, base: 'main' },
      result: `{"number":${hashInt(runId) % 9000},"url":"https://git.example/acme/shop/pull/${hashInt(runId) % 9000}"}`,
      side_effect: true,
      operation_key: `${runId}:pr`,
      tokens: 1800,
      cost_usd: 0.012,
    },
    {
      tool: 'post_message',
      args: { channel: '#payments', text: `PR ready for ${runId}` },
      result: 'ok',
      side_effect: true,
      operation_key: `${runId}:notify`,
    },
  );
  return {
    run_id: runId,
    source: 'acme',
    outcome: { success: true },
    calls: calls.map((c, i) => ({
      ...c,
      step: i + 1,
      result_sha256: sha(c.result),
      after_user_turn: i === 0,
    })),
  };
}

function hashInt(s: string): number {
  return Number.parseInt(sha(s).slice(0, 8), 16);
}

function listing(runId: string): string {
  return FILES.map((f, i) => `${f}:${12 + i * 7}: const cents = Math.round(amount * 100); // ${runId}`).join(
    '\n',
  );
}

function source(runId: string, i: number): string {
  return `export function refund(order: Order, amount: number): Refund {\n  // revision ${i} of ${runId}\n  const cents = toCents(amount, ${i});\n  if (cents > order.totalCents) throw new RefundError('over_total');\n  return { orderId: order.id, cents, reason: order.reason ?? 'customer_request' };\n}\n`;
}

function testOutput(runId: string, i: number, failing: number): string {
  const failures = Array.from(
    { length: failing },
    (_, k) => `  x refund rounds ${k + 1}.005 (expected ${k + 101}, got ${k + 100})`,
  );
  return `> npm test -- refund (${runId}, try ${i})\n ${12 - failing} passed, ${failing} failed\n${failures.join('\n')}`;
}

/**
 * The appends a live guarded run makes for these events: a decision is appended with the request
 * or result it answers, and the start and the stop are appended alone.
 */
function appendsOf(events: readonly RecordedEvent[]): RecordedEvent[][] {
  const out: RecordedEvent[][] = [];
  let group: RecordedEvent[] = [];
  for (const e of events) {
    group.push(e);
    if (e.event.type !== 'ToolCallRequested' && e.event.type !== 'ToolCallCompleted') {
      out.push(group);
      group = [];
    }
  }
  if (group.length > 0) out.push(group);
  return out;
}

export interface Fleet {
  /** Per concurrent worker, the appends of its runs, one run after another. */
  readonly workers: readonly (readonly (readonly RecordedEvent[])[])[];
  readonly runs: number;
  readonly events: number;
}

/**
 * `concurrency` workers, each with `rounds` runs (ids `<prefix>-<n>`) one after the other. A run
 * makes 8 to 15 edits, and a worker's second run mirrors its first, so that every worker has about
 * as much to append and the fleet stays at full concurrency until near the end; one run in ten
 * loops and is stopped.
 */
export function makeFleet(prefix: string, concurrency: number, rounds: number): Fleet {
  const deps = { hashing: nodeHashing('bench'), similarity: diceSimilarity };
  const workers: RecordedEvent[][][] = [];
  let events = 0;
  for (let w = 0; w < concurrency; w++) {
    const appends: RecordedEvent[][] = [];
    for (let round = 0; round < rounds; round++) {
      const n = round * concurrency + w;
      const edits = 8 + (round % 2 === 0 ? w % 8 : 7 - (w % 8));
      const replay = replayRun(syntheticTrace(`${prefix}-${n}`, edits, n % 10 === 9), DEFAULT_POLICY, deps);
      appends.push(...appendsOf(replay.events));
      events += replay.events.length;
    }
    workers.push(appends);
  }
  return { workers, runs: concurrency * rounds, events };
}

/** Runs every worker of the fleet at once, each one's appends in order; the elapsed milliseconds. */
export async function driveFleet(
  fleet: Fleet,
  append: (events: readonly RecordedEvent[]) => Promise<unknown>,
): Promise<number> {
  const started = performance.now();
  await Promise.all(
    fleet.workers.map(async (appends) => {
      for (const group of appends) await append(group);
    }),
  );
  return performance.now() - started;
}
