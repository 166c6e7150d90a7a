/**
 * SortExec: `ORDER BY` without a `LIMIT` — the full sort of the child's rows.
 *
 * Why it exists: a sort is the one relational operator that can emit nothing until it has
 * seen everything, so it buffers the child's batches (counted against a memory budget, so an
 * unbounded `ORDER BY` fails this query with a clear error instead of taking the process down),
 * builds the key columns once as typed arrays (`exec/kernels/sort-keys.ts`), sorts row numbers,
 * and gathers the output a chunk of ≤ 8192 rows at a time straight from the buffered batches
 * (no concatenated copy of the payload columns).
 *
 * Invariants: the sort is stable (rows that tie on every key keep their input order); NULLs go
 * last ascending and first descending unless a key says `nullsFirst`; NaN sorts above every
 * number; strings compare by UTF-8 bytes (PostgreSQL's "C" collation). The output schema is the
 * child's. `ORDER BY … LIMIT k` belongs to TopKExec, which keeps only k rows.
 */
import { type Data, makeData, RecordBatch, type Schema, Struct } from 'apache-arrow';
import { InvalidError } from '../../src/errors.js';
import { buildKeyColumn, isSortableType, keyColumnBytes, type SortKeySpec, sortedRowIndices } from '../kernels/sort-keys.js';
import { gatherColumn } from '../kernels/gather-column.js';
import { canPermute, type PermutedColumn, permuteColumn, permutedBytes, permutedSlice, takeColumn } from '../kernels/take-fixed.js';
import { BaseExec, checkCancelled, type ExecContext, type ExecNode } from './exec-node.js';
import { ExplainNames } from './explain-names.js';
import { batchBytes, DEFAULT_OPERATOR_MEMORY_BYTES, MemoryBudget } from './memory-budget.js';

export type { SortKeySpec } from '../kernels/sort-keys.js';

/** Rows per output batch of Sort and TopK. */
export const SORT_OUTPUT_BATCH_ROWS = 8192;

export interface SortOptions {
  /** Bytes the buffered input and sort keys may take; default `DEFAULT_OPERATOR_MEMORY_BYTES`. */
  readonly memoryLimitBytes?: number;
}

export class SortExec extends BaseExec {
  readonly kind = 'Sort';
  readonly keys: readonly SortKeySpec[];
  readonly memoryLimitBytes: number;

  constructor(
    readonly child: ExecNode,
    keys: readonly SortKeySpec[],
    options: SortOptions = {},
  ) {
    super(child.schema, [child]);
    validateSortKeys('Sort', child.schema, keys);
    this.keys = keys.map((k) => ({ ...k }));
    this.memoryLimitBytes = options.memoryLimitBytes ?? DEFAULT_OPERATOR_MEMORY_BYTES;
  }

  explain(names = ExplainNames.NONE): string {
    return `Sort: ${describeSortKeys(this.schema, this.keys, names)}`;
  }

  /** The sorted order of all buffered rows; the key columns live only in here. */
  private sortOrder(batches: readonly RecordBatch[], rows: number, budget: MemoryBudget): Uint32Array {
    const keys = this.keys.map((k) => buildKeyColumn(batches.map((b) => b.data.children[k.column]), k));
    budget.setUsed(budget.used - rows * 17 * this.keys.length + keys.reduce((s, k) => s + keyColumnBytes(k), 0), rows);
    return sortedRowIndices(keys, rows);
  }

  protected async *run(ctx: ExecContext): AsyncGenerator<RecordBatch> {
    const budget = new MemoryBudget('Sort', this.memoryLimitBytes);
    const batches: RecordBatch[] = [];
    const dictionaries = new Set<unknown>();
    let rows = 0;
    let inputBytes = 0;
    try {
      for await (const batch of this.child.execute(ctx)) {
        checkCancelled(ctx);
        if (batch.numRows === 0) continue;
        rows += batch.numRows;
        const bytes = batchBytes(batch, dictionaries);
        budget.reserve(bytes, rows);
        inputBytes += bytes;
        batches.push(batch);
      }
      this.metrics.extra.rowsSorted = rows;
      if (rows === 0) return;
      // Keys: ≤ 17 bytes a row each (value, low word or string span, class) + 4 for the order.
      budget.reserve(rows * (4 + 17 * this.keys.length), rows);
      const start = performance.now();
      const order = this.sortOrder(batches, rows, budget);
      this.metrics.extra.sortMs = Math.round((performance.now() - start) * 10) / 10;
      checkCancelled(ctx);
      // The key columns are garbage now; the output's permuted columns take their place.
      budget.setUsed(inputBytes + 4 * rows, rows);
      budget.reserve(emitBytes(this.schema, batches, rows), rows);
      yield* emitInOrder(this.schema, batches, order);
    } finally {
      this.metrics.extra.peakMemoryBytes = budget.peak;
      budget.release();
    }
  }
}

