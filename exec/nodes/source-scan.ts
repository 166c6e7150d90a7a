/**
 * What MemTableScan, GenerationScan and ScalarIndexScan share: emitting one source's rows that
 * are live (the newest version of their key, not deleted) and pass the pushed-down filter, as
 * projected record batches.
 *
 * The mask of such rows (`PreparedSource.allowed`) is computed by the region's KeyDedup node
 * before any of its sources is scanned — liveness over all of the region's sources first, the
 * filter second, so a filter can never uncover an older version of a key whose newest version
 * it rejects — and is kept incrementally per source version (liveness.ts, filter-memo.ts), so a
 * repeated query pays for what changed since the last one. A scan node only turns the mask into
 * batches: zero-copy where a batch is wholly selected, a typed-array take otherwise, in slices of
 * at most SCAN_BATCH_ROWS so a consumer that stops early never pays for a whole generation.
 */
import { makeData, RecordBatch, type Schema, Struct } from 'apache-arrow';
import { takeData } from '../kernels/take.js';
import { gatherData } from '../kernels/gather.js';
import type { PreparedSource } from '../../src/table/search.js';
import { BaseExec, type ExecContext } from './exec-node.js';

/** Largest batch a scan emits. */
export const SCAN_BATCH_ROWS = 65536;

export abstract class SourceScanExec extends BaseExec {
  /** Set by the KeyDedup parent before it pulls this node. */
  prepared: PreparedSource | undefined;

  constructor(
    schema: Schema,
    /** Indexes of the emitted columns in the stored batches. */
    readonly columnIndexes: readonly number[],
    /** Stored rows in the source when the snapshot was taken. */
    readonly rowCount: number,
    readonly describe: string,
  ) {
    super(schema, []);
  }

  protected async *run(_ctx: ExecContext): AsyncGenerator<RecordBatch> {
    const prepared = this.prepared;
    if (!prepared) throw new Error(`${this.kind} ran without its KeyDedup parent`);
    this.prepared = undefined;
    this.metrics.extra.rowsStored = prepared.source.rowCount;
    this.metrics.extra.rowsLive = prepared.liveCount;
    if (prepared.filterRows !== undefined) this.metrics.extra.filterRows = prepared.filterRows;
    if (prepared.allowedCount === 0) return;
    const { allowed, source } = prepared;
    if (this.columnIndexes.length === 0) {
      // No column wanted (count(*)): the number of rows is all there is to emit.
      for (let left = prepared.allowedCount; left > 0; left -= SCAN_BATCH_ROWS) yield this.empty(Math.min(left, SCAN_BATCH_ROWS));
      return;
    }
    if (prepared.rows) {
      yield* this.takeRows(source.batches, prepared.rows);
      return;
    }
    const all = prepared.allowedCount === source.rowCount;
    // One pass per range: the selected rows' indices (reused scratch), then a slice or a take.
    const scratch = all ? undefined : new Uint32Array(Math.min(SCAN_BATCH_ROWS, source.rowCount));
    let base = 0;
    for (const batch of source.batches) {
      const n = Math.min(batch.numRows, source.rowCount - base);
      if (n <= 0) break;
      for (let start = 0; start < n; start += SCAN_BATCH_ROWS) {
        const end = Math.min(n, start + SCAN_BATCH_ROWS);
        if (!scratch) {
          yield this.slice(batch, start, end);
          continue;
        }
        let o = 0;
        for (let i = start, p = base + start; i < end; i++, p++) {
          scratch[o] = i;
          o += allowed[p];
        }
        if (o === 0) continue;
        yield o === end - start ? this.slice(batch, start, end) : this.take(batch, scratch.slice(0, o));
      }
      base += batch.numRows;
    }
  }

  private slice(batch: RecordBatch, start: number, end: number): RecordBatch {
    const whole = start === 0 && end === batch.numRows;
    const children = this.columnIndexes.map((c) => (whole ? batch.data.children[c] : batch.data.children[c].slice(start, end - start)));
    return new RecordBatch(this.schema, makeData({ type: new Struct(this.schema.fields), length: end - start, nullCount: 0, children }));
  }

  private empty(count: number): RecordBatch {
    return new RecordBatch(this.schema, makeData({ type: new Struct(this.schema.fields), length: count, nullCount: 0, children: [] }));
  }

  /** The source rows at `positions` (ascending; a point lookup's few rows), batch by batch. */
  /**
   * Rows at sorted source positions (key lookups): gathered from every batch they fall in into
   * batches of up to SCAN_BATCH_ROWS rows, not one small batch per source batch (100 keys of a
   * MemTable of 100-row batches were 60 one-row takes and batches).
   */
  private *takeRows(batches: readonly RecordBatch[], positions: Uint32Array): Generator<RecordBatch> {
    const starts = new Float64Array(batches.length + 1);
    for (let b = 0; b < batches.length; b++) starts[b + 1] = starts[b] + batches[b].numRows;
    for (let at = 0; at < positions.length; at += SCAN_BATCH_ROWS) {
      const part = positions.subarray(at, Math.min(positions.length, at + SCAN_BATCH_ROWS));
      const from = new Uint32Array(part.length);
      const rows = new Uint32Array(part.length);
      let b = 0;
      for (let i = 0; i < part.length; i++) {
        while (part[i] >= starts[b + 1]) b++;
        from[i] = b;
        rows[i] = part[i] - starts[b];
      }
      if (from[0] === from[part.length - 1]) {
        yield this.take(batches[from[0]], rows);
        continue;
      }
      const children = this.columnIndexes.map((c) => gatherData(batches.map((x) => x.data.children[c]), from, rows));
      yield new RecordBatch(this.schema, makeData({ type: new Struct(this.schema.fields), length: part.length, nullCount: 0, children }));
    }
  }

  /** The rows of `batch` at `indices`. */
  private take(batch: RecordBatch, indices: Uint32Array): RecordBatch {
    const children = this.columnIndexes.map((c) => takeData(batch.data.children[c], indices));
    return new RecordBatch(this.schema, makeData({ type: new Struct(this.schema.fields), length: indices.length, nullCount: 0, children }));
  }

  explain(): string {
    return `${this.kind}: ${this.describe} (${this.rowCount} rows stored)`;
  }
}
