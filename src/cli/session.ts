/**
 * What a verb talks to: an embedded database (`--data`) or a Flight SQL server (`--connect`).
 * Both answer the same few calls, so `sql`, the shell, `load`, `tables` and `describe` are
 * written once.
 */
import type { RecordBatch, Schema } from 'apache-arrow';
import type { Database } from '../database.js';
import { connect, type ConnectOptions } from '../database.js';
import type { IndexDef } from '../index/index-def.js';
import type { RegionSpec } from '../region/region-spec.js';

export interface StatementResult {
  schema: Schema;
  /** The result's batches, produced as pulled. */
  batches: AsyncIterable<RecordBatch>;
}

export interface RegionInfo {
  /** Rows stored per MemTable (newest first), then per generation (newest first). */
  memtables: number[];
  generations: number[];
}

export interface TableInfo {
  name: string;
  schema: Schema;
  primaryKey: string[];
  /** Known only embedded: a server does not report them. */
  indexes?: IndexDef[];
  regionSpec?: RegionSpec;
  regions?: RegionInfo[];
}

/** Writes batches into one table; each `put` resolves once its rows are durable. */
export interface Ingest {
  put(batch: RecordBatch): Promise<void>;
  /** Ends the load; resolves with the rows the target reports as stored. */
  finish(): Promise<number>;
  /** Ends the load after an error: nothing more is sent. Resolves with the rows stored. */
  abort(): Promise<number>;
}

export interface Session {
  /** Where it is connected, for messages: a directory, `s3://…` or `grpc://host:port`. */
  readonly target: string;
  run(sql: string, params: readonly unknown[], signal?: AbortSignal): Promise<StatementResult>;
  tableNames(): Promise<string[]>;
  /** Throws a `not_found` error for a missing table. */
  tableInfo(name: string, detail?: boolean): Promise<TableInfo>;
  ingest(table: string): Promise<Ingest>;
  close(): Promise<void>;
}

export class EmbeddedSession implements Session {
  private constructor(
    readonly target: string,
    private readonly db: Database,
  ) {}

  static async open(data: string, options: ConnectOptions): Promise<EmbeddedSession> {
    return new EmbeddedSession(data, await connect(data, options));
  }

  get database(): Database {
    return this.db;
  }

  async run(sql: string, params: readonly unknown[], signal?: AbortSignal): Promise<StatementResult> {
    const it = this.db.query(sql, params, { signal })[Symbol.asyncIterator]();
    const first = await it.next();
    // An empty result has no batch to take the schema from: plan the statement for it (a plan
    // does not run anything, so a write is not repeated).
    const schema = first.done ? (await this.db.prepare(sql, params)).schema : first.value.schema;
    async function* batches(): AsyncGenerator<RecordBatch> {
      try {
        if (first.done) return;
        yield first.value;
        for (let next = await it.next(); !next.done; next = await it.next()) yield next.value;
      } finally {
        await it.return?.(undefined);
      }
    }
    return { schema, batches: batches() };
  }

  tableNames(): Promise<string[]> {
    return this.db.tableNames();
  }

  async tableInfo(name: string, detail = false): Promise<TableInfo> {
    const table = await this.db.openTable(name);
    const info: TableInfo = { name, schema: table.schema, primaryKey: table.primaryKey, indexes: table.indexes, regionSpec: table.regionSpec };
    if (detail) {
      const snapshot = await table.snapshot({ indexes: 'none' });
      info.regions = snapshot.regions.map((r) => {
        const memtableCount = r.sources.length - r.generationCount;
        return {
          memtables: r.sources.slice(0, memtableCount).map((s) => s.rowCount),
          generations: r.sources.slice(memtableCount).map((s) => s.rowCount),
        };
      });
    }
    return info;
  }

  async ingest(name: string): Promise<Ingest> {
    const table = await this.db.openTable(name);
    let rows = 0;
    return {
      async put(batch) {
        await table.put(batch);
        rows += batch.numRows;
      },
      finish: async () => rows,
      abort: async () => rows,
    };
  }

  close(): Promise<void> {
    return this.db.close();
  }
}
