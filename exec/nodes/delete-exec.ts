/**
 * Delete: reads the primary keys of the rows its input selects (live rows only: the input is a
 * scan under KeyDedup with the DELETE's predicate as prefilter) and writes one tombstone per key
 * in a single durable write, then returns the count. The predicate is evaluated on the newest
 * version of each key only, so `DELETE … WHERE price < 10` does not delete a key whose current
 * price is 20 because an old version cost 5.
 */
import type { RecordBatch } from 'apache-arrow';
import { BaseExec, type ExecContext, type ExecNode } from './exec-node.js';
import { COUNT_RESULT_SCHEMA, countBatch } from './count-result.js';

export interface DeleteTarget {
  readonly name: string;
  deleteKeys(keys: readonly RecordBatch[]): Promise<void>;
}

export class DeleteExec extends BaseExec {
  readonly kind = 'Delete';

  constructor(
    readonly input: ExecNode,
    private readonly target: DeleteTarget,
  ) {
    super(COUNT_RESULT_SCHEMA, [input]);
  }

  protected async *run(ctx: ExecContext): AsyncGenerator<RecordBatch> {
    const keys: RecordBatch[] = [];
    let rows = 0;
    for await (const b of this.input.execute(ctx)) {
      keys.push(b);
      rows += b.numRows;
    }
    if (rows > 0) await this.target.deleteKeys(keys);
    yield countBatch(rows);
  }

  explain(): string {
    return `Delete: from ${this.target.name} (a tombstone per primary key)`;
  }
}
