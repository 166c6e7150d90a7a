/**
 * An IVF-PQ sidecar names the model its codes were made with; a reader whose index definition
 * names another model rebuilds the generation's index from rows instead of decoding the codes
 * with the wrong codebooks (which loses recall without a sound).
 */
import test from 'ava';
import { tableFromIPC } from 'apache-arrow';
import { connect, MemoryObjectStore } from '../../src/quiver.js';
import { SIDECAR_MODEL_KEY } from '../../src/index/sidecar.js';
import { queries, rows, vecSchema as schema } from '../helpers/clustered-vectors.js';

test('a sidecar made with another process\'s IVF-PQ model is rebuilt with the table\'s model, not decoded with the wrong codebooks', async (t) => {
  const mem = new MemoryObjectStore();
  const writer = { maxWalFlushIntervalMs: 0 };
  const dbA = await connect('memory://', { store: mem, writer });
  const a = await dbA.createTable('vecs', schema, { primaryKey: 'id' });
  await a.put(rows(0, 3000));
  await a.flush();
  const dbB = await connect('memory://', { store: mem, writer });
  const b = await dbB.openTable('vecs');
  // A creates the index (its model, trained on 3 000 rows) and writes 3 000 more rows; B then
  // creates "the same" index, training its own model on all 6 000 rows: the metadata keeps B's.
  await a.createIndex('vec', { type: 'ivf_pq', partitions: 16 });
  await a.put(rows(3000, 6000));
  const defB = await b.createIndex('vec', { type: 'ivf_pq', partitions: 16 });
  // A, still on its own model, flushes the new rows: their sidecar holds model-A codes.
  await a.flush();
  const sidecars = (await mem.list('vecs/_mem_wal/')).filter((o) => o.key.endsWith('index_vec_ivf_pq.arrow'));
  t.is(sidecars.length, 1);
  const sidecarModel = tableFromIPC(await mem.get(sidecars[0].key)).schema.metadata.get(SIDECAR_MODEL_KEY);
  t.truthy(sidecarModel);
  t.not(sidecarModel, defB.model, 'the sidecar names A\'s model, not the one the table now uses');

  const search = async (q: Float32Array, db: Awaited<ReturnType<typeof connect>>) =>
    [...(await (await db.openTable('vecs')).search({ vector: { column: 'vec', query: q }, k: 10, nprobes: 3, refine: 0, columns: ['id'] })).getChild('id')!].map(Number);
  // A fresh reader loads the generation with the sidecar present...
  const dbC = await connect('memory://', { store: mem });
  const withSidecar = [];
  for (const q of queries(24)) withSidecar.push(await search(q, dbC));
  // ...and must answer exactly as a reader that has no sidecar and builds the index from rows
  // with the table's model.
  await mem.delete(sidecars[0].key);
  const dbD = await connect('memory://', { store: mem });
  const rebuilt = [];
  for (const q of queries(24)) rebuilt.push(await search(q, dbD));
  t.deepEqual(withSidecar, rebuilt);
  for (const db of [dbA, dbB, dbC, dbD]) await db.close().catch(() => {});
});
