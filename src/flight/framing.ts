/**
 * Arrow IPC messages <-> FlightData (flight-sql.md §7).
 *
 * Sending: one IPC message per FlightData, the schema first, no end-of-stream marker. Batches are
 * encoded directly (VectorAssembler + Message.encode, as the WAL does) rather than through a
 * stream writer that would have to be re-split. Two rules from real clients shape what is sent:
 * - strings go out as plain Utf8: dictionary-encoded fields are decoded first, because some
 *   clients cannot read a schema with dictionary fields;
 * - no message exceeds the 4 MiB default receive limit of grpc-js clients: a batch whose body is
 *   larger than `maxBodyBytes` is sent as several row slices (zero-copy slices of the batch).
 *
 * Receiving: FlightData bodies decoded from a gRPC message sit at arbitrary byte offsets, and
 * Arrow's loader builds typed arrays on them, which needs 8-byte alignment: an unaligned body is
 * copied first. Dictionary batches are kept by id; compressed bodies are refused (no codec).
 */
import {
  Data,
  DataType,
  Field,
  makeData,
  Message,
  MessageHeader,
  MetadataVersion,
  RecordBatch,
  Schema,
  Struct,
  type TypeMap,
  Type,
  Vector,
  vectorFromArray,
} from 'apache-arrow';
import { RecordBatch as RecordBatchHeader, type DictionaryBatch as DictionaryBatchHeader } from 'apache-arrow/ipc/metadata/message';
import { VectorAssembler } from 'apache-arrow/visitor/vectorassembler';
import { VectorLoader } from 'apache-arrow/visitor/vectorloader';
import { takeData } from '../../exec/kernels/take.js';
import { InvalidError } from '../errors.js';
import type { IncomingFlightData, OutgoingFlightData } from './flight-data.js';

/** Default upper bound of one FlightData body (well under the 4 MiB grpc-js client limit). */
export const DEFAULT_MAX_BODY_BYTES = 2 * 1024 * 1024;

function pad8(bytes: Uint8Array): Uint8Array {
  const padded = (bytes.byteLength + 7) & ~7;
  if (padded === bytes.byteLength) return bytes;
  const out = new Uint8Array(padded);
  out.set(bytes);
  return out;
}

// ---------------------------------------------------------------------------------------------
// Plain strings: dictionary fields become their value type.

function isDictionaryType(type: DataType): boolean {
  return type.typeId === Type.Dictionary;
}

/** The schema with every top-level dictionary field replaced by its value type. */
export function plainSchema(schema: Schema): Schema {
  if (!schema.fields.some((f) => isDictionaryType(f.type))) return schema;
  const fields = schema.fields.map((f) =>
    isDictionaryType(f.type) ? new Field(f.name, (f.type as unknown as { dictionary: DataType }).dictionary, f.nullable, f.metadata) : f,
  );
  return new Schema(fields, schema.metadata);
}

/** The batch with dictionary-encoded columns decoded (other columns shared, not copied). */
export function plainBatch(batch: RecordBatch, schema: Schema = plainSchema(batch.schema)): RecordBatch {
  if (!batch.schema.fields.some((f) => isDictionaryType(f.type))) return batch;
  const children = batch.data.children.map((child) => (isDictionaryType(child.type) ? decodeDictionary(child) : child));
  return new RecordBatch(schema, makeData({ type: new Struct(schema.fields), length: batch.numRows, nullCount: 0, children }));
}

