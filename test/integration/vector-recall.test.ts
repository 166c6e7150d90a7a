/**
 * Recall of the table's IVF-PQ search with default settings: 100,000 clustered 128-dim vectors,
 * recall@10 against exact KNN ≥ 0.95 for each metric, in a MemTable, after flush to a generation
 * (searched through its sidecar), and after a restart — and every search must report (its
 * `quiver.search.plan`) that the IVF-PQ index answered, not an exact fallback.
 */
import test from 'ava';
import { Field, FixedSizeList, Float32, Int64, makeData, makeVector, Schema, Table } from 'apache-arrow';
import { connect, MemoryObjectStore } from '../../src/quiver.js';

const N = 100_000;
const DIM = 128;
const QUERIES = 40;
const schema = new Schema([new Field('id', new Int64(), false), new Field('vec', new FixedSizeList(DIM, new Field('item', new Float32(), false)), true)]);

function rng(seed: number) {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}
function gauss(r: () => number) {
  return Math.sqrt(-2 * Math.log(r() + 1e-12)) * Math.cos(2 * Math.PI * r());
}

function clustered(seed: number) {
  const r = rng(seed);
  const centers = Array.from({ length: 200 }, () => Float32Array.from({ length: DIM }, () => gauss(r) * 3));
  const data = new Float32Array(N * DIM);
  for (let i = 0; i < N; i++) {
    const c = centers[Math.floor(r() * centers.length)];
    const scale = 0.5 + r(); // varied norms, so dot differs from cosine
    for (let j = 0; j < DIM; j++) data[i * DIM + j] = (c[j] + gauss(r)) * scale;
  }
  const queries = Array.from({ length: QUERIES }, () => {
    const base = Math.floor(r() * N);
    return Float32Array.from({ length: DIM }, (_, j) => data[base * DIM + j] + gauss(r) * 0.5);
  });
  return { data, queries };
}

function exact(data: Float32Array, q: Float32Array, metric: 'l2' | 'cosine' | 'dot', k: number): number[] {
  const d = new Float64Array(N);
  let qn = 0;
  for (let j = 0; j < DIM; j++) qn += q[j] * q[j];
  qn = Math.sqrt(qn);
  for (let i = 0; i < N; i++) {
    let dot = 0;
    let l2 = 0;
    let nn = 0;
    for (let j = 0; j < DIM; j++) {
      const x = data[i * DIM + j];
      dot += x * q[j];
      l2 += (x - q[j]) ** 2;
      nn += x * x;
    }
    d[i] = metric === 'l2' ? l2 : metric === 'dot' ? 1 - dot : 1 - dot / (Math.sqrt(nn) * qn);
  }
  return Array.from(d.keys()).sort((a, b) => d[a] - d[b]).slice(0, k);
}

const { data, queries } = clustered(42);

for (const metric of ['l2', 'cosine', 'dot'] as const) {
  test.serial(`IVF-PQ recall@10 >= 0.95 (${metric}) in a MemTable, a generation and after restart`, async (t) => {
    t.timeout(180_000);
    const truth = queries.map((q) => exact(data, q, metric, 10));
    const mem = new MemoryObjectStore();
    // Room for every row in one MemTable, so the first searches really run on a MemTable.
    const writer = { maxMemtableRows: 200_000, maxMemtableSize: 1 << 30 };
    let db = await connect('memory://', { store: mem, writer });
    let table = await db.createTable('v', schema, { primaryKey: 'id' });
    for (let off = 0; off < N; off += 10_000) {
      const n = 10_000;
      const ids = BigInt64Array.from({ length: n }, (_, i) => BigInt(off + i));
      const vec = makeVector(makeData({ type: schema.fields[1].type as FixedSizeList, length: n, nullCount: 0, child: makeData({ type: new Float32(), length: n * DIM, data: data.subarray(off * DIM, (off + n) * DIM) }) }));
      await table.put(new Table({ id: makeVector(ids), vec }));
    }
    const def = await table.createIndex('vec', { type: 'ivf_pq', metric });
    t.truthy(def.model, 'a model is trained from the rows');
    const recall = async () => {
      let hit = 0;
      for (let i = 0; i < QUERIES; i++) {
        const res = await table.search({ vector: { column: 'vec', query: queries[i] }, k: 10, columns: ['id'] });
        // The index answered, not an exact fallback (which would pass any recall bar).
        const plan = JSON.parse(res.schema.metadata.get('quiver.search.plan')!).sources as { path: string }[];
        if (!plan.every((p) => p.path === 'ivf_pq')) throw new Error(`search did not use the IVF-PQ index: ${JSON.stringify(plan)}`);
        const got = new Set(Array.from(res.getChild('id')!, Number));
        hit += truth[i].filter((id) => got.has(id)).length;
      }
      return hit / (QUERIES * 10);
    };
    const inMemtable = await recall();
    await table.flush();
    const inGeneration = await recall();
    t.true((await mem.list('v/_mem_wal/')).some((o) => o.key.endsWith('index_vec_ivf_pq.arrow')), 'the generation has an IVF-PQ sidecar');
    await db.close();
    db = await connect('memory://', { store: mem, writer });
    table = await db.openTable('v');
    const restarted = await recall();
    t.log(`${metric}: recall@10 memtable ${inMemtable}, generation ${inGeneration}, restart ${restarted}`);
    for (const r of [inMemtable, inGeneration, restarted]) t.true(r >= 0.95, `recall ${r}`);
    await db.close();
  });
}
