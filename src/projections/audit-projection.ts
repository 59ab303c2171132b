import { type EventOf, type RecordedEvent, waitText } from '../domain/index.js';

/** A guard decision as the audit shows it: what was decided, by which rule, on what evidence. */
export type AuditDecision = Pick<
  EventOf<'GuardDecided'>,
  'decision' | 'rule' | 'message' | 'evidence' | 'warning'
>;

export interface AuditCall
  extends Pick<EventOf<'ToolCallRequested'>, 'callId' | 'tool' | 'argsJson' | 'fingerprint'> {
  readonly atMs: number;
  readonly before: AuditDecision | null;
  readonly result: Pick<EventOf<'ToolCallCompleted'>, 'kind' | 'code' | 'resultHash'> | null;
  readonly after: AuditDecision | null;
}

/** Anything in a run's timeline that is not a call: start, warnings, waits, stops, resumes, checkpoints. */
interface AuditNote {
  readonly atMs: number;
  readonly type: string;
  readonly text: string;
}

export type AuditEntry = ({ readonly kind: 'call' } & AuditCall) | ({ readonly kind: 'note' } & AuditNote);

const decisionOf = (e: EventOf<'GuardDecided'>): AuditDecision => ({
  decision: e.decision,
  rule: e.rule,
  message: e.message,
  evidence: e.evidence,
  warning: e.warning,
});

/** Per run, every request with its decision, the rule and evidence, and the result: "which rule blocked which call". */
export class AuditProjection {
  private readonly timelines = new Map<string, AuditEntry[]>();

  apply(rec: RecordedEvent): void {
    const t = this.timelines.get(rec.runId) ?? [];
    this.timelines.set(rec.runId, t);
    const e = rec.event;
    const update = (callId: string, patch: Partial<AuditCall>) => {
      const i = t.findLastIndex((x) => x.kind === 'call' && x.callId === callId);
      const entry = t[i];
      if (entry?.kind === 'call') t[i] = { ...entry, ...patch };
    };
    const note = (type: string, text: string) => t.push({ kind: 'note', atMs: rec.atMs, type, text });
    switch (e.type) {
      case 'ToolCallRequested':
        t.push({
          kind: 'call',
          callId: e.callId,
          atMs: rec.atMs,
          tool: e.tool,
          argsJson: e.argsJson,
          fingerprint: e.fingerprint,
          before: null,
          result: null,
          after: null,
        });
        break;
      case 'GuardDecided':
        if (e.callId === null) note('decision', `${e.decision} ${e.rule ?? ''}: ${e.message}`);
        else update(e.callId, e.phase === 'before' ? { before: decisionOf(e) } : { after: decisionOf(e) });
        break;
      case 'ToolCallCompleted':
        update(e.callId, { result: { kind: e.kind, code: e.code, resultHash: e.resultHash } });
        break;
      case 'RunStarted':
        note(
          'started',
          `task type ${e.taskType ?? '-'}, tenant ${e.tenant ?? '-'}, progress version ${e.progressVersion}`,
        );
        break;
      case 'BudgetWarning':
        note('budget_warning', e.message);
        break;
      case 'RunWaiting':
        note('waiting', `${e.reason} ${waitText(e.untilMs, rec.atMs)}`);
        break;
      case 'RunStopped':
        note('stopped', `${e.report.terminalState} (${e.report.guardReason}): ${e.report.message}`);
        break;
      case 'RunResumed':
        note('resumed', `${e.preconditionChange} (approved by ${e.approvedBy ?? 'nobody recorded'})`);
        break;
      case 'CheckpointRecorded':
        note('checkpoint', `${e.checkpointId} at progress version ${e.progressVersion}`);
        break;
      case 'ModelUsageRecorded':
        note('model_usage', `${e.tokensIn + e.tokensOut} tokens, $${e.costUsd}`);
        break;
      case 'OperationClaimed':
      case 'OperationCompleted':
      case 'OperationInDoubt':
      case 'OperationReleased':
        note(e.type, `${e.operationKey} (call ${e.callId})`);
        break;
    }
  }

  timeline(runId: string): readonly AuditEntry[] | undefined {
    return this.timelines.get(runId);
  }

  snapshot(): Record<string, readonly AuditEntry[]> {
    return Object.fromEntries(this.timelines);
  }
}
