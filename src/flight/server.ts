/**
 * Quiver's Arrow Flight SQL server: the `arrow.flight.protocol.FlightService` gRPC service on
 * @grpc/grpc-js, answering the Flight SQL commands over a Quiver `Database`.
 *
 * What each RPC does (flight-sql.md §2–§9):
 * - Handshake: Basic credentials (header or BasicAuth payload) -> a bearer token, sent in the
 *   response header *and* the payload; a token even when authentication is off.
 * - GetFlightInfo / GetSchema: statement queries (packed command or raw SQL text), prepared
 *   statements, every metadata command, and a PATH descriptor naming a table. Queries are planned
 *   (not run) for their schema; the FlightInfo has exactly one endpoint, no locations, a
 *   non-empty schema, and a ticket bound to the caller.
 * - DoGet: redeems those tickets, metadata command tickets, and InfluxDB's JSON ticket. Results
 *   stream batch by batch from the exec tree, each batch encoded as it arrives; `call.write`
 *   returning false pauses the query until the client drains (a slow reader slows the query
 *   instead of growing the server's memory); a cancelled call or CancelFlightInfo aborts it.
 * - DoPut: CommandStatementUpdate, prepared statement binding / updates, and bulk ingest, one
 *   durable `put` per received batch (the next batch is read only after it is acknowledged).
 * - DoAction: prepared statements, CancelFlightInfo (and the deprecated CancelQuery),
 *   RenewFlightEndpoint; transactions, savepoints, Substrait and sessions are UNIMPLEMENTED.
 * - ListActions, ListFlights (empty), PollFlightInfo and DoExchange (UNIMPLEMENTED).
 *
 * Layering: this is the top layer (7); it talks to the engine only through the `Database` API.
 */
import {
  Metadata,
  Server,
  ServerCredentials,
  status as Status,
  type sendUnaryData,
  type ServerDuplexStream,
  type ServerUnaryCall,
  type ServerWritableStream,
  type UntypedServiceImplementation,
} from '@grpc/grpc-js';
import { type RecordBatch, type Schema, Table as ArrowTable } from 'apache-arrow';
import type { Database } from '../database.js';
import { isQuiverError } from '../errors.js';
import { parseSql } from '../sql/parse.js';
import { ANONYMOUS, type AuthOptions, Authenticator, credentialsOf, type Principal } from './auth.js';
import type { IncomingFlightData, OutgoingFlightData } from './flight-data.js';
import {
  batchFlightData,
  DEFAULT_MAX_BODY_BYTES,
  encapsulatedSchema,
  FlightDataReader,
  plainBatch,
  plainSchema,
  schemaFlightData,
} from './framing.js';
import {
  CATALOGS_SCHEMA,
  catalogMatches,
  DB_SCHEMAS_SCHEMA,
  DEFAULT_CATALOG,
  DEFAULT_SCHEMA,
  describeResultSchema,
  KEYS_SCHEMA,
  likePattern,
  PRIMARY_KEYS_SCHEMA,
  primaryKeysBatch,
  schemaMatches,
  SQL_INFO_SCHEMA,
  sqlInfoBatch,
  TABLE_TYPE,
  TABLE_TYPES_SCHEMA,
  tablesBatch,
  TABLES_SCHEMA,
  TABLES_WITH_SCHEMA_SCHEMA,
  batchOf,
  XDBC_TYPE_INFO_SCHEMA,
  xdbcTypeInfoBatch,
  type TableEntry,
} from './metadata.js';
import { bindNamedParameters, countParameters, type ParamValue, parameterSchema, parameterSets } from './params.js';
import {
  CancelResult,
  CancelStatus,
  DescriptorType,
  Flight,
  type Msg,
  packAny,
  Sql,
  type SqlCommand,
  TableExistsOption,
  TableNotExistOption,
  UnknownCommand,
  unpackSqlCommand,
} from './protocol.js';
import { flightServiceDefinition } from './service-definition.js';
import { type PreparedStatement, StatementStore, type QueryTicket } from './statements.js';
import { cancelled, FlightError, invalidArgument, notFound, toServiceError, unauthenticated, unimplemented } from './status.js';

export interface FlightServerOptions {
  /** Interface to listen on (default 127.0.0.1). */
  readonly host?: string;
  /** Port (default 50051; 0 picks a free one). */
  readonly port?: number;
  /** Users and token lifetime; without it every call is accepted. */
  readonly auth?: AuthOptions;
  /** PEM certificate chain and private key: serve gRPC over TLS. */
  readonly tls?: { readonly cert: Buffer | string; readonly key: Buffer | string };
  /** Largest gRPC message the server accepts (default 64 MiB): bounds DoPut batches and requests. */
  readonly maxMessageBytes?: number;
  /** Largest FlightData body the server sends (default 2 MiB; grpc-js clients refuse > 4 MiB). */
  readonly maxBodyBytes?: number;
  /** Largest SQL text accepted (default 1 MiB). */
  readonly maxSqlBytes?: number;
  /** Most parameter sets one bind may carry (default 100 000). */
  readonly maxParameterSets?: number;
  /** Ticket and prepared statement lifetimes. */
  readonly ticketTtlMs?: number;
  readonly statementTtlMs?: number;
  /** Where the server reports failures that are not the client's fault (default: stderr). */
  readonly log?: (line: string) => void;
}

export interface ServerAddress {
  readonly host: string;
  readonly port: number;
  /** `grpc://host:port`, or `grpc+tls://host:port` with TLS. */
  readonly url: string;
}

const DEFAULT_MAX_MESSAGE_BYTES = 64 * 1024 * 1024;
const TICKET_MARKER = Sql.TicketStatementQuery;

/** What a DoGet will stream: a schema, then batches. */
interface ResultStream {
  readonly schema: Schema;
  batches(signal: AbortSignal): AsyncIterable<RecordBatch>;
  readonly ticket?: QueryTicket;
}

