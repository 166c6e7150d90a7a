/**
 * The SQL engine behind `db.sql` and `db.query` (and through them the CLI and the Flight
 * server): text → cached statement → logical plan → rules → exec tree over table snapshots →
 * a pull-based stream of record batches.
 *
 * Only parsing is cached (by text); the plan is rebuilt per execution because it depends on the
 * tables' current schemas and index definitions and on the snapshot, and building it is cheap
 * next to parsing. Results stream: `query` yields each batch as the exec tree produces it, so a
 * consumer that stops early (or aborts its signal) stops the scan, and the snapshot — captured
 * MemTables and generations — becomes unreachable as soon as the stream is dropped.
 */
import { type RecordBatch, type Schema, Table as ArrowTable } from 'apache-arrow';
import { parseSql } from '../src/sql/parse.js';
import type { Statement } from '../src/sql/statement.js';
import { InvalidError, isQuiverError } from '../src/errors.js';
import type { Table } from '../src/table/table.js';
import type { ExecNode } from '../exec/nodes/exec-node.js';
import { buildPlan, type PlanOptions, type PlanningCatalog, type TableInfo } from './builder.js';
import type { LogicalPlan } from './logical-plan.js';
import { createPhysicalPlan, type EngineHost } from './physical-planner.js';
import { optimize } from './rules.js';

export type { EngineHost } from './physical-planner.js';

export interface QueryOptions extends PlanOptions {
  /** Aborting it cancels the query: the stream ends with a `cancelled` error. */
  readonly signal?: AbortSignal;
}

/** A planned statement, ready to run (`EXPLAIN` without running it, result schema up front). */
export interface PreparedQuery {
  readonly statement: Statement;
  readonly logical: LogicalPlan;
  readonly exec: ExecNode;
  readonly schema: Schema;
}

export class QueryEngine {
  constructor(private readonly host: EngineHost) {}

  /** Parses and plans a statement against the current state of its tables. */
  async prepare(text: string, params: readonly unknown[] = [], options: QueryOptions = {}): Promise<PreparedQuery> {
    checkParams(params);
    const statement = parseSql(text);
    const tables = new Map<string, Table>();
    for (const name of tablesOf(statement)) {
      const table = await this.open(name);
      if (table) tables.set(name, table);
    }
    const catalog: PlanningCatalog = {
      table: (name) => {
        const t = tables.get(name);
        return t ? tableInfo(t) : undefined;
      },
    };
    const logical = optimize(buildPlan(statement, catalog, params, options), { catalog, params, options });
    // The physical planner looks tables up by the name the logical plan settled on.
    const byPlanName = new Map<string, Table>();
    for (const t of tables.values()) byPlanName.set(t.name, t);
    for (const [n, t] of tables) byPlanName.set(n, t);
    const exec = await createPhysicalPlan(logical, { host: this.host, tables: byPlanName, params });
    return { statement, logical, exec, schema: exec.schema };
  }

  /** Runs a statement, streaming its result batches. */
  async *query(text: string, params: readonly unknown[] = [], options: QueryOptions = {}): AsyncGenerator<RecordBatch> {
    const prepared = await this.prepare(text, params, options);
    yield* prepared.exec.execute({ params, signal: options.signal });
  }

  /** Runs a statement and collects its result as one Arrow table (with the planned schema even when empty). */
  async sql(text: string, params: readonly unknown[] = [], options: QueryOptions = {}): Promise<ArrowTable> {
    const prepared = await this.prepare(text, params, options);
    const batches: RecordBatch[] = [];
    for await (const b of prepared.exec.execute({ params, signal: options.signal })) batches.push(b);
    return batches.length ? new ArrowTable(batches) : new ArrowTable(prepared.schema);
  }

  /** A table by its SQL name: as written, else lower-cased (PostgreSQL folds unquoted names). */
  private async open(name: string): Promise<Table | undefined> {
    for (const candidate of name === name.toLowerCase() ? [name] : [name, name.toLowerCase()]) {
      try {
        return await this.host.openTable(candidate);
      } catch (e) {
        if (isQuiverError(e, 'not_found') || isQuiverError(e, 'invalid')) continue;
        throw e;
      }
    }
    return undefined;
  }
}

function tableInfo(t: Table): TableInfo {
  return { name: t.name, schema: t.schema, primaryKey: t.primaryKey, indexes: t.indexes };
}

/** Tables a statement reads or writes (existing ones; CREATE TABLE's is not looked up). */
function tablesOf(s: Statement): string[] {
  switch (s.kind) {
    case 'select':
      return s.from ? [s.from.table] : [];
    case 'insert':
      return [s.table, ...(s.select ? tablesOf(s.select) : [])];
    case 'delete':
    case 'create_index':
      return [s.table];
    case 'explain':
      return tablesOf(s.statement);
    default:
      return [];
  }
}

const PARAM_KINDS = 'number, bigint, string, boolean, null, Date, Float32Array or number[]';

function checkParams(params: readonly unknown[]): void {
  if (!Array.isArray(params)) throw new InvalidError(`SQL parameters must be an array (of ${PARAM_KINDS})`);
  params.forEach((p, i) => {
    const ok =
      p === null ||
      ['number', 'bigint', 'string', 'boolean'].includes(typeof p) ||
      p instanceof Date ||
      p instanceof Float32Array ||
      p instanceof Float64Array ||
      (Array.isArray(p) && p.every((x) => typeof x === 'number'));
    if (!ok) throw new InvalidError(`parameter $${i + 1} must be a ${PARAM_KINDS}; got ${p === undefined ? 'undefined' : typeof p}`);
  });
}
