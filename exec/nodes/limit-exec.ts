/**
 * LimitExec: `LIMIT n OFFSET m` over a stream, without an ORDER BY (that is TopKExec's job).
 *
 * Why it exists: most of a `LIMIT` query's cost is what the child would produce after the limit
 * is reached, so the node is as lazy as the pull model allows.
 *
 * Invariant: the child is never pulled once the node holds enough rows — the batch that
 * completes the limit is sliced and emitted, and the node returns without asking its child for
 * another batch (returning closes the child's generator, so scans release what they hold).
 * `LIMIT 0` never pulls at all. Offset rows are skipped by slicing (zero-copy), never copied.
 */
import type { RecordBatch } from 'apache-arrow';
import { InvalidError } from '../../src/errors.js';
import { BaseExec, type ExecContext, type ExecNode } from './exec-node.js';

export class LimitExec extends BaseExec {
  readonly kind = 'Limit';

  /**
   * @param limit rows to emit after the offset; `null` for no limit (`LIMIT ALL`, OFFSET alone)
   * @param offset rows to skip first
   */
  constructor(
    readonly child: ExecNode,
    readonly limit: number | null,
    readonly offset: number = 0,
  ) {
    super(child.schema, [child]);
    if (limit !== null && !(Number.isSafeInteger(limit) && limit >= 0)) throw new InvalidError(`LIMIT must be a non-negative integer, got ${limit}`);
    if (!(Number.isSafeInteger(offset) && offset >= 0)) throw new InvalidError(`OFFSET must be a non-negative integer, got ${offset}`);
  }

  explain(): string {
    return `Limit: ${this.limit ?? 'all'} offset ${this.offset}`;
  }

  protected async *run(ctx: ExecContext): AsyncGenerator<RecordBatch> {
    if (this.limit === 0) return;
    let skip = this.offset;
    let remaining = this.limit ?? Infinity;
    let skipped = 0;
    try {
      for await (const input of this.child.execute(ctx)) {
        let batch = input;
        if (skip > 0) {
          if (batch.numRows <= skip) {
            skip -= batch.numRows;
            skipped += batch.numRows;
            continue;
          }
          batch = batch.slice(skip);
          skipped += skip;
          skip = 0;
        }
        if (batch.numRows >= remaining) {
          // Enough: emit the last piece and return before the child is pulled again.
          yield batch.numRows === remaining ? batch : batch.slice(0, remaining);
          return;
        }
        remaining -= batch.numRows;
        yield batch;
      }
    } finally {
      this.metrics.extra.rowsSkipped = skipped;
    }
  }
}