export class FlightSqlServer {
  private readonly server: Server;
  private readonly auth: Authenticator;
  private readonly store: StatementStore;
  private readonly maxBodyBytes: number;
  private readonly maxSqlBytes: number;
  private readonly maxParameterSets: number;
  private readonly log: (line: string) => void;
  private readonly active = new Set<AbortController>();
  private sweeper: NodeJS.Timeout | null = null;
  private address: ServerAddress | null = null;
  private stopping = false;

  constructor(
    private readonly db: Database,
    private readonly options: FlightServerOptions = {},
  ) {
    const maxMessage = options.maxMessageBytes ?? DEFAULT_MAX_MESSAGE_BYTES;
    this.server = new Server({
      'grpc.max_receive_message_length': maxMessage,
      'grpc.max_send_message_length': Math.max(maxMessage, 8 * (options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES)),
    });
    this.auth = new Authenticator(options.auth);
    this.store = new StatementStore({ ticketTtlMs: options.ticketTtlMs, statementTtlMs: options.statementTtlMs });
    this.maxBodyBytes = options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES;
    this.maxSqlBytes = options.maxSqlBytes ?? 1024 * 1024;
    this.maxParameterSets = options.maxParameterSets ?? 100_000;
    this.log = options.log ?? ((line) => process.stderr.write(`${line}\n`));
    this.server.addService(flightServiceDefinition, this.implementation());
  }

  /** Starts listening; resolves with the bound address. */
  async listen(): Promise<ServerAddress> {
    const host = this.options.host ?? '127.0.0.1';
    const tls = this.options.tls;
    const credentials = tls
      ? ServerCredentials.createSsl(null, [{ cert_chain: Buffer.from(tls.cert), private_key: Buffer.from(tls.key) }], false)
      : ServerCredentials.createInsecure();
    const bindHost = host.includes(':') && !host.startsWith('[') ? `[${host}]` : host;
    const port = await new Promise<number>((resolve, reject) =>
      this.server.bindAsync(`${bindHost}:${this.options.port ?? 50051}`, credentials, (err, p) => (err ? reject(err) : resolve(p))),
    );
    widenReceiveWindows(this.server);
    this.sweeper = setInterval(() => {
      this.store.sweep();
      this.auth.sweep();
    }, 60_000);
    this.sweeper.unref();
    this.address = { host, port, url: `${tls ? 'grpc+tls' : 'grpc'}://${bindHost}:${port}` };
    return this.address;
  }

  get url(): string | null {
    return this.address?.url ?? null;
  }

  /**
   * Stops: refuses new calls, gives running ones `graceMs` to finish, then cancels them. Does not
   * close the database (the caller owns it; `quiver serve` closes it after this).
   */
  async close(graceMs = 5000): Promise<void> {
    if (this.stopping) return;
    this.stopping = true;
    if (this.sweeper) clearInterval(this.sweeper);
    const drained = new Promise<void>((resolve) => this.server.tryShutdown(() => resolve()));
    const timedOut = await Promise.race([drained.then(() => false), sleep(graceMs).then(() => true)]);
    if (timedOut) {
      for (const c of this.active) c.abort();
      this.store.abortAll();
      this.server.forceShutdown();
    }
  }

  // -------------------------------------------------------------------------------------------
  // Plumbing: authentication, errors and cancellation for every RPC.

  private implementation(): UntypedServiceImplementation {
    return {
      Handshake: (call: ServerDuplexStream<Msg, Msg>) => this.handshake(call),
      ListFlights: (call: ServerWritableStream<Msg, Msg>) => this.streaming(call, async () => {}),
      GetFlightInfo: (call: ServerUnaryCall<Msg, Msg>, cb: sendUnaryData<Msg>) => this.unary(call, cb, (p) => this.getFlightInfo(call.request, p)),
      PollFlightInfo: (call: ServerUnaryCall<Msg, Msg>, cb: sendUnaryData<Msg>) =>
        this.unary(call, cb, async () => {
          throw unimplemented('PollFlightInfo is not supported: use GetFlightInfo');
        }),
      GetSchema: (call: ServerUnaryCall<Msg, Msg>, cb: sendUnaryData<Msg>) => this.unary(call, cb, (p) => this.getSchema(call.request, p)),
      DoGet: (call: ServerWritableStream<Msg, OutgoingFlightData>) => this.streaming(call, (p, signal) => this.doGet(call, p, signal)),
      DoPut: (call: ServerDuplexStream<IncomingFlightData, Msg>) => this.streaming(call, (p, signal) => this.doPut(call, p, signal)),
      DoExchange: (call: ServerDuplexStream<IncomingFlightData, OutgoingFlightData>) =>
        this.streaming(call, async () => {
          throw unimplemented('DoExchange is not supported by Quiver');
        }),
      DoAction: (call: ServerWritableStream<Msg, Msg>) => this.streaming(call, (p, signal) => this.doAction(call, p, signal)),
      ListActions: (call: ServerWritableStream<Msg, Msg>) =>
        this.streaming(call, async () => {
          for (const [type, description] of ACTIONS) call.write({ type, description });
        }),
    };
  }

  private principal(metadata: Metadata): Principal {
    if (this.stopping) throw new FlightError(Status.UNAVAILABLE, 'server is shutting down');
    return this.auth.authenticate(metadata);
  }

  private unary(call: ServerUnaryCall<Msg, Msg>, cb: sendUnaryData<Msg>, fn: (p: Principal) => Promise<Msg>): void {
    (async () => fn(this.principal(call.metadata)))().then(
      (res) => cb(null, res),
      (e) => cb(this.toStatus(e)),
    );
  }

  /** A streaming RPC: authenticated, cancellable, ended with OK or the mapped error. */
  private streaming(
    call: ServerWritableStream<Msg, unknown> | ServerDuplexStream<unknown, unknown>,
    fn: (p: Principal, signal: AbortSignal) => Promise<void>,
  ): void {
    const controller = new AbortController();
    this.active.add(controller);
    const abort = () => controller.abort();
    // 'cancelled': the client went away or cancelled (not 'close', which a duplex emits when the client half-closes).
    call.on('cancelled', abort);
    (async () => fn(this.principal(call.metadata), controller.signal))().then(
      () => {
        this.active.delete(controller);
        if (!controller.signal.aborted || !call.cancelled) call.end();
      },
      (e) => {
        this.active.delete(controller);
        if (call.cancelled) return;
        call.emit('error', this.toStatus(e));
      },
    );
  }

