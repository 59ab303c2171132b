/** Several trials of one figure: the median is reported, min and max say how much it moved. */
export interface Trials {
  readonly median: number;
  readonly min: number;
  readonly max: number;
  readonly values: readonly number[];
}

export function trials(values: readonly number[]): Trials {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  const median =
    sorted.length % 2 === 1
      ? (sorted[mid] as number)
      : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
  return { median, min: sorted[0] ?? Number.NaN, max: sorted.at(-1) ?? Number.NaN, values: sorted };
}

/** `name: median (min .. max over n trials)`, for the bench log. */
export const describeTrials = (name: string, unit: string, t: Trials): string =>
  `  ${name}: median ${fmt(t.median)} ${unit} (min ${fmt(t.min)}, max ${fmt(t.max)} over ${t.values.length} trials)`;

const fmt = (n: number): string => (Math.abs(n) < 10 ? n.toFixed(3) : n.toFixed(1));
