/**
 * A Flight SQL client on @grpc/grpc-js, written against Quiver's own server (and the Flight SQL
 * spec it follows): the `quiver` command line's `--connect grpc://host:port` uses it.
 *
 * - Connection: `grpc://` (plaintext) or `grpc+tls://` (TLS: the system roots, or `rootCerts`
 *   for a self-signed server certificate). With `user`/`password`, `connect` performs the Basic ->
 *   Bearer Handshake first and sends the token (from the response header, else the payload) on
 *   every later call.
 * - `query(sql, params?)`: GetFlightInfo of a CommandStatementQuery, then DoGet of each
 *   endpoint's ticket, decoded FlightData by FlightData (framing.ts) and yielded as it arrives:
 *   nothing is buffered beyond grpc-js's own flow control. With parameters the statement goes
 *   through a prepared statement (CreatePreparedStatement, DoPut of one parameter row,
 *   GetFlightInfo of the bound handle, DoGet, ClosePreparedStatement), since Flight SQL binds
 *   parameters only to prepared statements. Quiver's server answers writes (DDL, INSERT, …) on
 *   the query path too, with their `count` row, so the CLI shows the same result either way.
 * - `update(sql)`: DoPut CommandStatementUpdate -> the record count.
 * - `ingest(table, batches, options)`: one DoPut CommandStatementIngest stream; a batch is
 *   written only after grpc-js has drained the previous one (backpressure), the server's count
 *   comes back when the stream ends.
 * - `tables()` / `primaryKey()`: CommandGetTables (with schemas) and CommandGetPrimaryKeys.
 * - Every call takes an AbortSignal: aborting cancels the gRPC call (the server aborts the query).
 * - Errors come back as Quiver errors by gRPC status (`toClientError`): INVALID_ARGUMENT ->
 *   invalid, NOT_FOUND -> not_found, ALREADY_EXISTS -> already_exists, UNAVAILABLE and
 *   DEADLINE_EXCEEDED -> unavailable, CANCELLED -> cancelled, UNAUTHENTICATED / PERMISSION_DENIED
 *   -> unauthenticated ("authentication failed at …"), UNIMPLEMENTED
 *   -> invalid, INTERNAL -> the kind the server names in its message (`storage error: …`), else
 *   internal.
 */
import {
  type ChannelCredentials,
  type ClientDuplexStream,
  type ClientReadableStream,
  connectivityState,
  credentials,
  makeGenericClientConstructor,
  Metadata,
  type ServiceError,
  status as Status,
} from '@grpc/grpc-js';
import {
  Bool,
  Field,
  FixedSizeList,
  Float32,
  Float64,
  Int32,
  Int64,
  makeData,
  Null,
  RecordBatch,
  Schema,
  Struct,
  Utf8,
  vectorFromArray,
  type DataType,
} from 'apache-arrow';
import { type ErrorKind, isQuiverError, QuiverError } from '../errors.js';
import { encodeFlightData, type IncomingFlightData, type OutgoingFlightData } from './flight-data.js';
import { batchFlightData, decodeEncapsulatedSchema, FlightDataReader, plainBatch, schemaFlightData } from './framing.js';
import { DescriptorType, Flight, type Msg, packAny, Sql, type SqlMessageName, TableExistsOption, TableNotExistOption, unpackSqlCommand } from './protocol.js';
import { flightServiceDefinition } from './service-definition.js';

/**
 * The server's service definition used from the client side. DoPut requests are OutgoingFlightData
 * here (a batch's buffers copied once, straight into the message), not the decoded form.
 */
const clientServiceDefinition = {
  ...flightServiceDefinition,
  DoPut: { ...flightServiceDefinition.DoPut, requestSerialize: (v: OutgoingFlightData) => encodeFlightData(v) },
};
const FlightServiceClient = makeGenericClientConstructor(clientServiceDefinition as never, 'FlightService');

export interface FlightClientOptions {
  user?: string;
  password?: string;
  /** PEM root certificates for `grpc+tls://` (default: the system roots). */
  rootCerts?: Buffer;
  /** Explicit channel credentials (overrides the URL scheme). */
  credentials?: ChannelCredentials;
  /** Extra headers sent on every call (this object is used, not copied: the token is added to it). */
  headers?: Record<string, string>;
  /** grpc-js receive limit in bytes (default: none; Quiver's server sends <= 2 MiB bodies). */
  maxReceiveBytes?: number;
  /** Largest body of one DoPut FlightData (default 2 MiB; a larger batch is sent as row slices). */
  maxSendBodyBytes?: number;
}

