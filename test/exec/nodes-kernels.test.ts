/**
 * The fast paths under the relational nodes, each against the general code it replaces or a JS
 * reference: the integer group-key table (direct index, switch to hashing, NULL group, 64-bit
 * keys), exact integer sums with chunked bound checks, top-k's typed-array threshold split,
 * selection before sorting, and fixed-width take / gather / permute.
 */
import test from 'ava';
import { type Data, DataType, Field, FixedSizeList, Float32, Float64, Int32, Int64, makeData, makeVector } from 'apache-arrow';
import { makeAccumulator } from '../../exec/kernels/group-aggregates.js';
import { GroupKeyTable } from '../../exec/kernels/hash-keys.js';
import { splitByThreshold } from '../../exec/kernels/key-threshold.js';
import { buildKeyColumn, compareOnKey, sortedRowIndices, topRowIndices } from '../../exec/kernels/sort-keys.js';
import { gatherData } from '../../exec/kernels/gather.js';
import { takeData } from '../../exec/kernels/take.js';
import { canPermute, gatherColumnFast, permuteColumn, permutedSlice, takeColumn } from '../../exec/kernels/take-fixed.js';
import { arrowType, type ColKind, makeColumn, type Raw, randomValue, Rng } from './nodes-fixtures.js';

const INT_KINDS: ColKind[] = ['int8', 'int16', 'int32', 'int64', 'uint32', 'uint64', 'date32', 'timestamp'];
const NUM_KINDS: ColKind[] = [...INT_KINDS, 'float32', 'float64'];
const WIDE = new Set<ColKind>(['int64', 'uint64', 'timestamp']);

function cells(d: Data): unknown[] {
  const v = makeVector(d);
  const out: unknown[] = [];
  for (let i = 0; i < d.length; i++) out.push(v.get(i));
  return out;
}

/** A column of `kind` from `values`, sometimes sliced out of a padded one (non-zero offset). */
function column(rng: Rng, kind: ColKind, values: Raw[]): Data {
  if (rng.next() < 0.5) return makeColumn(kind, values);
  const pad = 1 + rng.int(13);
  const padded = [...Array.from({ length: pad }, () => randomValue(rng, kind, 50)), ...values, randomValue(rng, kind, 50)];
  return makeColumn(kind, padded).slice(pad, values.length);
}

/** A value of an integer kind from a safe integer (clamped into the kind's range). */
function intOf(kind: ColKind, x: number): Raw {
  switch (kind) {
    case 'int8': return Math.max(-128, Math.min(127, x));
    case 'int16': return Math.max(-32768, Math.min(32767, x));
    case 'uint32': return Math.max(0, Math.min(4294967295, x));
    case 'uint64': return BigInt(Math.max(0, x));
    case 'int64':
    case 'timestamp': return BigInt(x);
    default: return Math.max(-2147483648, Math.min(2147483647, x));
  }
}

function keyOf(v: Raw): string {
  return v === null ? 'N' : `${typeof v}:${String(v)}`;
}

