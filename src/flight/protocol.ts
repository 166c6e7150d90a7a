/**
 * The Flight and Flight SQL protobuf messages, loaded from the official `.proto` files in
 * `./proto/` (exact upstream copies) with protobufjs.
 *
 * Everything except `FlightData` goes through protobufjs: those messages are small and rare.
 * `FlightData` carries the result and ingest bytes and has its own hand-written codec
 * (flight-data.ts) so a body is written once into the outgoing buffer and read as a view.
 *
 * Flight SQL commands travel packed in `google.protobuf.Any`; the two files do not import
 * `any.proto`, so the Any codec (two fields) is written out here too.
 */
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import protobuf from 'protobufjs';

const require = createRequire(import.meta.url);
const protoDir = fileURLToPath(new URL('./proto/', import.meta.url));
const descriptorProto = require.resolve('protobufjs/google/protobuf/descriptor.proto');

function loadRoot(): protobuf.Root {
  const root = new protobuf.Root();
  // Both files import descriptor.proto (for the `experimental` option); protobufjs ships it.
  root.resolvePath = (origin, target) =>
    target === 'google/protobuf/descriptor.proto' ? descriptorProto : protobuf.util.path.resolve(origin, target);
  root.loadSync([`${protoDir}Flight.proto`, `${protoDir}FlightSql.proto`], { keepCase: true });
  root.resolveAll();
  return root;
}

const root = loadRoot();

export const FLIGHT_PACKAGE = 'arrow.flight.protocol';
export const SQL_PACKAGE = 'arrow.flight.protocol.sql';
export const TYPE_URL_PREFIX = 'type.googleapis.com/';

/** A decoded message as a plain object (snake_case fields, int64 as string or number). */
export type Msg = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

/** A protobuf message type with encode/decode to plain objects. */
export class MessageCodec {
  constructor(readonly type: protobuf.Type) {}
  get name(): string {
    return this.type.name;
  }
  get typeUrl(): string {
    return TYPE_URL_PREFIX + this.type.fullName.replace(/^\./, '');
  }
  /** Encodes a plain object (`fromObject` converts: int64 may be a number, string or bigint-free Long). */
  encode(obj: Msg): Buffer {
    return Buffer.from(this.type.encode(this.type.fromObject(obj)).finish());
  }
  /**
   * Decodes to a plain object. Absent `optional` (proto3 presence) fields are absent keys;
   * plain scalars get their defaults; int64 comes as a decimal string; bytes as Buffer.
   */
  decode(bytes: Uint8Array): Msg {
    const m = this.type.decode(bytes);
    return this.type.toObject(m, { longs: String, enums: Number, bytes: Buffer, defaults: true, oneofs: false });
  }
}

function codec(fullName: string): MessageCodec {
  return new MessageCodec(root.lookupType(fullName));
}

/** Flight messages (package arrow.flight.protocol). */
export const Flight = {
  HandshakeRequest: codec(`${FLIGHT_PACKAGE}.HandshakeRequest`),
  HandshakeResponse: codec(`${FLIGHT_PACKAGE}.HandshakeResponse`),
  BasicAuth: codec(`${FLIGHT_PACKAGE}.BasicAuth`),
  Empty: codec(`${FLIGHT_PACKAGE}.Empty`),
  ActionType: codec(`${FLIGHT_PACKAGE}.ActionType`),
  Criteria: codec(`${FLIGHT_PACKAGE}.Criteria`),
  Action: codec(`${FLIGHT_PACKAGE}.Action`),
  Result: codec(`${FLIGHT_PACKAGE}.Result`),
  SchemaResult: codec(`${FLIGHT_PACKAGE}.SchemaResult`),
  FlightDescriptor: codec(`${FLIGHT_PACKAGE}.FlightDescriptor`),
  FlightInfo: codec(`${FLIGHT_PACKAGE}.FlightInfo`),
  PollInfo: codec(`${FLIGHT_PACKAGE}.PollInfo`),
  CancelFlightInfoRequest: codec(`${FLIGHT_PACKAGE}.CancelFlightInfoRequest`),
  CancelFlightInfoResult: codec(`${FLIGHT_PACKAGE}.CancelFlightInfoResult`),
  Ticket: codec(`${FLIGHT_PACKAGE}.Ticket`),
  FlightEndpoint: codec(`${FLIGHT_PACKAGE}.FlightEndpoint`),
  RenewFlightEndpointRequest: codec(`${FLIGHT_PACKAGE}.RenewFlightEndpointRequest`),
  PutResult: codec(`${FLIGHT_PACKAGE}.PutResult`),
};

