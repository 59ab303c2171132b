import type { Clock } from './run-actor.js';

/** A clock that moves only when told: replays and tests get the same times every run. */
export class ManualClock implements Clock {
  constructor(private t = 0) {}
  now(): number {
    return this.t;
  }
  set(ms: number): void {
    this.t = Math.max(this.t, ms);
  }
  advance(ms: number): void {
    this.t += ms;
  }
}
