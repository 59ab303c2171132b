import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openEmbeddedStore } from '../../src/cli/open-store.js';
import type { AuditCall } from '../../src/projections/index.js';
import { createGuard, type Guard, type GuardedRun, type GuardToolsOptions } from '../../src/runtime/index.js';

/**
 * The scene every adapter test plays with its framework's real agent loop: a model that pays for
 * order A1 twice and then asks for the same search again and again. The tools count what really
 * happened; the audit is read back the way `loopguard audit` reads it.
 */
export interface LoopingShop {
  readonly guard: Guard;
  readonly run: GuardedRun;
  /** How many times the card was really charged. */
  readonly charges: () => number;
  readonly searches: () => number;
  readonly chargeCard: (args: { order: string; amount: number }) => { payment_id: string; amount: number };
  readonly searchDocs: (args: { q: string }) => string;
  readonly guardOptions: GuardToolsOptions;
  /** Closes the guard and rebuilds the run's audit from the data dir, as the CLI does. */
  readonly auditCalls: () => Promise<readonly AuditCall[]>;
  readonly cleanup: () => Promise<void>;
}

export const CHARGE = { order: 'A1', amount: 30 } as const;
export const SEARCH = { q: 'refund policy' } as const;

export async function openLoopingShop(runId: string): Promise<LoopingShop> {
  const dataDir = await mkdtemp(join(tmpdir(), 'lg-adapter-'));
  const guard = await createGuard({ dataDir, policy: { tools: { charge_card: { sideEffect: true } } } });
  const run = await guard.startRun({ runId, tenant: 'acme' });
  let charges = 0;
  let searches = 0;
  return {
    guard,
    run,
    charges: () => charges,
    searches: () => searches,
    chargeCard: (args) => {
      charges++;
      return { payment_id: `p-${charges}`, amount: args.amount };
    },
    searchDocs: (args) => {
      searches++;
      return `no document matches ${JSON.stringify(args.q)}`;
    },
    guardOptions: {
      operationKey: (tool, args) =>
        tool === 'charge_card' ? `acme:charge:${String(args.order)}` : undefined,
    },
    auditCalls: async () => {
      await guard.close();
      const store = await openEmbeddedStore(dataDir);
      try {
        const timeline = (await store.rebuild()).audit.timeline(runId) ?? [];
        return timeline.flatMap((e) => (e.kind === 'call' ? [e] : []));
      } finally {
        await store.close();
      }
    },
    cleanup: () => rm(dataDir, { recursive: true, force: true }),
  };
}
