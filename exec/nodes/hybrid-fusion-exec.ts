/**
 * HybridFusion: a vector leg and a full-text leg over the same snapshot and filter, fused by
 * reciprocal rank (RRF, k = 60): a row's relevance is Σ 1 / (60 + rank) over the legs that found
 * it, so neither leg's score scale dominates. Rows are identified by their position in their
 * source, so the two legs' copies of a row fuse exactly (no primary-key comparison needed), and
 * both legs see only live rows passing the filter.
 *
 * Output: the table columns, `_distance` (NULL when only the text leg found the row), `_score`
 * (NULL when only the vector leg did) and `_relevance_score`, best first; ties by the vector
 * leg's rank, then the text leg's.
 */
import { Float32, makeData, RecordBatch, type Schema, Struct } from 'apache-arrow';
import type { Hit, SearchSource } from '../../src/table/search.js';
import { materialize } from '../../src/table/search.js';
import type { TableSnapshot } from '../../src/table/table.js';
import { BaseExec, type ExecContext } from './exec-node.js';
import type { FtsMatchExec } from './fts-match-exec.js';
import type { VectorKnnExec } from './vector-knn-exec.js';

/** The RRF constant of Cormack et al. (2009), as LanceDB and others use it. */
export const RRF_K = 60;

export class HybridFusionExec extends BaseExec {
  readonly kind = 'HybridFusion';

  constructor(
    schema: Schema,
    private readonly snapshot: TableSnapshot,
    private readonly vector: VectorKnnExec,
    private readonly text: FtsMatchExec,
    private readonly k: number,
    private readonly columnIndexes: readonly number[],
  ) {
    super(schema, [vector, text]);
  }

  protected async *run(ctx: ExecContext): AsyncGenerator<RecordBatch> {
    const vectorHits = this.vector.hits(ctx);
    const textHits = this.text.hits(ctx);
    this.vector.metrics.rows = vectorHits.length;
    this.text.metrics.rows = textHits.length;
    interface Fused {
      hit: Hit;
      distance: number | null;
      score: number | null;
      relevance: number;
      vRank: number;
      tRank: number;
    }
    const bySource = new Map<SearchSource, Map<number, Fused>>();
    const fused: Fused[] = [];
    const entry = (h: Hit): Fused => {
      let m = bySource.get(h.source);
      if (!m) bySource.set(h.source, (m = new Map()));
      let f = m.get(h.position);
      if (!f) {
        f = { hit: h, distance: null, score: null, relevance: 0, vRank: Infinity, tRank: Infinity };
        m.set(h.position, f);
        fused.push(f);
      }
      return f;
    };
    vectorHits.forEach((h, rank) => {
      const f = entry(h);
      f.distance = h.value;
      f.vRank = rank;
      f.relevance += 1 / (RRF_K + rank + 1);
    });
    textHits.forEach((h, rank) => {
      const f = entry(h);
      f.score = h.value;
      f.tRank = rank;
      f.relevance += 1 / (RRF_K + rank + 1);
    });
    fused.sort((a, b) => b.relevance - a.relevance || a.vRank - b.vRank || a.tRank - b.tRank);
    const top = fused.slice(0, this.k);
    const base = materialize(top.map((f) => f.hit), this.snapshot.schema.user, this.columnIndexes, undefined);
    if (top.length === 0) return;
    const n = top.length;
    const column = (get: (f: Fused) => number | null) => {
      const values = new Float32Array(n);
      const validity = new Uint8Array((n + 7) >> 3);
      let nulls = 0;
      top.forEach((f, i) => {
        const v = get(f);
        if (v === null) nulls++;
        else {
          values[i] = v;
          validity[i >> 3] |= 1 << (i & 7);
        }
      });
      return makeData({ type: new Float32(), length: n, nullCount: nulls, nullBitmap: nulls ? validity : null, data: values } as never);
    };
    const children = [
      ...base.batches[0].data.children,
      column((f) => f.distance),
      column((f) => f.score),
      column((f) => f.relevance),
    ];
    yield new RecordBatch(this.schema, makeData({ type: new Struct(this.schema.fields), length: n, nullCount: 0, children }));
  }

  explain(): string {
    return `HybridFusion: reciprocal rank (k = ${RRF_K}) of the vector and text legs, top ${this.k}`;
  }
}
