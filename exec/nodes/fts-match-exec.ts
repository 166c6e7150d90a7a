/**
 * FtsMatch: the rows matching a full-text query (`WHERE match(body, 'quick fox')`) across every
 * source of a snapshot, with their BM25 `_score` — every match, or only the k best when the plan
 * asks for `ORDER BY _score DESC LIMIT k` (then MaxScore pruning skips documents that cannot
 * enter the top k).
 *
 * BM25 statistics (document count, average length, per-term document frequencies) are summed
 * over the live rows of all sources, so scores are comparable across MemTables and generations
 * and do not depend on superseded versions still stored; they are kept incrementally per source
 * version (search.ts). The query's filter is a prefilter over `live ∧ filter`, like VectorKnn's.
 */
import type { RecordBatch, Schema } from 'apache-arrow';
import { exprToString, type Expr } from '../expr/expr.js';
import { InvalidError } from '../../src/errors.js';
import { FtsQueryError, parseFtsQuery } from '../../src/index/fts/query.js';
import type { IndexDef } from '../../src/index/index-def.js';
import { type Hit, materialize, prepareSources, textHits } from '../../src/table/search.js';
import type { TableSnapshot } from '../../src/table/table.js';
import { BaseExec, type ExecContext } from './exec-node.js';
import { queryText } from './search-inputs.js';
import { SCAN_BATCH_ROWS } from './source-scan.js';

export interface FtsMatchParams {
  readonly column: string;
  readonly query: Expr;
  /** Best rows wanted; null = every match. */
  readonly k: number | null;
  readonly filter: Expr | null;
}

export class FtsMatchExec extends BaseExec {
  readonly kind = 'FtsMatch';
  private readonly def: IndexDef;

  constructor(
    schema: Schema,
    private readonly snapshot: TableSnapshot,
    readonly params: FtsMatchParams,
    private readonly columnIndexes: readonly number[],
  ) {
    super(schema, []);
    const def = snapshot.indexes.find((d) => d.type === 'fts' && d.column === params.column);
    if (!def) throw new InvalidError(`match(): no full-text index on column ${params.column}`);
    this.def = def;
  }

  hits(ctx: ExecContext): Hit[] {
    const p = this.params;
    const text = queryText(p.query, ctx.params, `match(${p.column}, …)`);
    let query;
    try {
      query = parseFtsQuery(text, { stem: this.def.stem, stopWords: this.def.stopWords });
    } catch (e) {
      if (e instanceof FtsQueryError) throw new InvalidError(`match(${p.column}, …): ${e.message}`, { cause: e });
      throw e;
    }
    const { keyIndexes, tombstoneIndex } = this.snapshot.schema;
    const prepared = prepareSources(this.snapshot.regions, keyIndexes, tombstoneIndex, p.filter ?? undefined, ctx.params, this.snapshot.indexes);
    const total = prepared.reduce((n, s) => n + s.source.rowCount, 0);
    const hits = textHits(prepared, this.def, query, Math.max(1, p.k ?? total));
    this.metrics.extra.sources = prepared.length;
    this.metrics.extra.rowsFiltered = prepared.reduce((n, s) => n + (s.filterRows ?? 0), 0);
    return hits;
  }

  protected async *run(ctx: ExecContext): AsyncGenerator<RecordBatch> {
    // Every match can be many rows: emitted in slices, each gathered only when pulled.
    const hits = this.hits(ctx);
    for (let i = 0; i < hits.length; i += SCAN_BATCH_ROWS) {
      yield* materialize(hits.slice(i, i + SCAN_BATCH_ROWS), this.snapshot.schema.user, this.columnIndexes, '_score').batches;
    }
  }

  explain(): string {
    const p = this.params;
    return `FtsMatch: match(${p.column}, ${exprToString(p.query)}) via index ${this.def.name} (bm25, statistics over all sources)${p.k !== null ? ` top ${p.k}` : ', every match'}${p.filter ? `, prefilter ${exprToString(p.filter)}` : ''}`;
  }
}
