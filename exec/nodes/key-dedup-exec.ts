/**
 * KeyDedup: one region's sources as one stream in which every primary key appears at most once —
 * its newest version (newest source first, then newest row), and not at all when that version is
 * a delete (a tombstone).
 *
 * Invariant: liveness is decided over all of the region's sources *before* the query's filter;
 * the filter then narrows the live rows. So `WHERE price < 10` never returns an old version of a
 * key whose newest version costs 20. Every row of a key lives in one region, so regions never
 * need deduplicating against each other.
 *
 * Liveness comes from liveness.ts: kept per source and extended incrementally as rows arrive
 * (a query pays for what changed since the last one, not for every stored row); the filter's
 * pass mask is remembered per source version (filter-memo.ts). The children — one scan per
 * source, newest first — only turn the resulting masks into batches.
 */
import type { RecordBatch, Schema } from 'apache-arrow';
import { exprToString, type Expr } from '../expr/expr.js';
import { type PreparedSource, prepareSources, type RegionSources } from '../../src/table/search.js';
import type { TableSnapshot } from '../../src/table/table.js';
import { BaseExec, type ExecContext } from './exec-node.js';
import type { SourceScanExec } from './source-scan.js';

export class KeyDedupExec extends BaseExec {
  readonly kind = 'KeyDedup';

  constructor(
    schema: Schema,
    private readonly snapshot: TableSnapshot,
    private readonly region: RegionSources,
    private readonly regionLabel: string,
    private readonly filter: Expr | null,
    readonly scans: readonly SourceScanExec[],
  ) {
    super(schema, scans);
  }

  protected async *run(ctx: ExecContext): AsyncGenerator<RecordBatch> {
    const { keyIndexes, tombstoneIndex } = this.snapshot.schema;
    const prepared = prepareSources([this.region], keyIndexes, tombstoneIndex, this.filter ?? undefined, ctx.params, this.snapshot.indexes, true);
    let live = 0;
    let stored = 0;
    for (const p of prepared) {
      live += p.liveCount;
      stored += p.source.rowCount;
    }
    this.metrics.extra.rowsStored = stored;
    this.metrics.extra.rowsSuperseded = stored - live;
    // The masks prepareSources returns belong to per-source caches that the next query updates
    // in place (rows superseded or deleted since are cleared): synchronous readers are safe, but
    // this scan emits lazily, across awaits, while other queries run. So each source's selection
    // is made private now — the positions when few rows pass, a copy of the mask otherwise — and
    // the scan reads only that: later writes never tear this query's snapshot.
    const own = prepared.map((p, i) => privateSelection(p, this.scans[i].columnIndexes.length > 0));
    for (let i = 0; i < this.scans.length; i++) {
      const scan = this.scans[i];
      scan.prepared = own[i];
      yield* scan.execute(ctx);
    }
  }

  explain(): string {
    return `KeyDedup: region ${this.regionLabel}, newest version per key, tombstones removed${this.filter ? `, then filter ${exprToString(this.filter)}` : ''}`;
  }
}

/** `p` with a selection no later query can change (see KeyDedupExec.run). */
function privateSelection(p: PreparedSource, readsRows: boolean): PreparedSource {
  const n = p.source.rowCount;
  // Nothing to read, all rows, a count only, or positions already private: nothing shared is read later.
  if (!readsRows || p.rows || p.allowedCount === 0 || p.allowedCount === n) return p;
  if (p.allowedCount * 4 < n) {
    const rows = new Uint32Array(p.allowedCount);
    const allowed = p.allowed;
    let o = 0;
    for (let i = 0; i < n && o < rows.length; i++) if (allowed[i]) rows[o++] = i;
    return { ...p, rows };
  }
  return { ...p, allowed: p.allowed.slice(0, n) };
}
