/**
 * The `FlightData` protobuf message, encoded and decoded by hand.
 *
 *   message FlightData {
 *     FlightDescriptor flight_descriptor = 1;
 *     bytes data_header = 2;
 *     bytes app_metadata = 3;
 *     bytes data_body = 1000;
 *   }
 *
 * It carries every byte of a result or an ingest, so it does not go through protobufjs: the
 * encoder sizes the message first and copies each body buffer once, straight from the Arrow
 * vectors into the outgoing buffer (with the 8-byte padding between buffers that the IPC body
 * layout needs); the decoder returns views into the received buffer. grpc-js adds one more copy
 * when it prefixes its 5-byte frame; that one is not ours to remove.
 */

/** A FlightData to send: the body as its buffers, each zero-padded to 8 bytes when written. */
export interface OutgoingFlightData {
  /** An encoded FlightDescriptor (DoPut / DoExchange clients; never on DoGet). */
  readonly descriptor?: Uint8Array;
  /** The IPC flatbuffer `Message`, padded to a multiple of 8 bytes. */
  readonly header?: Uint8Array;
  readonly appMetadata?: Uint8Array;
  /** The body: these buffers, each followed by zeros up to a multiple of 8 bytes. */
  readonly bodyParts?: readonly ArrayBufferView[];
  /** Total body bytes including padding (= the header's `bodyLength`). */
  readonly bodyLength?: number;
}

/** A received FlightData: views into the received message. */
export interface IncomingFlightData {
  descriptor?: Buffer;
  header?: Buffer;
  appMetadata?: Buffer;
  body?: Buffer;
}

const TAG_DESCRIPTOR = (1 << 3) | 2;
const TAG_HEADER = (2 << 3) | 2;
const TAG_APP_METADATA = (3 << 3) | 2;
const TAG_BODY = (1000 << 3) | 2;

function varintSize(n: number): number {
  let size = 1;
  while (n >= 0x80) {
    n = Math.floor(n / 128);
    size++;
  }
  return size;
}

function writeVarint(buf: Buffer, at: number, n: number): number {
  while (n >= 0x80) {
    buf[at++] = (n & 0x7f) | 0x80;
    n = Math.floor(n / 128);
  }
  buf[at++] = n;
  return at;
}

function fieldSize(tag: number, length: number): number {
  return varintSize(tag) + varintSize(length) + length;
}

/**
 * Encodes a FlightData into a new buffer, or, with `scratch`, into that reusable buffer (grown
 * as needed) and returns a view of it. The scratch form is for grpc-js's *server* response
 * serializer only: grpc-js copies the serialized message into its own frame synchronously, so
 * the view is dead before the next message is encoded, and no fresh multi-megabyte buffer is
 * allocated (and page-faulted in) per message.
 */
export function encodeFlightData(fd: OutgoingFlightData, scratch?: { buffer: Buffer }): Buffer {
  const bodyLength = fd.bodyLength ?? 0;
  let size = 0;
  if (fd.descriptor) size += fieldSize(TAG_DESCRIPTOR, fd.descriptor.byteLength);
  if (fd.header?.byteLength) size += fieldSize(TAG_HEADER, fd.header.byteLength);
  if (fd.appMetadata?.byteLength) size += fieldSize(TAG_APP_METADATA, fd.appMetadata.byteLength);
  if (bodyLength > 0) size += fieldSize(TAG_BODY, bodyLength);
  let out: Buffer;
  if (scratch) {
    if (scratch.buffer.length < size) scratch.buffer = Buffer.allocUnsafe(Math.max(size, scratch.buffer.length * 2));
    out = scratch.buffer.subarray(0, size);
  } else out = Buffer.allocUnsafe(size);
  let at = 0;
  const bytesField = (tag: number, bytes: Uint8Array) => {
    at = writeVarint(out, at, tag);
    at = writeVarint(out, at, bytes.byteLength);
    out.set(bytes, at);
    at += bytes.byteLength;
  };
  if (fd.descriptor) bytesField(TAG_DESCRIPTOR, fd.descriptor);
  if (fd.header?.byteLength) bytesField(TAG_HEADER, fd.header);
  if (fd.appMetadata?.byteLength) bytesField(TAG_APP_METADATA, fd.appMetadata);
  if (bodyLength > 0) {
    at = writeVarint(out, at, TAG_BODY);
    at = writeVarint(out, at, bodyLength);
    const end = at + bodyLength;
    for (const part of fd.bodyParts ?? []) {
      const bytes = part instanceof Uint8Array ? part : new Uint8Array(part.buffer, part.byteOffset, part.byteLength);
      out.set(bytes, at);
      at += bytes.byteLength;
      const padded = (bytes.byteLength + 7) & ~7;
      if (padded > bytes.byteLength) {
        out.fill(0, at, at + padded - bytes.byteLength);
        at += padded - bytes.byteLength;
      }
    }
    if (at !== end) throw new Error(`FlightData body is ${at - (end - bodyLength)} bytes, its header says ${bodyLength}`);
  }
  return out;
}

function readVarint(buf: Buffer, pos: { at: number }): number {
  let result = 0;
  let shift = 1;
  for (;;) {
    if (pos.at >= buf.length) throw new Error('truncated FlightData');
    const b = buf[pos.at++];
    result += (b & 0x7f) * shift;
    if (b < 0x80) return result;
    shift *= 128;
    if (shift > 2 ** 63) throw new Error('malformed varint in FlightData');
  }
}

export function decodeFlightData(buf: Buffer): IncomingFlightData {
  const fd: IncomingFlightData = {};
  const pos = { at: 0 };
  while (pos.at < buf.length) {
    const tag = readVarint(buf, pos);
    const wire = tag & 7;
    if (wire === 2) {
      const len = readVarint(buf, pos);
      if (pos.at + len > buf.length) throw new Error('truncated FlightData');
      const bytes = buf.subarray(pos.at, pos.at + len);
      pos.at += len;
      if (tag === TAG_DESCRIPTOR) fd.descriptor = bytes;
      else if (tag === TAG_HEADER) fd.header = bytes;
      else if (tag === TAG_APP_METADATA) fd.appMetadata = bytes;
      else if (tag === TAG_BODY) fd.body = bytes;
    } else if (wire === 0) readVarint(buf, pos);
    else if (wire === 1) pos.at += 8;
    else if (wire === 5) pos.at += 4;
    else throw new Error(`unsupported wire type ${wire} in FlightData`);
  }
  return fd;
}
