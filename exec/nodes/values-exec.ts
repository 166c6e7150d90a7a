/**
 * ValuesExec: rows the planner already has — `SELECT 1 + 1`, `VALUES (…), (…)`, the rows of an
 * `INSERT … VALUES` — emitted as given.
 *
 * Why it exists: so that a query without a table is still an exec tree with a schema, and
 * EXPLAIN, cancellation and metrics work the same way for it.
 *
 * Invariant: every batch has the node's column count; batches are relabelled with the node's
 * schema (zero-copy) so consumers see one schema object.
 */
import { RecordBatch, type Schema } from 'apache-arrow';
import { InvalidError } from '../../src/errors.js';
import { BaseExec, type ExecContext } from './exec-node.js';

export class ValuesExec extends BaseExec {
  readonly kind = 'Values';
  readonly batches: readonly RecordBatch[];

  constructor(schema: Schema, batches: readonly RecordBatch[]) {
    super(schema, []);
    for (const b of batches) {
      if (b.numCols !== schema.fields.length) throw new InvalidError(`VALUES rows have ${b.numCols} columns, expected ${schema.fields.length}`);
    }
    this.batches = batches.map((b) => (b.schema === schema ? b : new RecordBatch(schema, b.data)));
  }

  explain(): string {
    const rows = this.batches.reduce((n, b) => n + b.numRows, 0);
    return `Values: ${rows} row${rows === 1 ? '' : 's'}`;
  }

  protected async *run(_ctx: ExecContext): AsyncGenerator<RecordBatch> {
    yield* this.batches;
  }
}
