/**
 * A minimal Flight SQL client on grpc-js for the tests and the benchmark: the server's own service
 * definition and codecs, used from the client side. It exposes the raw FlightData stream (to see
 * message sizes, read slowly, or cancel mid-stream) as well as decoded batches.
 */
import { type ClientDuplexStream, type ClientReadableStream, credentials, type ChannelCredentials, Metadata, makeGenericClientConstructor } from '@grpc/grpc-js';
import { type RecordBatch, Schema, Table } from 'apache-arrow';
import type { IncomingFlightData } from '../../src/flight/flight-data.js';
import { batchFlightData, decodeEncapsulatedSchema, FlightDataReader, schemaFlightData } from '../../src/flight/framing.js';
import { Flight, type Msg, packAny, Sql, type SqlMessageName } from '../../src/flight/protocol.js';
import { flightServiceDefinition } from '../../src/flight/service-definition.js';

const FlightServiceClient = makeGenericClientConstructor(flightServiceDefinition, 'FlightService');

export interface ClientOptions {
  /** Raise grpc-js's 4 MiB default receive limit (-1 = none). */
  maxReceiveBytes?: number;
  credentials?: ChannelCredentials;
  headers?: Record<string, string>;
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Raw = any;

export class TestFlightClient {
  readonly raw: Raw;
  headers: Record<string, string>;

  constructor(url: string, options: ClientOptions = {}) {
    const address = url.replace(/^grpc(\+tls|\+tcp)?:\/\//, '');
    const channelOptions: Record<string, number> = {};
    if (options.maxReceiveBytes !== undefined) channelOptions['grpc.max_receive_message_length'] = options.maxReceiveBytes;
    channelOptions['grpc.max_send_message_length'] = 64 * 1024 * 1024;
    this.raw = new FlightServiceClient(address, options.credentials ?? credentials.createInsecure(), channelOptions);
    this.headers = { ...(options.headers ?? {}) };
  }

  metadata(): Metadata {
    const md = new Metadata();
    for (const [k, v] of Object.entries(this.headers)) md.set(k, v);
    return md;
  }

  close(): void {
    this.raw.close();
  }

  /** Handshake with Basic credentials; keeps the bearer token for later calls. */
  async handshake(user: string, password: string): Promise<{ headerToken: string | null; payloadToken: string }> {
    const md = new Metadata();
    md.set('authorization', `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`);
    const call: ClientDuplexStream<Msg, Msg> = this.raw.Handshake(md);
    let headerToken: string | null = null;
    call.on('metadata', (m: Metadata) => {
      const v = m.get('authorization')[0];
      if (typeof v === 'string') headerToken = v.replace(/^Bearer /, '');
    });
    call.write({ protocol_version: 0, payload: Buffer.alloc(0) });
    call.end();
    const responses: Msg[] = [];
    for await (const r of call) responses.push(r);
    const payloadToken = Buffer.from(responses[0]?.payload ?? []).toString('utf8');
    this.headers.authorization = `Bearer ${headerToken ?? payloadToken}`;
    return { headerToken, payloadToken };
  }

  private unary(method: string, request: Msg): Promise<Msg> {
    return new Promise((resolve, reject) => this.raw[method](request, this.metadata(), (err: Error | null, res: Msg) => (err ? reject(err) : resolve(res))));
  }

  descriptor(name: SqlMessageName, message: Msg): Msg {
    return { type: 2, cmd: packAny(Sql[name], message) };
  }

  async getFlightInfo(name: SqlMessageName, message: Msg): Promise<{ schema: Schema; ticket: Buffer; info: Msg }> {
    const info = await this.unary('GetFlightInfo', this.descriptor(name, message));
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
  async doPut(name: SqlMessageName, message: Msg, batches: readonly RecordBatch[] = [], schema?: Schema): Promise<Buffer[]> {
    const call: ClientDuplexStream<Msg, Msg> = this.raw.DoPut(this.metadata());
    const results: Buffer[] = [];
    const done = new Promise<void>((resolve, reject) => {
      call.on('data', (r: Msg) => results.push(r.app_metadata));
      call.on('end', resolve);
      call.on('error', reject);
    });
    const descriptor = Flight.FlightDescriptor.encode(this.descriptor(name, message));
    const s = schema ?? batches[0]?.schema ?? new Schema([]);
    const first = schemaFlightData(s, descriptor);
    call.write({ descriptor: first.descriptor, header: first.header });
    for (const b of batches) {
      for (const fd of batchFlightData(b, 32 * 1024 * 1024)) {
        const body = Buffer.concat((fd.bodyParts ?? []).map((p) => {
          const bytes = new Uint8Array(p.buffer, p.byteOffset, p.byteLength);
          const padded = Buffer.alloc((bytes.byteLength + 7) & ~7);
          padded.set(bytes);
          return padded;
        }));
        if (!call.write({ header: fd.header, body })) await new Promise((r) => call.once('drain', r));
      }
    }
    call.end();
    await done;
    return results;
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

  async action(type: string, body: Buffer): Promise<Buffer[]> {
    const call = this.raw.DoAction({ type, body }, this.metadata());
    const out: Buffer[] = [];
    for await (const r of call) out.push((r as Msg).body);
    return out;
  }
}
