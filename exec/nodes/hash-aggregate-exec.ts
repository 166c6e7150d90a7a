/**
 * HashAggregateExec: `GROUP BY` with count / sum / avg / min / max (and their DISTINCT forms),
 * or one global group when there is no GROUP BY.
 *
 * Why it exists: an aggregate is the other blocking operator beside Sort, but it only has to
 * hold one entry per group, not the rows. Each batch is processed column-wise: the group-key
 * columns are hashed from their typed arrays into a group id per row
 * (`exec/kernels/hash-keys.ts`), then every accumulator adds the batch into its per-group
 * arrays with that id vector (`exec/kernels/group-aggregates.ts`). A DISTINCT aggregate first
 * passes (group id, value) pairs through its own hash table and adds only first occurrences.
 * Group state is counted against a memory budget, so a GROUP BY over a near-unique key on a huge
 * input fails this query with a clear error instead of the process.
 *
 * Invariants (SQL): NULL group keys form one group; groups come out in first-seen order;
 * aggregates ignore NULL inputs, and sum/avg/min/max over no non-NULL input are NULL while count
 * is 0; with no GROUP BY there is exactly one output row even over zero input rows, with a
 * GROUP BY zero input rows give zero groups. Output schema: the group columns (the input's
 * fields: names, types, nullability) then one column per aggregate, named by the aggregate's
 * `name`, typed by `aggregateResultType`.
 */
import { type Data, Field, Int32, makeData, type RecordBatch, Schema } from 'apache-arrow';
import { InvalidError } from '../../src/errors.js';
import { type AggregateFn, aggregateResultType, type GroupAccumulator, makeAccumulator } from '../kernels/group-aggregates.js';
import { GroupKeyTable, isGroupableType } from '../kernels/hash-keys.js';
import { BaseExec, checkCancelled, type ExecContext, type ExecNode } from './exec-node.js';
import { ExplainNames } from './explain-names.js';
import { call, col, type Expr } from '../expr/expr.js';
import { DEFAULT_OPERATOR_MEMORY_BYTES, MemoryBudget } from './memory-budget.js';
import { makeBatch, SORT_OUTPUT_BATCH_ROWS } from './sort-exec.js';

export type { AggregateFn } from '../kernels/group-aggregates.js';
export { aggregateResultType } from '../kernels/group-aggregates.js';

export interface AggregateSpec {
  readonly fn: AggregateFn;
  /** Input column; required except for count_star. */
  readonly column?: number;
  /** count(DISTINCT x), sum(DISTINCT x), … */
  readonly distinct?: boolean;
  /** Output column name. */
  readonly name: string;
}

export interface HashAggregateOptions {
  /** Bytes the group table and accumulators may take; default `DEFAULT_OPERATOR_MEMORY_BYTES`. */
  readonly memoryLimitBytes?: number;
}

export class HashAggregateExec extends BaseExec {
  readonly kind = 'HashAggregate';
  readonly groupColumns: readonly number[];
  readonly aggregates: readonly AggregateSpec[];
  readonly memoryLimitBytes: number;

  constructor(
    readonly child: ExecNode,
    groupColumns: readonly number[],
    aggregates: readonly AggregateSpec[],
    options: HashAggregateOptions = {},
  ) {
    super(aggregateSchema(child.schema, groupColumns, aggregates), [child]);
    this.groupColumns = [...groupColumns];
    this.aggregates = aggregates.map((a) => ({ ...a }));
    this.memoryLimitBytes = options.memoryLimitBytes ?? DEFAULT_OPERATOR_MEMORY_BYTES;
  }

  explain(names = ExplainNames.NONE): string {
    const input = this.child.schema.fields;
    const groups = this.groupColumns.map((c) => names.column(input[c].name)).join(', ');
    const aggs = this.aggregates.map((a) => names.item(this.aggregateCall(a), a.name)).join(', ');
    return `HashAggregate: group by [${groups}] aggregates [${aggs}]`;
  }

  defineNames(names: ExplainNames): void {
    for (const a of this.aggregates) names.define(a.name, this.aggregateCall(a));
  }

  /** `sum(x)`, `count(DISTINCT x)`, `count(*)` over the input column's name (for EXPLAIN). */
  private aggregateCall(a: AggregateSpec): Expr {
    if (a.fn === 'count_star') return call('count', [], { star: true });
    return call(a.fn, [col(this.child.schema.fields[a.column as number].name)], { distinct: a.distinct === true });
  }