function decodeDictionary(data: Data): Data {
  const dictionary = data.dictionary as Vector | undefined;
  const valueType = (data.type as unknown as { dictionary: DataType }).dictionary;
  if (!dictionary) throw new InvalidError('dictionary column without a dictionary');
  const n = data.length;
  const raw = data.values as ArrayLike<number | bigint>;
  const indices = new Uint32Array(n);
  for (let i = 0; i < n; i++) indices[i] = Number(raw[i] ?? 0);
  let values: Data;
  if (dictionary.data.length === 1) {
    const dict = dictionary.data[0];
    // Null rows may hold any index; point them at row 0 (their value is masked below).
    if (dict.length > 0) for (let i = 0; i < n; i++) if (indices[i] >= dict.length) indices[i] = 0;
    values = dict.length > 0 ? takeData(dict, indices) : makeData({ type: valueType, length: n, nullCount: n } as never);
  } else {
    values = vectorFromArray(Array.from(indices, (k) => dictionary.get(k)), valueType).data[0];
  }
  if (data.nullCount === 0) return values.nullCount === 0 ? values : withValidity(values, null, 0);
  const bitmap = new Uint8Array((n + 7) >> 3);
  for (let i = 0; i < n; i++) if (data.getValid(i)) bitmap[i >> 3] |= 1 << (i & 7);
  return withValidity(values, bitmap, data.nullCount);
}

function withValidity(values: Data, nullBitmap: Uint8Array | null, nullCount: number): Data {
  return values.clone(values.type, values.offset, values.length, nullCount, [
    values.valueOffsets,
    values.values,
    nullBitmap ?? undefined,
    values.typeIds,
  ] as never);
}

// ---------------------------------------------------------------------------------------------
// Sending.

/** The flatbuffer Message of a schema, padded to 8 bytes: FlightData.data_header of the first message. */
export function schemaHeader(schema: Schema): Uint8Array {
  return pad8(Message.encode(Message.from(schema)));
}

/**
 * A schema in the IPC-encapsulated form Flight uses in FlightInfo.schema, SchemaResult,
 * dataset/parameter schemas and GetTables' table_schema: 0xFFFFFFFF, int32 length, the Schema
 * message padded to 8 bytes. No body, no end-of-stream marker.
 */
export function encapsulatedSchema(schema: Schema): Buffer {
  const header = schemaHeader(schema);
  const out = Buffer.alloc(8 + header.byteLength);
  out.writeInt32LE(-1, 0);
  out.writeInt32LE(header.byteLength, 4);
  out.set(header, 8);
  return out;
}

/** Decodes an encapsulated schema (continuation-prefixed or legacy length-prefixed). */
export function decodeEncapsulatedSchema(bytes: Uint8Array): Schema {
  const buf = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (buf.length < 4) throw new InvalidError('schema bytes are too short');
  let at = 0;
  let len = buf.readInt32LE(0);
  if (len === -1) {
    len = buf.readInt32LE(4);
    at = 8;
  } else at = 4;
  if (len <= 0 || at + len > buf.length) throw new InvalidError('schema bytes are truncated');
  const message = Message.decode(buf.subarray(at, at + len));
  if (message.headerType !== MessageHeader.Schema) throw new InvalidError('schema bytes do not hold a Schema message');
  return message.header() as Schema;
}

/** The schema message as a FlightData. */
export function schemaFlightData(schema: Schema, descriptor?: Uint8Array): OutgoingFlightData {
  return { header: schemaHeader(schema), descriptor };
}

/** One batch encoded as one IPC record batch message. */
export function encodeBatch(batch: RecordBatch): OutgoingFlightData & { bodyLength: number } {
  const assembled = VectorAssembler.assemble(batch);
  const header = Message.encode(
    Message.from(new RecordBatchHeader(batch.numRows, assembled.nodes, assembled.bufferRegions, null, assembled.variadicBufferCounts), assembled.byteLength),
  );
  return { header: pad8(header), bodyParts: assembled.buffers, bodyLength: assembled.byteLength };
}

/**
 * The FlightData messages of one (plain) batch: one message when its body fits `maxBodyBytes`,
 * otherwise row slices sized to fit (a single row larger than the limit goes alone).
 */
