import { writeFileSync } from 'node:fs';
import { join } from 'node:path';

const RESULT_SHA = '1cbd486d5ebb37b26f9f4a4072569383550aa16cb97eff0d73c37c37a2f03ed0';
export const FLEET_T0 = 1_764_000_000_000;

/**
 * A trace file of `looping` runs across two tenants that all loop on the same search (with
 * different request ids and pages: volatile and paging fields that must not split the signature),
 * 30 s apart, plus one healthy run. `first` numbers a later batch on from an earlier one (its runs
 * come later, and the healthy run is left out). Returns its path.
 */
export function writeLoopingFleet(dir: string, looping: number, first = 0): string {
  const lines = Array.from({ length: looping }, (_, i) => first + i).map((r) => ({
    run_id: `fleet/loop-${r}`,
    source: r % 2 === 0 ? 'acme' : 'globex',
    outcome: { success: false },
    calls: [0, 1, 2, 3].map((step) => ({
      step,
      tool: 'search_docs',
      args: { q: 'refund policy', page: r, request_id: `req-${r}-${step}` },
      result: "No document matches 'refund policy'.",
      result_sha256: RESULT_SHA,
      after_user_turn: step === 0,
      at_ms: FLEET_T0 + r * 30_000 + step * 1000,
    })),
  }));
  if (first === 0)
    lines.push({
      run_id: 'fleet/healthy',
      source: 'acme',
      outcome: { success: true },
      calls: [0, 1].map((step) => ({
        step,
        tool: 'get_order',
        args: { q: 'refund policy', page: step, request_id: `h-${step}` },
        result: `order page ${step}`,
        result_sha256: `${step}`.repeat(64),
        after_user_turn: step === 0,
        at_ms: FLEET_T0 + step * 1000,
      })),
    });
  const path = join(dir, `fleet-${first}.jsonl`);
  writeFileSync(path, `${lines.map((l) => JSON.stringify(l)).join('\n')}\n`);
  return path;
}