  protected async *run(ctx: ExecContext): AsyncGenerator<RecordBatch> {
    const budget = new MemoryBudget('HashAggregate', this.memoryLimitBytes, 'groups');
    const input = this.child.schema.fields;
    const grouped = this.groupColumns.length > 0;
    const table = grouped ? new GroupKeyTable(this.groupColumns.map((c) => input[c].type)) : undefined;
    const accs: GroupAccumulator[] = this.aggregates.map((a) => makeAccumulator(a.fn, a.column === undefined ? undefined : input[a.column].type));
    // DISTINCT: a (group id, value) table per aggregate; a new pair is a first occurrence.
    const distinct = this.aggregates.map((a) => (a.distinct && a.fn !== 'count_star' ? new GroupKeyTable([groupIdType, input[a.column as number].type]) : undefined));
    let groups = grouped ? 0 : 1;
    for (const acc of accs) acc.resize(groups);
    let gids = new Int32Array(0);
    let rowsIn = 0;
    try {
      for await (const batch of this.child.execute(ctx)) {
        checkCancelled(ctx);
        const n = batch.numRows;
        if (n === 0) continue;
        rowsIn += n;
        if (gids.length < n) gids = new Int32Array(Math.max(n, gids.length * 2));
        const ids = gids.subarray(0, n);
        const cols = batch.data.children;
        if (table) groups = table.findOrInsert(this.groupColumns.map((c) => cols[c]), ids);
        else ids.fill(0);
        for (let a = 0; a < accs.length; a++) {
          const spec = this.aggregates[a];
          accs[a].resize(groups);
          const column = spec.column === undefined ? undefined : cols[spec.column];
          const dt = distinct[a];
          if (dt) {
            const before = dt.size;
            const pairIds = new Int32Array(n);
            dt.findOrInsert([groupIdData(ids), column as NonNullable<typeof column>], pairIds);
            const use = new Uint8Array(n);
            // A pair id at or past the table's size before this batch is new; within the batch, only its first row.
            let next = before;
            for (let i = 0; i < n; i++) if (pairIds[i] === next) (use[i] = 1), next++;
            accs[a].update(ids, n, column, use);
          } else accs[a].update(ids, n, column);
        }
        let bytes = (table?.byteLength ?? 0) + gids.byteLength;
        for (const acc of accs) bytes += acc.byteLength;
        for (const dt of distinct) bytes += dt?.byteLength ?? 0;
        budget.setUsed(bytes, groups);
      }
      this.metrics.extra.groups = groups;
      if (groups === 0) return;
      const columns = [...(table ? table.keyColumns() : []), ...accs.map((acc) => acc.finish(groups))];
      const all = makeBatch(this.schema, groups, columns);
      for (let at = 0; at < groups; at += SORT_OUTPUT_BATCH_ROWS) {
        yield groups <= SORT_OUTPUT_BATCH_ROWS ? all : all.slice(at, Math.min(groups, at + SORT_OUTPUT_BATCH_ROWS));
      }
    } finally {
      Object.assign(this.metrics.extra, { rowsIn, peakMemoryBytes: budget.peak });
      budget.release();
    }
  }
}

const groupIdType = new Int32();
function groupIdData(ids: Int32Array): Data {
  return makeData({ type: groupIdType, length: ids.length, nullCount: 0, data: ids });
}

/** Group fields (the input's), then one field per aggregate. Throws InvalidError for bad specs. */
export function aggregateSchema(input: Schema, groupColumns: readonly number[], aggregates: readonly AggregateSpec[]): Schema {
  const fields: Field[] = [];
  for (const c of groupColumns) {
    const f = input.fields[c];
    if (!Number.isInteger(c) || !f) throw new InvalidError(`HashAggregate: group column ${c} is not in the input (${input.fields.length} columns)`);
    if (!isGroupableType(f.type)) throw new InvalidError(`cannot group by ${f.name} of type ${String(f.type)}`);
    fields.push(f);
  }
  for (const a of aggregates) {
    let type;
    if (a.fn === 'count_star') {
      if (a.distinct) throw new InvalidError('count(DISTINCT *) is not valid SQL');
      type = aggregateResultType('count_star', undefined);
    } else {
      const f = a.column === undefined ? undefined : input.fields[a.column];
      if (!f) throw new InvalidError(`HashAggregate: ${a.fn} needs an input column (got ${a.column})`);
      if (a.distinct && !isGroupableType(f.type)) throw new InvalidError(`${a.fn}(DISTINCT ${f.name}) over type ${String(f.type)} is not supported`);
      type = aggregateResultType(a.fn, f.type);
    }
    fields.push(new Field(a.name, type, a.fn !== 'count' && a.fn !== 'count_star'));
  }
  return new Schema(fields);
}
