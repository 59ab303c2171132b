/** One figure of `npm run bench`: a value and the baseline it is judged against, measured in the same run. */
export interface BenchResult {
  readonly name: string;
  readonly unit: string;
  readonly value: number;
  readonly baseline: string;
  readonly baseline_value: number;
  /** value / baseline_value: above 1 means more of the unit than the baseline (slower for times, faster for rates). */
  readonly ratio: number;
}

export interface KafkaTarget {
  readonly brokers: string[];
  readonly registryUrl: string;
}

export interface BenchContext {
  /** Resolves the Kafka pair (started on first use when the environment gives none). */
  kafka(): Promise<KafkaTarget>;
  readonly log: (line: string) => void;
}

export interface Bench {
  readonly name: string;
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

export const round = (n: number, digits = 2): number => {
  const f = 10 ** digits;
  return Math.round(n * f) / f;
};

/** Nearest-rank percentile of a sorted copy. */
export function percentile(values: readonly number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.max(0, Math.ceil((p / 100) * sorted.length) - 1)] ?? Number.NaN;
}