test('integer group keys: direct index, growth, switch to hashing, NULL group, 64-bit keys (vs a Map)', (t) => {
  const modes = new Set<string>();
  let switched = 0;
  for (let seed = 1; seed <= 120; seed++) {
    const rng = new Rng(seed * 31 + 7);
    const kind = rng.pick(INT_KINDS);
    const shape = rng.pick(['small', 'ascending', 'descending', 'widen', 'extremes'] as const);
    const nullRate = rng.pick([0, 0, 0.1, 0.5]);
    const table = new GroupKeyTable([arrowType(kind)]);
    const ref = new Map<string, number>();
    const firstValue: Raw[] = [];
    const nBatches = 1 + rng.int(8);
    const base = rng.pick([0, -5000, 123456, -(2 ** 40), 2 ** 45]);
    let modeAfterFirst = '';
    for (let b = 0; b < nBatches; b++) {
      const n = rng.int(1200);
      const values: Raw[] = [];
      for (let i = 0; i < n; i++) {
        if (rng.next() < nullRate) {
          values.push(null);
          continue;
        }
        let x: number;
        if (shape === 'small') x = base + rng.int(300);
        else if (shape === 'ascending') x = base + b * 1200 + i;
        else if (shape === 'descending') x = base - b * 1200 - i;
        else if (shape === 'widen') x = b < 2 ? base + rng.int(100) : base + rng.int(100) + (rng.next() < 0.02 ? 5e7 : 0);
        else {
          values.push(randomValue(rng, kind, 1000, 0));
          continue;
        }
        values.push(intOf(kind, x));
      }
      const ids = new Int32Array(n);
      const size = table.findOrInsert([column(rng, kind, values)], ids);
      const want = values.map((v) => {
        const k = keyOf(v);
        let g = ref.get(k);
        if (g === undefined) {
          ref.set(k, (g = ref.size));
          firstValue.push(v);
        }
        return g;
      });
      t.deepEqual(Array.from(ids), want, `seed ${seed} ${kind} ${shape} batch ${b}`);
      t.is(size, ref.size);
      if (b === 0) modeAfterFirst = table.mode;
    }
    modes.add(table.mode);
    if (modeAfterFirst === 'direct' && table.mode === 'hash') switched++;
    const keys = cells(table.keyColumns()[0]);
    t.deepEqual(keys, cells(makeColumn(kind, firstValue)), `seed ${seed} key column`);
  }
  t.deepEqual([...modes].sort(), ['direct', 'hash']);
  t.true(switched >= 3, `direct → hash switches: ${switched}`);
  t.is(new GroupKeyTable([new Float64()]).mode, 'general');
  t.is(new GroupKeyTable([new Int32(), new Int32()]).mode, 'general');
});

test('integer sums: exact across chunked bound checks and normalization, with NULLs and DISTINCT masks', (t) => {
  const rng = new Rng(5);
  for (const [kind, big] of [['int32', 2147483647], ['uint32', 4294967295], ['int64', 2 ** 62], ['uint64', 2 ** 63]] as const) {
    for (const fn of ['sum', 'avg'] as const) {
      const acc = makeAccumulator(fn, arrowType(kind));
      const groups = 3;
      acc.resize(groups);
      const exact = [0n, 0n, 0n];
      const counts = [0, 0, 0];
      // Batches larger than one check chunk (2^20 rows), values near the type's limit.
      for (let b = 0; b < (kind === 'int32' ? 5 : 3); b++) {
        const n = (1 << 20) + 7 + rng.int(50);
        const gids = new Int32Array(n);
        const use = b === 1 ? new Uint8Array(n) : undefined;
        const Ctor = (arrowType(kind) as unknown as { ArrayType: new (n: number) => { [i: number]: number | bigint } }).ArrayType;
        const vals = new Ctor(n);
        const bits = new Uint8Array((n + 7) >> 3);
        let nulls = 0;
        for (let i = 0; i < n; i++) {
          const g = i % 7 === 0 ? 2 : i % 2;
          gids[i] = g;
          if (use) use[i] = rng.next() < 0.7 ? 1 : 0;
          let x: bigint;
          if (kind === 'int64') x = BigInt(g === 1 ? -big : big) - BigInt(rng.int(1000));
          else if (kind === 'uint64') x = 2n ** 63n + BigInt(rng.int(1000));
          else x = BigInt(g === 1 && kind === 'int32' ? -big - 1 : big - rng.int(3));
          vals[i] = typeof vals[0] === 'bigint' ? x : Number(x);
          const valid = b !== 2 || i % 5 !== 0;
          if (valid) bits[i >> 3] |= 1 << (i & 7);
          else nulls++;
          if (valid && (!use || use[i])) {
            exact[g] += x;
            counts[g]++;
          }
        }
        const d = makeData({ type: arrowType(kind), length: n, nullCount: nulls, nullBitmap: nulls ? bits : undefined, data: vals } as never) as Data;
        acc.update(gids, n, d, use);
      }
      t.true((acc as unknown as { normalizations: number }).normalizations > 0, `${kind} ${fn} normalized`);
      const inRange = exact.every((s) => s >= -(2n ** 63n) && s <= 2n ** 63n - 1n);
      if (fn === 'sum' && !inRange) {
        t.throws(() => acc.finish(groups), { message: 'bigint out of range' });
        continue;
      }
      const got = cells(acc.finish(groups));
      t.deepEqual(got, fn === 'sum' ? exact : exact.map((s, g) => Number(s) / counts[g]), `${kind} ${fn}`);
    }
  }
});

