/**
 * UnionExec: `UNION ALL` — the children's rows, child after child, in order.
 *
 * Why it exists: SQL's UNION ALL, and the planner's way of reading a table's sources (MemTables,
 * generations) as one stream. It pulls one child at a time, so only one child's scan is open at
 * once and the output order is deterministic.
 *
 * Invariant: every child has the same column count and column types (checked when the node is
 * built, so a mismatch is a planning error, not a corrupt batch). The output schema is the first
 * child's names and types, nullable where any child's column is; batches are relabelled with it
 * (zero-copy).
 */
import { Field, RecordBatch, Schema } from 'apache-arrow';
import { InvalidError } from '../../src/errors.js';
import { BaseExec, checkCancelled, type ExecContext, type ExecNode } from './exec-node.js';

export class UnionExec extends BaseExec {
  readonly kind = 'Union';

  constructor(children: readonly ExecNode[]) {
    super(unionSchema(children), children);
  }

  explain(): string {
    return `Union: ${this.children.length} inputs`;
  }

  protected async *run(ctx: ExecContext): AsyncGenerator<RecordBatch> {
    for (const child of this.children) {
      checkCancelled(ctx);
      for await (const batch of child.execute(ctx)) {
        yield batch.schema === this.schema ? batch : new RecordBatch(this.schema, batch.data);
      }
    }
  }
}

function unionSchema(children: readonly ExecNode[]): Schema {
  if (children.length === 0) throw new InvalidError('UNION needs at least one input');
  const first = children[0].schema;
  const nullable = first.fields.map((f) => f.nullable);
  children.forEach((child, i) => {
    const fields = child.schema.fields;
    if (fields.length !== first.fields.length) {
      throw new InvalidError(`each UNION query must have the same number of columns: input 1 has ${first.fields.length}, input ${i + 1} has ${fields.length}`);
    }
    fields.forEach((f, c) => {
      const want = first.fields[c];
      if (f.type.typeId !== want.type.typeId || String(f.type) !== String(want.type)) {
        throw new InvalidError(`UNION column ${c + 1} (${want.name}) types ${String(want.type)} and ${String(f.type)} cannot be matched`);
      }
      nullable[c] ||= f.nullable;
    });
  });
  if (nullable.every((n, c) => n === first.fields[c].nullable)) return first;
  return new Schema(first.fields.map((f, c) => new Field(f.name, f.type, nullable[c], f.metadata)), first.metadata);
}
