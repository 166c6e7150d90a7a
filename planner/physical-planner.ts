/**
 * Logical plan → exec node tree, per table snapshot.
 *
 * Each table the plan reads is snapshotted once, when the query is planned (every region's
 * MemTables and generations as of that moment; later writes are not seen, concurrent ones never
 * tear it). A Scan becomes, per region, a KeyDedup over one scan node per source — MemTableScan,
 * GenerationScan, or ScalarIndexScan where a filter conjunct can use a scalar index — under a
 * Union across regions; the prefilter runs after liveness inside KeyDedup. A VectorSearch becomes
 * VectorKnn (IVF-PQ or exact per source, chosen at run time from each source's index state and
 * shown by EXPLAIN), a TextSearch FtsMatch (global BM25 statistics), a HybridSearch HybridFusion
 * of both. Aggregates get a Project computing their group keys and arguments as columns first,
 * so HashAggregate works on columns only; sort keys are already columns (the builder projects
 * them).
 */
import { type Schema } from 'apache-arrow';
import { type Expr, exprToString } from '../exec/expr/expr.js';
import { inferType } from '../exec/expr/index.js';
import { CommandExec } from '../exec/nodes/command-exec.js';
import { DeleteExec } from '../exec/nodes/delete-exec.js';
import type { ExecNode } from '../exec/nodes/exec-node.js';
import { ExplainExec } from '../exec/nodes/explain-exec.js';
import { FilterExec } from '../exec/nodes/filter-exec.js';
import { FtsMatchExec } from '../exec/nodes/fts-match-exec.js';
import { GenerationScanExec } from '../exec/nodes/generation-scan-exec.js';
import { HashAggregateExec } from '../exec/nodes/hash-aggregate-exec.js';
import { HybridFusionExec } from '../exec/nodes/hybrid-fusion-exec.js';
import { InsertExec } from '../exec/nodes/insert-exec.js';
import { KeyDedupExec } from '../exec/nodes/key-dedup-exec.js';
import { LimitExec } from '../exec/nodes/limit-exec.js';
import { MemTableScanExec } from '../exec/nodes/memtable-scan-exec.js';
import { ProjectExec } from '../exec/nodes/project-exec.js';
import { ScalarIndexScanExec } from '../exec/nodes/scalar-index-scan-exec.js';
import { SortExec } from '../exec/nodes/sort-exec.js';
import type { SourceScanExec } from '../exec/nodes/source-scan.js';
import { TopKExec } from '../exec/nodes/top-k-exec.js';
import { UnionExec } from '../exec/nodes/union-exec.js';
import { ValuesExec } from '../exec/nodes/values-exec.js';
import { valuesBatch } from '../exec/nodes/values-rows.js';
import { VectorKnnExec } from '../exec/nodes/vector-knn-exec.js';
import { EMPTY_ROW } from '../exec/nodes/empty-row.js';
import { AlreadyExistsError, InvalidError, isQuiverError, NotFoundError } from '../src/errors.js';
import { indexedConjuncts, primaryKeyValues } from '../src/table/indexed-filter.js';
import type { Table, TableSnapshot } from '../src/table/table.js';
import type { RegionSpec } from '../src/region/region-spec.js';
import { Field, Schema as ArrowSchema } from 'apache-arrow';
import type { CreateIndexPlan, LogicalPlan, ScanPlan, SortKey, TextSearchPlan, VectorSearchPlan } from './logical-plan.js';
import { inputsOf } from './logical-plan.js';

/** What the engine needs from a database: tables by name and the catalog operations. */
export interface EngineHost {
  openTable(name: string): Promise<Table>;
  createTable(name: string, schema: Schema, options: { primaryKey: string | string[]; regionSpec?: RegionSpec }): Promise<Table>;
  dropTable(name: string): Promise<void>;
  tableNames(): Promise<string[]>;
}

export interface PhysicalContext {
  readonly host: EngineHost;
  /** Open tables referenced by the plan, by name. */
  readonly tables: ReadonlyMap<string, Table>;
  readonly params: readonly unknown[];
}

/** Plans the exec tree; snapshots every table the plan reads first. */
export async function createPhysicalPlan(plan: LogicalPlan, ctx: PhysicalContext): Promise<ExecNode> {
  const reads = new Map<string, Set<string>>();
  // Tables a vector or text search reads need every index of every source; a table only scanned
  // needs its scalar indexes (a filter conjunct may use one), so a generation not loaded yet is
  // loaded without its full-text and IVF-PQ sidecars.
  const searched = new Set<string>();
  const walk = (p: LogicalPlan) => {
    if (p.kind === 'scan' || p.kind === 'text_search') reads.set(p.table, reads.get(p.table) ?? new Set());
    if (p.kind === 'vector_search') (reads.get(p.table) ?? reads.set(p.table, new Set()).get(p.table)!).add(p.column);
    if (p.kind === 'vector_search' || p.kind === 'text_search') searched.add(p.table);
    inputsOf(p).forEach(walk);
  };
  walk(plan);
  const snapshots = new Map<string, TableSnapshot>();
  await Promise.all(
    [...reads].map(async ([name, vectorColumns]) => {
      const table = ctx.tables.get(name);
      if (!table) throw new NotFoundError(`table ${name} does not exist`);
      snapshots.set(name, await table.snapshot({ vectorColumns: [...vectorColumns], indexes: searched.has(name) ? 'all' : 'scalar' }));
    }),
  );
  return new PhysicalPlanner(ctx, snapshots).plan(plan);
}

