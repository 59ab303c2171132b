/**
 * The contained fix of kafkajs's request queue: on the kafkajs this repo installs it applies, an
 * idle queue arms no timer (no negative delay, no 1 ms wake-up loop), and a request held back by
 * a broker throttle is still sent when the throttle ends.
 */
import { createRequire } from 'node:module';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { fixKafkajsRequestQueue } from '../src/log/kafka/kafkajs-request-queue.js';

interface Queue {
  pending: unknown[];
  throttledUntil: number;
  throttleCheckTimeoutId: unknown;
  maybeThrottle(ms: number): void;
  scheduleCheckPendingRequests(): void;
  checkPendingRequests(): void;
  destroy(): void;
}
const RequestQueue = createRequire(import.meta.url)('kafkajs/src/network/requestQueue/index.js') as new (
  o: object,
) => Queue;

const logger = { debug: () => {}, info: () => {}, warn: () => {}, error: () => {} };
const queue = () =>
  new RequestQueue({
    maxInFlightRequests: 1,
    requestTimeout: 30_000,
    enforceRequestTimeout: false,
    clientId: 'test',
    broker: 'b:1',
    logger,
  });

afterEach(() => {
  vi.useRealTimers();
});

describe('fixKafkajsRequestQueue', () => {
  it('applies to the installed kafkajs, once', () => {
    expect(['applied', 'already']).toContain(fixKafkajsRequestQueue());
    expect(fixKafkajsRequestQueue()).toBe('already');
  });

  it('an idle queue arms no timer after a response', () => {
    fixKafkajsRequestQueue();
    const q = queue();
    q.checkPendingRequests(); // what kafkajs runs after every response
    expect(q.throttleCheckTimeoutId).toBeNull();
    q.destroy();
  });

  it('a request held back by a throttle is checked again when the throttle ends', () => {
    fixKafkajsRequestQueue();
    vi.useFakeTimers();
    const q = queue();
    const send = vi.fn();
    q.maybeThrottle(50);
    q.pending.push({ send, expectResponse: true });
    q.scheduleCheckPendingRequests();
    vi.advanceTimersByTime(49);
    expect(send).not.toHaveBeenCalled();
    vi.advanceTimersByTime(1);
    expect(send).toHaveBeenCalledTimes(1);
    expect(q.pending).toEqual([]);
    expect(q.throttleCheckTimeoutId).toBeNull();
    q.destroy();
  });
});