export interface CallOptions {
  signal?: AbortSignal;
}

export interface QueryResult {
  /** The result schema the server planned (GetFlightInfo). */
  schema: Schema;
  /** The batches, streamed from DoGet as they are pulled. */
  batches: AsyncIterable<RecordBatch>;
}

export interface IngestOptions extends CallOptions {
  /** If the table does not exist: create it (default) or fail. */
  ifNotExist?: 'create' | 'fail';
  /** If it exists: append (upsert by primary key; default), fail or replace. */
  ifExists?: 'append' | 'fail' | 'replace';
  /** Server ingest options (Quiver reads `primary_key`). */
  options?: Record<string, string>;
  /** Schema to send when `batches` is empty. */
  schema?: Schema;
}

export interface RemoteTable {
  name: string;
  schema: Schema;
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Raw = any;

const KINDS: Partial<Record<number, ErrorKind>> = {
  [Status.INVALID_ARGUMENT]: 'invalid',
  [Status.NOT_FOUND]: 'not_found',
  [Status.ALREADY_EXISTS]: 'already_exists',
  [Status.UNAVAILABLE]: 'unavailable',
  [Status.DEADLINE_EXCEEDED]: 'unavailable',
  [Status.RESOURCE_EXHAUSTED]: 'unavailable',
  [Status.CANCELLED]: 'cancelled',
  [Status.UNIMPLEMENTED]: 'invalid',
  [Status.FAILED_PRECONDITION]: 'invalid',
  [Status.OUT_OF_RANGE]: 'invalid',
};

const SERVER_KINDS = new Set<ErrorKind>(['storage', 'fenced', 'closed', 'data', 'internal']);

/** A gRPC failure as a Quiver error (see the header); anything else is returned unchanged. */
export function toClientError(e: unknown, target: string): unknown {
  if (isQuiverError(e)) return e;
  const err = e as Partial<ServiceError> | undefined;
  if (typeof err?.code !== 'number') return e;
  const details = err.details || err.message || Status[err.code];
  if (err.code === Status.UNAUTHENTICATED || err.code === Status.PERMISSION_DENIED) {
    return new QuiverError('unauthenticated', `authentication failed at ${target}: ${details}`, { cause: e });
  }
  if (err.code === Status.UNAVAILABLE && /No connection established|ECONNREFUSED|connect|DNS|getaddrinfo|handshake|certificate|SSL|TLS/i.test(details)) {
    return new QuiverError('unavailable', `cannot reach ${target}: ${details}`, { cause: e });
  }
  let kind = KINDS[err.code];
  let message = details;
  if (!kind) {
    const m = /^(\w+) error: ([\s\S]*)$/.exec(details);
    if (m && SERVER_KINDS.has(m[1] as ErrorKind)) {
      kind = m[1] as ErrorKind;
      message = m[2];
    } else kind = 'internal';
  }
  if (kind === 'cancelled' && /Cancelled on client/i.test(message)) message = 'the statement was cancelled';
  return new QuiverError(kind, message, { cause: e });
}

/** `grpc://host:port` / `grpc+tls://host:port` -> host:port and whether TLS is on. */
export function parseFlightUrl(url: string): { address: string; tls: boolean } {
  const m = /^grpc(\+tls|\+tcp)?:\/\/([^/]+)\/?$/.exec(url);
  if (!m) throw new QuiverError('invalid', `a Flight SQL address is grpc://host:port or grpc+tls://host:port, got ${url}`);
  return { address: m[2], tls: m[1] === '+tls' };
}

/** A parameter value (as `--param` parses them) as a one-row Arrow column. */
function parameterColumn(value: unknown, i: number): { field: Field; data: ReturnType<typeof makeData> } {
  const name = `$${i + 1}`;
  let type: DataType;
  let values: unknown[] = [value];
  if (value === null || value === undefined) type = new Null();
  else if (typeof value === 'bigint') type = new Int64();
  else if (typeof value === 'number') type = Number.isInteger(value) && Math.abs(value) < 2 ** 31 ? new Int32() : new Float64();
  else if (typeof value === 'boolean') type = new Bool();
  else if (typeof value === 'string') type = new Utf8();
  else if (Array.isArray(value) || value instanceof Float32Array) {
    const items = Float32Array.from(value as ArrayLike<number>, Number);
    type = new FixedSizeList(items.length, new Field('item', new Float32(), true));
    const child = makeData({ type: new Float32(), length: items.length, nullCount: 0, data: items });
    return { field: new Field(name, type, false), data: makeData({ type: type as FixedSizeList, length: 1, nullCount: 0, child }) };
  } else {
    type = new Utf8();
    values = [String(value)];
  }
  const vector = vectorFromArray(values as never[], type as never);
  return { field: new Field(name, type, true), data: vector.data[0] as ReturnType<typeof makeData> };
}

/** One parameter set as a one-row batch (column i binds `$i+1`). */
export function parameterBatch(params: readonly unknown[]): RecordBatch {
  const cols = params.map(parameterColumn);
  const schema = new Schema(cols.map((c) => c.field));
  return new RecordBatch(schema, makeData({ type: new Struct(schema.fields), length: 1, nullCount: 0, children: cols.map((c) => c.data) }));
}

export class FlightSqlClient {
  readonly raw: Raw;
  private readonly headers: Record<string, string>;
  private readonly maxSendBodyBytes: number;

