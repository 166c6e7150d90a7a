/**
 * IVF-PQ codes of written rows computed on the encode worker (issue 7) keep the write path's
 * promise: a put resolves only when its rows are durable *and* in every index, so a search that
 * starts after the ack finds them through the IVF-PQ index; several puts in flight, the worker
 * switched off and on mid-stream (its jobs then fail and are encoded here), a flush and a reopen
 * lose nothing and change no answer.
 */
import test from 'ava';
import { Field, FixedSizeList, Float32, Int32, makeData, makeVector, Schema, Table } from 'apache-arrow';
import { connect, MemoryObjectStore } from '../../src/quiver.js';
import { encodeWorkerReady, encodeWorkerStats, setEncodeWorkerEnabled } from '../../src/index/vector/encode-worker.js';
import { ivfPqSearchStats } from '../../src/index/vector/ivf-pq-index.js';
import { Rng } from '../../src/index/vector/kmeans.js';
import { clusteredVectors } from '../index/vector/fixtures.js';

const DIM = 16;
const ROWS = 8000;
const schema = new Schema([new Field('id', new Int32(), false), new Field('vec', new FixedSizeList(DIM, new Field('item', new Float32(), false)), true)]);
const data = clusteredVectors({ n: ROWS, dim: DIM, clusters: 20, seed: 77 });

function rows(from: number, to: number): Table {
  const n = to - from;
  const vec = makeData({ type: schema.fields[1].type, length: n, nullCount: 0, child: makeData({ type: new Float32(), length: n * DIM, data: data.slice(from * DIM, to * DIM) }) });
  return new Table({ id: makeVector(Int32Array.from({ length: n }, (_, i) => from + i)), vec: makeVector(vec) });
}

async function nearestId(table: Awaited<ReturnType<Awaited<ReturnType<typeof connect>>['createTable']>>, row: number): Promise<number> {
  const hits = await table.search({ vector: { column: 'vec', query: data.slice(row * DIM, (row + 1) * DIM) }, k: 1 });
  return hits.getChild('id')!.get(0) as number;
}

test('rows are searchable through the index the moment their put resolves; flush and reopen keep them', async (t) => {
  t.true(await encodeWorkerReady(), 'a worker thread starts');
  const store = new MemoryObjectStore();
  const db = await connect('memory://', { store });
  const table = await db.createTable('v', schema, { primaryKey: 'id' });
  await table.put(rows(0, 3000));
  await table.createIndex('vec', { type: 'ivf_pq' }); // trained on 3 000 rows
  t.truthy(table.indexes[0].model);

  const rng = new Rng(5);
  const rows0 = encodeWorkerStats.rows;
  const started0 = encodeWorkerStats.workersStarted;
  const searches0 = ivfPqSearchStats.searches;
  const inFlight = new Set<Promise<void>>();
  let checked = 0;
  let disables = 0;
  let puts = 0;
  for (let start = 3000; start < ROWS; ) {
    const end = Math.min(ROWS, start + 64 + rng.int(400));
    const from = start;
    const put: Promise<void> = table.put(rows(from, end)).then(async () => {
      inFlight.delete(put);
      // Acknowledged: the put's rows are found by an indexed search started now.
      const probe = from + rng.int(end - from);
      t.is(await nearestId(table, probe), probe, `row ${probe} found right after its ack`);
      checked++;
    });
    inFlight.add(put);
    const n = puts++ % 6;
    if (n === 2) {
      setEncodeWorkerEnabled(false); // the jobs out there fail and are encoded here
      disables++;
    } else if (n === 4) {
      setEncodeWorkerEnabled(true);
      if (rng.next() < 0.5) await encodeWorkerReady(); // else the next puts encode here meanwhile
    }
    if (inFlight.size >= 1 + rng.int(6)) await Promise.race(inFlight);
    start = end;
  }
  await Promise.all(inFlight);
  setEncodeWorkerEnabled(true);
  t.true(encodeWorkerStats.rows > rows0, 'some codes were computed on the worker');
  t.true(disables > 1, 'the schedule switched the worker off');
  t.true(encodeWorkerStats.workersStarted - started0 >= 1, 'switching it back on starts a new worker');
  t.is(encodeWorkerStats.workersFailed, 0, 'a worker stopped on purpose is no failure');
  t.true(ivfPqSearchStats.searches - searches0 >= checked, 'the searches ran through the IVF-PQ index');

  const probes = Array.from({ length: 40 }, () => 3000 + rng.int(ROWS - 3000));
  const before = await Promise.all(probes.map((r) => nearestId(table, r)));
  t.deepEqual(before, probes);
  await table.flush();
  await db.close();

  const db2 = await connect('memory://', { store });
  const reopened = await db2.openTable('v');
  const after = await Promise.all(probes.map((r) => nearestId(reopened, r)));
  t.deepEqual(after, probes, 'the flushed generation holds every row, indexed');
  let count = 0;
  for await (const b of reopened.scan()) count += b.numRows;
  t.is(count, ROWS);
  await db2.close();
});
