/**
 * Vector index benchmark (`node --import=tsx bench/index-vector.bench.ts`): IVF-PQ insert
 * throughput, IVF-PQ search latency and recall@10, and brute-force (flatKnn) throughput, at
 * 100 000 × 128 float32 vectors, one thread (JS is single-threaded; nothing here uses workers).
 *
 * Datasets (test/index/vector/fixtures.ts, seeded):
 * - `clustered`: 200 Gaussian clusters with a 12-dimensional latent shape plus isotropic noise,
 *   per-cluster norm scaling in [0.8, 1.2] — the data of the recall test;
 * - `isotropic`: 200 clusters of pure isotropic Gaussian noise (σ 0.3 per dimension, no latent
 *   structure) — a harder case for PQ, since neighbours within a cluster are nearly equidistant.
 * Queries are data rows plus a little noise. Ground truth = flatKnn.
 *
 * Per dataset × metric: training time (trainIvfPq defaults), insert time of all rows (rows/s),
 * search with default parameters (per-query latency p50/p99 over QUERIES queries, after a
 * warm-up, and recall@10), plus a small sweep of nprobes × refineFactor (recall, p50).
 * benny (MAX_TIME s per case): IVF-PQ add of 8 192-row chunks (rows/s), IVF-PQ search (ops/s),
 * flatKnn per metric over all rows (vectors/s).
 *
 * Results: a table on stdout and bench/results/index-vector.json.
 * Knobs: N=100000 DIM=128 QUERIES=200 DATASETS=clustered,isotropic METRICS=l2,cosine,dot
 * SWEEP=1 (0 to skip) MAX_TIME=3 (s per benny case).
 */
