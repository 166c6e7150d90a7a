/**
 * Quick or full mode of the peer benchmarks. `--quick` (or BENCH_QUICK=1) shrinks every suite so
 * `npm run bench -- --quick` finishes in a few minutes: a smoke run that still produces every
 * table and chart, not figures to quote. Full mode is what the README reports.
 */
export type BenchMode = 'quick' | 'full';

export const MODE: BenchMode = process.argv.includes('--quick') || process.env.BENCH_QUICK === '1' ? 'quick' : 'full';

/** The quick-mode value in quick mode, the full-mode value otherwise. */
export function byMode<T>(quick: T, full: T): T {
  return MODE === 'quick' ? quick : full;
}
