/**
 * Insert: writes its input's rows into a table (an upsert by primary key) and returns the count.
 *
 * Every row is converted to the table's column types first — CAST's rules, missing columns NULL —
 * and the whole input is handed to one `put`, which validates all of it (NOT NULL, key present,
 * vector dimensions) before anything reaches the log: a statement that fails changes nothing.
 * Rows are acknowledged together, once durable. (A put that spans several regions is atomic per
 * region; see the README.)
 */
import { type Data, type DataType, makeData, RecordBatch, Schema, Struct } from 'apache-arrow';
import { evaluateValue } from '../expr/index.js';
import { cast, col } from '../expr/expr.js';
import { InvalidError } from '../../src/errors.js';
import { BaseExec, type ExecContext, type ExecNode } from './exec-node.js';
import { COUNT_RESULT_SCHEMA, countBatch } from './count-result.js';
import { sqlTypeName } from './values-rows.js';
import { nullColumn } from './null-column.js';

export interface InsertTarget {
  readonly name: string;
  readonly schema: Schema;
  put(batches: readonly RecordBatch[]): Promise<void>;
}

export class InsertExec extends BaseExec {
  readonly kind = 'Insert';

  constructor(
    readonly input: ExecNode,
    private readonly target: InsertTarget,
  ) {
    super(COUNT_RESULT_SCHEMA, [input]);
  }

  protected async *run(ctx: ExecContext): AsyncGenerator<RecordBatch> {
    const batches: RecordBatch[] = [];
    let rows = 0;
    for await (const b of this.input.execute(ctx)) {
      batches.push(this.convert(b, ctx.params));
      rows += b.numRows;
    }
    if (rows > 0) await this.target.put(batches);
    yield countBatch(rows);
  }

  private convert(batch: RecordBatch, params: readonly unknown[]): RecordBatch {
    const schema = this.target.schema;
    const children: Data[] = schema.fields.map((field) => {
      const i = batch.schema.fields.findIndex((f) => f.name === field.name);
      if (i < 0) return nullColumn(field.type, batch.numRows);
      const data = batch.data.children[i];
      if (sameLayout(data.type, field.type)) return data;
      const target = sqlTypeName(field.type);
      if (!target) throw new InvalidError(`column ${field.name} is ${String(field.type)}; the value is ${String(data.type)}`);
      return evaluateValue(cast(col(field.name), target), new RecordBatch(new Schema([batch.schema.fields[i]]), makeData({ type: new Struct([batch.schema.fields[i]]), length: batch.numRows, nullCount: 0, children: [data] })), params);
    });
    return new RecordBatch(schema, makeData({ type: new Struct(schema.fields), length: batch.numRows, nullCount: 0, children }));
  }

  explain(): string {
    return `Insert: into ${this.target.name} (upsert by primary key)`;
  }
}

function sameLayout(a: DataType, b: DataType): boolean {
  return String(a) === String(b);
}
