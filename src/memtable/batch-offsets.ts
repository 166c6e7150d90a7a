/**
 * Where a row position falls in a source's batch list. A MemTable that takes small puts holds
 * hundreds of batches, and work that extends a source's state by its newest rows (liveness, the
 * filter memo) must start at the batch holding them: walking every batch from the first one on
 * every query costs the number of puts so far, in pointer chases through cold batch objects
 * (`bench/dev-liveness.ts`, a MemTable of 2 000 puts: 68 → 40–44 µs p50 a query).
 */
import type { RecordBatch } from 'apache-arrow';

/** Row position of each batch's first row (a source whose batches never change computes it once). */
export function rowOffsetsOf(batches: readonly RecordBatch[]): number[] {
  const out = new Array<number>(batches.length);
  let rows = 0;
  for (let i = 0; i < batches.length; i++) {
    out[i] = rows;
    rows += batches[i].numRows;
  }
  return out;
}

/**
 * Where to start reading row `position` among the first `count` batches, whose first rows are
 * at `offsets` (ascending): the last batch whose first row is at or before it (so empty batches
 * before it are skipped); 0 for position 0 or less or no batches. Callers still check each
 * batch's bounds (a position past every row lands on the last batch).
 */
export function batchHolding(offsets: readonly number[], count: number, position: number): number {
  if (count === 0 || position <= 0) return 0;
  let lo = 0;
  let hi = count - 1;
  // The last batch whose first row is at or before `position`.
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (offsets[mid] <= position) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}
