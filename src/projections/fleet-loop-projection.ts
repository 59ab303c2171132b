import type { EventOf, RecordedEvent } from '../domain/index.js';
import { intentOf } from '../domain/intent.js';

export interface FleetLoopOptions {
  /** Distinct runs hitting one signature within the window that make a detection. */
  readonly threshold: number;
  /** The sliding window, in event-time ms. */
  readonly windowMs: number;
}

/**
 * Five runs stopped the same way within ten minutes: more than chance, and few enough to catch a
 * broken tool or a bad prompt change within minutes of it reaching a fleet.
 */
export const DEFAULT_FLEET_LOOP: FleetLoopOptions = { threshold: 5, windowMs: 600_000 };

/** Decisions that refuse or end a run: a rule holding a run back, the thing that repeats across a fleet. */
const HOLDS_BACK = new Set(['refuse', 'stop_partial', 'stop']);

interface Hit {
  readonly runId: string;
  readonly tenant: string | null;
  readonly atMs: number;
}

interface Signature {
  readonly tool: string;
  readonly rule: string;
  readonly intent: string;
  hits: Hit[];
  /** Event time of the last detection: the next comes a window later at the earliest. */
  firedAtMs: number | null;
  detections: number;
}

/**
 * Groups the decisions that held runs back by loop signature (tool, rule, intent) across runs and
 * tenants, in a sliding window on event time, and yields a FleetLoopDetected when `threshold`
 * distinct runs hit one signature within `windowMs`. While the loop goes on it fires again once
 * per window. A pure fold: the same log gives the same detections, with the same event ids.
 */
export class FleetLoopProjection {
  private readonly requests = new Map<string, { callId: string; tool: string; argsJson: string }>();
  private readonly tenants = new Map<string, string | null>();
  private readonly signatures = new Map<string, Signature>();

  constructor(private readonly opts: FleetLoopOptions = DEFAULT_FLEET_LOOP) {}

  /** Folds one event of the runs topic; returns the detections it completes (none, almost always). */
  apply(rec: RecordedEvent): RecordedEvent<EventOf<'FleetLoopDetected'>>[] {
    const e = rec.event;
    if (e.type === 'RunStarted') this.tenants.set(rec.runId, e.tenant);
    else if (e.type === 'ToolCallRequested')
      this.requests.set(rec.runId, { callId: e.callId, tool: e.tool, argsJson: e.argsJson });
    else if (e.type === 'RunStopped') {
      this.requests.delete(rec.runId);
      this.tenants.delete(rec.runId);
    } else if (e.type === 'GuardDecided' && e.rule !== null && HOLDS_BACK.has(e.decision)) {
      const call = this.requests.get(rec.runId);
      if (call?.callId === e.callId) return this.hit(rec, call.tool, e.rule, intentOf(call.argsJson));
    }
    return [];
  }

  /**
   * Takes back a detection published earlier (read from the stops topic), so a watcher that starts
   * again neither repeats it within its window nor numbers the next one from 1.
   */
  restore(published: RecordedEvent): void {
    const e = published.event;
    if (e.type !== 'FleetLoopDetected') return;
    const sig = this.signature(e.tool, e.rule, e.intent);
    if (published.seq > sig.detections) {
      sig.detections = published.seq;
      sig.firedAtMs = e.lastAtMs;
    }
  }

  private signature(tool: string, rule: string, intent: string): Signature {
    const key = `${tool} ${rule} ${intent}`;
    let sig = this.signatures.get(key);
    if (sig === undefined) {
      sig = { tool, rule, intent, hits: [], firedAtMs: null, detections: 0 };
      this.signatures.set(key, sig);
    }
    return sig;
  }

  private hit(rec: RecordedEvent, tool: string, rule: string, intent: string) {
    const key = `${tool} ${rule} ${intent}`;
    const sig = this.signature(tool, rule, intent);
    // Partitions interleave runs, so a hit may be older than one already seen: the window ends at
    // the latest event time, and a hit that falls before its start is too late to count.
    // reduce, not a spread: a spread of many hits overflows the call stack (RangeError).
    const end = sig.hits.reduce((m, h) => Math.max(m, h.atMs), rec.atMs);
    const from = end - this.opts.windowMs;
    if (rec.atMs <= from) return [];
    sig.hits = sig.hits.filter((h) => h.atMs > from && h.runId !== rec.runId);
    sig.hits.push({ runId: rec.runId, tenant: this.tenants.get(rec.runId) ?? null, atMs: rec.atMs });
    if (sig.hits.length < this.opts.threshold) return [];
    if (sig.firedAtMs !== null && rec.atMs < sig.firedAtMs + this.opts.windowMs) return [];
    sig.firedAtMs = rec.atMs;
    sig.detections++;
    const tenants = [...new Set(sig.hits.flatMap((h) => (h.tenant === null ? [] : [h.tenant])))];
    return [
      {
        eventId: `fleet:${rec.eventId}`,
        runId: `fleet:${key}`,
        seq: sig.detections,
        atMs: rec.atMs,
        event: {
          type: 'FleetLoopDetected' as const,
          signature: key,
          tool,
          rule,
          intent,
          runIds: sig.hits.map((h) => h.runId),
          tenants,
          threshold: this.opts.threshold,
          windowMs: this.opts.windowMs,
          firstAtMs: sig.hits.reduce((m, h) => Math.min(m, h.atMs), rec.atMs),
          lastAtMs: rec.atMs,
        },
      },
    ];
  }
}
