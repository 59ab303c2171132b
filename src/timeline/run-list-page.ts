import type { Projections } from '../projections/index.js';
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

export function runListRows(p: Projections): RunListRow[] {
  return p.runs.allSummaries().map((s) => {
    const st = p.runs.get(s.run_id);
    return {
      runId: s.run_id,
      state: st?.status ?? 'NEW',
      rule: s.rule,
      tenant: st?.tenant ?? null,
      taskType: st?.taskType ?? null,
      stopStep: s.stop_step,
      executed: s.calls_executed,
      total: s.calls_total,
    };
  });
}

export function filterRuns(rows: readonly RunListRow[], f: RunFilters): RunListRow[] {
  return rows.filter(
    (r) =>
      (f.state === undefined || r.state === f.state) &&
      (f.rule === undefined || r.rule === f.rule) &&
      (f.tenant === undefined || r.tenant === f.tenant),
  );
}

const select = (name: keyof RunFilters, values: readonly (string | null)[], chosen: string | undefined) => {
  const options = [...new Set(values.filter((v): v is string => v !== null))].sort();
  return `<label>${name} <select name="${name}"><option value="">any</option>${options
    .map((o) => `<option${o === chosen ? ' selected' : ''}>${esc(o)}</option>`)
    .join('')}</select></label>`;
};

/** The run list with its filter form; each run links to `runHref(runId)`. */
export function runListPage(
  all: readonly RunListRow[],
  f: RunFilters,
  runHref: (runId: string) => string,
): string {
  const rows = filterRuns(all, f);
  const form = `<form method="get" id="filters">${select(
    'state',
    all.map((r) => r.state),
    f.state,
  )}${select(
    'rule',
    all.map((r) => r.rule),
    f.rule,
  )}${select(
    'tenant',
    all.map((r) => r.tenant),
    f.tenant,
  )}<button type="submit">filter</button></form>`;
  const body = rows
    .map(
      (r) =>
        `<tr data-run-id="${esc(r.runId)}"><td><a href="${esc(runHref(r.runId))}">${esc(r.runId)}</a></td><td><span class="badge state-${esc(r.state)}">${esc(r.state)}</span></td><td class="rule">${esc(r.rule ?? '')}</td><td>${esc(r.tenant ?? '-')}</td><td>${esc(r.taskType ?? '-')}</td><td>${r.stopStep ?? '-'}</td><td>${r.executed}/${r.total}</td></tr>`,
    )
    .join('\n');
  return page(
    'loopguard runs',
    `<h1>Runs</h1>${form}<p>${rows.length} of ${all.length} runs</p>
<table id="runs"><thead><tr><th>run</th><th>state</th><th>rule</th><th>tenant</th><th>task type</th><th>stop step</th><th>executed/total</th></tr></thead>
<tbody>${body}</tbody></table>`,
  );
}
