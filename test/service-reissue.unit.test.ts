/**
 * A REISSUE decided by a worker as the library's `run.reissue` decides it: the note goes to the
 * shared ledger under the keys the library would use, the ledger's refusal comes back as an error
 * decision (reissue_refused), a bad request names its field and reaches no ledger, a ledger that
 * does not answer fails closed, and nothing is recorded in the run. The same request decided
 * again (its first answer lost with a worker) gets its note back, not a refusal.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { DEFAULT_POLICY, diceSimilarity, MAX_TEXT_CHARS, redactText } from '../src/domain/index.js';
import { SqliteLedger } from '../src/log/embedded/sqlite-ledger.js';
import { ManualClock, RunActor } from '../src/machines/index.js';
import type { Ledger, ReissueNote } from '../src/ports/ledger.js';
import { nodeHashing } from '../src/runtime/node-hashing.js';
import { decideRequest } from '../src/service/decide-request.js';
import { emptyRequest, type WireRequest } from '../src/service/service-topics.js';

const HASHING = nodeHashing('test-key');
const CTX = { policy: DEFAULT_POLICY, hashing: HASHING, workerId: 'w1' };
/** A key with a secret in it: the ledger holds it redacted, as the library's ledgerKey does. */
const PAID = 'refund:password=hunter2x';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

/** A shared ledger in which `completed` ran once, and a started run; or a run never started. */
async function given(opts: { completed?: string[]; started?: boolean } = {}) {
  const dir = mkdtempSync(join(tmpdir(), 'loopguard-reissue-'));
  dirs.push(dir);
  const ledger = SqliteLedger.open(dir);
  for (const key of opts.completed ?? []) {
    const owner = { runId: 'other-run', callId: 'c1' };
    await ledger.claim(redactText(key, HASHING), owner);
    await ledger.complete(redactText(key, HASHING), owner, '{"refunded":10}');
  }
  const actor = new RunActor('run-1', { hashing: HASHING, similarity: diceSimilarity }, new ManualClock(0));
  if (opts.started ?? true)
    await decideRequest(actor, { ...reissue('s'), type: 'START_RUN' }, { ...CTX, ledger }, 0);
  return { ledger, actor };
}

function reissue(requestId: string, fields: Partial<WireRequest> = {}): WireRequest {
  return {
    ...emptyRequest(requestId, 'run-1', 'REISSUE', 0),
    operation_key: PAID,
    new_operation_key: `${PAID}#2`,
    reason: ' ordered twice ',
    approved_by: 'ops',
    ...fields,
  };
}

const when = async (ledger: Ledger, actor: RunActor, req: WireRequest, ctx = CTX, atMs = 7) =>
  (await decideRequest(actor, req, { ...ctx, ledger }, atMs)).decision;