class PhysicalPlanner {
  constructor(
    private readonly ctx: PhysicalContext,
    private readonly snapshots: ReadonlyMap<string, TableSnapshot>,
  ) {}

  plan(p: LogicalPlan): ExecNode {
    switch (p.kind) {
      case 'scan':
        return this.scan(p);
      case 'vector_search':
        return this.vectorKnn(p);
      case 'text_search':
        return this.ftsMatch(p);
      case 'hybrid_search': {
        const snapshot = this.snapshot(p.vector.table);
        return new HybridFusionExec(p.schema, snapshot, this.vectorKnn(p.vector), this.ftsMatch(p.text), p.k, this.userIndexes(snapshot, p.vector.columns));
      }
      case 'filter':
        return new FilterExec(this.plan(p.input), p.predicate);
      case 'project':
        return new ProjectExec(this.plan(p.input), p.items, p.schema);
      case 'aggregate': {
        const input = this.plan(p.input);
        const items = [
          ...p.groups.map((g) => ({ expr: g.expr, name: g.name })),
          ...p.aggregates.flatMap((a, i) => (a.arg ? [{ expr: a.arg, name: `__arg${i}` }] : [])),
        ];
        const argSchema = new ArrowSchema([
          ...p.schema.fields.slice(0, p.groups.length),
          ...p.aggregates.flatMap((a, i) => (a.arg ? [new Field(`__arg${i}`, this.argType(a.arg, input), true)] : [])),
        ]);
        const project = new ProjectExec(input, items, argSchema);
        let next = p.groups.length;
        const aggregates = p.aggregates.map((a) => ({ fn: a.fn, column: a.arg ? next++ : undefined, distinct: a.distinct, name: a.name }));
        return new HashAggregateExec(project, p.groups.map((_, i) => i), aggregates);
      }
      case 'sort':
        return new SortExec(this.plan(p.input), this.keys(p.input.schema, p.keys));
      case 'top_k':
        return new TopKExec(this.plan(p.input), this.keys(p.input.schema, p.keys), p.limit, p.offset);
      case 'limit':
        return new LimitExec(this.plan(p.input), p.limit, p.offset);
      case 'values':
        if (p.schema.fields.length === 0) return new ValuesExec(p.schema, p.rows.map(() => EMPTY_ROW));
        return new ValuesExec(p.schema, [valuesBatch(p.rows, p.schema, this.ctx.params)]);
      case 'insert': {
        const table = this.table(p.table);
        return new InsertExec(this.plan(p.input), { name: table.name, schema: table.schema, put: (batches) => table.put([...batches]) });
      }
      case 'delete': {
        const table = this.table(p.table);
        return new DeleteExec(this.plan(p.input), { name: table.name, deleteKeys: (keys) => table.deleteKeys(keys) });
      }
      case 'create_table':
        return new CommandExec(`create table ${p.table} (${p.columns.map((c) => `${c.name} ${c.typeText}`).join(', ')}, primary key (${p.primaryKey.join(', ')}))`, async () => {
          const schema = new ArrowSchema(p.columns.map((c) => new Field(c.name, c.type, !c.notNull)));
          try {
            await this.ctx.host.createTable(p.table, schema, { primaryKey: [...p.primaryKey], regionSpec: p.regionSpec });
            return 1;
          } catch (e) {
            if (p.ifNotExists && isQuiverError(e, 'already_exists')) return 0;
            throw e;
          }
        });
      case 'drop_table':
        return new CommandExec(`drop table ${p.tables.join(', ')}`, async () => {
          const existing = new Set(await this.ctx.host.tableNames());
          const missing = p.tables.filter((t) => !existing.has(t));
          if (missing.length && !p.ifExists) throw new NotFoundError(`table ${missing[0]} does not exist`);
          let n = 0;
          for (const t of p.tables) {
            if (!existing.has(t)) continue;
            await this.ctx.host.dropTable(t);
            n++;
          }
          return n;
        });
      case 'create_index':
        return this.createIndex(p);
      case 'drop_index':
        return new CommandExec(`drop index ${p.name}`, async () => {
          // Index names are unique per table; DROP INDEX names no table, so look in each.
          const owners: Table[] = [];
          for (const name of await this.ctx.host.tableNames()) {
            const t = await this.ctx.host.openTable(name);
            if (t.indexes.some((d) => d.name === p.name)) owners.push(t);
          }
          if (owners.length === 0) {
            if (p.ifExists) return 0;
            throw new NotFoundError(`index ${p.name} does not exist`);
          }
          if (owners.length > 1) throw new InvalidError(`index name ${p.name} is used by tables ${owners.map((t) => t.name).join(', ')}; drop the table's index through table.dropIndex`);
          await owners[0].dropIndex(p.name);
          return 1;
        });
      case 'explain':
        return new ExplainExec(this.plan(p.input), p.analyze);
    }
  }