  private toStatus(e: unknown) {
    return toServiceError(e, (message, error) => this.log(`quiver flight: ${message}${(error as Error)?.stack ? `\n${(error as Error).stack}` : ''}`));
  }

  // -------------------------------------------------------------------------------------------
  // Handshake.

  private handshake(call: ServerDuplexStream<Msg, Msg>): void {
    let answered = false;
    const answer = (principal: Principal, token?: string) => {
      if (answered) return;
      answered = true;
      const issued = token ?? this.auth.issueToken(principal).token;
      const md = new Metadata();
      md.set('authorization', `Bearer ${issued}`);
      call.sendMetadata(md);
      call.write({ protocol_version: 0, payload: Buffer.from(issued, 'utf8') });
      call.end();
    };
    const fail = (e: unknown) => {
      if (answered) return;
      answered = true;
      call.emit('error', this.toStatus(e));
    };
    const fromPayload = (payload: Buffer | undefined): Principal | null => {
      if (!payload?.length) return null;
      let basic: Msg;
      try {
        basic = Flight.BasicAuth.decode(payload);
      } catch {
        return null;
      }
      if (!basic.username) return null;
      return this.auth.enabled ? this.auth.checkPassword(basic.username, basic.password ?? '') : ANONYMOUS;
    };
    try {
      if (this.stopping) throw new FlightError(Status.UNAVAILABLE, 'server is shutting down');
      const creds = credentialsOf(call.metadata);
      if (creds.kind === 'basic') {
        answer(this.auth.enabled ? this.auth.checkPassword(creds.user, creds.password) : ANONYMOUS);
      } else if (creds.kind === 'token' && this.auth.enabled) {
        answer(this.auth.checkToken(creds.token), creds.token);
      } else if (creds.kind === 'malformed' && this.auth.enabled) {
        throw unauthenticated(creds.reason);
      }
    } catch (e) {
      fail(e);
    }
    if (answered) {
      call.on('data', () => {});
      call.on('error', () => {});
      return;
    }
    // No credentials in the headers: the first message may carry BasicAuth (the older flow).
    call.on('data', (req: Msg) => {
      try {
        const principal = fromPayload(req.payload);
        if (principal) answer(principal);
        else if (!this.auth.enabled) answer(ANONYMOUS);
        else throw unauthenticated('no credentials: send authorization: Basic base64(user:password)');
      } catch (e) {
        fail(e);
      }
    });
    call.on('end', () => {
      if (!this.auth.enabled) answer(ANONYMOUS);
      else fail(unauthenticated('no credentials: send authorization: Basic base64(user:password)'));
    });
    call.on('error', () => {});
  }

  // -------------------------------------------------------------------------------------------
  // GetFlightInfo / GetSchema.

  /** What a descriptor asks for. */
  private parseDescriptor(descriptor: Msg): { kind: 'sql'; sql: string } | { kind: 'command'; command: SqlCommand; bytes: Buffer } {
    const type = Number(descriptor.type ?? 0);
    if (type === DescriptorType.PATH) {
      const path = (descriptor.path ?? []) as string[];
      if (path.length !== 1 || !path[0]) throw invalidArgument('a PATH descriptor must name one table');
      return { kind: 'sql', sql: `SELECT * FROM ${quoteIdent(path[0])}` };
    }
    const cmd: Buffer = descriptor.cmd ?? Buffer.alloc(0);
    if (cmd.length === 0) throw invalidArgument('empty FlightDescriptor: send a Flight SQL command or SQL text');
    let command: SqlCommand | null;
    try {
      command = unpackSqlCommand(cmd);
    } catch (e) {
      if (e instanceof UnknownCommand) throw unimplemented(`command not recognized: ${e.typeUrl}`);
      throw e;
    }
    if (command) return { kind: 'command', command, bytes: cmd };
    // Not an Any: raw SQL text, as some clients send (flight-sql.md §9.2).
    return { kind: 'sql', sql: this.sqlText(cmd.toString('utf8')) };
  }

  private sqlText(sql: unknown): string {
    if (typeof sql !== 'string' || sql.trim().length === 0) throw invalidArgument('empty SQL statement');
    if (Buffer.byteLength(sql, 'utf8') > this.maxSqlBytes) throw invalidArgument(`SQL text is longer than ${this.maxSqlBytes} bytes`);
    return sql;
  }

  private async getFlightInfo(descriptor: Msg, principal: Principal): Promise<Msg> {
    const target = this.parseDescriptor(descriptor);
    let schema: Schema;
    let ticket: Buffer;
    if (target.kind === 'sql') {
      ({ schema, ticket } = await this.queryInfo(principal, target.sql, [[]]));
    } else {
      const { name, message } = target.command;
      if (name === 'CommandStatementQuery') {
        noTransaction(message);
        ({ schema, ticket } = await this.queryInfo(principal, this.sqlText(message.query), [[]]));
      } else if (name === 'CommandPreparedStatementQuery') {
        const s = this.store.statement(handleOf(message.prepared_statement_handle), principal);
        ({ schema, ticket } = await this.queryInfo(principal, s.sql, s.paramSets ?? [[]]));
      } else {
        schema = await this.commandSchema(target.command, principal);
        // Metadata commands are stateless: the command itself is the ticket (as the reference servers do).
        ticket = target.bytes;
      }
    }
    return {
      schema: encapsulatedSchema(schema),
      flight_descriptor: descriptor,
      endpoint: [{ ticket: { ticket }, location: [] }],
      total_records: -1,
      total_bytes: -1,
      ordered: false,
    };
  }

