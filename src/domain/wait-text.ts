/**
 * A wait as a person or the model reads it: how long from the decision's own time, and until
 * when in UTC; never a raw epoch number. Both come from the times the decision was given (the
 * injected clock), so replaying a run writes the same words.
 */

/** "250 ms", "2.5 s", "1.5 min", "2 h": one decimal at most, the unit that keeps it short. */
export function durationText(ms: number): string {
  const d = Math.max(0, ms);
  const short = (n: number) => String(Math.round(n * 10) / 10);
  if (d < 1000) return `${Math.round(d)} ms`;
  if (d < 60_000) return `${short(d / 1000)} s`;
  if (d < 3_600_000) return `${short(d / 60_000)} min`;
  return `${short(d / 3_600_000)} h`;
}

/** The instant in ISO 8601 UTC; a number no date can hold is named as what it is. */
export function instantText(ms: number): string {
  const at = new Date(ms);
  return Number.isNaN(at.getTime()) ? `epoch ms ${ms}` : at.toISOString();
}

/** "in 2.5 s (at 2026-12-01T22:30:02.500Z)": the wait that ends at `untilMs`, seen at `atMs`. */
export const waitText = (untilMs: number, atMs: number): string =>
  `in ${durationText(untilMs - atMs)} (at ${instantText(untilMs)})`;
