/**
 * One result, one hash: a tool's answer is recorded and hashed by one function, whether the
 * library ran the tool or a remote client ran it and the service recorded it; and one mapping
 * from a decision to what `run.call` gives back.
 */

import { describe, expect, it } from 'vitest';
import {
  DEFAULT_POLICY,
  type EventOf,
  failedResult,
  initialState,
  type RecordedEvent,
  type ResultKind,
  resultHash,
} from '../src/domain/index.js';
import { SqliteLedger } from '../src/log/embedded/sqlite-ledger.js';
import { cachedResultJson, notRunResult } from '../src/runtime/call-result.js';
import { executeTool, type ToolFn } from '../src/runtime/execute-tool.js';
import { Guard } from '../src/runtime/guard.js';
import { nodeHashing } from '../src/runtime/node-hashing.js';
import { outcome, ToolError } from '../src/runtime/tool-outcome.js';
import { requestCommand } from '../src/service/request-command.js';
import { emptyRequest } from '../src/service/service-topics.js';
import { tempDirs } from './support/cli-run.js';
import { memoryStream } from './support/memory-stream.js';

const tempDir = tempDirs('lg-result-');
const SECRET = 'test-key';
const HASHING = nodeHashing(SECRET);

/** The hash the library records for a call of `fn`, read back from the log. */
async function libraryHash(fn: ToolFn): Promise<EventOf<'ToolCallCompleted'>> {
  const store = await memoryStream();
  const guard = new Guard({ store, ledger: SqliteLedger.open(tempDir()), secretKey: SECRET });
  const run = await guard.startRun({ runId: 'lib' });
  await run.call({ tool: 'search', args: { q: 'refund' } }, fn);
  await guard.close();
  const done = (await store.readStream('lib')).find((r) => r.event.type === 'ToolCallCompleted')?.event;
  if (done?.type !== 'ToolCallCompleted') throw new Error('no result recorded');
  return done;
}

/** The hash the service records for the same call run by a remote client, which sends what it ran. */
async function serviceHash(fn: ToolFn): Promise<string> {
  // The remote client runs the tool as the library does and publishes the result's fields.
  const ran = await executeTool(fn, null, false, nodeHashing('a-client-key'));
  const cmd = requestCommand(
    {
      ...emptyRequest('req-2', 'svc', 'TOOL_RESULT', 0),
      call_id: 'req-1',
      result_kind: ran.kind,
      result_code: ran.code,
      result_json: ran.resultJson,
      result_hash: 'whatever-the-client-says',
    },
    DEFAULT_POLICY,
    HASHING,
  );
  if (!cmd.ok) throw cmd.error;
  if (cmd.value.type !== 'CompleteToolCall') throw new Error(`not a result: ${cmd.value.type}`);
  return cmd.value.resultHash;
}

describe('one result, one hash', () => {
  const answers: [string, ToolFn, ResultKind][] = [
    [
      "ToolError('RETRYABLE', 'rate_limited')",
      () => {
        throw new ToolError('RETRYABLE', 'rate_limited');
      },
      'RETRYABLE',
    ],
    ['a plain value', () => ({ rows: [1, 2], next: null }), 'SUCCESS'],
    ['outcome.precondition', () => outcome.precondition('stale_version'), 'PRECONDITION'],
    ['outcome.pending', () => outcome.pending({ done: '40%' }), 'PENDING'],
  ];

  it.each(answers)('%s hashes alike through the library and through the service', async (_, fn, kind) => {
    const lib = await libraryHash(fn);
    expect(lib.kind).toBe(kind);
    expect(await serviceHash(fn)).toBe(lib.resultHash);
  });

  it('a rate limit is not a precondition failure with the same body, and a value hashes alike however returned', async () => {
    const limited = failedResult('RETRYABLE', 'rate_limited', HASHING);
    expect(limited.resultJson).toBe('{"error":"rate_limited"}');
    expect(limited.resultHash).not.toBe(
      resultHash('PRECONDITION', 'rate_limited', limited.resultJson, HASHING),
    );
    const plain = await executeTool(() => ({ a: 1 }), null, false, HASHING);
    const wrapped = await executeTool(() => outcome.success({ a: 1 }), null, false, HASHING);
    expect(wrapped.resultHash).toBe(plain.resultHash);
  });
});

describe('one mapping from a decision to a call result', () => {
  it('a cached call gets the recorded result of the operation it named, not of another one', () => {
    const s = {
      ...initialState('r'),
      status: 'RUNNING' as const,
      operations: {
        'pay:A': { status: 'completed' as const, callId: 'c1', resultJson: '{"paid":"A"}' },
        'pay:B': { status: 'completed' as const, callId: 'c2', resultJson: '{"paid":"B"}' },
      },
    };
    // A decision recorded before decisions carried their cached result.
    const d: EventOf<'GuardDecided'> = {
      type: 'GuardDecided',
      callId: 'c3',
      phase: 'before',
      decision: 'return_cached_success',
      rule: 'idempotency',
      message: 'Already done',
      evidence: { fingerprints: [], counts: {}, thresholds: {} },
      waitUntilMs: null,
      warning: null,
      resultJson: null,
    };
    const requested: RecordedEvent = {
      eventId: 'r/9',
      runId: 'r',
      seq: 9,
      atMs: 0,
      event: {
        type: 'ToolCallRequested',
        callId: 'c3',
        tool: 'pay',
        argsJson: '{}',
        fingerprint: 'f',
        operationKey: 'pay:B',
        sideEffect: true,
        costEstimateUsd: null,
        afterUserTurn: false,
        progressVersion: null,
        similarTo: null,
        similarity: null,
      },
    };
    const json = cachedResultJson(d, [requested], s);
    expect(json).toBe('{"paid":"B"}');
    expect(notRunResult({ ...d, resultJson: json }, s)).toEqual({
      status: 'cached',
      value: { paid: 'B' },
      message: 'Already done',
    });
  });
});
