/**
 * The liveness maps' key → position table (issue 7): seeded sequences of sets and lookups of
 * every key kind a key reader produces — integers (negative, beyond 2^32, up to 2^53, 0 and -0),
 * bigints, strings — agree with a JS Map at every step, across growth, and `forEachKey` yields
 * exactly the keys held.
 */
import test from 'ava';
import { KeyPositions } from '../../src/memtable/key-positions.js';
import { Rng } from '../../src/index/vector/kmeans.js';
import type { KeyValue } from '../../src/schema/primary-key.js';

function randomKey(rng: Rng, pool: number): KeyValue {
  const r = rng.next();
  const i = rng.int(pool);
  if (r < 0.45) return i - pool / 2; // small integers, negative too
  if (r < 0.7) return (i - pool / 2) * 4294967296 + rng.int(3); // beyond 32 bits
  if (r < 0.75) return i % 2 === 0 ? Number.MAX_SAFE_INTEGER - i : -Number.MAX_SAFE_INTEGER + i;
  if (r < 0.78) return i % 2 === 0 ? 0 : -0;
  if (r < 0.9) return BigInt(i) * 2n ** 60n;
  return `k${i}`;
}

/** The map's view of a key: -0 is the same key as 0 (as in a Map). */
const norm = (k: KeyValue) => (typeof k === 'number' && k === 0 ? 0 : k);

test('seeded: agrees with a Map through sets, overwrites, lookups and growth', (t) => {
  for (let seed = 1; seed <= 30; seed++) {
    const rng = new Rng(seed);
    const pool = 10 + rng.int(5000);
    const kp = new KeyPositions(rng.int(100));
    const model = new Map<KeyValue, number>();
    for (let step = 0; step < 20_000; step++) {
      const k = randomKey(rng, pool);
      if (rng.next() < 0.5) {
        const pos = step;
        kp.set(k, pos);
        model.set(norm(k), pos);
      } else if (kp.get(k) !== model.get(norm(k))) {
        t.fail(`seed ${seed} step ${step}: get(${String(k)}) = ${kp.get(k)}, expected ${model.get(norm(k))}`);
        return;
      }
    }
    t.is(kp.size, model.size, `seed ${seed}: size`);
    const seen = new Map<KeyValue, number>();
    kp.forEachKey((k) => seen.set(k, (seen.get(k) ?? 0) + 1));
    t.is([...seen.values()].filter((n) => n !== 1).length, 0, `seed ${seed}: each key once`);
    t.is(seen.size, model.size, `seed ${seed}: forEachKey yields as many keys as held`);
    t.true([...seen.keys()].every((k) => model.has(k)), `seed ${seed}: and only keys held`);
    t.true([...model].every(([k, pos]) => kp.get(k) === pos), `seed ${seed}: every key's latest position`);
  }
});

test('a number and a bigint of the same value are different keys, as in a Map', (t) => {
  const kp = new KeyPositions();
  kp.set(5, 1);
  kp.set(5n, 2);
  kp.set('5', 3);
  t.is(kp.get(5), 1);
  t.is(kp.get(5n), 2);
  t.is(kp.get('5'), 3);
  t.is(kp.get(6), undefined);
  t.is(kp.size, 3);
});


test('lookups outside the number keys held answer undefined; the range follows every set, its ends included', (t) => {
  const kp = new KeyPositions();
  t.is(kp.get(0), undefined, 'empty');
  kp.set(10, 1);
  kp.set(-3, 2);
  t.is(kp.get(-3), 2, 'the smallest key');
  t.is(kp.get(10), 1, 'the largest key');
  for (const k of [-4, 11, 0, 5, Number.NaN, Infinity, -Infinity]) t.is(kp.get(k), undefined, String(k));
  kp.set(2 ** 53 - 1, 3);
  kp.set(-(2 ** 40), 4);
  t.is(kp.get(2 ** 53 - 1), 3, 'a new largest key');
  t.is(kp.get(-(2 ** 40)), 4, 'a new smallest key');
  kp.set('k', 5);
  t.is(kp.get('k'), 5, 'keys that are not numbers are outside the range check');
});