test('top-k threshold split on typed arrays equals the key-column comparison (all numeric types, NULLs, NaN, ±0)', (t) => {
  let fast = 0;
  for (let seed = 1; seed <= 400; seed++) {
    const rng = new Rng(seed);
    const kind = rng.pick(NUM_KINDS);
    const distinct = 1 + rng.int(30);
    const values = Array.from({ length: rng.int(300) }, () => randomValue(rng, kind, distinct, rng.pick([0, 0.2])));
    const col = column(rng, kind, values);
    const tv = randomValue(rng, kind, distinct, 0.1);
    const thr = column(rng, kind, [tv]);
    const spec = { column: 0, descending: rng.next() < 0.5, nullsFirst: rng.next() < 0.3 ? rng.next() < 0.5 : undefined };
    const wantTies = rng.next() < 0.5;
    const split = splitByThreshold(thr, 0, col, spec, wantTies);
    if (tv === null || (typeof tv === 'number' && Number.isNaN(tv))) {
      t.is(split, undefined);
      continue;
    }
    if (!split) {
      t.fail(`seed ${seed}: no fast path for ${kind}`);
      continue;
    }
    fast++;
    const key = buildKeyColumn([thr, col], spec);
    const before: number[] = [];
    const ties: number[] = [];
    for (let i = 0; i < col.length; i++) {
      const c = compareOnKey(key, i + 1, 0);
      if (c < 0) before.push(i);
      else if (c === 0) ties.push(i);
    }
    t.deepEqual(Array.from(split.before), before, `seed ${seed} ${kind} ${JSON.stringify(spec)} threshold ${String(tv)}`);
    if (wantTies) t.deepEqual(Array.from(split.ties ?? []), ties, `seed ${seed} ties`);
    else t.is(split.ties, undefined);
  }
  t.true(fast > 250, `fast ${fast}`);
  t.is(splitByThreshold(makeColumn('utf8', ['a']), 0, makeColumn('utf8', ['b']), { column: 0, descending: false }, false), undefined);
});

test('top rows by selection equal the head of the full sort (ties, ±0, several keys, fallbacks)', (t) => {
  for (let seed = 1; seed <= 120; seed++) {
    const rng = new Rng(seed * 3);
    const n = rng.pick([10, 255, 300, 1000, 5000]);
    const nKeys = 1 + rng.int(2);
    const kinds: ColKind[] = Array.from({ length: nKeys }, () => rng.pick(['float64', 'int32', 'int64', 'utf8'] as ColKind[]));
    const nullRate = rng.next() < 0.3 ? 0.1 : 0;
    const cols = kinds.map((k) => makeColumn(k, Array.from({ length: n }, () => randomValue(rng, k, 1 + rng.int(40), nullRate))));
    const keys = cols.map((c) => buildKeyColumn([c], { column: 0, descending: rng.next() < 0.5 }));
    const want = 1 + rng.int(Math.max(1, n >> rng.int(6)));
    const expect = Array.from(sortedRowIndices(keys, n).subarray(0, want));
    t.deepEqual(Array.from(topRowIndices(keys, n, want)), expect, `seed ${seed} kinds ${kinds} n ${n} want ${want}`);
  }
  t.deepEqual(Array.from(topRowIndices([buildKeyColumn([makeColumn('float64', [3, 1, 2])], { column: 0, descending: false })], 3, 0)), []);
});

