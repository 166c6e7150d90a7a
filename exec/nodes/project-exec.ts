/**
 * Project: computes the output columns of each batch — a bare column reference is passed through
 * without copying, anything else is evaluated by the vectorized expression layer (exec/expr) over
 * the whole batch at once. The output schema (names and types) was fixed by the planner, and each
 * evaluated column is checked to have that type, so a Flight client's schema never lies.
 */
import { makeData, RecordBatch, type Schema, Struct } from 'apache-arrow';
import { evaluateValue } from '../expr/index.js';
import type { Expr } from '../expr/expr.js';
import { InternalError } from '../../src/errors.js';
import { BaseExec, type ExecContext, type ExecNode } from './exec-node.js';
import { ExplainNames } from './explain-names.js';

export interface ProjectItem {
  readonly expr: Expr;
  readonly name: string;
}

export class ProjectExec extends BaseExec {
  readonly kind = 'Project';
  /** Per item: the input column index of a bare reference, or -1 (evaluated). */
  private readonly passThrough: number[];

  constructor(
    readonly input: ExecNode,
    readonly items: readonly ProjectItem[],
    schema: Schema,
  ) {
    super(schema, [input]);
    this.passThrough = items.map((i) => (i.expr.kind === 'column' ? input.schema.fields.findIndex((f) => f.name === (i.expr as { name: string }).name) : -1));
  }

  protected async *run(ctx: ExecContext): AsyncGenerator<RecordBatch> {
    for await (const batch of this.input.execute(ctx)) yield this.project(batch, ctx.params);
  }

  /** One batch's output (also used for constant rows by the INSERT path). */
  project(batch: RecordBatch, params: readonly unknown[]): RecordBatch {
    const children = this.items.map((item, i) => {
      const c = this.passThrough[i];
      const data = c >= 0 ? batch.data.children[c] : evaluateValue(item.expr, batch, params);
      const want = this.schema.fields[i].type;
      if (data.type.typeId !== want.typeId) throw new InternalError(`Project: ${item.name} evaluated to ${String(data.type)}, planned ${String(want)}`);
      return data;
    });
    return new RecordBatch(this.schema, makeData({ type: new Struct(this.schema.fields), length: batch.numRows, nullCount: 0, children }));
  }

  explain(names = ExplainNames.NONE): string {
    return `Project: ${this.items.map((i) => names.item(i.expr, i.name)).join(', ')}`;
  }

  defineNames(names: ExplainNames): void {
    for (const i of this.items) names.define(i.name, i.expr);
  }
}
