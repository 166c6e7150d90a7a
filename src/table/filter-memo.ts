/**
 * Search filters remembered per source, so a repeated filter costs what changed since the last
 * query rather than a pass over every stored row.
 *
 * A filter is a deterministic function of a row's values, and a source's rows never change once
 * written (a generation is immutable; a MemTable only appends). So per source and filter we keep
 * - `mask`: 1 where the row passes the filter, for rows [0, rows) — extended by evaluating the
 *   filter on appended rows only;
 * - `allowed` = live ∧ mask with its count, for one live state (liveness.ts) — extended for rows
 *   appended since, and cleared for the rows the state's `cleared` log lists since.
 * An older snapshot than the memo (fewer rows), or one without a cached live state, is computed
 * afresh and not remembered. At most MAX_FILTERS_PER_SOURCE filters are kept per source (least
 * recently used dropped); each costs two bytes per row of the source.
 */
import type { RecordBatch } from 'apache-arrow';
import type { LiveState } from '../memtable/liveness.js';
import { batchHolding } from '../memtable/batch-offsets.js';

/** Filters remembered per source. */
export const MAX_FILTERS_PER_SOURCE = 4;

interface FilterMemo {
  key: string;
  /** Rows [0, rows) of `mask` are evaluated. */
  rows: number;
  mask: Uint8Array;
  state: LiveState;
  /** Rows [0, liveRows) of `allowed` follow `state` up to `cleared` entries of its log. */
  liveRows: number;
  cleared: number;
  allowed: Uint8Array;
  allowedCount: number;
}

const memos = new WeakMap<object, FilterMemo[]>();

export interface FilteredRows {
  /** 1 = live and passing the filter ([0, rowCount)). */
  allowed: Uint8Array;
  allowedCount: number;
  /** Rows the filter was evaluated on by this call. */
  filterRows: number;
}

/**
 * Fills mask[from, rowCount) with 1 where a row passes (the caller's evaluator; it may narrow
 * with a scalar index when `from` is 0) and returns how many rows it evaluated.
 */
export type EvaluateRows = (from: number, mask: Uint8Array) => number;

/**
 * live ∧ filter for one source of a snapshot. `owner` identifies the source (its reader cache
 * object), `key` the filter with its parameters (undefined: do not remember).
 */
