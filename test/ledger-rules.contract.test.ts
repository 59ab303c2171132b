/**
 * One ledger semantics, one suite: the same given/when/then scenarios run against every ledger
 * view: the pure fold (which the Kafka ledger folds its topic with), the ledger projection, a run's
 * own RunState.operations, and the file ledger through its API.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { DomainEvent, RecordedEvent } from '../src/domain/events.js';
import { evolve } from '../src/domain/evolve.js';
import { foldLedger, type KeyEntry } from '../src/domain/ledger-rules.js';
import { initialState } from '../src/domain/run-state.js';
import { SqliteLedger } from '../src/log/embedded/sqlite-ledger.js';
import { MemoryLedger } from '../src/log/memory-ledger.js';
import type { Ledger } from '../src/ports/ledger.js';
import { LedgerProjection } from '../src/projections/ledger-projection.js';

type Fact = readonly [kind: 'claim' | 'complete' | 'in_doubt' | 'release', call: 'c1' | 'c2'];
interface Seen {
  readonly status: string;
  readonly callId: string;
  readonly resultJson?: string;
}
type View = { apply(facts: readonly Fact[]): Promise<Seen | null> };

const RUN = 'run-L';
const KEY = 'acme:charge:A1';
const result = (call: string) => `{"paid":"${call}"}`;

function event(kind: Fact[0], callId: string): DomainEvent {
  switch (kind) {
    case 'claim':
      return { type: 'OperationClaimed', operationKey: KEY, callId };
    case 'complete':
      return { type: 'OperationCompleted', operationKey: KEY, callId, resultJson: result(callId) };
    case 'in_doubt':
      return { type: 'OperationInDoubt', operationKey: KEY, callId, reason: 'timeout' };
    case 'release':
      return { type: 'OperationReleased', operationKey: KEY, callId, reason: 'refused' };
  }
}
const recorded = (facts: readonly Fact[]): RecordedEvent[] =>
  facts.map(([kind, call], i) => ({
    eventId: `e${i}`,
    runId: RUN,
    seq: i + 1,
    atMs: i,
    event: event(kind, call),
  }));

const seenOf = (e: KeyEntry | undefined): Seen | null =>
  e === undefined
    ? null
    : {
        status: e.status,
        callId: e.owner.callId,
        ...(e.status === 'completed' ? { resultJson: e.resultJson } : {}),
      };

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

/** The facts as calls of a Ledger adapter's API, and the key's entry it then reports. */
async function throughLedger(ledger: Ledger, facts: readonly Fact[]): Promise<Seen | null> {
  for (const [kind, callId] of facts) {
    const owner = { runId: RUN, callId };
    const step =
      kind === 'claim'
        ? ledger.claim(KEY, owner)
        : kind === 'complete'
          ? ledger.complete(KEY, owner, result(callId))
          : kind === 'in_doubt'
            ? ledger.markInDoubt(KEY, owner, 'timeout')
            : ledger.release(KEY, owner);
    // A refused fact is an error to the caller of an API, and changes nothing.
    await Promise.resolve(step).catch((e: { code?: string }) => {
      if (e.code !== 'not_claim_owner') throw e;
    });
  }
  const e = await ledger.get(KEY);
  return e === undefined
    ? null
    : {
        status: e.status,
        callId: e.owner.callId,
        ...(e.status === 'completed' ? { resultJson: e.resultJson } : {}),
      };
}

const VIEWS: Record<string, View> = {
  'pure fold (the Kafka ledger)': {
    apply: async (facts) => seenOf(recorded(facts).reduce<KeyEntry | undefined>(foldLedger, undefined)),
  },
  'ledger projection': {
    async apply(facts) {
      const p = new LedgerProjection();
      for (const r of recorded(facts)) p.apply(r);
      const e = p.get(KEY);
      return e === undefined
        ? null
        : {
            status: e.status,
            callId: e.callId,
            ...(e.status === 'completed' ? { resultJson: e.resultJson ?? '' } : {}),
          };
    },
  },
  'RunState.operations': {
    async apply(facts) {
      const s = recorded(facts).reduce(evolve, initialState(RUN));
      const e = s.operations[KEY];
      return e === undefined
        ? null
        : {
            status: e.status,
            callId: e.callId,
            ...(e.status === 'completed' ? { resultJson: e.resultJson ?? '' } : {}),
          };
    },
  },
  'file ledger': {
    apply(facts) {
      const dir = mkdtempSync(join(tmpdir(), 'lg-rules-'));
      dirs.push(dir);
      return throughLedger(SqliteLedger.open(dir), facts);
    },
  },
  'memory ledger': { apply: (facts) => throughLedger(new MemoryLedger(), facts) },
};

const SCENARIOS: readonly { name: string; given: readonly Fact[]; then: Seen | null }[] = [
  {
    name: 'a claim on a free key takes it',
    given: [['claim', 'c1']],
    then: { status: 'claimed', callId: 'c1' },
  },
  {
    name: 'the first claim wins',
    given: [
      ['claim', 'c1'],
      ['claim', 'c2'],
    ],
    then: { status: 'claimed', callId: 'c1' },
  },
  {
    name: 'the holder completes',
    given: [
      ['claim', 'c1'],
      ['complete', 'c1'],
    ],
    then: { status: 'completed', callId: 'c1', resultJson: result('c1') },
  },
  {
    name: 'a completion is final: no release, in doubt or claim changes it',
    given: [
      ['claim', 'c1'],
      ['complete', 'c1'],
      ['release', 'c1'],
      ['in_doubt', 'c1'],
      ['claim', 'c2'],
    ],
    then: { status: 'completed', callId: 'c1', resultJson: result('c1') },
  },
  {
    name: 'only the holder releases, marks in doubt or completes',
    given: [
      ['claim', 'c1'],
      ['release', 'c2'],
      ['in_doubt', 'c2'],
      ['complete', 'c2'],
    ],
    then: { status: 'claimed', callId: 'c1' },
  },
  {
    name: 'a released key is free for the next claim',
    given: [
      ['claim', 'c1'],
      ['release', 'c1'],
      ['claim', 'c2'],
    ],
    then: { status: 'claimed', callId: 'c2' },
  },
  {
    name: 'an in-doubt key holds against other claims and is settled by its holder',
    given: [
      ['claim', 'c1'],
      ['in_doubt', 'c1'],
      ['claim', 'c2'],
      ['complete', 'c1'],
    ],
    then: { status: 'completed', callId: 'c1', resultJson: result('c1') },
  },
  {
    name: 'an in-doubt key released by its holder is free',
    given: [
      ['claim', 'c1'],
      ['in_doubt', 'c1'],
      ['release', 'c1'],
    ],
    then: null,
  },
  { name: 'a completion without a claim changes nothing', given: [['complete', 'c1']], then: null },
];

for (const [name, view] of Object.entries(VIEWS)) {
  describe(`ledger rules: ${name}`, () => {
    for (const s of SCENARIOS) {
      it(`given ${s.given.map((f) => f.join(' ')).join(', ')}: ${s.name}`, async () => {
        expect(await view.apply(s.given)).toEqual(s.then);
      });
    }
  });
}
