import type { Io } from './io.js';

export interface Progress {
  /** `done` items so far (absolute, not a delta). */
  update(done: number): void;
  /** Draws the final state and ends the line. */
  end(): void;
}

const NONE: Progress = { update: () => {}, end: () => {} };
const REDRAW_MS = 100;
const WIDTH = 24;

const count = (n: number) => Math.round(n).toLocaleString('en-US');
const duration = (s: number) =>
  s < 90 ? `${Math.ceil(s)} s` : `${Math.floor(s / 60)} min ${Math.round(s % 60)} s`;

/**
 * A progress line for long work (replay, rebuild, whatif): items per second and, with a known
 * total, a bar and the time left. Drawn on a terminal only; on a pipe it is nothing at all, so
 * output meant for another program stays clean.
 */
export function progressBar(
  io: Io,
  label: string,
  unit: string,
  total: number | null,
  nowMs: () => number = () => performance.now(),
): Progress {
  if (!io.isTty) return NONE;
  const started = nowMs();
  let drawn = Number.NEGATIVE_INFINITY;
  let last = 0;
  const draw = (done: number) => {
    const seconds = Math.max((nowMs() - started) / 1000, 1e-3);
    const rate = done / seconds;
    const speed = `${unit}, ${count(rate)} ${unit}/s`;
    // \r returns to the line's start, ESC[K clears what a longer earlier line left behind.
    if (total === null || total <= 0) {
      io.status(`\r${label} ${count(done)} ${speed}\x1b[K`);
      return;
    }
    const f = Math.min(1, done / total);
    const filled = Math.round(f * WIDTH);
    const bar = `[${'#'.repeat(filled)}${'-'.repeat(WIDTH - filled)}] ${Math.floor(f * 100)}%`;
    const eta = rate > 0 ? duration((total - done) / rate) : '?';
    io.status(`\r${label} ${bar} ${count(done)}/${count(total)} ${speed}, ETA ${eta}\x1b[K`);
  };
  return {
    update(done) {
      last = done;
      const now = nowMs();
      if (now - drawn < REDRAW_MS) return;
      drawn = now;
      draw(done);
    },
    end() {
      draw(last);
      io.status('\n');
    },
  };
}