  constructor(
    readonly url: string,
    options: FlightClientOptions = {},
  ) {
    const { address, tls } = parseFlightUrl(url);
    const creds = options.credentials ?? (tls ? credentials.createSsl(options.rootCerts ?? null) : credentials.createInsecure());
    if (tls) quietIpServername();
    this.raw = new FlightServiceClient(address, creds, {
      'grpc.max_receive_message_length': options.maxReceiveBytes ?? -1,
      'grpc.max_send_message_length': -1,
      // Results arrive in MiB-sized messages: a 64 KiB HTTP/2 window would stall each of them.
      'grpc-node.flow_control_window': 8 * 1024 * 1024,
    });
    this.headers = options.headers ?? {};
    this.maxSendBodyBytes = options.maxSendBodyBytes ?? 2 * 1024 * 1024;
  }

  /** A client, handshaken when credentials are given. Fails if the server cannot be reached. */
  static async connect(url: string, options: FlightClientOptions = {}): Promise<FlightSqlClient> {
    const client = new FlightSqlClient(url, options);
    try {
      if (options.user !== undefined) await client.handshake(options.user, options.password ?? '');
      else await client.waitForReady();
      return client;
    } catch (e) {
      client.close();
      throw e;
    }
  }

  /**
   * Resolves once the channel is connected. Fails as soon as a connection attempt fails (a
   * refused or unresolvable address: grpc-js's own waitForReady retried those until its
   * deadline, so `quiver --connect` to a stopped server took 10 s to say so), or after
   * `timeoutMs` without a connection (a server that does not answer).
   */
  waitForReady(timeoutMs = 10_000): Promise<void> {
    const channel = this.raw.getChannel();
    const deadline = Date.now() + timeoutMs;
    return new Promise((resolve, reject) => {
      const fail = (why: string, cause?: Error): void => reject(new QuiverError('unavailable', `cannot reach ${this.url}: ${why}`, cause ? { cause } : undefined));
      const watch = (): void => {
        const state = channel.getConnectivityState(true);
        if (state === connectivityState.READY) return resolve();
        if (state === connectivityState.TRANSIENT_FAILURE) return fail('the connection failed (is the server running, and is the address right?)');
        if (state === connectivityState.SHUTDOWN) return fail('the client was closed');
        channel.watchConnectivityState(state, deadline, (err?: Error) => (err ? fail(`no connection within ${timeoutMs} ms`, err) : watch()));
      };
      watch();
    });
  }

  close(): void {
    this.raw.close();
  }

  private metadata(): Metadata {
    const md = new Metadata();
    for (const [k, v] of Object.entries(this.headers)) md.set(k, v);
    return md;
  }

  private error(e: unknown): unknown {
    return toClientError(e, this.url);
  }

  /** Basic credentials -> a bearer token (from the response header, else the payload), kept for the later calls. */
  async handshake(user: string, password: string, options: CallOptions = {}): Promise<string> {
    const { headerToken, payloadToken } = await this.handshakeTokens(user, password, options);
    const token = headerToken ?? payloadToken;
    if (!token) throw new QuiverError('unauthenticated', `authentication failed at ${this.url}: the server sent no token`);
    this.headers.authorization = `Bearer ${token}`;
    return token;
  }

