import { type RunState, TERMINAL_STATES } from '../domain/index.js';
import type { RunSummary, RunsProjection } from '../projections/index.js';
import { esc, page } from './html.js';

/** One line of the run list: a run's summary with who ran it and where it stands. */
export interface RunListRow {
  readonly runId: string;
  readonly state: string;
  readonly rule: string | null;
  readonly tenant: string | null;
  readonly taskType: string | null;
  readonly stopStep: number | null;
  readonly executed: number;
  readonly total: number;
}

/** The run list's filters; an absent one matches every run. */
export interface RunFilters {
  readonly state?: string;
  readonly rule?: string;
  readonly tenant?: string;
}

/** The filters' fields, each a field of a row. */
const FILTERED: readonly (keyof RunFilters)[] = ['state', 'rule', 'tenant'];

/** A run's row, from its state and its summary. */
export const runListRow = (
  runId: string,
  st: Pick<RunState, 'status' | 'tenant' | 'taskType'> | undefined,
  s: RunSummary | undefined,
): RunListRow => ({
  runId,
  state: st?.status ?? 'NEW',
  rule: s?.rule ?? null,
  tenant: st?.tenant ?? null,
  taskType: st?.taskType ?? null,
  stopStep: s?.stop_step ?? null,
  executed: s?.calls_executed ?? 0,
  total: s?.calls_total ?? 0,
});

/** The list needs only the runs: a full Projections, or the ui's RunListIndex. */
export function runListRows(p: { readonly runs: RunsProjection }): RunListRow[] {
  return p.runs.allSummaries().map((s) => runListRow(s.run_id, p.runs.get(s.run_id), s));
}

/** The states a run can be listed in: fixed, so the form needs no read of every run. */
const STATES: readonly string[] = ['RUNNING', 'WAITING', ...TERMINAL_STATES];

const stateSelect = (chosen: string | undefined) =>
  `<label>state <select name="state"><option value="">any</option>${STATES.map(
    (o) => `<option${o === chosen ? ' selected' : ''}>${esc(o)}</option>`,
  ).join('')}</select></label>`;

/** Rules and tenants are open sets (a tool's code can be a stop's rule): typed, not picked. */
const textFilter = (name: keyof RunFilters, chosen: string | undefined) =>
  `<label>${name} <input name="${name}" value="${esc(chosen ?? '')}" size="16"></label>`;

/** Which slice of the (filtered) run list a page shows. */
export interface RunPaging {
  readonly limit: number;
  readonly offset: number;
}

export const DEFAULT_PAGE: RunPaging = { limit: 100, offset: 0 };
export const MAX_PAGE_LIMIT = 1000;

/** The link to another slice of the list, keeping the filters. */
const pageHref = (f: RunFilters, p: RunPaging) =>
  `/?${new URLSearchParams({ ...f, limit: String(p.limit), offset: String(p.offset) })}`;

/** One page of the run list: its rows, and how many runs match the filters and are there in all. */
export interface RunListView {
  readonly rows: readonly RunListRow[];
  readonly matching: number;
  readonly total: number;
}

/** The page `paging` of `all` under the filters. */
export function viewOf(all: readonly RunListRow[], f: RunFilters, paging: RunPaging): RunListView {
  const matching = all.filter((r) => FILTERED.every((k) => f[k] === undefined || r[k] === f[k]));
  return {
    rows: matching.slice(paging.offset, paging.offset + paging.limit),
    matching: matching.length,
    total: all.length,
  };
}

/** The run list with its filter form, one page of it; each run links to its timeline, `/run?id=`. */
export function runListPage(view: RunListView, f: RunFilters, paging: RunPaging): string {
  const { rows, matching, total } = view;
  const prev =
    paging.offset > 0
      ? ` <a rel="prev" href="${esc(pageHref(f, { ...paging, offset: Math.max(0, paging.offset - paging.limit) }))}">previous</a>`
      : '';
  const next =
    paging.offset + paging.limit < matching
      ? ` <a rel="next" href="${esc(pageHref(f, { ...paging, offset: paging.offset + paging.limit }))}">next</a>`
      : '';
  const shown =
    matching === 0 ? '' : `; ${paging.offset + 1}-${paging.offset + rows.length} shown${prev}${next}`;
  const form = `<form method="get" id="filters">${stateSelect(f.state)}${textFilter('rule', f.rule)}${textFilter(
    'tenant',
    f.tenant,
  )}<button type="submit">filter</button></form>`;
  const body = rows
    .map(
      (r) =>
        `<tr data-run-id="${esc(r.runId)}"><td><a href="${esc(`/run?id=${encodeURIComponent(r.runId)}`)}">${esc(r.runId)}</a></td><td><span class="badge state-${esc(r.state)}">${esc(r.state)}</span></td><td class="rule">${esc(r.rule ?? '')}</td><td>${esc(r.tenant ?? '-')}</td><td>${esc(r.taskType ?? '-')}</td><td>${r.stopStep ?? '-'}</td><td>${r.executed}/${r.total}</td></tr>`,
    )
    .join('\n');
  return page(
    'loopguard runs',
    `<h1>Runs</h1>${form}<p>${matching} of ${total} runs${shown}</p>
<table id="runs"><thead><tr><th>run</th><th>state</th><th>rule</th><th>tenant</th><th>task type</th><th>stop step</th><th>executed/total</th></tr></thead>
<tbody>${body}</tbody></table>`,
  );
}
