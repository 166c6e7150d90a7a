/**
 * `--connect grpc://host:port` (or `grpc+tls://`, with `--user/--password`): the session over a
 * Flight SQL server, through the Flight SQL client (src/flight/client.ts).
 *
 * - `run`: every statement — SELECT, DDL, DML — goes through GetFlightInfo + DoGet (Quiver's
 *   server answers a write with its `count` row on that path, as the embedded engine does), so
 *   output is the same as embedded. With `--param` values, through a prepared statement.
 *   An AbortSignal (Ctrl-C in the shell) cancels the gRPC call; the server aborts the query.
 * - `tableNames` / `tableInfo`: CommandGetTables (with schemas) and CommandGetPrimaryKeys.
 *   Flight SQL reports no indexes, region spec or per-region row counts, so `describe` and
 *   `.schema` show columns, types, nullability and the primary key only.
 * - `ingest`: one DoPut CommandStatementIngest (append to the table `load` created) per batch,
 *   each started after the previous one is acknowledged: the server acknowledges an ingest stream
 *   only once, when it ends, so a per-batch stream is what lets `put` resolve exactly when its
 *   rows are durable and keeps batches applied in file order (an upsert of a key seen twice
 *   keeps the later row). The loader parses the next batch meanwhile.
 */
import type { RecordBatch } from 'apache-arrow';
import { NotFoundError } from '../errors.js';
import { FlightSqlClient } from '../flight/client.js';
import type { Ingest, Session, StatementResult, TableInfo } from './session.js';

export interface RemoteOptions {
  user?: string;
  password?: string;
  rootCerts?: Buffer;
}

export class RemoteSession implements Session {
  private constructor(
    readonly target: string,
    readonly client: FlightSqlClient,
  ) {}

  static async open(url: string, options: RemoteOptions): Promise<RemoteSession> {
    const client = await FlightSqlClient.connect(url, { user: options.user, password: options.password, rootCerts: options.rootCerts });
    return new RemoteSession(url, client);
  }

  async run(sql: string, params: readonly unknown[], signal?: AbortSignal): Promise<StatementResult> {
    return this.client.query(sql, params, { signal });
  }

  tableNames(): Promise<string[]> {
    return this.client.tableNames();
  }

  async tableInfo(name: string): Promise<TableInfo> {
    const table = (await this.client.tables()).find((t) => t.name === name);
    if (!table) throw new NotFoundError(`table ${name} does not exist`);
    return { name, schema: table.schema, primaryKey: await this.client.primaryKey(name) };
  }

  async ingest(table: string): Promise<Ingest> {
    const client = this.client;
    let stored = 0;
    // The previous batch's DoPut: the next starts only once it is acknowledged.
    let last: Promise<unknown> = Promise.resolve();
    let failed = false;
    return {
      put(batch: RecordBatch): Promise<void> {
        const p = last.then(async () => {
          if (failed) throw new Error('an earlier batch failed');
          try {
            stored += await client.ingest(table, [batch], { ifNotExist: 'fail', ifExists: 'append' });
          } catch (e) {
            failed = true;
            throw e;
          }
        });
        last = p.catch(() => {});
        return p;
      },
      finish: async () => {
        await last;
        return stored;
      },
      abort: async () => {
        failed = true;
        await last;
        return stored;
      },
    };
  }

  async close(): Promise<void> {
    this.client.close();
  }
}
