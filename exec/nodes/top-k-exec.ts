/**
 * TopKExec: `ORDER BY … LIMIT k [OFFSET o]` without sorting everything.
 *
 * Why it exists: a full sort of a big input to keep ten rows holds and sorts every row; top-k
 * holds at most K = k + o rows plus a bounded buffer. The node keeps the best K rows seen so far
 * as one sorted batch (`kept`); once it is full, its last row is a threshold, and each new batch
 * is first filtered against it (only rows that sort strictly before it can enter — a tie loses
 * to the earlier row): a numeric first key is compared on the column's typed array directly
 * (`exec/kernels/key-threshold.ts`), and only rows tying with the threshold on it are compared
 * on the remaining keys; other keys go through key columns over [threshold, batch]. Survivors wait in `pending` until there are about as
 * many as K (or 8192), then kept + pending are sorted and cut back to K (a compaction; with a
 * plain numeric first key, rows past the K-th value are dropped by selection before sorting). Each
 * compaction costs O((K + P) log(K + P)) for P ≥ max(K, 8192) new rows, so the work per input
 * row stays O(log K) amortized and memory stays O(K + 8192 + one batch).
 *
 * Invariant: the output is exactly what SortExec followed by LimitExec(k, o) would produce,
 * ties included: the comparator and its row-number tie-break are SortExec's
 * (`exec/kernels/sort-keys.ts`), and compactions sort [kept, pending…] in that order, which is
 * input order for equal keys (every kept row arrived before every pending row, and kept's own
 * ties are already in input order).
 */
import type { Data, RecordBatch } from 'apache-arrow';
import { InvalidError } from '../../src/errors.js';
import { splitByThreshold } from '../kernels/key-threshold.js';
import { buildKeyColumn, compareOnKey, keyColumnBytes, type KeyColumn, type SortKeySpec, topRowIndices } from '../kernels/sort-keys.js';
import { gatherColumnFast, takeColumn } from '../kernels/take-fixed.js';
import { BaseExec, checkCancelled, type ExecContext, type ExecNode } from './exec-node.js';
import { ExplainNames } from './explain-names.js';
import { batchBytes, DEFAULT_OPERATOR_MEMORY_BYTES, MemoryBudget } from './memory-budget.js';
import { describeSortKeys, makeBatch, SORT_OUTPUT_BATCH_ROWS, validateSortKeys } from './sort-exec.js';

export interface TopKOptions {
  /** Bytes kept + pending rows may take; default `DEFAULT_OPERATOR_MEMORY_BYTES` (matters only for a huge k). */
  readonly memoryLimitBytes?: number;
  /** Pending rows that trigger a compaction, at least K; default max(K, 8192) (smaller in tests). */
  readonly compactAfterRows?: number;
}

export class TopKExec extends BaseExec {
  readonly kind = 'TopK';
  readonly keys: readonly SortKeySpec[];
  readonly memoryLimitBytes: number;
  private readonly compactAfterRows: number | undefined;

  constructor(
    readonly child: ExecNode,
    keys: readonly SortKeySpec[],
    readonly k: number,
    readonly offset: number = 0,
    options: TopKOptions = {},
  ) {
    super(child.schema, [child]);
    validateSortKeys('TopK', child.schema, keys);
    if (!(Number.isSafeInteger(k) && k >= 0)) throw new InvalidError(`LIMIT must be a non-negative integer, got ${k}`);
    if (!(Number.isSafeInteger(offset) && offset >= 0)) throw new InvalidError(`OFFSET must be a non-negative integer, got ${offset}`);
    this.keys = keys.map((key) => ({ ...key }));
    this.memoryLimitBytes = options.memoryLimitBytes ?? DEFAULT_OPERATOR_MEMORY_BYTES;
    this.compactAfterRows = options.compactAfterRows;
  }

  explain(names = ExplainNames.NONE): string {
    return `TopK: k=${this.k} offset=${this.offset} by ${describeSortKeys(this.schema, this.keys, names)}`;
  }