/** Flight SQL messages (package arrow.flight.protocol.sql). */
export const Sql = {
  CommandGetSqlInfo: codec(`${SQL_PACKAGE}.CommandGetSqlInfo`),
  CommandGetXdbcTypeInfo: codec(`${SQL_PACKAGE}.CommandGetXdbcTypeInfo`),
  CommandGetCatalogs: codec(`${SQL_PACKAGE}.CommandGetCatalogs`),
  CommandGetDbSchemas: codec(`${SQL_PACKAGE}.CommandGetDbSchemas`),
  CommandGetTables: codec(`${SQL_PACKAGE}.CommandGetTables`),
  CommandGetTableTypes: codec(`${SQL_PACKAGE}.CommandGetTableTypes`),
  CommandGetPrimaryKeys: codec(`${SQL_PACKAGE}.CommandGetPrimaryKeys`),
  CommandGetExportedKeys: codec(`${SQL_PACKAGE}.CommandGetExportedKeys`),
  CommandGetImportedKeys: codec(`${SQL_PACKAGE}.CommandGetImportedKeys`),
  CommandGetCrossReference: codec(`${SQL_PACKAGE}.CommandGetCrossReference`),
  ActionCreatePreparedStatementRequest: codec(`${SQL_PACKAGE}.ActionCreatePreparedStatementRequest`),
  ActionCreatePreparedSubstraitPlanRequest: codec(`${SQL_PACKAGE}.ActionCreatePreparedSubstraitPlanRequest`),
  ActionCreatePreparedStatementResult: codec(`${SQL_PACKAGE}.ActionCreatePreparedStatementResult`),
  ActionClosePreparedStatementRequest: codec(`${SQL_PACKAGE}.ActionClosePreparedStatementRequest`),
  ActionBeginTransactionRequest: codec(`${SQL_PACKAGE}.ActionBeginTransactionRequest`),
  ActionBeginSavepointRequest: codec(`${SQL_PACKAGE}.ActionBeginSavepointRequest`),
  ActionEndTransactionRequest: codec(`${SQL_PACKAGE}.ActionEndTransactionRequest`),
  ActionEndSavepointRequest: codec(`${SQL_PACKAGE}.ActionEndSavepointRequest`),
  CommandStatementQuery: codec(`${SQL_PACKAGE}.CommandStatementQuery`),
  CommandStatementSubstraitPlan: codec(`${SQL_PACKAGE}.CommandStatementSubstraitPlan`),
  TicketStatementQuery: codec(`${SQL_PACKAGE}.TicketStatementQuery`),
  CommandPreparedStatementQuery: codec(`${SQL_PACKAGE}.CommandPreparedStatementQuery`),
  CommandStatementUpdate: codec(`${SQL_PACKAGE}.CommandStatementUpdate`),
  CommandPreparedStatementUpdate: codec(`${SQL_PACKAGE}.CommandPreparedStatementUpdate`),
  CommandStatementIngest: codec(`${SQL_PACKAGE}.CommandStatementIngest`),
  DoPutUpdateResult: codec(`${SQL_PACKAGE}.DoPutUpdateResult`),
  DoPutPreparedStatementResult: codec(`${SQL_PACKAGE}.DoPutPreparedStatementResult`),
  ActionCancelQueryRequest: codec(`${SQL_PACKAGE}.ActionCancelQueryRequest`),
  ActionCancelQueryResult: codec(`${SQL_PACKAGE}.ActionCancelQueryResult`),
};

export type SqlMessageName = keyof typeof Sql;

const sqlByTypeUrl = new Map<string, SqlMessageName>(
  (Object.keys(Sql) as SqlMessageName[]).map((name) => [Sql[name].typeUrl, name]),
);

/** `google.protobuf.Any{type_url = 1, value = 2}`, encoded by hand. */
export function packAny(codec: MessageCodec, message: Msg): Buffer {
  return encodeAny(codec.typeUrl, codec.encode(message));
}

export function encodeAny(typeUrl: string, value: Uint8Array): Buffer {
  const url = Buffer.from(typeUrl, 'utf8');
  const w = protobuf.Writer.create();
  w.uint32((1 << 3) | 2).bytes(url);
  w.uint32((2 << 3) | 2).bytes(value);
  return Buffer.from(w.finish());
}

/** The Any's parts, or null when the bytes are not a well-formed Any with a type URL. */
export function decodeAny(bytes: Uint8Array): { typeUrl: string; value: Uint8Array } | null {
  try {
    const r = protobuf.Reader.create(bytes);
    let typeUrl: string | null = null;
    let value: Uint8Array = new Uint8Array(0);
    while (r.pos < r.len) {
      const tag = r.uint32();
      const field = tag >>> 3;
      const wire = tag & 7;
      if (field === 1 && wire === 2) typeUrl = r.string();
      else if (field === 2 && wire === 2) value = r.bytes();
      else r.skipType(wire);
    }
    if (typeUrl === null || !typeUrl.includes('/')) return null;
    return { typeUrl, value };
  } catch {
    return null;
  }
}

/** A Flight SQL command packed in an Any: its message name and decoded fields. */
export interface SqlCommand {
  readonly name: SqlMessageName;
  readonly message: Msg;
}

/**
 * Unpacks a Flight SQL command. Returns null when the bytes are not an Any; throws
 * `UnknownCommand` for an Any of a type this server does not know.
 */
export function unpackSqlCommand(bytes: Uint8Array): SqlCommand | null {
  const any = decodeAny(bytes);
  if (!any) return null;
  const name = sqlByTypeUrl.get(any.typeUrl);
  if (!name) throw new UnknownCommand(any.typeUrl);
  return { name, message: Sql[name].decode(any.value) };
}

export class UnknownCommand extends Error {
  constructor(readonly typeUrl: string) {
    super(`command not recognized: ${typeUrl}`);
  }
}

/** Enum values the server reads or writes (FlightSql.proto / Flight.proto). */
export const CancelStatus = { UNSPECIFIED: 0, CANCELLED: 1, CANCELLING: 2, NOT_CANCELLABLE: 3 } as const;
export const CancelResult = { UNSPECIFIED: 0, CANCELLED: 1, CANCELLING: 2, NOT_CANCELLABLE: 3 } as const;
export const TableNotExistOption = { UNSPECIFIED: 0, CREATE: 1, FAIL: 2 } as const;
export const TableExistsOption = { UNSPECIFIED: 0, FAIL: 1, APPEND: 2, REPLACE: 3 } as const;
export const DescriptorType = { UNKNOWN: 0, PATH: 1, CMD: 2 } as const;
