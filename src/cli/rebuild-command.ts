import type { Projections } from '../projections/index.js';
import type { Io } from './io.js';
import { progressBar } from './progress-bar.js';
import { formatSummaries } from './replay-command.js';

/**
 * `loopguard rebuild [--json]`: the runs projection, per run, in the same shape replay printed.
 * `rebuild` folds the log the command was pointed at (embedded or Kafka).
 */
export async function rebuildCommand(
  rebuild: (onProgress?: (n: number) => void) => Promise<Projections>,
  opts: { json?: boolean; total?: number | null },
  io: Io,
): Promise<number> {
  const started = performance.now();
  const bar = progressBar(io, 'rebuilding', 'events', opts.total ?? null);
  const p = await rebuild((n) => bar.update(n));
  bar.end();
  const seconds = (performance.now() - started) / 1000;
  const perSecond = Math.round(p.events / Math.max(seconds, 1e-6));
  const summaries = p.runs.allSummaries();
  if (opts.json) {
    for (const s of summaries) io.out(`${JSON.stringify(s)}\n`);
    io.out(
      `${JSON.stringify({ runs: summaries.length, events: p.events, stops: p.stops.newestFirst().length, ledger: Object.keys(p.ledger.snapshot()).length, events_per_s: perSecond })}\n`,
    );
  } else {
    io.out(formatSummaries(summaries));
    io.out(`rebuilt ${p.events} events in ${seconds.toFixed(2)} s (${perSecond} events/s)\n`);
  }
  return 0;
}