  protected async *run(ctx: ExecContext): AsyncGenerator<RecordBatch> {
    const want = this.k + this.offset;
    if (this.k === 0) return;
    const budget = new MemoryBudget('TopK', this.memoryLimitBytes);
    const compactAt = Math.max(want, this.compactAfterRows ?? SORT_OUTPUT_BATCH_ROWS);
    const keyCols = this.keys.map((k) => k.column);
    let kept: RecordBatch | undefined;
    let keptBytes = 0;
    /** Key columns of kept's last row, once kept is full. */
    let threshold: Data[] | undefined;
    let pending: RecordBatch[] = [];
    let pendingRows = 0;
    let pendingBytes = 0;
    let rowsIn = 0;
    let filteredOut = 0;
    let compactions = 0;

    const compact = () => {
      const sources = kept ? [kept, ...pending] : pending;
      let n = 0;
      for (const s of sources) n += s.numRows;
      const keys = this.keys.map((k) => buildKeyColumn(sources.map((s) => s.data.children[k.column]), k));
      budget.setUsed(keptBytes + pendingBytes + keys.reduce((s, k) => s + keyColumnBytes(k), 0) + 4 * n, n);
      const order = topRowIndices(keys, n, want);
      kept = gatherRows(this.schema, sources, order);
      keptBytes = batchBytes(kept);
      pending = [];
      pendingRows = 0;
      pendingBytes = 0;
      compactions++;
      budget.setUsed(keptBytes, kept.numRows);
      threshold = kept.numRows === want ? keyCols.map((c) => takeColumn((kept as RecordBatch).data.children[c], Uint32Array.of(want - 1))) : undefined;
    };

    try {
      for await (const batch of this.child.execute(ctx)) {
        checkCancelled(ctx);
        if (batch.numRows === 0) continue;
        rowsIn += batch.numRows;
        let survivors = batch;
        if (threshold) {
          const idx = rowsBefore(threshold, batch, this.keys);
          filteredOut += batch.numRows - idx.length;
          if (idx.length === 0) continue;
          if (idx.length < batch.numRows) survivors = makeBatch(this.schema, idx.length, batch.data.children.map((c) => takeColumn(c, idx)));
        }
        pending.push(survivors);
        pendingRows += survivors.numRows;
        pendingBytes += batchBytes(survivors);
        budget.setUsed(keptBytes + pendingBytes, (kept?.numRows ?? 0) + pendingRows);
        if (pendingRows >= compactAt) compact();
      }
      if (pendingRows > 0) compact();
      if (!kept) return;
      const out: RecordBatch = kept;
      for (let at = this.offset; at < out.numRows; at += SORT_OUTPUT_BATCH_ROWS) {
        yield out.slice(at, Math.min(out.numRows, at + SORT_OUTPUT_BATCH_ROWS));
      }
    } finally {
      Object.assign(this.metrics.extra, { rowsIn, filteredOut, compactions, peakMemoryBytes: budget.peak });
      budget.release();
    }
  }
}

/** Rows of `sources` (concatenated) at `order`, as one batch. */
function gatherRows(schema: RecordBatch['schema'], sources: readonly RecordBatch[], order: Uint32Array): RecordBatch {
  if (sources.length === 1) return makeBatch(schema, order.length, sources[0].data.children.map((c) => takeColumn(c, order)));
  const starts: number[] = [0];
  for (const s of sources) starts.push(starts[starts.length - 1] + s.numRows);
  const from = new Uint32Array(order.length);
  const rows = new Uint32Array(order.length);
  for (let i = 0; i < order.length; i++) {
    const g = order[i];
    let lo = 0;
    let hi = sources.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (starts[mid] <= g) lo = mid;
      else hi = mid - 1;
    }
    from[i] = lo;
    rows[i] = g - starts[lo];
  }
  return makeBatch(
    schema,
    order.length,
    schema.fields.map((_, c) => gatherColumnFast(sources.map((s) => s.data.children[c]), from, rows)),
  );
}

/**
 * Indices of the rows of `batch` that sort strictly before the threshold row, ascending. A
 * numeric first key is compared on its typed array (`splitByThreshold`); only rows that tie with
 * the threshold on it go on to the remaining keys, through key columns over just those rows.
 */
export function rowsBefore(threshold: readonly Data[], batch: RecordBatch, specs: readonly SortKeySpec[]): Uint32Array {
  const split = splitByThreshold(threshold[0], 0, batch.data.children[specs[0].column], specs[0], specs.length > 1);
  if (!split) return rowsBeforeOnKeys(threshold, batch.data.children, specs, undefined);
  const ties = split.ties;
  if (!ties || ties.length === 0) return split.before;
  const tieCols = batch.data.children.map((c, j) => (specs.some((k, i) => i > 0 && k.column === j) ? takeColumn(c, ties) : c));
  const won = rowsBeforeOnKeys(threshold, tieCols, specs, 1);
  if (won.length === 0) return split.before;
  // Merge the two ascending lists of batch rows.
  const a = split.before;
  const out = new Uint32Array(a.length + won.length);
  let i = 0;
  let j = 0;
  let m = 0;
  while (i < a.length && j < won.length) out[m++] = a[i] < ties[won[j]] ? a[i++] : ties[won[j++]];
  while (i < a.length) out[m++] = a[i++];
  while (j < won.length) out[m++] = ties[won[j++]];
  return out;
}

/** Rows of `columns` before the threshold on keys `specs` (from key `first`; rows already tie on the earlier ones). */
function rowsBeforeOnKeys(threshold: readonly Data[], columns: readonly Data[], specs: readonly SortKeySpec[], first: number | undefined): Uint32Array {
  const from = first ?? 0;
  // Key columns over [threshold row, batch rows]: row 0 is the threshold, row i + 1 is batch row i.
  const keys: KeyColumn[] = specs.slice(from).map((k, j) => buildKeyColumn([threshold[from + j], columns[k.column]], k));
  const n = columns[specs[from].column].length;
  const out = new Uint32Array(n);
  let m = 0;
  if (keys.length === 1 && !keys[0].cls && !keys[0].v2 && !keys[0].bytes) {
    const v = keys[0].v;
    const t = v[0];
    for (let i = 0; i < n; i++) if (v[i + 1] < t) out[m++] = i;
    return out.subarray(0, m);
  }
  for (let i = 0; i < n; i++) {
    for (const key of keys) {
      const c = compareOnKey(key, i + 1, 0);
      if (c < 0) {
        out[m++] = i;
        break;
      }
      if (c > 0) break;
    }
  }
  return out.subarray(0, m);
}