/**
 * Batches of ≤ 8192 rows: row i is row order[i] of the concatenation of `batches`.
 *
 * Fixed-width columns are permuted whole, once (`permuteColumn`: each input value read in input
 * order and written to its output row — random writes are several times cheaper than random
 * reads), then cut into batches without copying. Other columns (strings, booleans,
 * dictionaries, …) are gathered a batch at a time; the source batch of every input row comes
 * from a table built once (2 bytes a row), not a search per row.
 */
export function* emitInOrder(schema: Schema, batches: readonly RecordBatch[], order: Uint32Array): Generator<RecordBatch> {
  const n = order.length;
  const columns = schema.fields.map((_, c) => batches.map((b) => b.data.children[c]));
  const permutable = columns.map((c) => canPermute(c));
  let permuted: (PermutedColumn | undefined)[] = columns.map(() => undefined);
  if (permutable.some((p) => p)) {
    const rank = new Uint32Array(n);
    for (let i = 0; i < n; i++) rank[order[i]] = i;
    permuted = columns.map((c, j) => (permutable[j] ? permuteColumn(c, rank) : undefined));
  }
  const gathered = permutable.some((p) => !p);
  let starts: Float64Array | undefined;
  let batchOf: Uint16Array | Uint32Array | undefined;
  if (gathered && batches.length > 1) {
    starts = new Float64Array(batches.length + 1);
    for (let b = 0; b < batches.length; b++) starts[b + 1] = starts[b] + batches[b].numRows;
    batchOf = batches.length <= 0xffff ? new Uint16Array(starts[batches.length]) : new Uint32Array(starts[batches.length]);
    for (let b = 0; b < batches.length; b++) batchOf.fill(b, starts[b], starts[b + 1]);
  }
  for (let at = 0; at < n; at += SORT_OUTPUT_BATCH_ROWS) {
    const m = Math.min(SORT_OUTPUT_BATCH_ROWS, n - at);
    const idx = order.subarray(at, at + m);
    let from: Uint32Array | undefined;
    let rows: Uint32Array | undefined;
    if (batchOf && starts) {
      from = new Uint32Array(m);
      rows = new Uint32Array(m);
      for (let i = 0; i < m; i++) {
        const g = idx[i];
        const b = batchOf[g];
        from[i] = b;
        rows[i] = g - starts[b];
      }
    }
    yield makeBatch(
      schema,
      m,
      columns.map((c, j) => {
        const p = permuted[j];
        if (p) return permutedSlice(p, at, m);
        return from && rows ? gatherColumn(c, from, rows) : takeColumn(c[0], idx);
      }),
    );
  }
}

/** Bytes `emitInOrder` allocates beyond the order (the permutation and the permuted columns). */
export function emitBytes(schema: Schema, batches: readonly RecordBatch[], n: number): number {
  let bytes = 0;
  for (let c = 0; c < schema.fields.length; c++) {
    const sources = batches.map((b) => b.data.children[c]);
    if (canPermute(sources)) bytes += permutedBytes(sources, n);
  }
  return bytes > 0 ? bytes + 4 * n : 0;
}

export function makeBatch(schema: Schema, length: number, children: Data[]): RecordBatch {
  return new RecordBatch(schema, makeData({ type: new Struct(schema.fields), length, nullCount: 0, children }));
}

/** `year DESC NULLS FIRST, id ASC`: names from `schema` as `names` shows them; NULLS … only when the key sets it. */
export function describeSortKeys(schema: Schema, keys: readonly SortKeySpec[], names = ExplainNames.NONE): string {
  return keys
    .map((k) => {
      const field = schema.fields[k.column];
      const name = field ? names.column(field.name) : `#${k.column}`;
      const nulls = k.nullsFirst === undefined ? '' : k.nullsFirst ? ' NULLS FIRST' : ' NULLS LAST';
      return `${name} ${k.descending ? 'DESC' : 'ASC'}${nulls}`;
    })
    .join(', ');
}

/** Throws InvalidError for a key column that does not exist or cannot be ordered. */
export function validateSortKeys(operator: string, schema: Schema, keys: readonly SortKeySpec[]): void {
  if (keys.length === 0) throw new InvalidError(`${operator}: at least one sort key is needed`);
  for (const k of keys) {
    const field = schema.fields[k.column];
    if (!Number.isInteger(k.column) || !field) throw new InvalidError(`${operator}: sort key column ${k.column} is not in the input (${schema.fields.length} columns)`);
    if (!isSortableType(field.type)) throw new InvalidError(`${operator}: cannot order by ${field.name} of type ${String(field.type)}`);
  }
}
