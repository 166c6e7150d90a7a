/**
 * Filter: keeps the rows of each batch where a predicate is TRUE (FALSE and NULL both drop the
 * row, SQL's WHERE). Filters on table columns are pushed into the sources as prefilters by the
 * planner; what stays here reads computed columns: HAVING over aggregates, `_score` / `_distance`
 * conditions, conditions over projected expressions.
 */
import { makeData, RecordBatch, Struct } from 'apache-arrow';
import { evaluateFilter } from '../expr/evaluate.js';
import type { Expr } from '../expr/expr.js';
import { takeData } from '../kernels/take.js';
import { BaseExec, type ExecContext, type ExecNode } from './exec-node.js';
import { ExplainNames } from './explain-names.js';

export class FilterExec extends BaseExec {
  readonly kind = 'Filter';

  constructor(
    readonly input: ExecNode,
    readonly predicate: Expr,
  ) {
    super(input.schema, [input]);
  }

  protected async *run(ctx: ExecContext): AsyncGenerator<RecordBatch> {
    for await (const batch of this.input.execute(ctx)) {
      const mask = evaluateFilter(this.predicate, batch, ctx.params);
      let count = 0;
      for (let i = 0; i < mask.length; i++) count += mask[i];
      if (count === 0) continue;
      if (count === batch.numRows) {
        yield batch;
        continue;
      }
      const indices = new Uint32Array(count);
      let o = 0;
      for (let i = 0; i < mask.length; i++) if (mask[i]) indices[o++] = i;
      const children = batch.data.children.map((c) => takeData(c, indices));
      yield new RecordBatch(this.schema, makeData({ type: new Struct(this.schema.fields), length: count, nullCount: 0, children }));
    }
  }

  explain(names = ExplainNames.NONE): string {
    return `Filter: ${names.expr(this.predicate)}`;
  }
}
