import test from 'ava';
import { Bool, Field, Int32, makeData, RecordBatch, Struct, Utf8, vectorFromArray } from 'apache-arrow';
import { takeData } from '../../exec/kernels/take.js';
import { PrimaryKeyFilter } from '../../src/index/pk-filter.js';
import { isQuiverError } from '../../src/errors.js';
import { docs } from '../helpers/data.js';

test('take copies the chosen rows of every stored column type, including nulls and slices', (t) => {
  const table = docs([10, 11, 12, 13, 14], 3);
  const batch = table.batches[0].slice(1, 4); // rows 11, 12, 13
  const idx = Uint32Array.of(2, 0);
  const ids = takeData(batch.getChild('id')!.data[0], idx);
  t.deepEqual([...ids.values], [13n, 11n]);
  const text = vectorFromArray(['a', null, 'ccc', 'dd'], new Utf8());
  const tt = takeData(text.data[0].slice(1, 3), Uint32Array.of(1, 0));
  const got = new RecordBatch({ s: tt }).getChild('s')!;
  t.deepEqual([got.get(0), got.get(1)], ['ccc', null]);
  t.is(tt.nullCount, 1);
  const vec = takeData(batch.getChild('vec')!.data[0], idx);
  const src = batch.getChild('vec')!;
  const out = new RecordBatch({ v: vec }).getChild('v')!;
  t.deepEqual([...out.get(0)!], [...src.get(2)!]);
  t.deepEqual([...out.get(1)!], [...src.get(0)!]);
  const bools = vectorFromArray([true, false, true, true, false], new Bool()).data[0].slice(2, 3);
  const tb = new RecordBatch({ b: takeData(bools, Uint32Array.of(2, 1, 0)) }).getChild('b')!;
  t.deepEqual([tb.get(0), tb.get(1), tb.get(2)], [false, true, true]);
  const st = makeData({ type: new Struct([new Field('x', new Int32())]), length: 3, nullCount: 0, children: [vectorFromArray([1, 2, 3], new Int32()).data[0]] });
  const ts = takeData(st.slice(1, 2), Uint32Array.of(1));
  t.is(new RecordBatch({ s: ts }).getChild('s')!.get(0)!.x, 3);
});

test('primary-key filter: no false negatives, about the configured false-positive rate, round trip', (t) => {
  const f = PrimaryKeyFilter.forKeys(10_000, 0.01);
  for (let i = 0; i < 10_000; i++) f.add(BigInt(i * 7));
  let missing = 0;
  for (let i = 0; i < 10_000; i++) if (!f.mightContain(BigInt(i * 7))) missing++;
  t.is(missing, 0);
  let fp = 0;
  for (let i = 0; i < 10_000; i++) if (f.mightContain(BigInt(1_000_000 + i * 7 + 1))) fp++;
  t.true(fp < 300, `false positives ${fp}`);
  t.true(f.mightContain(14), 'ints of any width hash alike');
  const g = PrimaryKeyFilter.decode(f.encode(), 'x');
  t.true(g.mightContain(7n));
  t.is(g.m, f.m);
  t.true(isQuiverError(t.throws(() => PrimaryKeyFilter.decode(Uint8Array.of(1, 2, 3), 'bad')), 'data'));
  const s = PrimaryKeyFilter.forKeys(2);
  s.add('alpha');
  t.true(s.mightContain('alpha'));
});

test('primary-key filter: integer keys added as words (the flush path) give the same bytes as add()', (t) => {
  const keys = [0n, 1n, -1n, 2n ** 53n + 1n, -(2n ** 63n), 2n ** 63n - 1n, 123_456_789_012n, -42n];
  for (let i = 0; i < 500; i++) keys.push(BigInt(i * 7919) * 1_000_003n - 5_000_000n);
  const viaAdd = PrimaryKeyFilter.forKeys(keys.length);
  const viaWords = PrimaryKeyFilter.forKeys(keys.length);
  const words = new Int32Array(BigInt64Array.from(keys).buffer);
  keys.forEach((k, i) => {
    viaAdd.add(k);
    viaWords.addKeyWords(words[i * 2], words[i * 2 + 1]);
  });
  t.deepEqual(Buffer.from(viaWords.encode()), Buffer.from(viaAdd.encode()));
  // 32-bit keys (numbers) sign-extend the same way.
  const small = [0, 1, -1, 2 ** 31 - 1, -(2 ** 31), 77];
  const a = PrimaryKeyFilter.forKeys(small.length);
  const b = PrimaryKeyFilter.forKeys(small.length);
  for (const v of small) {
    a.add(v);
    b.addKeyWords(v, v < 0 ? -1 : 0);
  }
  t.deepEqual(Buffer.from(b.encode()), Buffer.from(a.encode()));
});