  private async getSchema(descriptor: Msg, principal: Principal): Promise<Msg> {
    const target = this.parseDescriptor(descriptor);
    let schema: Schema;
    if (target.kind === 'sql') schema = await this.planSchema(target.sql, [[]]);
    else {
      const { name, message } = target.command;
      if (name === 'CommandStatementQuery') {
        noTransaction(message);
        schema = await this.planSchema(this.sqlText(message.query), [[]]);
      } else if (name === 'CommandPreparedStatementQuery') {
        const s = this.store.statement(handleOf(message.prepared_statement_handle), principal);
        schema = s.paramSets === null && s.datasetSchema ? s.datasetSchema : await this.planSchema(s.sql, s.paramSets ?? [[]]);
      } else schema = await this.commandSchema(target.command, principal);
    }
    return { schema: encapsulatedSchema(schema) };
  }

  /** Plans a query (without running it) and issues a ticket bound to the caller. */
  private async queryInfo(principal: Principal, sql: string, paramSets: readonly (readonly ParamValue[])[]): Promise<{ schema: Schema; ticket: Buffer }> {
    const schema = await this.planSchema(sql, paramSets);
    const t = this.store.issueTicket(principal, sql, paramSets);
    return { schema, ticket: packAny(TICKET_MARKER, { statement_handle: Buffer.from(t.id, 'utf8') }) };
  }

  /** A statement's result schema as clients see it: planned, dictionaries decoded, column metadata added. */
  private async planSchema(sql: string, paramSets: readonly (readonly ParamValue[])[]): Promise<Schema> {
    const prepared = await this.db.prepare(sql, [...(paramSets[0] ?? [])]);
    return describeResultSchema(plainSchema(prepared.schema));
  }

  /** The result schema of a metadata command (GetFlightInfo, GetSchema). */
  private async commandSchema(command: SqlCommand, principal: Principal): Promise<Schema> {
    switch (command.name) {
      case 'CommandGetCatalogs':
        return CATALOGS_SCHEMA;
      case 'CommandGetDbSchemas':
        return DB_SCHEMAS_SCHEMA;
      case 'CommandGetTables':
        return command.message.include_schema ? TABLES_WITH_SCHEMA_SCHEMA : TABLES_SCHEMA;
      case 'CommandGetTableTypes':
        return TABLE_TYPES_SCHEMA;
      case 'CommandGetPrimaryKeys':
        return PRIMARY_KEYS_SCHEMA;
      case 'CommandGetExportedKeys':
      case 'CommandGetImportedKeys':
      case 'CommandGetCrossReference':
        return KEYS_SCHEMA;
      case 'CommandGetXdbcTypeInfo':
        return XDBC_TYPE_INFO_SCHEMA;
      case 'CommandGetSqlInfo':
        return SQL_INFO_SCHEMA;
      case 'CommandStatementSubstraitPlan':
        throw unimplemented('Substrait plans are not supported: send SQL');
      default:
        void principal;
        throw invalidArgument(`${command.name} is not a query command`);
    }
  }

  // -------------------------------------------------------------------------------------------
  // DoGet.

  private async doGet(call: ServerWritableStream<Msg, OutgoingFlightData>, principal: Principal, signal: AbortSignal): Promise<void> {
    const bytes: Buffer = call.request.ticket ?? Buffer.alloc(0);
    const result = await this.resolveTicket(bytes, principal);
    const running = result.ticket?.running;
    const controller = new AbortController();
    const onAbort = () => controller.abort();
    signal.addEventListener('abort', onAbort, { once: true });
    running?.add(controller);
    try {
      if (result.ticket?.cancelled) throw cancelled('query was cancelled (CancelFlightInfo)');
      await this.writeAll(call, [schemaFlightData(result.schema)], controller.signal);
      for await (const batch of result.batches(controller.signal)) {
        if (controller.signal.aborted) break;
        if (batch.numRows === 0) continue;
        checkBatchMatches(batch, result.schema);
        await this.writeAll(call, batchFlightData(plainBatch(batch, result.schema), this.maxBodyBytes), controller.signal);
      }
      if (controller.signal.aborted && !call.cancelled) throw cancelled('query was cancelled');
    } catch (e) {
      if (controller.signal.aborted && !call.cancelled && !isQuiverError(e, 'cancelled') && !(e instanceof FlightError)) throw cancelled('query was cancelled');
      throw e;
    } finally {
      running?.delete(controller);
      signal.removeEventListener('abort', onAbort);
    }
  }

  /**
   * Writes messages with at most MAX_PENDING_WRITES of them accepted by grpc-js but not yet taken
   * by HTTP/2, waiting otherwise (and whenever grpc-js asks for 'drain'). HTTP/2 flow control stops
   * taking data when the client stops reading, so a slow client pauses the query here, with at
   * most a few messages (each <= maxBodyBytes) held by the server. grpc-js's own limit (16
   * messages) would hold up to 16.
   */
  private async writeAll(call: ServerWritableStream<Msg, OutgoingFlightData>, messages: readonly OutgoingFlightData[], signal: AbortSignal): Promise<void> {
    const state = pendingWrites(call);
    for (const m of messages) {
      if (signal.aborted) return;
      state.pending++;
      const ok = call.write(m, () => {
        state.pending--;
        state.wake?.();
      });
      while (!signal.aborted && !call.destroyed && (!ok || state.pending >= MAX_PENDING_WRITES || call.writableNeedDrain)) {
        await waitWritable(call, state, signal);
        if (!call.writableNeedDrain && state.pending < MAX_PENDING_WRITES) break;
      }
    }
  }

  private async resolveTicket(bytes: Buffer, principal: Principal): Promise<ResultStream> {
    if (bytes.length === 0) throw invalidArgument('empty ticket');
    if (looksLikeJson(bytes)) return this.jsonTicket(bytes);
    let command: SqlCommand | null;
    try {
      command = unpackSqlCommand(bytes);
    } catch (e) {
      if (e instanceof UnknownCommand) throw invalidArgument(`ticket not recognized: ${e.typeUrl}`);
      throw e;
    }
    if (!command) throw invalidArgument('ticket not recognized: not issued by this server');
    const { name, message } = command;
    switch (name) {
      case 'TicketStatementQuery': {
        const t = this.store.ticket(handleOf(message.statement_handle), principal);
        return { ...(await this.queryStream(t.sql, t.paramSets)), ticket: t };
      }
      case 'CommandStatementQuery':
        noTransaction(message);
        return this.queryStream(this.sqlText(message.query), [[]]);
      case 'CommandPreparedStatementQuery': {
        const s = this.store.statement(handleOf(message.prepared_statement_handle), principal);
        return this.queryStream(s.sql, s.paramSets ?? [[]]);
      }
      default: {
        const schema = await this.commandSchema(command, principal);
        const batch = await this.commandBatch(command);
        return { schema, batches: async function* () { yield batch; } };
      }
    }
  }

