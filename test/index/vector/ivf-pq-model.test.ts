import test from 'ava';
import { tableFromIPC } from 'apache-arrow';
import {
  decodeIvfPqModel,
  defaultPartitions,
  defaultSubVectors,
  encodeIvfPqModel,
  trainIvfPq,
} from '../../../src/index/vector/ivf-pq-model.js';
import { kmeans, NearestCentroids, Rng } from '../../../src/index/vector/kmeans.js';
import { VectorSource } from '../../../src/index/vector/vector-source.js';
import { chunksOf, clusteredVectors } from './fixtures.js';

test('default partitions and sub-vectors follow the documented rules', (t) => {
  t.is(defaultPartitions(100_000), 256);
  t.is(defaultPartitions(10_000), 100);
  t.is(defaultPartitions(300), 17);
  t.is(defaultSubVectors(128), 16);
  t.is(defaultSubVectors(768), 96);
  t.is(defaultSubVectors(100), 25); // largest divisor of 100 ≤ 25
  t.is(defaultSubVectors(30), 6); // largest divisor ≤ 7.5
  t.is(defaultSubVectors(7), 1);
  t.is(defaultSubVectors(3), 1);
});

test('model encode → decode round trip is exact and the bytes are an Arrow IPC file', (t) => {
  const dim = 24;
  const data = clusteredVectors({ n: 3000, dim, clusters: 12, seed: 3 });
  const src = new VectorSource(dim, chunksOf(data, dim, 1000));
  for (const metric of ['l2', 'cosine', 'dot'] as const) {
    const m = trainIvfPq(src, { metric, partitions: 10, iterations: 4, seed: 1 });
    t.is(m.subVectors, 3); // dim / 8
    t.is(m.subDim, 8);
    t.is(m.partitions, 10);
    const bytes = encodeIvfPqModel(m);
    const back = decodeIvfPqModel(bytes);
    t.deepEqual(back, m);
    const table = tableFromIPC(bytes);
    t.deepEqual(table.schema.fields.map((f) => f.name), ['partition', 'centroid']);
    t.is(table.numRows, 10);
    t.is(table.schema.metadata.get('quiver.ivf_pq.metric'), metric);
    t.is(String(table.schema.fields[1].type), 'FixedSizeList[24]<Float32>');
    t.is(new TextDecoder().decode(bytes.subarray(0, 6)), 'ARROW1');
  }
});

test('training needs at least 256 non-null finite vectors and at least `partitions` of them', (t) => {
  const dim = 8;
  const n = 300;
  const data = clusteredVectors({ n, dim, clusters: 4, seed: 9 });
  // 255 valid rows: 40 nulls, 5 NaN rows.
  const validity = new Uint8Array(Math.ceil(n / 8)).fill(0xff);
  for (let i = 0; i < 40; i++) validity[(i * 7) >> 3] &= ~(1 << ((i * 7) & 7));
  let nan = 0;
  for (let i = 0; nan < 5; i++) {
    if (validity[i >> 3] & (1 << (i & 7))) {
      data[i * dim + 3] = NaN;
      nan++;
    }
  }
  const src = new VectorSource(dim, [{ start: 0, count: n, data, validity, bitOffset: 0 }]);
  const err = t.throws(() => trainIvfPq(src, { metric: 'l2' }));
  t.regex(err!.message, /not enough vectors to train an IVF-PQ index: 255 non-null vectors, need at least 256/);
  const empty = new VectorSource(dim);
  t.throws(() => trainIvfPq(empty, { metric: 'cosine' }), { message: /0 non-null vectors/ });

  const big = clusteredVectors({ n: 400, dim, clusters: 4, seed: 9 });
  const ok = new VectorSource(dim, chunksOf(big, dim, 128));
  t.throws(() => trainIvfPq(ok, { metric: 'l2', partitions: 401 }), { message: /400 non-null vectors, need at least 401/ });
  t.throws(() => trainIvfPq(ok, { metric: 'l2', subVectors: 3 }), { message: /subVectors must be a positive divisor of dim 8/ });
  t.throws(() => trainIvfPq(ok, { metric: 'hamming' as 'l2' }), { message: /unknown metric/ });
  const m = trainIvfPq(ok, { metric: 'dot', iterations: 2 });
  t.is(m.partitions, 20); // round(√400)
  t.is(m.subVectors, 1);
  t.true(m.centroids.every(Number.isFinite));
  t.true(m.codebooks.every(Number.isFinite));
});

test('training is deterministic for a seed; cosine centroids live near the unit sphere', (t) => {
  const dim = 16;
  const data = clusteredVectors({ n: 2000, dim, clusters: 8, seed: 4, normSpread: 0.5 });
  const src = new VectorSource(dim, chunksOf(data, dim, 333));
  const a = trainIvfPq(src, { metric: 'l2', partitions: 8, seed: 7, iterations: 5 });
  const b = trainIvfPq(src, { metric: 'l2', partitions: 8, seed: 7, iterations: 5 });
  t.deepEqual(a, b);
  const c = trainIvfPq(src, { metric: 'cosine', partitions: 8, seed: 7, iterations: 5 });
  for (let p = 0; p < 8; p++) {
    let s = 0;
    for (let d = 0; d < dim; d++) s += c.centroids[p * dim + d] ** 2;
    t.true(Math.sqrt(s) <= 1 + 1e-5 && Math.sqrt(s) > 0.5, `centroid ${p} norm ${Math.sqrt(s)}`);
  }
});

