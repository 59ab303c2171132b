/**
 * Bounded waits for tests that watch a process or a topic. Each fails with what it waited for and
 * what the watched part said (`log`), so a test that times out on a busy CI machine names the
 * step that did not come, instead of vitest's bare "Test timed out".
 */

export interface WaitOptions {
  /** Give up after this long (default 30 s). */
  readonly ms?: number;
  /** Poll this often (default 100 ms). */
  readonly every?: number;
  /** What the watched process or worker said so far: printed when the wait fails. */
  readonly log?: () => string;
}

const failure = (what: string, ms: number, log?: () => string): Error =>
  new Error(`not within ${ms} ms: ${what}${log ? `\n--- log:\n${log().slice(-4000)}` : ''}`);

/** Resolves with the first value of `get` that is neither undefined nor false. */
export async function until<T>(
  what: string,
  get: () => T | undefined | false | Promise<T | undefined | false>,
  { ms = 30_000, every = 100, log }: WaitOptions = {},
): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await get();
    if (v !== undefined && v !== false) return v;
    if (Date.now() > end) throw failure(what, ms, log);
    await new Promise((r) => setTimeout(r, every));
  }
}

/** `p`, or a failure naming `what` once `ms` have passed without it settling. */
export async function within<T>(
  what: string,
  p: Promise<T>,
  { ms = 30_000, log }: WaitOptions = {},
): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(failure(what, ms, log)), ms);
  });
  try {
    return await Promise.race([p, late]);
  } finally {
    clearTimeout(timer);
  }
}