  /** InfluxDB 3's DoGet ticket: `{"database","sql_query","query_type","params"}`; any database is Quiver's catalog. */
  private jsonTicket(bytes: Buffer): Promise<ResultStream> {
    let ticket: { database?: unknown; sql_query?: unknown; query_type?: unknown; params?: unknown };
    try {
      ticket = JSON.parse(bytes.toString('utf8'));
    } catch {
      throw invalidArgument('ticket is not valid JSON');
    }
    const type = ticket.query_type ?? 'sql';
    if (typeof type !== 'string' || type.toLowerCase() !== 'sql') throw invalidArgument(`query_type ${String(type)} is not supported: Quiver speaks SQL`);
    const sql = this.sqlText(ticket.sql_query);
    const params = ticket.params && typeof ticket.params === 'object' ? (ticket.params as Record<string, unknown>) : {};
    const bound = bindNamedParameters(sql, params);
    return this.queryStream(bound.sql, [bound.values]);
  }

  /** A query's result stream: planned now (schema up front), run as it is pulled, one run per parameter set. */
  private async queryStream(sql: string, paramSets: readonly (readonly ParamValue[])[]): Promise<ResultStream> {
    const sets = paramSets.length ? paramSets : [[]];
    const first = await this.db.prepare(sql, [...sets[0]]);
    const schema = describeResultSchema(plainSchema(first.schema));
    const db = this.db;
    return {
      schema,
      async *batches(signal: AbortSignal) {
        for (let i = 0; i < sets.length; i++) {
          const params = [...sets[i]];
          const prepared = i === 0 ? first : await db.prepare(sql, params, { signal });
          yield* prepared.exec.execute({ params, signal });
        }
      },
    };
  }

  /** The rows of a metadata command. */
  private async commandBatch(command: SqlCommand): Promise<RecordBatch> {
    const m = command.message;
    switch (command.name) {
      case 'CommandGetCatalogs':
        return batchOf(CATALOGS_SCHEMA, [[DEFAULT_CATALOG]]);
      case 'CommandGetDbSchemas': {
        const ok = catalogMatches(m.catalog) && schemaMatches(m.db_schema_filter_pattern);
        return batchOf(DB_SCHEMAS_SCHEMA, ok ? [[DEFAULT_CATALOG], [DEFAULT_SCHEMA]] : [[], []]);
      }
      case 'CommandGetTables': {
        const types = (m.table_types ?? []) as string[];
        const ok = catalogMatches(m.catalog) && schemaMatches(m.db_schema_filter_pattern) && (types.length === 0 || types.includes(TABLE_TYPE));
        const pattern = likePattern(m.table_name_filter_pattern);
        const names = ok ? (await this.db.tableNames()).filter((n) => !pattern || pattern.test(n)).sort() : [];
        const entries: TableEntry[] = [];
        for (const name of names) {
          if (!m.include_schema) entries.push({ name });
          else {
            try {
              entries.push({ name, schema: plainSchema((await this.db.openTable(name)).schema) });
            } catch (e) {
              if (!isQuiverError(e, 'not_found')) throw e; // dropped meanwhile
            }
          }
        }
        return tablesBatch(entries, Boolean(m.include_schema));
      }
      case 'CommandGetTableTypes':
        return batchOf(TABLE_TYPES_SCHEMA, [[TABLE_TYPE]]);
      case 'CommandGetPrimaryKeys': {
        if (!catalogMatches(m.catalog) || !schemaMatches(m.db_schema, true) || !m.table) return primaryKeysBatch(null, []);
        try {
          const table = await this.db.openTable(m.table);
          return primaryKeysBatch(m.table, table.primaryKey);
        } catch (e) {
          if (isQuiverError(e, 'not_found') || isQuiverError(e, 'invalid')) return primaryKeysBatch(null, []);
          throw e;
        }
      }
      case 'CommandGetExportedKeys':
      case 'CommandGetImportedKeys':
      case 'CommandGetCrossReference':
        // Quiver has no foreign keys.
        return batchOf(KEYS_SCHEMA, KEYS_SCHEMA.fields.map(() => []));
      case 'CommandGetXdbcTypeInfo':
        return xdbcTypeInfoBatch(m.data_type === undefined ? undefined : Number(m.data_type));
      case 'CommandGetSqlInfo': {
        const ids = ((m.info ?? []) as number[]).map(Number);
        return sqlInfoBatch(ids);
      }
      default:
        throw invalidArgument(`${command.name} is not a query command`);
    }
  }

  // -------------------------------------------------------------------------------------------
  // DoPut.

  private async doPut(call: ServerDuplexStream<IncomingFlightData, Msg>, principal: Principal, signal: AbortSignal): Promise<void> {
    // Not `for await (… of call)`: Node's default stream iterator destroys the stream when the
    // client half-closes, which would kill our side before the reply is written.
    const messages = call.iterator({ destroyOnReturn: false }) as AsyncIterator<IncomingFlightData>;
    const first = await messages.next();
    if (first.done) throw invalidArgument('DoPut stream is empty: the first message must carry a FlightDescriptor');
    if (!first.value.descriptor) throw invalidArgument('the first DoPut message must carry a FlightDescriptor');
    const descriptor = Flight.FlightDescriptor.decode(first.value.descriptor);
    const target = this.parseDescriptor(descriptor);
    const reader = new FlightDataReader();
    const stream = this.batchesOf(first.value, messages, reader, signal);
    if (target.kind === 'sql') {
      await drainStream(stream);
      return this.replyUpdate(call, await this.runUpdate(target.sql, [[]], signal));
    }
    const { name, message } = target.command;
    switch (name) {
      case 'CommandStatementUpdate': {
        noTransaction(message);
        await drainStream(stream);
        return this.replyUpdate(call, await this.runUpdate(this.sqlText(message.query), [[]], signal));
      }
      case 'CommandPreparedStatementQuery': {
        const s = this.store.statement(handleOf(message.prepared_statement_handle), principal);
        const sets = await this.readParameterSets(stream);
        const bound = this.store.bind(s, principal, sets.length ? sets : [[]]);
        call.write({ app_metadata: Sql.DoPutPreparedStatementResult.encode({ prepared_statement_handle: Buffer.from(bound.id, 'utf8') }) });
        return;
      }
      case 'CommandPreparedStatementUpdate': {
        const s = this.store.statement(handleOf(message.prepared_statement_handle), principal);
        const sets = await this.readParameterSets(stream);
        return this.replyUpdate(call, await this.runUpdate(s.sql, sets.length ? sets : (s.paramSets ?? [[]]), signal));
      }
      case 'CommandStatementIngest':
        return this.replyUpdate(call, await this.ingest(message, stream, reader, signal));
      case 'CommandStatementSubstraitPlan':
        throw unimplemented('Substrait plans are not supported: send SQL');
      default:
        throw invalidArgument(`${name} cannot be sent with DoPut`);
    }
  }

