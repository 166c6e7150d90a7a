/**
 * No silent fallback: every search result names, per source, the path taken (IVF-PQ, exact,
 * BM25, scalar index, filter scan), why an exact or scan path was taken, and how many IVF
 * partitions were probed.
 */
import test from 'ava';
import { connect, MemoryObjectStore } from '../../src/quiver.js';
import { SEARCH_PLAN_KEY, type SourcePlan } from '../../src/table/search.js';
import { queries, rows, vecSchema } from '../helpers/clustered-vectors.js';

const planOf = (t: { schema: { metadata: Map<string, string> } }): SourcePlan[] => JSON.parse(t.schema.metadata.get(SEARCH_PLAN_KEY)!).sources;

test('search results say how each source was searched', async (t) => {
  const db = await connect('memory://', { store: new MemoryObjectStore(), writer: { maxWalFlushIntervalMs: 0 } });
  const table = await db.createTable('vecs', vecSchema, { primaryKey: 'id' });
  await table.put(rows(0, 3000));
  const query = queries(1)[0];
  // Before an index exists: exact, with the reason.
  t.like(planOf(await table.search({ vector: { column: 'vec', query }, k: 5 }))[0], { path: 'exact', reason: 'no IVF-PQ index on the column', rows: 3000 });
  await table.createIndex('vec', { type: 'ivf_pq', partitions: 16 });
  await table.flush();
  await table.put(rows(3000, 3100)); // a small MemTable next to the 3 000-row generation
  const indexed = planOf(await table.search({ vector: { column: 'vec', query }, k: 5, nprobes: 4 }));
  t.deepEqual(indexed.map((p) => p.path).sort(), ['exact', 'ivf_pq']);
  t.like(indexed.find((p) => p.path === 'exact'), { rows: 100, reason: 'small source (< 2048 rows)' });
  t.like(indexed.find((p) => p.path === 'ivf_pq'), { rows: 3000, partitionsProbed: 4, partitions: 16 });
  // Another metric than the index's: an exact scan, and it says so.
  const otherMetric = planOf(await table.search({ vector: { column: 'vec', query, metric: 'cosine' }, k: 5 }));
  t.like(otherMetric.find((p) => p.rows === 3000), { path: 'exact', reason: "metric cosine differs from the index's l2" });
  // A refine pool larger than the source probes every partition.
  const wide = planOf(await table.search({ vector: { column: 'vec', query }, k: 10, nprobes: 2, refine: 1000 }));
  t.like(wide.find((p) => p.path === 'ivf_pq'), { partitionsProbed: 16, partitions: 16 });
  // Key search without a scalar index scans.
  t.like(planOf(await table.search({ key: { eq: 5n }, k: 1 }))[0], { path: 'filter_scan', reason: 'no scalar index on the column' });
  await db.close();
});

test('a filter conjunct on a scalar-indexed column narrows the rows the filter is evaluated on', async (t) => {
  const db = await connect('memory://', { store: new MemoryObjectStore(), writer: { maxWalFlushIntervalMs: 0 } });
  const table = await db.createTable('vecs', vecSchema, { primaryKey: 'id' });
  await table.createIndex('id', { type: 'scalar' });
  await table.put(rows(0, 3000));
  await table.flush();
  const query = queries(1)[0];
  const narrow = await table.search({ vector: { column: 'vec', query }, k: 5, filter: 'id < 100 AND id <> 7' });
  t.like(planOf(narrow)[0], { rows: 3000, filterRows: 100 });
  t.true([...narrow.getChild('id')!].every((id) => Number(id) < 100 && Number(id) !== 7));
  t.is(narrow.numRows, 5);
  // Too many candidates to be worth it: the filter runs over every row.
  t.like(planOf(await table.search({ vector: { column: 'vec', query }, k: 5, filter: 'id < 2000' }))[0], { filterRows: 3000 });
  // A conjunct the index cannot serve (OR) leaves the whole filter to the evaluator.
  t.like(planOf(await table.search({ vector: { column: 'vec', query }, k: 5, filter: 'id < 10 OR id > 2990' }))[0], { filterRows: 3000 });
  await db.close();
});

test('a repeated filter is evaluated once per source; after a put only the new rows are evaluated', async (t) => {
  const db = await connect('memory://', { store: new MemoryObjectStore(), writer: { maxWalFlushIntervalMs: 0 } });
  const table = await db.createTable('vecs', vecSchema, { primaryKey: 'id' });
  await table.put(rows(0, 3000));
  await table.flush();
  await table.put(rows(3000, 3200));
  const query = queries(1)[0];
  const search = async (filter: string, params?: unknown[]) => {
    const r = await table.search({ vector: { column: 'vec', query }, k: 3000, filter, params });
    return { ids: [...r.getChild('id')!].map(Number).sort((a, b) => a - b), plan: planOf(r) };
  };
  const rowsOf = (plan: SourcePlan[]) => plan.map((p) => [p.rows, p.filterRows]).sort((a, b) => a[0]! - b[0]!);
  const first = await search('id < 1000 OR id >= 3100');
  t.deepEqual(rowsOf(first.plan), [[200, 200], [3000, 3000]]);
  const again = await search('id < 1000 OR id >= 3100');
  t.deepEqual(again.ids, first.ids);
  t.deepEqual(rowsOf(again.plan), [[200, 0], [3000, 0]], 'nothing evaluated again on an unchanged snapshot');
  // Parameters are part of the filter: another value is another filter.
  const p1 = await search('id < $1', [10]);
  const p2 = await search('id < $1', [20]);
  t.is(p1.ids.length, 10);
  t.is(p2.ids.length, 20);
  // A put (upserting ids 0..9 and adding 3200..3209): only its rows are evaluated, and the
  // upserted versions replace the generation's rows in the answer.
  await table.put(rows(0, 10));
  await table.put(rows(3200, 3210));
  const afterPut = await search('id < 1000 OR id >= 3100');
  const mem = afterPut.plan.find((p) => p.rows === 220)!;
  t.is(mem.filterRows, 20);
  t.is(afterPut.plan.find((p) => p.rows === 3000)!.filterRows, 0);
  t.deepEqual(afterPut.ids, Array.from({ length: 3210 }, (_, i) => i).filter((i) => i < 1000 || i >= 3100));
  // A delete hides rows the remembered filter had allowed.
  await table.delete([3n, 6n, 3201n]);
  const afterDelete = await search('id < 1000 OR id >= 3100');
  t.deepEqual(afterDelete.ids, Array.from({ length: 3210 }, (_, i) => i).filter((i) => (i < 1000 || i >= 3100) && i !== 3 && i !== 6 && i !== 3201));
  await db.close();
});