  /** The Handshake call itself: the token as sent in the response header and in the payload. */
  async handshakeTokens(user: string, password: string, { signal }: CallOptions = {}): Promise<{ headerToken: string | null; payloadToken: string }> {
    const md = this.metadata();
    md.set('authorization', `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`);
    const call: ClientDuplexStream<Msg, Msg> = this.raw.Handshake(md);
    const detach = cancelOn(signal, call);
    let headerToken: string | null = null;
    call.on('metadata', (m: Metadata) => {
      const v = m.get('authorization')[0];
      if (typeof v === 'string' && /^Bearer /i.test(v)) headerToken = v.replace(/^Bearer /i, '');
    });
    try {
      call.write({ protocol_version: 0, payload: Buffer.alloc(0) });
      call.end();
      const responses: Msg[] = [];
      for await (const r of call) responses.push(r as Msg);
      return { headerToken, payloadToken: Buffer.from(responses[0]?.payload ?? []).toString('utf8') };
    } catch (e) {
      throw this.error(e);
    } finally {
      detach();
    }
  }

  private unary(method: string, request: Msg, signal?: AbortSignal): Promise<Msg> {
    signal?.throwIfAborted?.();
    return new Promise((resolve, reject) => {
      const call = this.raw[method](request, this.metadata(), (err: Error | null, res: Msg) => {
        detach();
        if (err) reject(this.error(err));
        else resolve(res);
      });
      const detach = cancelOn(signal, call);
    });
  }

  private descriptor(name: SqlMessageName, message: Msg): Msg {
    return { type: DescriptorType.CMD, cmd: packAny(Sql[name], message) };
  }

  /** GetFlightInfo of a command, the FlightInfo message as decoded. */
  flightInfoMessage(name: SqlMessageName, message: Msg, options: CallOptions = {}): Promise<Msg> {
    return this.unary('GetFlightInfo', this.descriptor(name, message), options.signal);
  }

  /** GetFlightInfo of a command: its schema and the tickets of its endpoints. */
  async flightInfo(name: SqlMessageName, message: Msg, options: CallOptions = {}): Promise<{ schema: Schema; tickets: Buffer[] }> {
    const info = await this.flightInfoMessage(name, message, options);
    const schema = info.schema?.length ? decodeEncapsulatedSchema(info.schema) : new Schema([]);
    return { schema, tickets: (info.endpoint ?? []).map((e: Msg) => e.ticket?.ticket ?? Buffer.alloc(0)) };
  }

  /** DoGet of one ticket, decoded batch by batch as it arrives. */
  async *doGet(ticket: Buffer, options: CallOptions = {}): AsyncGenerator<RecordBatch> {
    options.signal?.throwIfAborted?.();
    const call: ClientReadableStream<IncomingFlightData> = this.raw.DoGet({ ticket }, this.metadata());
    const detach = cancelOn(options.signal, call);
    const reader = new FlightDataReader();
    try {
      for await (const fd of call) {
        const batch = reader.read(fd as IncomingFlightData);
        if (batch) yield batch;
      }
      // A call cancelled between two messages can end without an error: the result is not
      // complete, and the caller who aborted it must not take it for complete.
      if (options.signal?.aborted) throw new QuiverError('cancelled', 'query cancelled');
    } catch (e) {
      throw this.error(e);
    } finally {
      detach();
      // Stopped early (break, error downstream): tell the server to stop producing.
      call.cancel();
    }
  }

  /** A statement's result: planned now (errors in the SQL are thrown here), streamed as pulled. */
  async query(sql: string, params: readonly unknown[] = [], options: CallOptions = {}): Promise<QueryResult> {
    if (params.length === 0) {
      const { schema, tickets } = await this.flightInfo('CommandStatementQuery', { query: sql }, options);
      return { schema, batches: this.endpoints(tickets, options) };
    }
    const handle = await this.prepare(sql, options);
    try {
      const bound = await this.bind(handle, params, options);
      const { schema, tickets } = await this.flightInfo('CommandPreparedStatementQuery', { prepared_statement_handle: bound }, options);
      const close = () => this.closePrepared(handle);
      const batches = this.endpoints(tickets, options, close);
      return { schema, batches };
    } catch (e) {
      await this.closePrepared(handle);
      throw e;
    }
  }

