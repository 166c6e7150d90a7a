/**
 * VectorKnn: the k rows nearest a query vector across every source of a table snapshot, with the
 * query's filter as a true prefilter (the k nearest *among the rows that pass*, never "k nearest,
 * then filtered down to fewer").
 *
 * Per source: the IVF-PQ index when it has a trained model of the query's metric and enough
 * rows, an exact brute-force scan otherwise — both over `live ∧ filter`, so superseded and
 * deleted rows are never candidates. Sources sharing a model share one candidate pool and one
 * exact re-rank (IvfPqIndex.searchMany). Indexed and exact sources produce the same schema, so
 * the planner can choose per source; which path each took (and why an exact one) is in
 * `metrics.extra` for EXPLAIN ANALYZE, and never silent.
 */
import type { RecordBatch, Schema } from 'apache-arrow';
import { exprToString, type Expr } from '../expr/expr.js';
import type { IndexDef } from '../../src/index/index-def.js';
import type { Metric } from '../../src/index/vector/distance.js';
import { type Hit, materialize, prepareSources, type SourcePlan, vectorHits } from '../../src/table/search.js';
import type { TableSnapshot } from '../../src/table/table.js';
import { BaseExec, type ExecContext } from './exec-node.js';
import { queryVector } from './search-inputs.js';

export interface VectorKnnParams {
  readonly column: string;
  readonly query: Expr;
  readonly metric: Metric;
  readonly k: number;
  readonly filter: Expr | null;
  readonly nprobes: number | null;
  readonly refine: number | null;
}

export class VectorKnnExec extends BaseExec {
  readonly kind = 'VectorKnn';
  private readonly def: IndexDef | undefined;

  constructor(
    schema: Schema,
    private readonly snapshot: TableSnapshot,
    readonly params: VectorKnnParams,
    /** User-schema indexes of the emitted table columns (then `_distance`). */
    private readonly columnIndexes: readonly number[],
  ) {
    super(schema, []);
    this.def = snapshot.indexes.find((d) => d.type === 'ivf_pq' && d.column === params.column);
  }

  /** The k nearest rows of the snapshot (HybridFusion calls this for its vector leg). */
  hits(ctx: ExecContext): Hit[] {
    const p = this.params;
    const field = this.snapshot.schema.user.fields.find((f) => f.name === p.column)!;
    const dimension = (field.type as { listSize: number }).listSize;
    const query = queryVector(p.query, ctx.params, dimension, `${p.metric}_distance(${p.column}, …)`);
    const { keyIndexes, tombstoneIndex } = this.snapshot.schema;
    const prepared = prepareSources(this.snapshot.regions, keyIndexes, tombstoneIndex, p.filter ?? undefined, ctx.params, this.snapshot.indexes);
    const plan: SourcePlan[] = [];
    const hits = vectorHits(prepared, { def: this.def, column: p.column, query, metric: p.metric, k: p.k, nprobes: p.nprobes ?? undefined, refineFactor: p.refine ?? undefined }, plan);
    this.record(plan);
    return hits;
  }

  protected async *run(ctx: ExecContext): AsyncGenerator<RecordBatch> {
    const hits = this.hits(ctx);
    const table = materialize(hits, this.snapshot.schema.user, this.columnIndexes, '_distance');
    yield* table.batches;
  }

  private record(plan: readonly SourcePlan[]): void {
    const paths = new Map<string, number>();
    for (const s of plan) {
      const key = s.path + (s.reason ? ` (${s.reason})` : '');
      paths.set(key, (paths.get(key) ?? 0) + 1);
    }
    this.metrics.extra.sources = [...paths].map(([k, n]) => `${n}× ${k}`).join(', ');
    const probed = plan.find((s) => s.partitionsProbed !== undefined);
    if (probed) this.metrics.extra.partitionsProbed = `${probed.partitionsProbed}/${probed.partitions}`;
    this.metrics.extra.rowsFiltered = plan.reduce((n, s) => n + (s.filterRows ?? 0), 0);
  }

  explain(): string {
    const p = this.params;
    const how = !this.def
      ? 'exact (no IVF-PQ index on the column)'
      : (this.def.metric ?? 'l2') !== p.metric
        ? `exact (the index ${this.def.name} uses metric ${this.def.metric ?? 'l2'}, the query ${p.metric})`
        : !this.def.model
          ? `exact (index ${this.def.name} has no trained model yet)`
          : `index ${this.def.name} (ivf_pq, ${this.def.partitions ?? 'default'} partitions, nprobes ${p.nprobes ?? 'default'}, refine ${p.refine ?? 'default'}; exact on sources under 2048 rows)`;
    const sources = this.snapshot.regions.reduce((n, r) => n + r.sources.length, 0);
    return `VectorKnn: ${p.metric}_distance(${p.column}, ${exprToString(p.query).slice(0, 40)}) k=${p.k} via ${how}${p.filter ? `, prefilter ${exprToString(p.filter)}` : ''}, ${sources} source(s)`;
  }
}