test('fixed-width take, gather and permute equal takeData / gatherData (NaN bit patterns, NULLs, offsets)', (t) => {
  const kinds: ColKind[] = [...NUM_KINDS];
  for (let seed = 1; seed <= 80; seed++) {
    const rng = new Rng(seed * 11);
    const kind = rng.pick(kinds);
    const nullRate = rng.pick([0, 0.3]);
    const special: Raw[] = kind === 'int64' ? [-1n, 0x7ff0000000000001n, -(2n ** 63n), 0x7ff8000000000000n] : kind === 'uint64' ? [2n ** 64n - 1n, 0x7ff0000000000001n] : [];
    const gen = (m: number) => Array.from({ length: m }, () => (special.length && rng.next() < 0.2 ? rng.pick(special) : randomValue(rng, kind, 100, nullRate)));
    const sources = Array.from({ length: 1 + rng.int(4) }, () => column(rng, kind, gen(rng.int(200))));
    const total = sources.reduce((s, d) => s + d.length, 0);
    // take
    const one = sources[0];
    const idx = Uint32Array.from({ length: rng.int(300) }, () => rng.int(Math.max(1, one.length))).filter((i) => i < one.length);
    t.deepEqual(cells(takeColumn(one, idx)), cells(takeData(one, idx)), `seed ${seed} take ${kind}`);
    // gather
    const nonEmpty = sources.map((s, i) => [s, i] as const).filter(([s]) => s.length > 0);
    if (nonEmpty.length > 0) {
      const m = rng.int(300);
      const from = new Uint32Array(m);
      const rows = new Uint32Array(m);
      for (let i = 0; i < m; i++) {
        const [s, si] = rng.pick(nonEmpty);
        from[i] = si;
        rows[i] = rng.int(s.length);
      }
      t.deepEqual(cells(gatherColumnFast(sources, from, rows)), cells(gatherData(sources, from, rows)), `seed ${seed} gather ${kind}`);
    }
    // permute: a random order, cut into slices at multiples of 8
    t.true(canPermute(sources));
    const order = Uint32Array.from({ length: total }, (_, i) => i);
    for (let i = total - 1; i > 0; i--) {
      const j = rng.int(i + 1);
      [order[i], order[j]] = [order[j], order[i]];
    }
    const rank = new Uint32Array(total);
    for (let i = 0; i < total; i++) rank[order[i]] = i;
    const p = permuteColumn(sources, rank);
    const all = sources.flatMap((s) => cells(s));
    const got: unknown[] = [];
    for (let at = 0; at < total; at += 16) got.push(...cells(permutedSlice(p, at, Math.min(16, total - at))));
    t.deepEqual(got, Array.from(order).map((g) => all[g]), `seed ${seed} permute ${kind}`);
  }
  t.false(canPermute([makeColumn('utf8', ['a'])]));
  t.false(canPermute([makeColumn('int64', [1n]), makeData({ type: new Int64(), length: 0, nullCount: 0, data: new BigInt64Array(0) }), makeColumn('int32', [1])]));
  t.true(DataType.isInt(new Int32()));
});

test('gatherData of FixedSizeList vectors across sources (sliced, null vectors) equals the rows picked one by one', (t) => {
  const rng = new Rng(404);
  const dim = 5;
  const type = new FixedSizeList(dim, new Field('item', new Float32(), true));
  const vectorColumn = (m: number): Data => {
    const pad = rng.int(4);
    const total = pad + m + 1;
    const values = Float32Array.from({ length: total * dim }, () => rng.next() * 100 - 50);
    const valid = new Uint8Array((total + 7) >> 3);
    for (let i = 0; i < total; i++) if (rng.next() < 0.8) valid[i >> 3] |= 1 << (i & 7);
    const child = makeData({ type: type.children[0].type, length: total * dim, nullCount: 0, data: values });
    const whole = makeData({ type, length: total, nullBitmap: valid, child });
    return whole.slice(pad, m);
  };
  for (let round = 0; round < 20; round++) {
    const sources = Array.from({ length: 1 + rng.int(4) }, () => vectorColumn(1 + rng.int(30)));
    const m = rng.int(40);
    const from = new Uint32Array(m);
    const rows = new Uint32Array(m);
    for (let i = 0; i < m; i++) {
      from[i] = rng.int(sources.length);
      rows[i] = rng.int(sources[from[i]].length);
    }
    const got = makeVector(gatherData(sources, from, rows));
    const want = Array.from(rows, (r, i) => makeVector(sources[from[i]]).get(r));
    t.is(got.length, m);
    for (let i = 0; i < m; i++) {
      const w = want[i];
      const g = got.get(i);
      if (w === null) t.is(g, null, `round ${round} row ${i}`);
      else t.deepEqual(Array.from(g!.toArray() as Float32Array), Array.from(w.toArray() as Float32Array), `round ${round} row ${i}`);
    }
  }
});