  private async *endpoints(tickets: Buffer[], options: CallOptions, onEnd?: () => Promise<void>): AsyncGenerator<RecordBatch> {
    try {
      for (const ticket of tickets) yield* this.doGet(ticket, options);
    } finally {
      await onEnd?.();
    }
  }

  /** CreatePreparedStatement -> its handle. */
  async prepare(sql: string, options: CallOptions = {}): Promise<Buffer> {
    const [body] = await this.action('CreatePreparedStatement', packAny(Sql.ActionCreatePreparedStatementRequest, { query: sql }), options);
    const result = unpackSqlCommand(body ?? Buffer.alloc(0));
    if (result?.name !== 'ActionCreatePreparedStatementResult') throw new QuiverError('internal', 'CreatePreparedStatement: unexpected reply');
    return result.message.prepared_statement_handle as Buffer;
  }

  /** Binds one parameter set (DoPut CommandPreparedStatementQuery) -> the handle to query. */
  private async bind(handle: Buffer, params: readonly unknown[], options: CallOptions): Promise<Buffer> {
    const batch = parameterBatch(params);
    const [res] = await this.doPut('CommandPreparedStatementQuery', { prepared_statement_handle: handle }, [batch], { ...options, schema: batch.schema });
    if (!res?.length) return handle;
    const decoded = Sql.DoPutPreparedStatementResult.decode(res);
    const bound = decoded.prepared_statement_handle as Buffer | undefined;
    return bound?.length ? bound : handle;
  }

  async closePrepared(handle: Buffer): Promise<void> {
    try {
      await this.action('ClosePreparedStatement', packAny(Sql.ActionClosePreparedStatementRequest, { prepared_statement_handle: handle }));
    } catch {
      // the server drops it on expiry anyway
    }
  }

  async action(type: string, body: Buffer, options: CallOptions = {}): Promise<Buffer[]> {
    options.signal?.throwIfAborted?.();
    const call: ClientReadableStream<Msg> = this.raw.DoAction({ type, body }, this.metadata());
    const detach = cancelOn(options.signal, call);
    const out: Buffer[] = [];
    try {
      for await (const r of call) out.push((r as Msg).body);
      return out;
    } catch (e) {
      throw this.error(e);
    } finally {
      detach();
    }
  }

  /**
   * DoPut of a command with batches (written with backpressure: each FlightData waits for the
   * previous to drain); resolves with the PutResult app_metadata messages.
   */
  async doPut(
    name: SqlMessageName,
    message: Msg,
    batches: Iterable<RecordBatch> | AsyncIterable<RecordBatch>,
    options: CallOptions & { schema?: Schema } = {},
  ): Promise<Buffer[]> {
    options.signal?.throwIfAborted?.();
    const call: ClientDuplexStream<OutgoingFlightData, Msg> = this.raw.DoPut(this.metadata());
    const detach = cancelOn(options.signal, call);
    const results: Buffer[] = [];
    let failure: unknown = null;
    const done = new Promise<void>((resolve, reject) => {
      call.on('data', (r: Msg) => results.push(r.app_metadata));
      call.on('end', resolve);
      call.on('error', (e) => {
        failure ??= e;
        reject(e);
      });
    });
    done.catch(() => {});
    const write = async (fd: OutgoingFlightData) => {
      if (failure) throw failure;
      if (!call.write(fd)) {
        await new Promise<void>((resolve) => {
          const onDrain = () => {
            call.off('error', onDrain);
            resolve();
          };
          call.once('drain', onDrain);
          call.once('error', onDrain);
        });
      }
      if (failure) throw failure;
    };
    const descriptor = Flight.FlightDescriptor.encode(this.descriptor(name, message));
    try {
      let sentSchema = false;
      for await (const b of batches) {
        const plain = plainBatch(b);
        if (!sentSchema) {
          await write(schemaFlightData(plain.schema, descriptor));
          sentSchema = true;
        }
        for (const fd of batchFlightData(plain, this.maxSendBodyBytes)) await write(fd);
      }
      if (!sentSchema) await write(schemaFlightData(options.schema ?? new Schema([]), descriptor));
      call.end();
      await done;
      return results;
    } catch (e) {
      call.cancel();
      throw this.error(failure ?? e);
    } finally {
      detach();
    }
  }

