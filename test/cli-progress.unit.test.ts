import { describe, expect, it } from 'vitest';
import { progressBar } from '../src/cli/progress-bar.js';
import { captureIo } from './support/capture-io.js';

/** A clock the test moves: progress is drawn from it, never from the wall. */
const clock = () => {
  let ms = 0;
  return { now: () => ms, advance: (by: number) => (ms += by) };
};

describe('progressBar', () => {
  it('on a terminal draws a bar, items per second and the time left, redrawn at most every 100 ms', () => {
    const io = captureIo({ tty: true });
    const c = clock();
    const bar = progressBar(io, 'rebuilding', 'events', 10_000, c.now);
    c.advance(1000);
    bar.update(2500);
    c.advance(50);
    bar.update(2600); // within 100 ms of the last draw: not drawn
    c.advance(950);
    bar.update(5000);
    bar.end();
    const frames = io
      .statusLine()
      .split('\r')
      .filter((f) => f !== '');
    expect(frames).toEqual([
      'rebuilding [######------------------] 25% 2,500/10,000 events, 2,500 events/s, ETA 3 s\x1b[K',
      'rebuilding [############------------] 50% 5,000/10,000 events, 2,500 events/s, ETA 2 s\x1b[K',
      'rebuilding [############------------] 50% 5,000/10,000 events, 2,500 events/s, ETA 2 s\x1b[K\n',
    ]);
  });

  it('without a total shows the count and the rate, no bar', () => {
    const io = captureIo({ tty: true });
    const c = clock();
    const bar = progressBar(io, 'reading', 'events', null, c.now);
    c.advance(2000);
    bar.update(5000);
    expect(io.statusLine()).toBe('\rreading 5,000 events, 2,500 events/s\x1b[K');
  });

  it('on a pipe draws nothing at all', () => {
    const io = captureIo({ tty: false });
    const bar = progressBar(io, 'replaying', 'runs', 10);
    bar.update(5);
    bar.end();
    expect(io.statusLine() + io.stderr() + io.stdout()).toBe('');
  });
});
