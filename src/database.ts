/**
 * The embedded entry point: `connect(uri)` opens a Quiver database on a local directory,
 * `s3://bucket/prefix` or `memory://`, and hands out tables.
 *
 * One Database object holds at most one Table object per table name, so within a process each
 * region has at most one writer. Another process writing the same table claims the regions it
 * writes (fencing this one's writers for them); reads never claim anything.
 */
import type { RecordBatch, Schema, Table as ArrowTable } from 'apache-arrow';
import { QueryEngine, type QueryOptions } from '../planner/query-engine.js';
import { ClosedError, InvalidError } from './errors.js';
import { GenerationCache } from './region/generation-cache.js';
import { REGION_SPEC_IDS, type RegionSpec, validateRegionSpec } from './region/region-spec.js';
import { type RegionWriterConfig, resolveWriterConfig } from './region/writer-config.js';
import { LocalObjectStore } from './storage/local-store.js';
import { MemoryObjectStore } from './storage/memory-store.js';
import type { ObjectStore } from './storage/object-store.js';
import { type RetryOptions, RetryingObjectStore } from './storage/retrying-store.js';
import { parseS3Url, S3ObjectStore } from './storage/s3-store.js';
import { Catalog, checkTableName } from './table/catalog.js';
import { encodeSchema, decodeSchema, TABLE_FORMAT_VERSION, type TableMeta } from './table/table-meta.js';
import { Table } from './table/table.js';
import { IndexingContext } from './index/indexing.js';
import { loadIndexModel } from './table/index-training.js';
import { TableSchema } from './schema/table-schema.js';
import { type Runtime, runtimeUuid, systemRuntime } from './util/runtime.js';

export interface S3ConnectOptions {
  endpoint?: string;
  region?: string;
  accessKeyId?: string;
  secretAccessKey?: string;
  forcePathStyle?: boolean;
}

export interface ConnectOptions {
  s3?: S3ConnectOptions;
  /** Region writer settings for every table opened through this connection. */
  writer?: Partial<RegionWriterConfig>;
  /** Retries of transient storage errors. */
  retry?: RetryOptions;
  /** Local directories: fsync before acknowledging (default true). */
  fsync?: boolean;
  /** Use this object store instead of one derived from the URI (tests, custom backends); it is wrapped with retries. */
  store?: ObjectStore;
  /** Bytes of flushed generations kept in memory for reads (default 512 MiB). */
  generationCacheBytes?: number;
  /**
   * Clock, timers and randomness for the write path (default: the system's). The deterministic
   * simulation passes a simulated runtime; applications leave it alone.
   */
  runtime?: Runtime;
}

export interface CreateTableOptions {
  primaryKey: string | string[];
  regionSpec?: RegionSpec;
  /** Writer settings stored with the table (a connection's `writer` settings override them). */
  writer?: Partial<RegionWriterConfig>;
}

export class Database {
  private readonly catalog: Catalog;
  private readonly tables = new Map<string, Promise<Table>>();
  private closed = false;
  private readonly engine = new QueryEngine(this);

  constructor(
    readonly store: ObjectStore,
    private readonly options: ConnectOptions,
  ) {
    this.catalog = new Catalog(store);
    resolveWriterConfig(options.writer);
  }

  async createTable(name: string, schema: Schema, options: CreateTableOptions): Promise<Table> {
    this.checkOpen();
    checkTableName(name);
    if (!options || options.primaryKey === undefined) throw new InvalidError(`createTable ${name}: options.primaryKey is required`);
    const primaryKey = Array.isArray(options.primaryKey) ? options.primaryKey : [options.primaryKey];
    const tableSchema = new TableSchema(schema, primaryKey);
    const spec = validateRegionSpec(options.regionSpec, primaryKey);
    resolveWriterConfig(options.writer);
    const meta: TableMeta = {
      format_version: TABLE_FORMAT_VERSION,
      name,
      table_id: runtimeUuid(this.options.runtime ?? systemRuntime),
      created_at: new Date().toISOString(),
      fields: schema.fields.map((f) => ({ name: f.name, type: String(f.type), nullable: f.nullable })),
      schema_ipc: encodeSchema(schema),
      primary_key: primaryKey,
      region_spec: spec,
      region_spec_id: REGION_SPEC_IDS[spec.kind],
      writer: options.writer ?? {},
    };
    await this.catalog.create(meta);
    const table = this.makeTable(meta, tableSchema);
    this.tables.set(name, table);
    return table;
  }

