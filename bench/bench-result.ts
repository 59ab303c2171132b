/** One figure of `npm run bench`: a value and the baseline it is judged against, measured in the same run. */
export interface BenchResult {
  readonly name: string;
  readonly unit: string;
  readonly value: number;
  readonly baseline: string;
  readonly baseline_value: number;
  /** value / baseline_value: above 1 means more of the unit than the baseline (slower for times, faster for rates). */
  readonly ratio: number;
  /**
   * The trials behind the figure when the bench ran them itself (value and baseline of each, in
   * the same trial); absent, the result is one trial and the runner repeats the bench.
   */
  readonly samples?: readonly TrialSample[];
}

export interface TrialSample {
  readonly value: number;
  readonly baseline_value: number;
}

export interface KafkaTarget {
  readonly brokers: string[];
  readonly registryUrl: string;
  /** The broker's process when the bench started it (or `infra:up` recorded it): its CPU is measured too. */
  readonly brokerPid?: number;
}

export interface BenchContext {
  /** Resolves the Kafka pair (started on first use when the environment gives none). */
  kafka(): Promise<KafkaTarget>;
  readonly log: (line: string) => void;
}

export interface Bench {
  readonly name: string;
  /**
   * True when `run` measures several trials itself and returns them as `samples` (its setup is
   * too costly to repeat); otherwise the runner calls `run` once per trial.
   */
  readonly ownTrials?: boolean;
  run(ctx: BenchContext): Promise<BenchResult[]>;
}

export const result = (
  name: string,
  unit: string,
  value: number,
  baseline: string,
  baselineValue: number,
): BenchResult => ({
  name,
  unit,
  value: round(value),
  baseline,
  baseline_value: round(baselineValue),
  ratio: round(baselineValue === 0 ? Number.NaN : value / baselineValue, 3),
});

/** A figure of several trials, each a value with the baseline measured beside it; value and baseline are the medians. */
export const resultOfTrials = (
  name: string,
  unit: string,
  samples: readonly TrialSample[],
  baseline: string,
): BenchResult => ({
  ...result(
    name,
    unit,
    median(samples.map((s) => s.value)),
    baseline,
    median(samples.map((s) => s.baseline_value)),
  ),
  samples: samples.map((s) => ({ value: round(s.value), baseline_value: round(s.baseline_value) })),
});

export const round = (n: number, digits = 2): number => {
  const f = 10 ** digits;
  return Math.round(n * f) / f;
};

/** Nearest-rank percentile of a sorted copy. */
export function percentile(values: readonly number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.max(0, Math.ceil((p / 100) * sorted.length) - 1)] ?? Number.NaN;
}

/** The middle value (the mean of the two middle ones for an even count). */
export function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  if (sorted.length === 0) return Number.NaN;
  return sorted.length % 2 === 1
    ? (sorted[mid] ?? Number.NaN)
    : ((sorted[mid - 1] ?? 0) + (sorted[mid] ?? 0)) / 2;
}
