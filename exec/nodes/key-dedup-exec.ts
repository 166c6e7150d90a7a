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
import { prepareSources, type RegionSources } from '../../src/table/search.js';
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
    for (let i = 0; i < this.scans.length; i++) {
      const scan = this.scans[i];
      scan.prepared = prepared[i];
      yield* scan.execute(ctx);
    }
  }

  explain(): string {
    return `KeyDedup: region ${this.regionLabel}, newest version per key, tombstones removed${this.filter ? `, then filter ${exprToString(this.filter)}` : ''}`;
  }
}