  /** DoPut CommandStatementUpdate -> the record count (-1 when the server does not know). */
  async update(sql: string, options: CallOptions = {}): Promise<number> {
    const [res] = await this.doPut('CommandStatementUpdate', { query: sql }, [], options);
    return Number(Sql.DoPutUpdateResult.decode(res ?? Buffer.alloc(0)).record_count);
  }

  /** DoPut CommandStatementIngest -> the rows the server stored. */
  async ingest(table: string, batches: Iterable<RecordBatch> | AsyncIterable<RecordBatch>, options: IngestOptions = {}): Promise<number> {
    const ifNotExist = options.ifNotExist === 'fail' ? TableNotExistOption.FAIL : TableNotExistOption.CREATE;
    const ifExists = options.ifExists === 'fail' ? TableExistsOption.FAIL : options.ifExists === 'replace' ? TableExistsOption.REPLACE : TableExistsOption.APPEND;
    const [res] = await this.doPut(
      'CommandStatementIngest',
      { table, table_definition_options: { if_not_exist: ifNotExist, if_exists: ifExists }, options: options.options ?? {} },
      batches,
      options,
    );
    return Number(Sql.DoPutUpdateResult.decode(res ?? Buffer.alloc(0)).record_count);
  }

  /** Rows of a metadata command (GetFlightInfo + DoGet). */
  private async metadataRows(name: SqlMessageName, message: Msg, options: CallOptions): Promise<RecordBatch[]> {
    const { tickets } = await this.flightInfo(name, message, options);
    const out: RecordBatch[] = [];
    for await (const b of this.endpoints(tickets, options)) out.push(b);
    return out;
  }

  /** CommandGetTables with schemas: every table, sorted by name. */
  async tables(options: CallOptions = {}): Promise<RemoteTable[]> {
    const out: RemoteTable[] = [];
    for (const b of await this.metadataRows('CommandGetTables', { include_schema: true }, options)) {
      const names = b.getChild('table_name')!;
      const schemas = b.getChild('table_schema')!;
      for (let i = 0; i < b.numRows; i++) out.push({ name: String(names.get(i)), schema: decodeEncapsulatedSchema(schemas.get(i) as Uint8Array) });
    }
    return out;
  }

  /** CommandGetTables without schemas: the names. */
  async tableNames(options: CallOptions = {}): Promise<string[]> {
    const out: string[] = [];
    for (const b of await this.metadataRows('CommandGetTables', { include_schema: false }, options)) {
      const names = b.getChild('table_name')!;
      for (let i = 0; i < b.numRows; i++) out.push(String(names.get(i)));
    }
    return out;
  }

  /** CommandGetPrimaryKeys: the key columns in key order (empty for an unknown table). */
  async primaryKey(table: string, options: CallOptions = {}): Promise<string[]> {
    const keys: { column: string; seq: number }[] = [];
    for (const b of await this.metadataRows('CommandGetPrimaryKeys', { table }, options)) {
      const cols = b.getChild('column_name')!;
      const seqs = b.getChild('key_sequence')!;
      for (let i = 0; i < b.numRows; i++) keys.push({ column: String(cols.get(i)), seq: Number(seqs.get(i)) });
    }
    return keys.sort((a, b) => a.seq - b.seq).map((k) => k.column);
  }
}

/**
 * grpc-js passes the host as the TLS server name, and Node warns (DEP0123) when that is an IP
 * address (`grpc+tls://127.0.0.1:…`); the certificate is still checked against the IP. The CLI
 * would print that warning on every run, so this one warning is dropped.
 */
let ipServernameQuiet = false;
function quietIpServername(): void {
  if (ipServernameQuiet) return;
  ipServernameQuiet = true;
  const emit = process.emitWarning.bind(process) as (...args: unknown[]) => void;
  process.emitWarning = ((warning: unknown, ...rest: unknown[]) => {
    const code = typeof rest[0] === 'object' && rest[0] !== null ? (rest[0] as { code?: string }).code : rest[1];
    if (code === 'DEP0123') return;
    emit(warning, ...rest);
  }) as typeof process.emitWarning;
}

/** Cancels `call` when `signal` aborts; returns the detach function. */
function cancelOn(signal: AbortSignal | undefined, call: { cancel(): void }): () => void {
  if (!signal) return () => {};
  const onAbort = () => call.cancel();
  if (signal.aborted) {
    call.cancel();
    return () => {};
  }
  signal.addEventListener('abort', onAbort, { once: true });
  return () => signal.removeEventListener('abort', onAbort);
}
