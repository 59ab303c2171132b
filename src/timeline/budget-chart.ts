import type { BudgetPoint } from '../projections/index.js';
import { esc } from './html.js';

const W = 260;
const H = 90;

/**
 * One spend measure over the run's time as an inline SVG line, with its limit as a dashed line when
 * the policy has one: how close the run came to each budget, and when.
 */
export function budgetChart(
  label: string,
  points: readonly BudgetPoint[],
  value: (p: BudgetPoint) => number,
  limit: number | null,
): string {
  const first = points[0]?.atMs ?? 0;
  const span = Math.max(1, (points.at(-1)?.atMs ?? first) - first);
  const top = Math.max(limit ?? 0, ...points.map(value), 1e-9);
  const x = (p: BudgetPoint) => ((p.atMs - first) / span) * (W - 10) + 5;
  const y = (v: number) => H - 5 - (v / top) * (H - 20);
  const path = points.map((p) => `${x(p).toFixed(1)},${y(value(p)).toFixed(1)}`).join(' ');
  const last = points.at(-1);
  const shown = last === undefined ? 0 : value(last);
  const fmt = (v: number) => (Number.isInteger(v) ? String(v) : v.toFixed(4));
  const limitLine =
    limit === null
      ? ''
      : `<line x1="5" x2="${W - 5}" y1="${y(limit)}" y2="${y(limit)}" stroke="#c33" stroke-dasharray="4 3"/>`;
  return `<figure class="chart"><svg width="${W}" height="${H}" role="img" aria-label="${esc(label)} over time">
${limitLine}<polyline fill="none" stroke="#1f5fbf" stroke-width="2" points="${path}"/></svg>
<figcaption>${esc(label)}: ${fmt(shown)}${limit === null ? ' (no limit)' : ` of ${fmt(limit)}`}</figcaption></figure>`;
}
