/**
 * Command: a statement that changes the catalog (CREATE / DROP TABLE, CREATE / DROP INDEX) run as
 * a node, so every statement has a plan EXPLAIN can print and returns the same one-row `count`
 * result (the number of objects created or dropped).
 */
import type { RecordBatch } from 'apache-arrow';
import { BaseExec, type ExecContext } from './exec-node.js';
import { COUNT_RESULT_SCHEMA, countBatch } from './count-result.js';

export class CommandExec extends BaseExec {
  readonly kind = 'Command';

  constructor(
    private readonly description: string,
    private readonly action: () => Promise<number>,
  ) {
    super(COUNT_RESULT_SCHEMA, []);
  }

  protected async *run(_ctx: ExecContext): AsyncGenerator<RecordBatch> {
    yield countBatch(await this.action());
  }

  explain(): string {
    return `Command: ${this.description}`;
  }
}