  private snapshot(table: string): TableSnapshot {
    const s = this.snapshots.get(table);
    if (!s) throw new NotFoundError(`table ${table} does not exist`);
    return s;
  }

  private table(name: string): Table {
    const t = this.ctx.tables.get(name);
    if (!t) throw new NotFoundError(`table ${name} does not exist`);
    return t;
  }

  private userIndexes(snapshot: TableSnapshot, columns: readonly string[]): number[] {
    const fields = snapshot.schema.user.fields;
    return columns.map((c) => fields.findIndex((f) => f.name === c));
  }

  private keys(schema: Schema, keys: readonly SortKey[]) {
    return keys.map((k) => {
      if (k.expr.kind !== 'column') throw new InvalidError(`sort key ${exprToString(k.expr)} was not projected`);
      const name = k.expr.name;
      const column = schema.fields.findIndex((f) => f.name === name);
      if (column < 0) throw new InvalidError(`sort key ${name} is not a column of its input`);
      return { column, descending: k.descending, nullsFirst: k.nullsFirst };
    });
  }

  private scan(p: ScanPlan): ExecNode {
    const snapshot = this.snapshot(p.table);
    const columnIndexes = this.userIndexes(snapshot, p.columns);
    const indexed = p.filter ? indexedConjuncts(p.filter, snapshot.indexes, this.ctx.params) : [];
    const keyField = snapshot.schema.primaryKey.length === 1 ? snapshot.schema.user.fields[snapshot.schema.keyIndexes[0]] : undefined;
    const byKey = p.filter && keyField ? primaryKeyValues(p.filter, keyField, this.ctx.params) !== undefined : false;
    const regions = snapshot.regions.map((region, r) => {
      const memtables = region.sources.length - region.generationCount;
      const scans: SourceScanExec[] = region.sources.map((source, s) => {
        const usesIndex = indexed.some((c) => source.indexes.index(c.def.name) !== undefined);
        const label = s < memtables ? (s === 0 ? 'active memtable' : `frozen memtable ${s}`) : `generation ${region.generationCount - (s - memtables)}`;
        if (byKey) return new ScalarIndexScanExec(p.schema, columnIndexes, source.rowCount, `${label}, primary-key lookup on ${keyField!.name}`);
        if (usesIndex) return new ScalarIndexScanExec(p.schema, columnIndexes, source.rowCount, `${label}, index on ${indexed.map((c) => c.def.column).join(', ')}`);
        return s < memtables ? new MemTableScanExec(p.schema, columnIndexes, source.rowCount, label) : new GenerationScanExec(p.schema, columnIndexes, source.rowCount, label);
      });
      return new KeyDedupExec(p.schema, snapshot, region, String(r + 1), p.filter, scans);
    });
    if (regions.length === 1) return regions[0];
    if (regions.length === 0) return new ValuesExec(p.schema, []);
    return new UnionExec(regions);
  }

  private vectorKnn(p: VectorSearchPlan): VectorKnnExec {
    const snapshot = this.snapshot(p.table);
    return new VectorKnnExec(p.schema, snapshot, p, this.userIndexes(snapshot, p.columns));
  }

  private ftsMatch(p: TextSearchPlan): FtsMatchExec {
    const snapshot = this.snapshot(p.table);
    return new FtsMatchExec(p.schema, snapshot, p, this.userIndexes(snapshot, p.columns));
  }

  /** An aggregate argument's type over the aggregate's input. */
  private argType(arg: Expr, input: ExecNode) {
    if (arg.kind === 'column') {
      const f = input.schema.fields.find((x) => x.name === arg.name);
      if (f) return f.type;
    }
    return inferType(arg, input.schema, this.ctx.params);
  }

  private createIndex(p: CreateIndexPlan): ExecNode {
    const table = this.table(p.table);
    return new CommandExec(`create index on ${p.table} using ${p.options.type} (${p.column})`, async () => {
      try {
        await table.createIndex(p.column, p.name ? { ...p.options, name: p.name } : p.options);
        return 1;
      } catch (e) {
        if (p.ifNotExists && e instanceof AlreadyExistsError) return 0;
        throw e;
      }
    });
  }
}