test('decodeIvfPqModel rejects foreign or inconsistent files', (t) => {
  const dim = 8;
  const src = new VectorSource(dim, chunksOf(clusteredVectors({ n: 600, dim, clusters: 4, seed: 2 }), dim, 600));
  const m = trainIvfPq(src, { metric: 'l2', partitions: 4, iterations: 2 });
  t.throws(() => decodeIvfPqModel(new Uint8Array([1, 2, 3])));
  const bad = { ...m, codebooks: m.codebooks.subarray(0, 10) };
  t.throws(() => encodeIvfPqModel(bad), { message: /codebooks hold 10 values/ });
});

test('k-means recovers well-separated clusters, is seeded, and repairs empty clusters', (t) => {
  const rng = new Rng(1);
  const dim = 32;
  const k = 40;
  const centres = Array.from({ length: k }, () => Float32Array.from({ length: dim }, () => 20 * rng.gaussian()));
  const n = 4000;
  const data = new Float32Array(n * dim);
  const truth = new Int32Array(n);
  for (let i = 0; i < n; i++) {
    const c = i % k;
    truth[i] = c;
    for (let d = 0; d < dim; d++) data[i * dim + d] = centres[c][d] + 0.1 * rng.gaussian();
  }
  const r = kmeans(data, n, dim, k, { seed: 3, iterations: 20 });
  // Every cluster maps to exactly one centroid (k-means++ plus Lloyd finds them all here).
  const map = new Map<number, number>();
  for (let i = 0; i < n; i++) {
    const prev = map.get(truth[i]);
    if (prev === undefined) map.set(truth[i], r.assignments[i]);
    else t.is(prev, r.assignments[i]);
  }
  t.is(new Set(map.values()).size, k);
  t.deepEqual(kmeans(data, n, dim, k, { seed: 3, iterations: 20 }), r);
  // Assignments are exact nearest centroids (the accelerated search agrees with brute force).
  const nc = new NearestCentroids(r.centroids, k, dim);
  for (let i = 0; i < n; i += 7) {
    let best = -1;
    let bestD = Infinity;
    for (let j = 0; j < k; j++) {
      let s = 0;
      for (let d = 0; d < dim; d++) s += (data[i * dim + d] - r.centroids[j * dim + d]) ** 2;
      if (s < bestD) {
        bestD = s;
        best = j;
      }
    }
    const got = nc.nearest(data, i * dim);
    t.true(got === best || Math.abs(nc.lastDistance - bestD) < 1e-6 * bestD, `row ${i}`);
  }
  // Fewer distinct points than clusters: duplicates, but no crash and finite centroids.
  const few = new Float32Array(50 * 4);
  for (let i = 0; i < 50; i++) few.set([i % 3, 0, 0, 1], i * 4);
  const f = kmeans(few, 50, 4, 8, { seed: 1, iterations: 5 });
  t.true(f.centroids.every(Number.isFinite));
  // Empty clusters get repaired: a skewed set where plain Lloyd would leave centroids empty.
  const skew = new Float32Array(500 * 2);
  for (let i = 0; i < 500; i++) skew.set(i < 490 ? [rng.gaussian(), rng.gaussian()] : [1000 + i, 0], i * 2);
  const s = kmeans(skew, 500, 2, 30, { seed: 2, iterations: 10 });
  const counts = new Int32Array(30);
  for (const a of s.assignments) counts[a]++;
  t.true(counts.every((c) => c > 0), `cluster sizes ${Array.from(counts)}`);
});

test('NearestCentroids is exact with and without a guess, at large and small dimensions', (t) => {
  const rng = new Rng(11);
  for (const [k, dim] of [[256, 128], [256, 8], [300, 20], [10, 5]] as const) {
    const cents = Float32Array.from({ length: k * dim }, () => rng.gaussian());
    const nc = new NearestCentroids(cents, k, dim);
    const x = new Float32Array(dim);
    for (let trial = 0; trial < 200; trial++) {
      const base = rng.int(k);
      for (let d = 0; d < dim; d++) x[d] = cents[base * dim + d] * (trial % 2 ? 1 : 0.3) + rng.gaussian() * (trial % 3);
      let bestD = Infinity;
      for (let j = 0; j < k; j++) {
        let s = 0;
        for (let d = 0; d < dim; d++) s += (x[d] - cents[j * dim + d]) ** 2;
        bestD = Math.min(bestD, s);
      }
      nc.nearest(x, 0);
      t.true(Math.abs(nc.lastDistance - bestD) <= 1e-9 * Math.max(1, bestD), `k=${k} dim=${dim}: ${nc.lastDistance} vs ${bestD}`);
      nc.nearest(x, 0, rng.int(k));
      t.true(Math.abs(nc.lastDistance - bestD) <= 1e-9 * Math.max(1, bestD), `guess k=${k} dim=${dim}`);
    }
  }
});