  /** Record batches of a DoPut stream, decoded as they arrive (the first message may hold the schema). */
  private async *batchesOf(
    first: IncomingFlightData,
    rest: AsyncIterator<IncomingFlightData>,
    reader: FlightDataReader,
    signal: AbortSignal,
  ): AsyncGenerator<RecordBatch> {
    let fd: IncomingFlightData | undefined = first;
    while (fd) {
      if (signal.aborted) throw cancelled('DoPut was cancelled');
      const batch = reader.read(fd);
      if (batch) yield batch;
      const next = await rest.next();
      fd = next.done ? undefined : next.value;
    }
  }

  private async readParameterSets(stream: AsyncIterable<RecordBatch>): Promise<ParamValue[][]> {
    const sets: ParamValue[][] = [];
    for await (const batch of stream) {
      for (const set of parameterSets(plainBatch(batch))) {
        sets.push(set);
        if (sets.length > this.maxParameterSets) throw invalidArgument(`more than ${this.maxParameterSets} parameter sets in one bind`);
      }
    }
    return sets;
  }

  /** Runs a writing statement once per parameter set; the affected rows summed (-1 when unknown). */
  private async runUpdate(sql: string, paramSets: readonly (readonly ParamValue[])[], signal: AbortSignal): Promise<number> {
    let total = 0;
    let known = true;
    for (const params of paramSets) {
      const result = await this.db.sql(sql, [...params], { signal });
      const n = updateCount(result);
      if (n === null) known = false;
      else total += n;
    }
    return known ? total : -1;
  }

  private replyUpdate(call: ServerDuplexStream<IncomingFlightData, Msg>, count: number): void {
    call.write({ app_metadata: Sql.DoPutUpdateResult.encode({ record_count: count }) });
  }

  /**
   * CommandStatementIngest: create / append / replace per the table definition options, then one
   * durable `put` per received batch. The next batch is read only when the previous one is
   * acknowledged, so a crash loses at most the batch in flight (whose DoPut never succeeded).
   */
  private async ingest(cmd: Msg, stream: AsyncGenerator<RecordBatch>, reader: FlightDataReader, signal: AbortSignal): Promise<number> {
    const table = String(cmd.table ?? '');
    if (!table) throw invalidArgument('CommandStatementIngest: table is required');
    const options = cmd.table_definition_options ?? {};
    const ifNotExist = Number(options.if_not_exist ?? 0);
    const ifExists = Number(options.if_exists ?? 0);
    if (ifNotExist === TableNotExistOption.UNSPECIFIED || ifExists === TableExistsOption.UNSPECIFIED) {
      throw invalidArgument('CommandStatementIngest: table_definition_options.if_not_exist and if_exists must be set (UNSPECIFIED is not allowed)');
    }
    if (cmd.transaction_id !== undefined && cmd.transaction_id.length > 0) throw invalidArgument('transactions are not supported');
    if (cmd.temporary) throw invalidArgument('temporary tables are not supported');
    if (cmd.catalog !== undefined && cmd.catalog !== '' && cmd.catalog !== DEFAULT_CATALOG) throw notFound(`catalog ${cmd.catalog} does not exist (Quiver's catalog is ${DEFAULT_CATALOG})`);
    if (cmd.schema !== undefined && cmd.schema !== '' && cmd.schema !== DEFAULT_SCHEMA) throw notFound(`schema ${cmd.schema} does not exist (Quiver's schema is ${DEFAULT_SCHEMA})`);
    const ingestOptions = (cmd.options ?? {}) as Record<string, string>;

    let count = 0;
    let target: Awaited<ReturnType<Database['openTable']>> | null = null;
    const open = async (schema: Schema) => {
      const exists = (await this.db.tableNames()).includes(table);
      if (exists) {
        if (ifExists === TableExistsOption.FAIL) throw new FlightError(Status.ALREADY_EXISTS, `table ${table} already exists`);
        if (ifExists === TableExistsOption.REPLACE) {
          const old = await this.db.openTable(table);
          const primaryKey = primaryKeyOption(ingestOptions, schema) ?? old.primaryKey;
          await this.db.dropTable(table);
          return this.db.createTable(table, schema, { primaryKey });
        }
        return this.db.openTable(table);
      }
      if (ifNotExist === TableNotExistOption.FAIL) throw notFound(`table ${table} does not exist`);
      const primaryKey = primaryKeyOption(ingestOptions, schema) ?? [schema.fields[0]?.name];
      if (!primaryKey[0]) throw invalidArgument('CommandStatementIngest: the stream has no columns');
      return this.db.createTable(table, schema, { primaryKey });
    };
    // Each batch is one `put` (atomic, durable when it resolves). Up to MAX_INFLIGHT_PUTS run
    // while the next batches are received, so receiving overlaps the WAL writes (and puts can
    // share a group commit); the reply is sent only once every put has resolved.
    const inflight: Promise<void>[] = [];
    let failed: unknown = null;
    const track = (p: Promise<void>) => {
      const tracked = p.catch((e) => {
        failed ??= e;
      });
      inflight.push(tracked);
    };
    try {
      for await (const batch of stream) {
        if (signal.aborted) throw cancelled('ingest was cancelled');
        if (failed) break;
        const plain = plainBatch(batch);
        if (!target) target = await open(plain.schema);
        if (plain.numRows === 0) continue;
        track(target.put(plain));
        count += plain.numRows;
        if (inflight.length >= MAX_INFLIGHT_PUTS) await inflight.shift();
      }
    } finally {
      await Promise.all(inflight);
    }
    if (failed) throw failed;
    // A stream with a schema but no rows still creates (or replaces) the table.
    if (!target && reader.schema) await open(plainSchema(reader.schema));
    if (!target && !reader.schema) throw invalidArgument('CommandStatementIngest: the stream carried no schema');
    return count;
  }