describe('a REISSUE decided by a worker', () => {
  it('records its reason and approver redacted, as the library does', async () => {
    const { ledger, actor } = await given({ completed: [PAID] });
    const secret = 'sk-live-4eC39HqLyjWDarjtT1zdp7dc';
    const d = await when(
      ledger,
      actor,
      reissue('x9', { reason: `card password=hunter2x failed`, approved_by: `ops ${secret}` }),
    );
    expect(d).toMatchObject({ decision: 'recorded', error_code: null });
    const note = await ledger.reissuedFrom(redactText(`${PAID}#2`, HASHING));
    expect(note).toMatchObject({
      reason: redactText('card password=hunter2x failed', HASHING),
      approvedBy: redactText(`ops ${secret}`, HASHING),
    });
    const shown = `${d.message} ${d.result_json} ${JSON.stringify(note)}`;
    expect(shown).not.toContain('hunter2x');
    expect(shown).not.toContain(secret);
  });

  it('records the note in the ledger under the keys the library uses, and nothing in the run', async () => {
    const { ledger, actor } = await given({ completed: [PAID] });
    const seq = actor.state.seq;

    const d = await when(ledger, actor, reissue('x1'));

    const note: ReissueNote = {
      oldKey: redactText(PAID, HASHING),
      newKey: redactText(`${PAID}#2`, HASHING),
      reason: 'ordered twice',
      approvedBy: 'ops',
      by: { runId: 'run-1', callId: 'x1' },
    };
    expect(note.oldKey).not.toContain('hunter2x');
    expect(d).toMatchObject({ decision: 'recorded', status: 'RUNNING', seq, error_code: null });
    expect(JSON.parse(d.result_json as string)).toEqual(note);
    expect(await ledger.reissuedFrom(note.newKey)).toEqual(note);
    expect(await ledger.get(note.oldKey)).toMatchObject({ status: 'completed' });
    expect(actor.state.seq).toBe(seq);
  });

  const bad: [string, Partial<WireRequest>][] = [
    ['operation_key', { operation_key: null }],
    ['operation_key', { operation_key: '  ' }],
    ['new_operation_key', { new_operation_key: null }],
    ['new_operation_key', { new_operation_key: '' }],
    ['reason', { reason: null }],
    ['reason', { reason: 'x'.repeat(MAX_TEXT_CHARS + 1) }],
    ['run_id', { run_id: ' ' }],
  ];
  for (const [field, fields] of bad) {
    it(`refuses a bad ${field} with bad_request naming it, before the ledger hears of it`, async () => {
      const { ledger, actor } = await given({ completed: [PAID] });

      const d = await when(ledger, actor, reissue('x1', fields));

      expect(d).toMatchObject({ decision: 'error', error_code: 'bad_request', error_field: field });
      expect(d.message).toContain(field);
      expect(await ledger.reissuedFrom(redactText(`${PAID}#2`, HASHING))).toBeUndefined();
    });
  }

  it('refuses a run never started, naming run_id', async () => {
    const { ledger, actor } = await given({ completed: [PAID], started: false });

    const d = await when(ledger, actor, reissue('x1'));

    expect(d).toMatchObject({ decision: 'error', error_code: 'run_not_started', error_field: 'run_id' });
    expect(await ledger.reissuedFrom(redactText(`${PAID}#2`, HASHING))).toBeUndefined();
  });

  it("passes on the ledger's refusals as reissue_refused: nothing to reissue, no reason, a key in use", async () => {
    const { ledger, actor } = await given({ completed: [PAID, 'refund:7'] });

    const unknown = await when(ledger, actor, reissue('x1', { operation_key: 'never-ran' }));
    const blank = await when(ledger, actor, reissue('x2', { reason: '   ' }));
    const used = await when(ledger, actor, reissue('x3', { new_operation_key: 'refund:7' }));

    for (const d of [unknown, blank, used])
      expect(d).toMatchObject({ decision: 'error', error_code: 'reissue_refused' });
    expect(unknown.message).toMatch(/not in the ledger/);
    expect(blank.message).toMatch(/reason/);
    expect(used.message).toMatch(/already in use/);
  });

  it('answers the same request decided again with its note, and any other request onto that key with a refusal', async () => {
    const { ledger, actor } = await given({ completed: [PAID] });
    const first = await when(ledger, actor, reissue('x1'));

    // The worker that answered is gone: another decides the repeat from the ledger alone.
    const repeat = await when(ledger, actor, reissue('x1'), { ...CTX, workerId: 'w2' }, 9);
    const another = await when(ledger, actor, reissue('x2'));

    expect(first.decision).toBe('recorded');
    expect(repeat).toEqual({ ...first, worker: 'w2', decided_at_ms: 9 });
    expect(another).toMatchObject({ decision: 'error', error_code: 'reissue_refused' });
  });

  it('fails closed when the ledger does not answer: log_unavailable, nothing noted', async () => {
    const { ledger: files, actor } = await given({ completed: [PAID] });
    const down: Ledger = Object.assign(Object.create(files) as Ledger, {
      reissue: () => Promise.reject(new Error('connection refused')),
    });

    const d = await when(down, actor, reissue('x1'));

    expect(d).toMatchObject({ decision: 'error', error_code: 'log_unavailable' });
    expect(d.message).toMatch(/connection refused/);
    expect(await files.reissuedFrom(redactText(`${PAID}#2`, HASHING))).toBeUndefined();
  });
});