import { mkdir, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { add, complete, configure, cycle, suite } from 'benny';
import type { Metric } from '../src/index/vector/distance.js';
import { flatKnn, type KnnResult } from '../src/index/vector/flat-knn.js';
import { DEFAULT_NPROBES, DEFAULT_REFINE_FACTOR, IvfPqIndex } from '../src/index/vector/ivf-pq-index.js';
import { trainIvfPq } from '../src/index/vector/ivf-pq-model.js';
import { VectorSource } from '../src/index/vector/vector-source.js';
import { chunksOf, clusteredVectors, queriesNear, recallOf } from '../test/index/vector/fixtures.js';
import { envNumber } from './env.js';
import { percentile as nearestRank } from './lib/stats.js';

function envList(name: string, fallback: string): string[] {
  return (process.env[name] ?? fallback).split(',').map((s) => s.trim()).filter(Boolean);
}

const N = envNumber('N', 100_000);
const DIM = envNumber('DIM', 128);
const QUERIES = envNumber('QUERIES', 200);
const DATASETS = envList('DATASETS', 'clustered,isotropic');
const METRICS = envList('METRICS', 'l2,cosine,dot') as Metric[];
const SWEEP = envNumber('SWEEP', 1) > 0;
const MAX_TIME = envNumber('MAX_TIME', 3);
const K = 10;
const CHUNK = 8192;
const RESULTS_DIR = path.join(path.dirname(new URL(import.meta.url).pathname), 'results');

function makeData(name: string): Float32Array {
  switch (name) {
    case 'clustered':
      return clusteredVectors({ n: N, dim: DIM, clusters: 200, seed: 1234, normSpread: 0.2 });
    case 'isotropic':
      return clusteredVectors({ n: N, dim: DIM, clusters: 200, seed: 1234, latentDim: 0, noise: 0.3 });
    default:
      throw new Error(`unknown dataset ${name}`);
  }
}

/** Percentile `p` in 0..1 of ascending `sorted` (the shared nearest rank, bench/lib/stats.ts). */
const percentile = nearestRank;

function measure(index: IvfPqIndex, source: VectorSource, queries: Float32Array[], exact: KnnResult[], nprobes: number, refineFactor: number) {
  for (const q of queries.slice(0, 20)) index.search(q, { k: K, nprobes, refineFactor, source }); // warm-up
  const lat: number[] = [];
  let recall = 0;
  queries.forEach((q, i) => {
    const t0 = performance.now();
    const r = index.search(q, { k: K, nprobes, refineFactor, source });
    lat.push(performance.now() - t0);
    recall += recallOf(r, exact[i]);
  });
  lat.sort((a, b) => a - b);
  return { recall: recall / queries.length, p50Ms: percentile(lat, 0.5), p99Ms: percentile(lat, 0.99), meanMs: lat.reduce((a, b) => a + b, 0) / lat.length };
}

interface CaseResult {
  dataset: string;
  metric: Metric;
  partitions: number;
  subVectors: number;
  trainMs: number;
  insertMs: number;
  insertRowsPerSec: number;
  search: { nprobes: number; refineFactor: number; recall: number; p50Ms: number; p99Ms: number; meanMs: number };
  sweep: { nprobes: number; refineFactor: number; recall: number; p50Ms: number; p99Ms: number }[];
  flatKnnMsPerQuery: number;
}

async function bennyOps(name: string, fn: () => void): Promise<{ ops: number; margin: number; samples: number }> {
  const summary = await suite(name, configure({ minDisplayPrecision: 2 }), add(name, fn, { minSamples: 5, maxTime: MAX_TIME }), cycle(), complete());
  const r = summary.results[0];
  return { ops: r.ops, margin: r.margin, samples: r.samples };
}

async function main(): Promise<void> {
  const cases: CaseResult[] = [];
  const benny: Record<string, unknown> = {};
  for (const dsName of DATASETS) {
    let t0 = performance.now();
    const data = makeData(dsName);
    console.log(`[${dsName}] generated ${N} × ${DIM} in ${(performance.now() - t0).toFixed(0)} ms`);
    const source = new VectorSource(DIM, chunksOf(data, DIM, CHUNK));
    const queries = queriesNear(data, DIM, QUERIES, 77);
    for (const metric of METRICS) {
      t0 = performance.now();
      const model = trainIvfPq(source, { metric });
      const trainMs = performance.now() - t0;
      t0 = performance.now();
      const index = new IvfPqIndex(model);
      for (const c of source.chunks) index.add(c);
      const insertMs = performance.now() - t0;
      t0 = performance.now();
      const exact = queries.map((q) => flatKnn(source, q, { k: K, metric }));
      const flatKnnMsPerQuery = (performance.now() - t0) / queries.length;
      const search = { nprobes: DEFAULT_NPROBES, refineFactor: DEFAULT_REFINE_FACTOR, ...measure(index, source, queries, exact, DEFAULT_NPROBES, DEFAULT_REFINE_FACTOR) };
      const sweep: CaseResult['sweep'] = [];
      if (SWEEP) {
        for (const nprobes of [10, 20, 40]) {
          for (const refineFactor of [0, 10, 20, 30, 40]) {
            const m = measure(index, source, queries, exact, nprobes, refineFactor);
            sweep.push({ nprobes, refineFactor, recall: m.recall, p50Ms: m.p50Ms, p99Ms: m.p99Ms });
          }
        }
      }
      const c: CaseResult = {
        dataset: dsName,
        metric,
        partitions: model.partitions,
        subVectors: model.subVectors,
        trainMs,
        insertMs,
        insertRowsPerSec: (N / insertMs) * 1000,
        search,
        sweep,
        flatKnnMsPerQuery,
      };
      cases.push(c);
      console.log(
        `[${dsName} ${metric}] train ${trainMs.toFixed(0)} ms, insert ${c.insertRowsPerSec.toFixed(0)} rows/s, ` +
          `search p50 ${search.p50Ms.toFixed(3)} ms p99 ${search.p99Ms.toFixed(3)} ms recall@10 ${search.recall.toFixed(4)}`,
      );

      // benny: only on the first dataset (the rates do not depend much on the data).
      if (dsName === DATASETS[0]) {
        let qi = 0;
        const s = await bennyOps(`ivf-pq search ${metric} k=${K}`, () => {
          index.search(queries[qi++ % queries.length], { k: K, source });
        });
        let pos = 0;
        let chunkIdx = 0;
        let target = new IvfPqIndex(model);
        const a = await bennyOps(`ivf-pq add ${CHUNK} rows ${metric}`, () => {
          const src = source.chunks[chunkIdx++ % source.chunks.length];
          if (pos + src.count > 4 * N) {
            target = new IvfPqIndex(model); // keep memory bounded
            pos = 0;
          }
          target.add({ ...src, start: pos });
          pos += src.count;
        });
        let fq = 0;
        const f = await bennyOps(`flatKnn ${metric} k=${K} over ${N}`, () => {
          flatKnn(source, queries[fq++ % queries.length], { k: K, metric });
        });
        benny[metric] = {
          ivfPqSearch: { opsPerSec: s.ops, marginPct: s.margin, samples: s.samples },
          ivfPqAdd: { rowsPerSec: a.ops * CHUNK, marginPct: a.margin, samples: a.samples },
          flatKnn: { vectorsPerSec: f.ops * N, msPerQuery: 1000 / f.ops, marginPct: f.margin, samples: f.samples },
        };
      }
    }
  }

  // ---- report ----------------------------------------------------------------------------------
  const table = cases.map((c) => ({
    dataset: c.dataset,
    metric: c.metric,
    'train s': (c.trainMs / 1000).toFixed(2),
    'insert rows/s': c.insertRowsPerSec.toFixed(0),
    'search p50 ms': c.search.p50Ms.toFixed(3),
    'p99 ms': c.search.p99Ms.toFixed(3),
    'recall@10': c.search.recall.toFixed(4),
    'flat ms/q': c.flatKnnMsPerQuery.toFixed(1),
  }));
  console.log(`\nIVF-PQ defaults (nprobes ${DEFAULT_NPROBES}, refineFactor ${DEFAULT_REFINE_FACTOR}), ${N} × ${DIM}, k=${K}, ${QUERIES} queries`);
  console.table(table);
  if (SWEEP) {
    for (const c of cases) {
      console.log(`sweep ${c.dataset} ${c.metric}: ` + c.sweep.map((s) => `np${s.nprobes}/rf${s.refineFactor}: ${s.recall.toFixed(3)} @ ${s.p50Ms.toFixed(2)}ms`).join(', '));
    }
  }
  const bennyTable = Object.entries(benny).map(([metric, v]) => {
    const b = v as { ivfPqSearch: { opsPerSec: number }; ivfPqAdd: { rowsPerSec: number }; flatKnn: { vectorsPerSec: number; msPerQuery: number } };
    return {
      metric,
      'ivf-pq search ops/s': b.ivfPqSearch.opsPerSec.toFixed(0),
      'ivf-pq add rows/s': b.ivfPqAdd.rowsPerSec.toFixed(0),
      'flatKnn M vectors/s': (b.flatKnn.vectorsPerSec / 1e6).toFixed(2),
      'flatKnn ms/query': b.flatKnn.msPerQuery.toFixed(2),
    };
  });
  console.log('\nbenny');
  console.table(bennyTable);

  const out = {
    generatedAt: new Date().toISOString(),
    machine: { cpus: os.cpus().length, model: os.cpus()[0]?.model, node: process.version, loadavg: os.loadavg() },
    settings: { n: N, dim: DIM, k: K, queries: QUERIES, datasets: DATASETS, metrics: METRICS, nprobes: DEFAULT_NPROBES, refineFactor: DEFAULT_REFINE_FACTOR, maxTimeS: MAX_TIME },
    targets: { ivfPqP50Ms: 2, recallAt10: 0.95, flatKnnVectorsPerSec: 5e6 },
    cases,
    benny,
  };
  await mkdir(RESULTS_DIR, { recursive: true });
  await writeFile(path.join(RESULTS_DIR, 'index-vector.json'), JSON.stringify(out, null, 2) + '\n');
  console.log(`\nwrote ${path.join(RESULTS_DIR, 'index-vector.json')}`);
}

await main();