  // -------------------------------------------------------------------------------------------
  // DoAction.

  private async doAction(call: ServerWritableStream<Msg, Msg>, principal: Principal, signal: AbortSignal): Promise<void> {
    const type = String(call.request.type ?? '');
    const body: Buffer = call.request.body ?? Buffer.alloc(0);
    void signal;
    switch (type) {
      case 'CreatePreparedStatement': {
        const req = unpackAs(body, 'ActionCreatePreparedStatementRequest');
        noTransaction(req);
        const s = await this.prepareStatement(principal, this.sqlText(req.query));
        call.write({
          body: packAny(Sql.ActionCreatePreparedStatementResult, {
            prepared_statement_handle: Buffer.from(s.id, 'utf8'),
            dataset_schema: s.datasetSchema ? encapsulatedSchema(s.datasetSchema) : Buffer.alloc(0),
            parameter_schema: encapsulatedSchema(parameterSchema(s.sql)),
            is_update: s.isUpdate,
          }),
        });
        return;
      }
      case 'ClosePreparedStatement': {
        const req = unpackAs(body, 'ActionClosePreparedStatementRequest');
        try {
          this.store.closeStatement(this.store.statement(handleOf(req.prepared_statement_handle), principal));
        } catch (e) {
          // Closing twice, or after expiry, is not an error.
          if (!(e instanceof FlightError && e.code === Status.NOT_FOUND)) throw e;
        }
        return;
      }
      case 'CancelFlightInfo': {
        const req = Flight.CancelFlightInfoRequest.decode(body);
        const status = this.cancel(req.info, principal);
        call.write({ body: Flight.CancelFlightInfoResult.encode({ status }) });
        return;
      }
      case 'CancelQuery': {
        const req = unpackAs(body, 'ActionCancelQueryRequest');
        const info = Flight.FlightInfo.decode(req.info ?? Buffer.alloc(0));
        const status = this.cancel(info, principal);
        const result = status === CancelStatus.CANCELLED ? CancelResult.CANCELLED : CancelResult.NOT_CANCELLABLE;
        call.write({ body: packAny(Sql.ActionCancelQueryResult, { result }) });
        return;
      }
      case 'RenewFlightEndpoint': {
        const req = Flight.RenewFlightEndpointRequest.decode(body);
        const endpoint = req.endpoint ?? {};
        const t = this.ticketOf(endpoint.ticket?.ticket, principal);
        if (!t) throw invalidArgument('RenewFlightEndpoint: only query tickets expire');
        const expires = t.expiresAt;
        call.write({
          body: Flight.FlightEndpoint.encode({
            ...endpoint,
            expiration_time: { seconds: Math.floor(expires / 1000), nanos: (expires % 1000) * 1e6 },
          }),
        });
        return;
      }
      case 'BeginTransaction':
      case 'BeginSavepoint':
      case 'EndTransaction':
      case 'EndSavepoint':
        throw unimplemented('transactions are not supported by Quiver (each statement commits on its own)');
      case 'CreatePreparedSubstraitPlan':
        throw unimplemented('Substrait plans are not supported: send SQL');
      case 'SetSessionOptions':
      case 'GetSessionOptions':
      case 'CloseSession':
        throw unimplemented('session options are not supported');
      default:
        throw unimplemented(`Action not implemented: ${type}`);
    }
  }

  /** Plans a statement for a prepared statement handle. */
  private async prepareStatement(principal: Principal, sql: string): Promise<PreparedStatement> {
    // Parse first: a syntax error is reported now, and the statement kind decides is_update.
    const kind = parseSql(sql).kind;
    const isUpdate = kind !== 'select' && kind !== 'explain';
    const parameterCount = countParameters(sql);
    let datasetSchema: Schema | null = null;
    try {
      datasetSchema = await this.planSchema(sql, [[]]);
    } catch (e) {
      // Planning may need the parameter values (their types decide expression types): the
      // dataset schema is then sent empty and known once parameters are bound.
      if (!(parameterCount > 0 && isQuiverError(e, 'invalid'))) throw e;
    }
    return this.store.createStatement(principal, { sql, isUpdate, parameterCount, datasetSchema });
  }

  private ticketOf(bytes: Buffer | undefined, principal: Principal): QueryTicket | null {
    if (!bytes?.length) return null;
    let command: SqlCommand | null = null;
    try {
      command = unpackSqlCommand(bytes);
    } catch {
      return null;
    }
    if (command?.name !== 'TicketStatementQuery') return null;
    return this.store.ticket(handleOf(command.message.statement_handle), principal);
  }

  /** Cancels the queries of a FlightInfo's endpoints (those not started yet fail when redeemed). */
  private cancel(info: Msg | undefined, principal: Principal): number {
    let found = false;
    for (const endpoint of (info?.endpoint ?? []) as Msg[]) {
      let t: QueryTicket | null;
      try {
        t = this.ticketOf(endpoint.ticket?.ticket, principal);
      } catch (e) {
        if (e instanceof FlightError && e.code === Status.NOT_FOUND) continue;
        throw e;
      }
      if (!t) continue;
      found = true;
      t.cancelled = true;
      for (const c of t.running) c.abort();
    }
    return found ? CancelStatus.CANCELLED : CancelStatus.NOT_CANCELLABLE;
  }
}

