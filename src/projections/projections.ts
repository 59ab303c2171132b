import type { RecordedEvent } from '../domain/index.js';
import { AuditProjection } from './audit-projection.js';
import { LedgerProjection } from './ledger-projection.js';
import { ProgressProjection } from './progress-projection.js';
import { RunTreeProjection } from './run-tree-projection.js';
import { RunsProjection } from './runs-projection.js';
import { StopsProjection } from './stops-projection.js';

/** Every projection, fed from one stream of recorded events (live, or replayed from offset 0). */
export class Projections {
  readonly runs = new RunsProjection();
  readonly ledger = new LedgerProjection();
  readonly progress = new ProgressProjection(this.runs);
  readonly stops = new StopsProjection();
  readonly audit = new AuditProjection();
  readonly tree = new RunTreeProjection(this.runs);
  events = 0;
  /** Redelivered records dropped (an append that timed out and landed anyway, a consumer replaying a batch). */
  duplicates = 0;

  apply(rec: RecordedEvent): void {
    // A run has one writer and gapless sequence numbers, so a sequence number already folded is a redelivery.
    if (rec.seq <= (this.runs.get(rec.runId)?.seq ?? 0)) {
      this.duplicates++;
      return;
    }
    this.runs.apply(rec);
    this.ledger.apply(rec);
    this.stops.apply(rec);
    this.audit.apply(rec);
    this.tree.apply(rec);
    this.events++;
  }

  applyAll(records: Iterable<RecordedEvent>): this {
    for (const r of records) this.apply(r);
    return this;
  }

  /** Plain data of every projection, for equality checks between live and rebuilt. */
  snapshot() {
    return {
      runs: this.runs.snapshot(),
      summaries: this.runs.allSummaries(),
      ledger: this.ledger.snapshot(),
      progress: this.progress.snapshot(),
      stops: this.stops.newestFirst(),
      audit: this.audit.snapshot(),
      tree: this.tree.snapshot(),
    };
  }
}
