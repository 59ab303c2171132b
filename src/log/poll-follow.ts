import type { StoredRecord } from './event-log.js';

export interface PollSource {
  read(fromOffset: number): Promise<readonly StoredRecord[]>;
  /** Records past `next` exist, or the log closed: stop waiting. */
  hasMore(next: number): boolean;
  subscribe(wake: () => void): () => void;
  readonly pollMs: number;
  closed(): boolean;
}

/** The followers waiting for appends, per topic: a local log wakes them on append and on close. */
export class Wakers {
  private readonly byTopic = new Map<string, Set<() => void>>();

  subscribe(topic: string, wake: () => void): () => void {
    const set = this.byTopic.get(topic) ?? new Set();
    this.byTopic.set(topic, set);
    set.add(wake);
    return () => set.delete(wake);
  }

  wake(topic: string): void {
    for (const wake of this.byTopic.get(topic) ?? []) wake();
  }

  wakeAll(): void {
    for (const set of this.byTopic.values()) for (const wake of set) wake();
  }
}

/**
 * The follow loop of the local logs: deliver what is there, then sleep until an append wakes the
 * follower (or the poll interval passes, for appends by another process), until aborted or closed.
 */
export async function pollFollow(
  src: PollSource,
  fromOffset: number,
  onRecord: (r: StoredRecord) => Promise<void> | void,
  signal: AbortSignal,
): Promise<void> {
  let next = fromOffset;
  while (!signal.aborted && !src.closed()) {
    const batch = await src.read(next);
    for (const r of batch) {
      if (signal.aborted) return;
      await onRecord(r);
      next = r.offset + 1;
    }
    if (batch.length === 0) await waitForWake(src, next, signal);
  }
}

/**
 * Waits until an append wakes the follower, the poll interval passes or `signal` aborts. `hasMore`
 * is asked after subscribing, so an append between the caller's read and the subscription counts.
 */
function waitForWake(src: PollSource, next: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const done = (): void => {
      clearTimeout(timer);
      unsubscribe();
      signal.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, src.pollMs);
    const unsubscribe = src.subscribe(done);
    signal.addEventListener('abort', done, { once: true });
    if (src.hasMore(next) || signal.aborted) done();
  });
}