/** The action types ListActions advertises. */
const ACTIONS: readonly [string, string][] = [
  ['CreatePreparedStatement', 'Creates a reusable prepared statement resource on the server.\nRequest Message: ActionCreatePreparedStatementRequest\nResponse Message: ActionCreatePreparedStatementResult'],
  ['ClosePreparedStatement', 'Closes a reusable prepared statement resource on the server.\nRequest Message: ActionClosePreparedStatementRequest\nResponse Message: N/A'],
  ['CancelFlightInfo', 'Explicitly cancel a running FlightInfo.\nRequest Message: CancelFlightInfoRequest\nResponse Message: CancelFlightInfoResult'],
  ['CancelQuery', 'Explicitly cancel a running query (deprecated: use CancelFlightInfo).\nRequest Message: ActionCancelQueryRequest\nResponse Message: ActionCancelQueryResult'],
  ['RenewFlightEndpoint', 'Extend expiration time of a FlightEndpoint.\nRequest Message: RenewFlightEndpointRequest\nResponse Message: Renewed FlightEndpoint'],
];

// ---------------------------------------------------------------------------------------------
// Helpers.

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms).unref());
}

/** Batches of one ingest being written while the next ones are received. */
const MAX_INFLIGHT_PUTS = 4;

/** Messages a DoGet may have handed to grpc-js that HTTP/2 has not taken yet. */
const MAX_PENDING_WRITES = 4;

interface PendingWrites {
  pending: number;
  wake: (() => void) | null;
}

const pendingByCall = new WeakMap<object, PendingWrites>();

function pendingWrites(call: object): PendingWrites {
  let s = pendingByCall.get(call);
  if (!s) pendingByCall.set(call, (s = { pending: 0, wake: null }));
  return s;
}

/** Resolves on the next write completion, 'drain', abort, close or error. */
function waitWritable(call: ServerWritableStream<Msg, OutgoingFlightData>, state: PendingWrites, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      state.wake = null;
      call.off('drain', done);
      call.off('close', done);
      call.off('error', done);
      signal.removeEventListener('abort', done);
      resolve();
    };
    state.wake = done;
    call.once('drain', done);
    call.once('close', done);
    call.once('error', done);
    signal.addEventListener('abort', done, { once: true });
  });
}

async function drainStream(stream: AsyncIterable<unknown>): Promise<void> {
  for await (const _ of stream); // eslint-disable-line @typescript-eslint/no-unused-vars
}

function looksLikeJson(bytes: Buffer): boolean {
  for (const b of bytes) {
    if (b === 0x20 || b === 0x09 || b === 0x0a || b === 0x0d) continue;
    return b === 0x7b; // '{'
  }
  return false;
}

function handleOf(bytes: Buffer | undefined): string {
  if (!bytes?.length) throw invalidArgument('missing handle');
  return bytes.toString('utf8');
}

function unpackAs(body: Buffer, name: keyof typeof Sql): Msg {
  let command: SqlCommand | null;
  try {
    command = unpackSqlCommand(body);
  } catch (e) {
    if (e instanceof UnknownCommand) throw invalidArgument(`expected ${name}, got ${e.typeUrl}`);
    throw e;
  }
  if (!command) throw invalidArgument(`action body must be an Any-packed ${name}`);
  if (command.name !== name) throw invalidArgument(`expected ${name}, got ${command.name}`);
  return command.message;
}

function noTransaction(message: Msg): void {
  if (message.transaction_id !== undefined && message.transaction_id.length > 0) {
    throw invalidArgument('transactions are not supported by Quiver (BeginTransaction is unimplemented)');
  }
}

function quoteIdent(name: string): string {
  return `"${name.replace(/"/g, '""')}"`;
}

function primaryKeyOption(options: Record<string, string>, schema: Schema): string[] | null {
  const raw = options.primary_key ?? options['quiver.primary_key'];
  if (raw === undefined) return null;
  const cols = raw.split(',').map((c) => c.trim()).filter(Boolean);
  for (const c of cols) if (!schema.fields.some((f) => f.name === c)) throw invalidArgument(`primary_key option names ${c}, which is not a column of the stream`);
  return cols.length ? cols : null;
}

/** A write's affected row count from its one-row `count` result; null when the result is not that. */
function updateCount(result: ArrowTable): number | null {
  if (result.numRows !== 1 || result.numCols !== 1 || result.schema.fields[0].name !== 'count') return null;
  const v = result.getChildAt(0)?.get(0);
  return v === null || v === undefined ? null : Number(v);
}

/** A batch from the exec tree must have the announced column types (the schema message is already sent). */
function checkBatchMatches(batch: RecordBatch, schema: Schema): void {
  const fields = batch.schema.fields;
  if (fields.length !== schema.fields.length) {
    throw new FlightError(Status.INTERNAL, `result batch has ${fields.length} columns, the announced schema ${schema.fields.length}`);
  }
}


/** Per-stream and per-connection HTTP/2 receive window the server advertises (bytes). */
const RECEIVE_WINDOW_BYTES = 8 * 1024 * 1024;

/**
 * grpc-js servers keep Node's default 64 KiB HTTP/2 receive window and take no option to change
 * it (grpc/grpc-node#3058): every 64 KiB of a DoPut upload waits for a WINDOW_UPDATE the event
 * loop sends only between other work, so ingest stalls with both ends idle. The window is widened
 * on each new session through the underlying http2 servers (a private field of grpc-js; without it
 * the default stays, nothing else changes).
 */
function widenReceiveWindows(server: Server): void {
  const servers = (server as unknown as { http2Servers?: Map<import('node:events').EventEmitter, unknown> }).http2Servers;
  if (!(servers instanceof Map)) return;
  for (const http2Server of servers.keys()) {
    http2Server.on('session', (session: import('node:http2').ServerHttp2Session) => {
      try {
        session.setLocalWindowSize(RECEIVE_WINDOW_BYTES);
        session.settings({ initialWindowSize: RECEIVE_WINDOW_BYTES });
      } catch {
        // an old Node or a closed session: the default window stays
      }
    });
  }
}