export function filteredRows(
  owner: object,
  key: string | undefined,
  rowCount: number,
  live: Uint8Array,
  /** Live rows among [0, rowCount): when all are live, `allowed` is the filter's mask itself. */
  liveCount: number,
  state: LiveState | undefined,
  evaluate: EvaluateRows,
): FilteredRows {
  let list = memos.get(owner);
  const at = key === undefined || !list ? -1 : list.findIndex((m) => m.key === key);
  let memo = at >= 0 ? list![at] : undefined;
  if (key === undefined || state === undefined || state.rows !== rowCount || (memo && memo.rows > rowCount)) {
    return fresh(rowCount, live, liveCount, evaluate);
  }
  let filterRows = 0;
  if (!memo) {
    // A new filter on a full list takes the least recently used memo's place — and its mask
    // buffer when large enough: fresh allocations of rowCount bytes per query and source (a new
    // parameter value is a new filter) cost more in page faults than zeroing an old buffer. No
    // reader holds a memo's buffers past its synchronous use (scans copy what they read lazily).
    let mask: Uint8Array | undefined;
    let spare: Uint8Array | undefined;
    if (list && list.length >= MAX_FILTERS_PER_SOURCE) {
      const evicted = list.pop()!;
      if (evicted.mask.length >= rowCount) mask = evicted.mask.fill(0, 0, rowCount);
      if (evicted.allowed !== evicted.mask && evicted.allowed.length >= rowCount) spare = evicted.allowed;
    }
    mask ??= new Uint8Array(rowCount);
    filterRows = evaluate(0, mask);
    if (liveCount === rowCount) {
      // Every row live: allowed = mask, shared until the live state changes (then it is copied).
      let count = 0;
      for (let i = 0; i < rowCount; i++) count += mask[i];
      memo = { key, rows: rowCount, mask, state, liveRows: rowCount, cleared: state.cleared.length, allowed: mask, allowedCount: count };
    } else {
      // `allowed` is written for every row below (live ∧ mask), so a spare buffer needs no zeroing.
      memo = { key, rows: rowCount, mask, state, liveRows: 0, cleared: state.cleared.length, allowed: spare ?? new Uint8Array(rowCount), allowedCount: 0 };
    }
    if (!list) memos.set(owner, (list = []));
    list.unshift(memo);
  } else {
    if (at > 0) list!.unshift(...list!.splice(at, 1)); // most recently used first
    if (memo.rows < rowCount) {
      memo.mask = grow(memo.mask, rowCount);
      memo.mask.fill(0, memo.rows, rowCount);
      filterRows = evaluate(memo.rows, memo.mask);
      memo.rows = rowCount;
    }
  }
  if (memo.allowed === memo.mask && (memo.state !== state || memo.cleared !== state.cleared.length || memo.liveRows < rowCount)) {
    // The shared buffer is about to diverge from the mask.
    memo.allowed = memo.mask.slice(0, memo.liveRows);
  }
  if (memo.state !== state || memo.liveRows > rowCount) {
    memo.state = state;
    memo.liveRows = 0;
    memo.allowedCount = 0;
    memo.cleared = state.cleared.length;
  } else {
    // Rows that died since: drop them.
    const { allowed } = memo;
    for (let j = memo.cleared; j < state.cleared.length; j++) {
      const pos = state.cleared[j];
      if (pos < memo.liveRows && allowed[pos] === 1) {
        allowed[pos] = 0;
        memo.allowedCount--;
      }
    }
    memo.cleared = state.cleared.length;
  }
  if (memo.liveRows < rowCount) {
    memo.allowed = grow(memo.allowed, rowCount);
    const { allowed, mask } = memo;
    let count = 0;
    for (let i = memo.liveRows; i < rowCount; i++) {
      const v = live[i] & mask[i];
      allowed[i] = v;
      count += v;
    }
    memo.allowedCount += count;
    memo.liveRows = rowCount;
  }
  return { allowed: memo.allowed.subarray(0, rowCount), allowedCount: memo.allowedCount, filterRows };
}

function fresh(rowCount: number, live: Uint8Array, liveCount: number, evaluate: EvaluateRows): FilteredRows {
  const mask = new Uint8Array(rowCount);
  const filterRows = evaluate(0, mask);
  let allowedCount = 0;
  if (liveCount === rowCount) {
    for (let i = 0; i < rowCount; i++) allowedCount += mask[i];
    return { allowed: mask, allowedCount, filterRows };
  }
  for (let i = 0; i < rowCount; i++) {
    const v = live[i] & mask[i];
    mask[i] = v;
    allowedCount += v;
  }
  return { allowed: mask, allowedCount, filterRows };
}

function grow(buf: Uint8Array, need: number): Uint8Array {
  if (buf.length >= need) return buf;
  const out = new Uint8Array(Math.max(need, buf.length * 2));
  out.set(buf);
  return out;
}

/** Rows [from, end) of the batches through `evaluate` (whole batches; rows before `from` untouched). */
export function evaluateBatchesFrom(
  batches: readonly RecordBatch[],
  rowOffsets: readonly number[],
  from: number,
  mask: Uint8Array,
  evaluate: (batch: RecordBatch, out?: Uint8Array) => Uint8Array,
): number {
  let evaluated = 0;
  for (let b = batchHolding(rowOffsets, batches.length, from); b < batches.length; b++) {
    const batch = batches[b];
    const base = rowOffsets[b];
    const end = base + batch.numRows;
    if (end > from) {
      // Written straight into the mask (1 = TRUE, 0 = FALSE or NULL). Rows of this batch before
      // `from` were evaluated before by the same deterministic filter: rewritten unchanged.
      const first = Math.max(0, from - base);
      const passed = evaluate(batch, mask.subarray(base, end));
      if (passed.buffer !== mask.buffer || passed.byteOffset !== mask.byteOffset + base) mask.set(passed.subarray(first, batch.numRows), base + first);
      evaluated += end - Math.max(base, from);
    }
  }
  return evaluated;
}
