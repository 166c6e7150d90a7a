// Dev harness for the grown model's partition count: a bare IVF-PQ index over N rows of the
// search benchmark's clustered data (model trained on the first TRAIN rows), for several
// partition counts and nprobes: codes scanned, search time, recall@10 (refine 40).
// N=1000000 PARTS=256,1024 PROBES=10,20,40 node --max-old-space-size=16384 --import=tsx bench/dev-partitions.ts
import { IvfPqIndex } from '../src/index/vector/ivf-pq-index.js';
import { trainIvfPq } from '../src/index/vector/ivf-pq-model.js';
import { VectorSource } from '../src/index/vector/vector-source.js';
import { ClusterModel, makeRows, Rng, ZipfVocabulary } from './search-data.js';

const N = Number(process.env.N ?? 1_000_000);
const TRAIN = Number(process.env.TRAIN ?? 400_000);
const Q = Number(process.env.Q ?? 200);
const DIM = 128;
const PARTS = (process.env.PARTS ?? '256,512,1024').split(',').map(Number);
const PROBES = (process.env.PROBES ?? '10,20,30,40,60').split(',').map(Number);
const gen = { vocab: new ZipfVocabulary(1000, 1.0, 11), model: new ClusterModel({ dim: DIM, clusters: 256, seed: 12, centreStd: 0.3, spread: 1.0, noise: 0.3, latentDim: 16, weightSigma: 1.0 }), minWords: 1, maxWords: 2 };
const rows = makeRows(gen as never, new Rng(1000 + N), Int32Array.from({ length: N }, (_, i) => i));
const vectors = rows.vectors;
const source = new VectorSource(DIM, [{ start: 0, count: N, data: vectors, validity: null, bitOffset: 0 }]);
const trainSource = new VectorSource(DIM, [{ start: 0, count: TRAIN, data: vectors.subarray(0, TRAIN * DIM), validity: null, bitOffset: 0 }]);
const qrng = new Rng(4000 + N);
const queries = Array.from({ length: Q }, () => {
  const v = new Float32Array(DIM);
  gen.model.sample(qrng, v, 0);
  return v;
});
function exact(q: Float32Array): number[] {
  const best: [number, number][] = [];
  for (let i = 0, o = 0; i < N; i++, o += DIM) {
    let s = 0;
    for (let d = 0; d < DIM; d++) {
      const a = q[d] - vectors[o + d];
      s += a * a;
    }
    if (best.length < 10 || s < best[best.length - 1][0]) {
      best.push([s, i]);
      best.sort((a, b) => a[0] - b[0]);
      if (best.length > 10) best.pop();
    }
  }
  return best.map((b) => b[1]);
}
const t0 = performance.now();
const truth = queries.map(exact);
console.log(`truth ${((performance.now() - t0) / Q).toFixed(1)} ms/query`);
const p50 = (a: number[]) => [...a].sort((x, y) => x - y)[Math.floor(a.length / 2)];
for (const P of PARTS) {
  let t = performance.now();
  const model = trainIvfPq(trainSource, { metric: 'l2', partitions: P, sampleSize: process.env.SAMPLE ? Number(process.env.SAMPLE) : undefined });
  const trainMs = performance.now() - t;
  t = performance.now();
  const index = new IvfPqIndex(model);
  index.add(source.chunks[0]);
  const sizes = index.partitionSizes();
  const sorted = Array.from(sizes).sort((a, b) => b - a);
  console.log(`P ${P}: train ${(trainMs / 1000).toFixed(1)} s, encode ${((performance.now() - t) / 1000).toFixed(1)} s, largest partitions ${sorted.slice(0, 5).join(' ')}, median ${sorted[P >> 1]}`);
  for (const np of PROBES) {
    const ms: number[] = [];
    let recall = 0;
    for (let r = 0; r < 2; r++) {
      for (let i = 0; i < Q; i++) {
        const s = performance.now();
        const res = index.search(queries[i], { k: 10, nprobes: np, source });
        ms.push(performance.now() - s);
        if (r === 1) recall += truth[i].filter((x) => Array.from(res.positions).includes(x)).length / 10;
      }
    }
    // Rows in the probed partitions (the codes a query scans).
    let scanned = 0;
    for (const q of queries) {
      const score = new Float64Array(P);
      for (let p = 0; p < P; p++) {
        let s = 0;
        for (let d = 0; d < DIM; d++) {
          const a = q[d] - model.centroids[p * DIM + d];
          s += a * a;
        }
        score[p] = s;
      }
      const order = Array.from({ length: P }, (_, p) => p).sort((a, b) => score[a] - score[b]);
      for (let j = 0; j < Math.min(np, P); j++) scanned += sizes[order[j]];
    }
    console.log(`  nprobes ${np}: p50 ${p50(ms.slice(Q)).toFixed(2)} ms, recall ${(recall / Q).toFixed(4)}, codes scanned ${(scanned / Q / 1000).toFixed(1)}k`);
  }
}