export function batchFlightData(batch: RecordBatch, maxBodyBytes = DEFAULT_MAX_BODY_BYTES): OutgoingFlightData[] {
  const out: OutgoingFlightData[] = [];
  const visit = (b: RecordBatch) => {
    const encoded = encodeBatch(b);
    if (encoded.bodyLength <= maxBodyBytes || b.numRows <= 1) {
      out.push(encoded);
      return;
    }
    const parts = Math.max(2, Math.ceil(encoded.bodyLength / maxBodyBytes));
    const rows = Math.ceil(b.numRows / parts);
    for (let start = 0; start < b.numRows; start += rows) visit(b.slice(start, Math.min(b.numRows, start + rows)));
  };
  visit(batch);
  return out;
}

// ---------------------------------------------------------------------------------------------
// Receiving.

/** Reads the IPC messages of a FlightData stream (DoPut) into record batches. */
export class FlightDataReader {
  private schemaValue: Schema | null = null;
  private readonly dictionaries = new Map<number, Vector>();

  get schema(): Schema | null {
    return this.schemaValue;
  }

  /**
   * Takes the next message: returns the record batch it holds, or null for a schema, a
   * dictionary batch or a message without an IPC header (descriptor- or metadata-only).
   */
  read(fd: IncomingFlightData): RecordBatch | null {
    if (!fd.header || fd.header.length === 0) return null;
    let message: Message;
    try {
      message = Message.decode(fd.header);
    } catch (e) {
      throw new InvalidError(`malformed IPC message header in FlightData: ${(e as Error).message}`);
    }
    if (message.headerType === MessageHeader.Schema) {
      this.schemaValue = message.header() as Schema;
      this.dictionaries.clear();
      return null;
    }
    const schema = this.schemaValue;
    if (!schema) throw new InvalidError('FlightData stream sent a record batch before its schema');
    const body = aligned(fd.body ?? Buffer.alloc(0));
    if (body.byteLength < message.bodyLength) {
      throw new InvalidError(`FlightData body is ${body.byteLength} bytes, its header says ${message.bodyLength}`);
    }
    if (message.headerType === MessageHeader.RecordBatch) {
      const h = message.header() as RecordBatchHeader;
      if (h.compression != null) throw new InvalidError('compressed IPC record batches are not supported; send uncompressed batches');
      const children = this.load(h, body, schema.fields.map((f) => f.type));
      return new RecordBatch(schema, makeData({ type: new Struct(schema.fields), length: h.length, nullCount: 0, children }));
    }
    if (message.headerType === MessageHeader.DictionaryBatch) {
      const h = message.header() as DictionaryBatchHeader;
      if (h.data.compression != null) throw new InvalidError('compressed IPC dictionary batches are not supported');
      const type = schema.dictionaries.get(h.id);
      if (!type) throw new InvalidError(`dictionary batch for unknown dictionary id ${h.id}`);
      const data = this.load(h.data, body, [type]);
      const previous = this.dictionaries.get(h.id);
      this.dictionaries.set(h.id, previous && h.isDelta ? previous.concat(new Vector(data)) : new Vector(data));
      return null;
    }
    throw new InvalidError(`unexpected IPC message type ${message.headerType} in FlightData`);
  }

  private load(h: RecordBatchHeader, body: Uint8Array, types: DataType[]): Data[] {
    try {
      const dictionaries = this.dictionaries as Map<number, Vector<TypeMap[keyof TypeMap]>>;
      return new VectorLoader(body, h.nodes, h.buffers, dictionaries, MetadataVersion.V5, h.variadicBufferCounts).visitMany(types) as Data[];
    } catch (e) {
      throw new InvalidError(`malformed IPC record batch body: ${(e as Error).message}`);
    }
  }
}

/** The body itself when 8-byte aligned, else an aligned copy. */
export function aligned(body: Uint8Array): Uint8Array {
  if (body.byteOffset % 8 === 0) return body;
  const copy = new Uint8Array(body.byteLength);
  copy.set(body);
  return copy;
}
