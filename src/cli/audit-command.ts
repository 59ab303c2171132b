import { writeFileSync } from 'node:fs';
import { type Evidence, LoopguardError, type RecordedEvent } from '../domain/index.js';
import { type AuditEntry, RunTimelineFold, type RunTreeNode } from '../projections/index.js';
import { runPage } from '../timeline/run-page.js';
import type { Io } from './io.js';
import { jsonLine } from './json-output.js';

const fmtEvidence = (e: Evidence) => {
  const kv = (r: Readonly<Record<string, number>>) => Object.entries(r).map(([k, v]) => `${k}=${v}`);
  const parts = [...kv(e.counts), ...kv(e.thresholds)];
  if (e.fingerprints.length > 0) parts.push(`fp=${e.fingerprints.map((f) => f.slice(0, 8)).join(',')}`);
  return parts.join(' ');
};

/** A run's timeline, one line per call or note: which rule decided which call, on what evidence. */
function formatAudit(runId: string, timeline: readonly AuditEntry[]): string {
  const lines = [`audit of ${runId}`];
  for (const t of timeline) {
    if (t.kind === 'note') {
      lines.push(`  [${t.type}] ${t.text}`);
      continue;
    }
    const args = t.argsJson.length > 70 ? `${t.argsJson.slice(0, 67)}...` : t.argsJson;
    lines.push(`  ${t.callId}  ${t.tool} ${args}`);
    if (t.before !== null) {
      lines.push(
        `      before: ${t.before.decision}${t.before.rule ? ` by ${t.before.rule}` : ''}${t.before.decision === 'execute' ? '' : ` (${fmtEvidence(t.before.evidence)})`}`,
      );
      if (t.before.decision !== 'execute' || t.before.warning) lines.push(`        ${t.before.message}`);
    }
    if (t.result !== null)
      lines.push(
        `      result: ${t.result.kind}${t.result.code ? ` ${t.result.code}` : ''} ${t.result.resultHash.slice(0, 12)}`,
      );
    if (t.after !== null && (t.after.decision !== 'continue' || t.after.warning)) {
      lines.push(
        `      after: ${t.after.decision}${t.after.rule ? ` by ${t.after.rule}` : ''} (${fmtEvidence(t.after.evidence)})`,
      );
      lines.push(`        ${t.after.message}`);
    }
  }
  return `${lines.join('\n')}\n`;
}

/** The supervisor tree a run belongs to, one line per run, indented by depth; the audited run marked. */
function formatTree(runId: string, tree: RunTreeNode): string {
  const lines = ['tree'];
  const walk = (n: RunTreeNode, depth: number) => {
    lines.push(`  ${'  '.repeat(depth)}${n.runId}  ${n.state}${n.runId === runId ? '  <- this run' : ''}`);
    for (const c of n.children) walk(c, depth + 1);
  };
  walk(tree, 0);
  return `${lines.join('\n')}\n`;
}

/** One error for every way of asking audit for a run the log does not hold (the CLI prints its code). */
const unknownRun = (runId: string, where: string) =>
  new LoopguardError('unknown_run', `audit: no run ${runId} in ${where}`, { details: { runId } });

export function auditOutput(
  runId: string,
  timeline: readonly AuditEntry[] | undefined,
  json: boolean,
  io: Io,
  tree?: RunTreeNode,
): number {
  if (timeline === undefined) throw unknownRun(runId, 'this data dir');
  // A run on its own has no tree worth printing; a supervisor or a sub-agent shows where it stands.
  const family = tree !== undefined && (tree.runId !== runId || tree.children.length > 0) ? tree : undefined;
  if (json) io.out(jsonLine({ run_id: runId, timeline, ...(family ? { tree: family } : {}) }));
  else io.out(formatAudit(runId, timeline) + (family ? formatTree(runId, family) : ''));
  return 0;
}

/** `loopguard audit RUN_ID --html FILE`: the run's timeline as one self-contained HTML file. */
export async function auditHtmlCommand(
  runId: string,
  file: string,
  scan: (apply: (rec: RecordedEvent) => void) => Promise<number>,
  io: Io,
): Promise<number> {
  const fold = new RunTimelineFold(runId);
  await scan((rec) => fold.apply(rec));
  const timeline = fold.timeline();
  if (timeline === undefined) throw unknownRun(runId, 'this log');
  try {
    writeFileSync(file, runPage(timeline));
  } catch (e) {
    throw new LoopguardError('output_unwritable', `audit --html ${file}: ${(e as Error).message}`, {
      details: { file },
    });
  }
  io.out(`wrote ${file}\n`);
  return 0;
}
