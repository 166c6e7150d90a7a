/** FlightData codec and IPC framing: round trips, size splitting, plain strings, alignment. */
import test from 'ava';
import { Dictionary, Field, Int32, makeData, RecordBatch, Schema, Struct, Utf8, vectorFromArray } from 'apache-arrow';
import { decodeFlightData, encodeFlightData } from '../../src/flight/flight-data.js';
import { batchFlightData, decodeEncapsulatedSchema, encapsulatedSchema, FlightDataReader, plainBatch, plainSchema, schemaFlightData } from '../../src/flight/framing.js';
import { vectorBatch } from './serve-process.js';

/** Encodes, then decodes at an odd offset inside a larger buffer (as grpc-js hands bodies over). */
function wire(fd: ReturnType<typeof batchFlightData>[number]) {
  const bytes = encodeFlightData(fd);
  const shifted = Buffer.alloc(bytes.length + 3);
  bytes.copy(shifted, 3);
  return decodeFlightData(shifted.subarray(3));
}

test('batches round-trip through FlightData, split under the body limit, from unaligned buffers', (t) => {
  const batch = vectorBatch(0, 5000, 64);
  const messages = batchFlightData(batch, 256 * 1024);
  t.true(messages.length > 1);
  for (const m of messages) t.true((m.bodyLength ?? 0) <= 256 * 1024);
  const reader = new FlightDataReader();
  t.is(reader.read(wire(schemaFlightData(batch.schema))), null);
  let rows = 0;
  let sum = 0n;
  let lastVector: Float32Array | null = null;
  for (const m of messages) {
    const b = reader.read(wire(m))!;
    rows += b.numRows;
    for (const id of b.getChild('id')!) sum += id as bigint;
    lastVector = b.getChild('emb')!.get(b.numRows - 1)!.toArray() as Float32Array;
  }
  t.is(rows, 5000);
  t.is(sum, (4999n * 5000n) / 2n);
  t.deepEqual(Array.from(lastVector!), Array.from(batch.getChild('emb')!.get(4999)!.toArray() as Float32Array));
});

test('dictionary strings go out as plain Utf8, nulls kept', (t) => {
  const dictType = new Dictionary(new Utf8(), new Int32());
  const dictionary = vectorFromArray(['red', 'green'], new Utf8());
  const indices = makeData({ type: dictType, length: 4, nullCount: 1, nullBitmap: Uint8Array.of(0b1011), data: Int32Array.of(1, 0, 7, 1), dictionary });
  const schema = new Schema([new Field('c', dictType, true)]);
  const batch = new RecordBatch(schema, makeData({ type: new Struct(schema.fields), length: 4, nullCount: 0, children: [indices] }));
  const plain = plainBatch(batch);
  t.true(plainSchema(schema).fields[0].type instanceof Utf8);
  t.deepEqual(plain.getChild('c')!.toArray(), ['green', 'red', null, 'green']);
  const reader = new FlightDataReader();
  reader.read(wire(schemaFlightData(plain.schema)));
  const back = reader.read(wire(batchFlightData(plain)[0]))!;
  t.deepEqual([...back.getChild('c')!], ['green', 'red', null, 'green']);
});

test('encapsulated schema bytes round-trip with field metadata', (t) => {
  const schema = new Schema([new Field('id', new Int32(), false, new Map([['ARROW:FLIGHT:SQL:TYPE_NAME', 'INTEGER']]))]);
  const bytes = encapsulatedSchema(schema);
  t.is(bytes.readInt32LE(0), -1);
  t.is((bytes.length - 8) % 8, 0);
  const back = decodeEncapsulatedSchema(bytes);
  t.is(back.fields[0].name, 'id');
  t.false(back.fields[0].nullable);
  t.is(back.fields[0].metadata.get('ARROW:FLIGHT:SQL:TYPE_NAME'), 'INTEGER');
});

test('FlightData without an IPC header (descriptor or metadata only) carries no batch', (t) => {
  const fd = decodeFlightData(encodeFlightData({ appMetadata: Buffer.from('x') }));
  t.is(new FlightDataReader().read(fd), null);
  t.throws(() => new FlightDataReader().read(wire(batchFlightData(vectorBatch(0, 2, 2))[0])), { message: /before its schema/ });
});
