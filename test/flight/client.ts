/**
 * The Flight SQL client of the tests and benchmarks: a thin wrapper over the product client
 * (src/flight/client.ts, which the `quiver --connect` command line uses) keeping the shape the
 * flight tests were written against. It still exposes the raw FlightData stream (to see message
 * sizes, read slowly, or cancel mid-stream), the handshake's two token copies, and gRPC errors as
 * they arrive (ServiceError with `code`, not mapped to Quiver kinds).
 */
import { type ClientReadableStream, type ChannelCredentials, Metadata } from '@grpc/grpc-js';
import { type RecordBatch, type Schema, Table } from 'apache-arrow';
import type { IncomingFlightData } from '../../src/flight/flight-data.js';
import { FlightSqlClient } from '../../src/flight/client.js';
import { decodeEncapsulatedSchema, FlightDataReader } from '../../src/flight/framing.js';
import { type Msg, packAny, Sql, type SqlMessageName } from '../../src/flight/protocol.js';

export interface ClientOptions {
  /** Raise grpc-js's 4 MiB default receive limit (-1 = none). */
  maxReceiveBytes?: number;
  credentials?: ChannelCredentials;
  headers?: Record<string, string>;
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Raw = any;

/** The gRPC error itself (the product client maps it to a Quiver error and keeps it as `cause`). */
function grpcError(e: unknown): unknown {
  const cause = (e as { cause?: { code?: unknown } } | undefined)?.cause;
  return cause && typeof cause.code === 'number' ? cause : e;
}

async function raw<T>(p: Promise<T>): Promise<T> {
  try {
    return await p;
  } catch (e) {
    throw grpcError(e);
  }
}

export class TestFlightClient {
  readonly client: FlightSqlClient;
  headers: Record<string, string>;

  constructor(url: string, options: ClientOptions = {}) {
    // The headers object is shared: the product client reads it on every call.
    this.headers = { ...(options.headers ?? {}) };
    this.client = new FlightSqlClient(url.replace(/^grpc\+tcp:/, 'grpc:'), {
      credentials: options.credentials,
      headers: this.headers,
      // grpc-js's default unless raised: some tests check what a default client accepts.
      maxReceiveBytes: options.maxReceiveBytes ?? 4 * 1024 * 1024,
      maxSendBodyBytes: 32 * 1024 * 1024,
    });
  }

  get raw(): Raw {
    return this.client.raw;
  }

  metadata(): Metadata {
    const md = new Metadata();
    for (const [k, v] of Object.entries(this.headers)) md.set(k, v);
    return md;
  }

  close(): void {
    this.client.close();
  }

  /** Handshake with Basic credentials; keeps the bearer token for later calls. */
  async handshake(user: string, password: string): Promise<{ headerToken: string | null; payloadToken: string }> {
    const result = await raw(this.client.handshakeTokens(user, password));
    this.headers.authorization = `Bearer ${result.headerToken ?? result.payloadToken}`;
    return result;
  }

  descriptor(name: SqlMessageName, message: Msg): Msg {
    return { type: 2, cmd: packAny(Sql[name], message) };
  }

  async getFlightInfo(name: SqlMessageName, message: Msg): Promise<{ schema: Schema; ticket: Buffer; info: Msg }> {
    const info = await raw(this.client.flightInfoMessage(name, message));
    return { schema: decodeEncapsulatedSchema(info.schema), ticket: info.endpoint[0].ticket.ticket, info };
  }

  /** The raw DoGet stream (FlightData as decoded by the server's codec). */
  doGetRaw(ticket: Buffer): ClientReadableStream<IncomingFlightData> {
    return this.raw.DoGet({ ticket }, this.metadata());
  }

  /** DoGet, decoded batch by batch. */
  async *doGet(ticket: Buffer): AsyncGenerator<RecordBatch> {
    const reader = new FlightDataReader();
    for await (const fd of this.doGetRaw(ticket)) {
      const batch = reader.read(fd as IncomingFlightData);
      if (batch) yield batch;
    }
  }

  async query(sql: string): Promise<Table> {
    const { ticket, schema } = await this.getFlightInfo('CommandStatementQuery', { query: sql });
    const batches: RecordBatch[] = [];
    for await (const b of this.doGet(ticket)) batches.push(b);
    return batches.length ? new Table(batches) : new Table(schema);
  }

  /** DoPut of a command with optional batches; resolves with the PutResult app_metadata messages. */
  doPut(name: SqlMessageName, message: Msg, batches: readonly RecordBatch[] = [], schema?: Schema): Promise<Buffer[]> {
    return raw(this.client.doPut(name, message, batches, { schema }));
  }

  async update(sql: string): Promise<number> {
    const [res] = await this.doPut('CommandStatementUpdate', { query: sql });
    return Number(Sql.DoPutUpdateResult.decode(res).record_count);
  }

  async ingest(table: string, batches: readonly RecordBatch[], opts: { ifNotExist?: number; ifExists?: number; options?: Record<string, string> } = {}): Promise<number> {
    const [res] = await this.doPut(
      'CommandStatementIngest',
      { table, table_definition_options: { if_not_exist: opts.ifNotExist ?? 1, if_exists: opts.ifExists ?? 2 }, options: opts.options ?? {} },
      batches,
    );
    return Number(Sql.DoPutUpdateResult.decode(res).record_count);
  }

  action(type: string, body: Buffer): Promise<Buffer[]> {
    return raw(this.client.action(type, body));
  }
}