  async openTable(name: string): Promise<Table> {
    this.checkOpen();
    checkTableName(name);
    let table = this.tables.get(name);
    // A closed Table (the documented way to recover from `fenced`) is replaced by a new one.
    if (table && (await table.catch(() => undefined))?.isClosed) table = undefined;
    if (!table) {
      table = this.catalog.load(name).then((meta) => this.makeTable(meta, new TableSchema(decodeSchema(meta.schema_ipc, `table ${name}`), meta.primary_key)));
      this.tables.set(name, table);
      table.catch(() => this.tables.get(name) === table && this.tables.delete(name));
    }
    return table;
  }

  async tableNames(): Promise<string[]> {
    this.checkOpen();
    return this.catalog.names();
  }

  async dropTable(name: string): Promise<void> {
    this.checkOpen();
    checkTableName(name);
    const open = this.tables.get(name);
    this.tables.delete(name);
    if (open) await (await open.catch(() => undefined))?.close().catch(() => {});
    await this.catalog.drop(name);
  }

  /**
   * Runs one SQL statement and returns its result as an Arrow table (a statement that writes
   * returns one row, `count`). `params` bind `$1`, `$2`, …; `options`: `nprobes` / `refine` for
   * vector searches, `signal` to cancel. See the README's SQL reference.
   */
  async sql(text: string, params: readonly unknown[] = [], options: QueryOptions = {}): Promise<ArrowTable> {
    this.checkOpen();
    return this.engine.sql(text, params, options);
  }

  /** Runs one SQL statement and streams its result batches as the consumer pulls them. */
  async *query(text: string, params: readonly unknown[] = [], options: QueryOptions = {}): AsyncGenerator<RecordBatch> {
    this.checkOpen();
    yield* this.engine.query(text, params, options);
  }

  /** Plans a statement without running it: its result schema and exec tree (Flight's GetFlightInfo, prepared statements). */
  async prepare(text: string, params: readonly unknown[] = [], options: QueryOptions = {}) {
    this.checkOpen();
    return this.engine.prepare(text, params, options);
  }

  /** Flushes every table's MemTables to generations and releases the writers. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    const results = await Promise.allSettled([...this.tables.values()].map(async (t) => (await t).close()));
    this.tables.clear();
    await this.store.close();
    const failed = results.find((r) => r.status === 'rejected') as PromiseRejectedResult | undefined;
    if (failed) throw failed.reason;
  }

  private async makeTable(meta: TableMeta, schema: TableSchema): Promise<Table> {
    const indexing = new IndexingContext(schema);
    indexing.setDefs(meta.indexes ?? []);
    for (const def of indexing.defs) if (def.model) indexing.setModel(def, await loadIndexModel(this.store, meta.name, def));
    return new Table({
      store: this.store,
      tableKey: meta.name,
      meta,
      schema,
      generations: new GenerationCache(this.store, indexing, this.options.generationCacheBytes),
      writerOverrides: this.options.writer ?? {},
      indexing,
      metaStore: this.catalog.metaStore(meta.name),
      runtime: this.options.runtime ?? systemRuntime,
    });
  }

  private checkOpen(): void {
    if (this.closed) throw new ClosedError('database is closed');
  }
}

/** Opens a database: a local directory (default `./quiver-data`), `s3://bucket/prefix` or `memory://`. */
export async function connect(uri = './quiver-data', options: ConnectOptions = {}): Promise<Database> {
  // Every backend, including one passed in, gets the same retry policy for transient errors.
  const base = options.store ?? openStore(uri, options);
  return new Database(new RetryingObjectStore(base, options.retry, options.runtime), options);
}

/** The backend a URI names, without retries. */
export function openStore(uri: string, options: ConnectOptions = {}): ObjectStore {
  if (typeof uri !== 'string' || uri.length === 0) throw new InvalidError('connect: give a directory, s3://bucket/prefix or memory://');
  if (uri.startsWith('s3://')) {
    const { bucket, prefix } = parseS3Url(uri);
    return new S3ObjectStore({ bucket, prefix, ...options.s3 });
  }
  if (uri === 'memory://' || uri === 'memory:') return new MemoryObjectStore();
  return new LocalObjectStore(uri.startsWith('file://') ? new URL(uri).pathname : uri, { fsync: options.fsync });
}
