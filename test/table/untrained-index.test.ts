/**
 * An IVF-PQ index whose model is not trained yet (fewer than 2 048 vectors) cannot be built for a
 * generation, so searches must not go looking for its sidecar in every cached generation.
 */
import test from 'ava';
import { connect, FaultInjectingObjectStore, MemoryObjectStore } from '../../src/quiver.js';
import { docs, docsSchema, range } from '../helpers/data.js';

test('searches over cached generations do not fetch sidecars of an untrained IVF-PQ index', async (t) => {
  const store = new FaultInjectingObjectStore(new MemoryObjectStore());
  const db = await connect('memory://', { store, writer: { maxWalFlushIntervalMs: 0 } });
  const table = await db.createTable('docs', docsSchema, { primaryKey: 'id' });
  await table.createIndex('vec', { type: 'ivf_pq' }); // too few rows: not trained
  t.falsy(table.indexes[0].model);
  for (let g = 0; g < 3; g++) {
    await table.put(docs(range(g * 100, g * 100 + 100), 1));
    await table.flush();
  }
  const query = new Float32Array([1, 0, 0, 0]);
  await table.search({ vector: { column: 'vec', query }, k: 5 }); // loads the generations
  const sidecarGets = () => store.calls.filter((c) => c.op === 'get' && c.key.endsWith('index_vec_ivf_pq.arrow')).length;
  const before = sidecarGets();
  for (let i = 0; i < 5; i++) {
    const hits = await table.search({ vector: { column: 'vec', query }, k: 5 });
    t.is(hits.numRows, 5); // exact search still answers
  }
  t.is(sidecarGets() - before, 0);
  await db.close();
});

test('vector searches on a table too small to train do not rescan it each time; enough new rows do train', async (t) => {
  const db = await connect('memory://', { store: new MemoryObjectStore(), writer: { maxWalFlushIntervalMs: 0 } });
  const table = await db.createTable('docs', docsSchema, { primaryKey: 'id' });
  await table.put(docs(range(0, 500), 1));
  await table.createIndex('vec', { type: 'ivf_pq' });
  let scans = 0;
  const scan = table.scan.bind(table);
  table.scan = (...args: Parameters<typeof table.scan>) => {
    scans++;
    return scan(...args);
  };
  const query = new Float32Array([1, 0, 0, 0]);
  for (let i = 0; i < 10; i++) await table.search({ vector: { column: 'vec', query }, k: 5 });
  t.is(scans, 0, 'no training rescan while too few rows were written since the last attempt');
  await table.put(docs(range(500, 2600), 1));
  await table.search({ vector: { column: 'vec', query }, k: 5 });
  t.is(scans, 1, 'enough new rows: one training attempt');
  t.truthy(table.indexes[0].model, 'and a model');
  await db.close();
});
