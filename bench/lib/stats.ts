/**
 * Latency statistics shared by every suite: one definition of a percentile (nearest rank), so
 * the p50 / p90 / p99 in every table mean the same thing.
 */
export interface Summary {
  n: number;
  p50: number;
  p90: number;
  p99: number;
  mean: number;
  min: number;
  max: number;
}

/** Nearest-rank percentile (p in 0..1) of ascending `sorted`; NaN when empty. */
export function percentile(sorted: ArrayLike<number>, p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(p * sorted.length) - 1))];
}

export function summarize(samples: ArrayLike<number>): Summary {
  const s = Float64Array.from(samples).sort();
  let sum = 0;
  for (const x of s) sum += x;
  return { n: s.length, p50: percentile(s, 0.5), p90: percentile(s, 0.9), p99: percentile(s, 0.99), mean: sum / Math.max(1, s.length), min: s[0] ?? NaN, max: s[s.length - 1] ?? NaN };
}

/** Fraction of `want` found in `got` (recall@k with k = want.length). */
export function recall(got: readonly number[], want: readonly number[]): number {
  if (want.length === 0) return got.length === 0 ? 1 : 0;
  const w = new Set(want);
  let hit = 0;
  for (const g of got) if (w.has(g)) hit++;
  return hit / want.length;
}

export function mean(xs: readonly number[]): number {
  return xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : NaN;
}
