import test from 'ava';
import { Field, Float64, Int32, makeData, RecordBatch, Schema, Struct, Table as ArrowTable, tableFromIPC, Utf8 } from 'apache-arrow';
import { ipcFileParts } from '../../src/util/ipc-parts.js';
import { bitReversedName, parseBitReversedName } from '../../src/util/bit-reversed-name.js';
import { murmur3 } from '../../src/util/murmur3.js';
import { nameUUID } from '../../src/util/uuid.js';

test('bit-reversed names follow Lance: 1 -> 1000…0, 5 -> 1010…0', (t) => {
  t.is(bitReversedName(1, 'arrow'), `1${'0'.repeat(63)}.arrow`);
  t.is(bitReversedName(5, 'binpb'), `101${'0'.repeat(61)}.binpb`);
  t.is(bitReversedName(0, 'x'), `${'0'.repeat(64)}.x`);
  for (const n of [1, 2, 3, 1000, 2 ** 40 + 17]) t.is(parseBitReversedName(bitReversedName(n, 'arrow'), 'arrow'), n);
});

test('bit-reversed name parser rejects anything else', (t) => {
  t.is(parseBitReversedName('version_hint.json', 'json'), undefined);
  t.is(parseBitReversedName(`1${'0'.repeat(62)}.arrow`, 'arrow'), undefined);
  t.is(parseBitReversedName(`2${'0'.repeat(63)}.arrow`, 'arrow'), undefined);
  t.is(parseBitReversedName(`1${'0'.repeat(63)}.binpb`, 'arrow'), undefined);
});

test('murmur3 x86 32 matches published test vectors', (t) => {
  const enc = new TextEncoder();
  t.is(murmur3(new Uint8Array(0), 0), 0);
  t.is(murmur3(new Uint8Array(0), 1) >>> 0, 0x514e28b7);
  t.is(murmur3(enc.encode('hello'), 0) >>> 0, 0x248bfa47);
  t.is(murmur3(enc.encode('The quick brown fox jumps over the lazy dog'), 0) >>> 0, 0x2e4ff723);
  t.is(murmur3(Uint8Array.of(0x21, 0x43, 0x65, 0x87), 0x5082edee) >>> 0, 0x2362f9de);
});

test('name-based UUIDs are stable and well-formed', (t) => {
  t.is(nameUUID('a'), nameUUID('a'));
  t.not(nameUUID('a'), nameUUID('b'));
  t.regex(nameUUID('x'), /^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
});

test('ipcFileParts with pauses writes the bytes it writes without them, and reads back as the table', async (t) => {
  const schema = new Schema([new Field('a', new Int32(), false), new Field('b', new Float64(), true), new Field('s', new Utf8(), true)]);
  const batch = (from: number, n: number) => {
    const a = Int32Array.from({ length: n }, (_, i) => from + i);
    const b = Float64Array.from({ length: n }, (_, i) => (from + i) / 3);
    const sOff = Int32Array.from({ length: n + 1 }, (_, i) => i);
    const sVal = Uint8Array.from({ length: n }, (_, i) => 97 + ((from + i) % 26));
    const children = [
      makeData({ type: new Int32(), length: n, data: a }),
      makeData({ type: new Float64(), length: n, data: b }),
      makeData({ type: new Utf8(), length: n, valueOffsets: sOff, data: sVal }),
    ];
    return new RecordBatch(schema, makeData({ type: new Struct(schema.fields), length: n, children }));
  };
  const join = (parts: Uint8Array[]) => Buffer.concat(parts.map((p) => Buffer.from(p.buffer, p.byteOffset, p.byteLength)));
  for (const sizes of [[], [5], [300, 1, 700, 2000, 5, 999]]) {
    let at = 0;
    const batches = sizes.map((n) => {
      const b = batch(at, n);
      at += n;
      return b;
    });
    const table = new ArrowTable(schema, batches);
    let pauses = 0;
    const plain = join(await ipcFileParts(table));
    const paused = join(await ipcFileParts(table, async () => void pauses++, 1000));
    t.true(plain.equals(paused), `batches ${sizes.join(',')}: same bytes`);
    if (sizes.length > 1) t.true(pauses >= 2, `paused ${pauses} times`);
    const back = tableFromIPC(paused);
    t.is(back.numRows, at);
    t.deepEqual(back.getChild('a')?.toArray().slice(0, 5), table.getChild('a')?.toArray().slice(0, 5));
  }
});
