import type { Evidence, StopReport } from '../domain/index.js';
import type { AuditDecision, AuditEntry, BudgetPoint, RunTimeline } from '../projections/index.js';
import { esc, page, since } from './html.js';

const W = 260;
const H = 90;

/**
 * One spend measure over the run's time as an inline SVG line, with its limit as a dashed line when
 * the policy has one: how close the run came to each budget, and when.
 */
function budgetChart(
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

const evidence = (e: Evidence) => {
  const kv = (r: Readonly<Record<string, number>>) => Object.entries(r).map(([k, v]) => `${k}=${v}`);
  const parts = [...kv(e.counts), ...kv(e.thresholds).map((t) => `limit ${t}`)];
  if (e.fingerprints.length > 0) parts.push(`fp ${e.fingerprints.map((f) => f.slice(0, 8)).join(', ')}`);
  return parts.length === 0 ? '' : `<br><code>${esc(parts.join(' · '))}</code>`;
};

const decision = (d: AuditDecision | null) =>
  d === null
    ? '-'
    : `<span class="badge">${esc(d.decision)}</span>${d.rule ? ` <span class="rule">${esc(d.rule)}</span>` : ''}${
        d.decision === 'execute' && !d.warning && d.rule === null
          ? ''
          : `<br>${esc(d.message)}${d.warning ? `<br>⚠ ${esc(d.warning)}` : ''}${evidence(d.evidence)}`
      }`;

const rowClass = (e: Extract<AuditEntry, { kind: 'call' }>) => {
  const b = e.before?.decision;
  if (b === 'return_cached_success') return 'cached';
  if (b !== undefined && b !== 'execute') return 'stopped';
  if (e.before?.warning || e.after?.warning) return 'warned';
  return '';
};

function callsTable(t: RunTimeline): string {
  const start = t.state.startedAtMs;
  let n = 0;
  const rows = t.entries.map((e) => {
    if (e.kind === 'note')
      return `<tr class="note"><td>${since(e.atMs - start)}</td><td colspan="5">[${esc(e.type)}] ${esc(e.text)}</td></tr>`;
    n++;
    const result =
      e.result === null
        ? 'not run'
        : `<span class="badge">${esc(e.result.kind)}</span>${e.result.code ? ` ${esc(e.result.code)}` : ''}<br><code>${esc(e.result.resultHash.slice(0, 12))}</code>`;
    return `<tr class="call ${rowClass(e)}" data-call-id="${esc(e.callId)}"><td>${since(e.atMs - start)}<br>#${n} <code>${esc(e.callId)}</code></td>
<td><b>${esc(e.tool)}</b><pre>${esc(e.argsJson)}</pre></td><td>${decision(e.before)}</td><td>${result}</td><td>${decision(e.after)}</td></tr>`;
  });
  return `<table id="timeline"><thead><tr><th>when</th><th>call</th><th>before</th><th>result</th><th>after</th></tr></thead>
<tbody>${rows.join('\n')}</tbody></table>`;
}

function reportSection(r: StopReport): string {
  const list = (label: string, xs: readonly string[]) =>
    xs.length === 0 ? '' : `<p><b>${label}</b>: ${xs.map((x) => `<code>${esc(x)}</code>`).join(', ')}</p>`;
  return `<section class="report" id="stop-report"><p><span class="badge state-${esc(r.terminalState)}">${esc(r.terminalState)}</span>
<span class="rule">${esc(r.guardReason)}</span>: ${esc(r.message)}</p>
${list('completed', r.completed)}${list('completed operations', r.completedOperations)}${list('in doubt', r.inDoubtOperations)}${list('gaps', r.gaps)}
<p><b>resume</b>: ${esc(r.resumeCondition)}; <b>next allowed</b>: ${esc(r.nextAllowedAction)}${r.unmetPrecondition ? `; <b>unmet precondition</b>: ${esc(r.unmetPrecondition)}` : ''}${r.lastSafeCheckpoint ? `; <b>last safe checkpoint</b>: ${esc(r.lastSafeCheckpoint)}` : ''}</p>
<p><b>spend</b>: ${r.spend.steps} steps, ${r.spend.toolCalls} tool calls, ${r.spend.tokens} tokens, $${r.spend.costUsd}, ${since(r.spend.elapsedMs)}${evidence(r.evidence)}</p></section>`;
}

function ledgerTable(t: RunTimeline): string {
  if (t.ledger.length === 0) return '<p>No side effects claimed.</p>';
  const rows = t.ledger.map(
    (l) =>
      `<tr><td><code>${esc(l.operationKey)}</code></td><td><span class="badge">${esc(l.status)}</span></td><td><code>${esc(l.callId)}</code></td><td>${esc(l.reason ?? '')}</td><td><pre>${esc(l.resultJson ?? '')}</pre></td></tr>`,
  );
  return `<table id="ledger"><thead><tr><th>operation key</th><th>status</th><th>call</th><th>reason</th><th>result</th></tr></thead><tbody>${rows.join('')}</tbody></table>`;
}

/** One run as a self-contained page: calls, decisions with rules and evidence, results, ledger, budgets, stop report. */
export function runPage(t: RunTimeline, opts: { backHref?: string } = {}): string {
  const s = t.state;
  const p = s.policy;
  const charts = [
    budgetChart('steps', t.budgets, (b) => b.steps, p?.maxSteps ?? null),
    budgetChart('tool calls', t.budgets, (b) => b.toolCalls, p?.maxToolCalls ?? null),
    budgetChart('tokens', t.budgets, (b) => b.tokens, p?.maxTokens ?? null),
    budgetChart('cost (USD)', t.budgets, (b) => b.costUsd, p?.maxCostUsd ?? null),
  ].join('\n');
  const body = `${opts.backHref ? `<p><a href="${esc(opts.backHref)}">← all runs</a></p>` : ''}
<h1>Run <code>${esc(t.runId)}</code> <span class="badge state-${esc(s.status)}" id="run-state">${esc(s.status)}</span></h1>
<p class="meta"><span>tenant <b>${esc(s.tenant ?? '-')}</b></span><span>task type <b>${esc(s.taskType ?? '-')}</b></span>
<span>${s.steps} steps, ${s.toolCalls} tool calls, ${s.tokens} tokens, $${s.costUsd}</span><span>progress version ${s.progressVersion}</span></p>
${s.report ? `<h2>Stop report</h2>${reportSection(s.report)}` : ''}
<h2>Calls and decisions</h2>${callsTable(t)}
<h2>Side effects and the ledger</h2>${ledgerTable(t)}
<h2>Budgets over time</h2><div class="charts">${charts}</div>`;
  return page(`loopguard: ${t.runId}`, body);
}
