/**
 * KeyDeduper: newest version of a key wins, tombstones delete — checked against a plain model
 * (a Set walked newest first) on seeded random batches, for the integer-key path (64-bit keys
 * beyond 2^53, negative keys, 32-bit keys) and the generic path (strings, composite keys).
 */
import test from 'ava';
import { Bool, type RecordBatch, Table, tableFromArrays, Utf8, vectorFromArray } from 'apache-arrow';
import { KeyDeduper } from '../../src/region/key-dedup.js';
import { IntKeySet } from '../../src/region/int-key-set.js';

function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

type Keys = { kind: 'i64'; values: bigint[] } | { kind: 'i32'; values: number[] } | { kind: 'str'; values: string[] } | { kind: 'pair'; values: [number, string][] };

function batchOf(keys: Keys, tombs: boolean[]): RecordBatch {
  const tomb = tombs;
  switch (keys.kind) {
    case 'i64':
      return tableFromArrays({ k: BigInt64Array.from(keys.values), _tomb: tomb }).batches[0];
    case 'i32':
      return tableFromArrays({ k: Int32Array.from(keys.values), _tomb: tomb }).batches[0];
    case 'str':
      return new Table({ k: vectorFromArray(keys.values, new Utf8()), _tomb: vectorFromArray(tomb, new Bool()) }).batches[0];
    case 'pair':
      return new Table({ a: vectorFromArray(Int32Array.from(keys.values.map((p) => p[0]))), b: vectorFromArray(keys.values.map((p) => p[1]), new Utf8()), _tomb: vectorFromArray(tomb, new Bool()) }).batches[0];
  }
}

/** The model: walk batches newest first, rows last first; first meeting wins; tombstones drop. */
function model(batches: { keys: string[]; tombs: boolean[] }[], keepTombstones: boolean): number[][] {
  const seen = new Set<string>();
  const out: number[][] = [];
  for (let b = batches.length - 1; b >= 0; b--) {
    const kept: number[] = [];
    for (let r = batches[b].keys.length - 1; r >= 0; r--) {
      const k = batches[b].keys[r];
      if (seen.has(k)) continue;
      seen.add(k);
      if (!keepTombstones && batches[b].tombs[r]) continue;
      kept.push(r);
    }
    out[b] = kept.reverse();
  }
  return out;
}

for (const kind of ['i64', 'i32', 'str', 'pair'] as const) {
  test(`survivors match the model for ${kind} keys over seeded random batches`, (t) => {
    for (let seed = 1; seed <= 30; seed++) {
      const random = rng(seed * 7919);
      const domain = 1 + Math.floor(random() * 400);
      const batchCount = 1 + Math.floor(random() * 5);
      const raw: { keys: string[]; tombs: boolean[] }[] = [];
      const batches: RecordBatch[] = [];
      for (let b = 0; b < batchCount; b++) {
        const n = Math.floor(random() * 300);
        const ids = Array.from({ length: n }, () => Math.floor(random() * domain));
        const tombs = ids.map(() => random() < 0.1);
        let keys: Keys;
        // 64-bit keys beyond ±2^53 whose low words repeat (only the high word tells them apart);
        // 32-bit keys go negative.
        if (kind === 'i64') keys = { kind, values: ids.map((i) => (BigInt(i) - 200n) * 4_294_967_296n * 3_000_001n + BigInt(i % 5)) };
        else if (kind === 'i32') keys = { kind, values: ids.map((i) => (i - 200) * 10_000_019) };
        else if (kind === 'str') keys = { kind, values: ids.map((i) => `k${i}`) };
        else keys = { kind, values: ids.map((i) => [i % 7, `s${i >> 3}`] as [number, string]) };
        raw.push({ keys: (keys.values as unknown[]).map((v) => JSON.stringify(v, (_k, x) => (typeof x === 'bigint' ? `${x}n` : x))), tombs });
        batches.push(batchOf(keys, tombs));
      }
      const keyIndexes = kind === 'pair' ? [0, 1] : [0];
      const tombstoneIndex = kind === 'pair' ? 2 : 1;
      for (const keepTombstones of [false, true]) {
        const got = new KeyDeduper(keyIndexes, tombstoneIndex).survivors(batches, keepTombstones).map((s, b) => (s ? Array.from(s) : Array.from({ length: batches[b].numRows }, (_v, i) => i)));
        t.deepEqual(got, model(raw, keepTombstones), `seed ${seed}, keepTombstones ${keepTombstones}`);
      }
    }
  });
}

test('a released IntKeySet gives its memory to the next set of its size, which starts empty; the released set holds nothing and stays usable', (t) => {
  const a = new IntKeySet(3000);
  for (let i = 0; i < 3000; i++) a.add(i, i & 1 ? -1 : 0);
  a.release();
  t.is(a.size, 0);
  t.true(a.add(5, 0), 'a released set is empty and still a set');
  t.false(a.add(5, 0));
  // Same capacity: the released slots are reused, and must hold none of the old keys.
  const b = new IntKeySet(3000);
  let fresh = 0;
  for (let i = 0; i < 3000; i++) if (b.add(i, i & 1 ? -1 : 0)) fresh++;
  t.is(fresh, 3000, 'every key is new to the next set');
  t.is(b.size, 3000);
  t.false(b.add(17, -1), 'and the next set works as a set');
  // A deduper released after a flush's dedup: the next deduper of the same size sees no old key.
  const keys: Keys = { kind: 'i64', values: Array.from({ length: 2000 }, (_, i) => BigInt(i % 1500)) };
  const batch = batchOf(keys, new Array(2000).fill(false));
  const first = new KeyDeduper([0], 1, 2000);
  const kept1 = first.survivors([batch])[0];
  first.release();
  const second = new KeyDeduper([0], 1, 2000);
  t.deepEqual(Array.from(second.survivors([batch])[0] ?? []), Array.from(kept1 ?? []), 'the same survivors again');
  t.is(kept1?.length, 1500);
});

test('IntKeySet keeps distinct word pairs apart and grows past its first capacity', (t) => {
  const set = new IntKeySet(4);
  const pairs: [number, number][] = [];
  for (let i = 0; i < 5000; i++) pairs.push([i * 31, i % 3 === 0 ? -1 : i % 3]);
  t.is(pairs.filter(([lo, hi]) => set.add(lo, hi)).length, pairs.length, 'each pair is new once');
  t.is(pairs.filter(([lo, hi]) => set.add(lo, hi)).length, 0, 'and never again');
  t.is(set.size, pairs.length);
  t.false(set.add(0, -1));
  t.true(set.add(0, 5));
});
