/**
 * A WAL entry indexed in slices sends its IVF-PQ codes to the encode worker first, whole
 * (`SourceIndexes.queueCodesAhead`), and the slices then index everything else (issue 7). Whatever
 * the worker does — answers in any order, fails a job, is not ready — and wherever a synchronous
 * `indexUpTo` / `markVisible` cuts in, every row enters the IVF-PQ index exactly once, in position
 * order: the index ends byte-identical to one built by `add` in order. Checked by seeded schedules
 * against that model.
 */
import test from 'ava';
import { makeVector, Table, tableToIPC, Utf8, vectorFromArray } from 'apache-arrow';
import type { InvertedIndex } from '../../src/index/fts/inverted-index.js';
import { SourceIndexes } from '../../src/index/source-indexes.js';
import type { OffThreadEncode } from '../../src/index/vector/code-queue.js';
import { type EncodedRows, IvfPqEncoder } from '../../src/index/vector/ivf-pq-encoder.js';
import { IvfPqIndex } from '../../src/index/vector/ivf-pq-index.js';
import { trainIvfPq } from '../../src/index/vector/ivf-pq-model.js';
import { Rng } from '../../src/index/vector/kmeans.js';
import { VectorSource } from '../../src/index/vector/vector-source.js';
import { MemTable } from '../../src/memtable/memtable.js';
import { TableSchema } from '../../src/schema/table-schema.js';
import { DIM, docsSchema, vectors } from '../helpers/data.js';

const schema = new TableSchema(docsSchema, ['id']);
const training = vectors(4000, DIM, 7);
const model = trainIvfPq(VectorSource.fromArrow(new Table({ vec: training }).batches, 0), { metric: 'l2', partitions: 8, subVectors: 2, seed: 5 });
const IVF = { name: 'vec_ivf', column: 'vec', type: 'ivf_pq' as const, model: 'm' };

/** One batch of `n` rows from id `first`, vectors of their own (`seed`). */
function batchOf(first: number, n: number, seed: number) {
  const ids = Array.from({ length: n }, (_, i) => first + i);
  const table = new Table({
    id: makeVector(BigInt64Array.from(ids.map(BigInt))),
    version: makeVector(BigInt64Array.from(ids.map(() => 1n))),
    text: vectorFromArray(ids.map((i) => `row ${i} word${i % 17}`), new Utf8()),
    vec: vectors(n, DIM, seed),
  });
  return schema.normalize(table);
}

/** An encode worker the schedule answers at will: in any order, sometimes failing, sometimes not ready. */
class HeldEncoder {
  readonly held: { settle: (ok: boolean) => void }[] = [];
  readonly sizes: number[] = [];
  refuse = 0;
  constructor(private readonly rng: Rng) {}
  readonly encode: OffThreadEncode = (m, chunk) => {
    if (this.rng.next() < this.refuse) return undefined;
    this.sizes.push(chunk.count);
    const copy = { ...chunk, data: chunk.data.slice() };
    return new Promise<EncodedRows>((resolve, reject) => {
      this.held.push({ settle: (ok) => (ok ? resolve(IvfPqEncoder.of(m).encode(copy)) : reject(new Error('worker died'))) });
    });
  };
  releaseSome(): void {
    for (let n = this.rng.int(3); n > 0 && this.held.length > 0; n--) {
      const [job] = this.held.splice(this.rng.int(this.held.length), 1);
      job!.settle(this.rng.next() >= 0.1);
    }
  }
}

const turn = () => new Promise<void>((r) => setImmediate(r));

function indexedMemTable() {
  const indexes = new SourceIndexes(schema);
  indexes.addIndex(IVF, () => model, []);
  indexes.addIndex({ name: 'text_fts', column: 'text', type: 'fts', stem: false }, () => undefined, []);
  return { mt: new MemTable(1, 0, indexes), indexes };
}

test('seeded schedules: codes sent ahead of the slices enter the index once each, in position order', async (t) => {
  for (let seed = 1; seed <= 12; seed++) {
    const rng = new Rng(seed);
    const enc = new HeldEncoder(rng);
    enc.refuse = [0, 0.2, 1][seed % 3]!;
    const { mt, indexes } = indexedMemTable();
    const reference = new IvfPqIndex(model);
    let rows = 0;
    let batchSeed = 100 * seed;
    const slicings: Promise<void>[] = [];
    for (let entry = 0; entry < 8; entry++) {
      // An entry of 1–3 batches, from a few rows (below the off-thread minimum) to several slices.
      const nb = 1 + rng.int(3);
      for (let b = 0; b < nb; b++) {
        const n = 1 + rng.int(rng.next() < 0.3 ? 40 : 900);
        const batch = batchOf(rows, n, ++batchSeed);
        for (const c of VectorSource.fromArrow(batch, 3, rows).chunks) reference.add(c);
        mt.append(batch);
        rows += n;
      }
      const end = mt.batchCount;
      const r = rng.next();
      if (r < 0.7) slicings.push(mt.indexInSlices(end, enc.encode, [64, 128, 300][rng.int(3)]!));
      else mt.indexUpTo(end, enc.encode);
      for (let k = rng.int(4); k > 0; k--) {
        enc.releaseSome();
        await turn();
      }
      if (rng.next() < 0.15) mt.markVisible(mt.batchCount); // finishes indexing and codes here, now
    }
    while (enc.held.length > 0) {
      enc.releaseSome();
      await turn();
    }
    await Promise.all(slicings);
    mt.markVisible(mt.batchCount);
    const ivf = indexes.index<IvfPqIndex>('vec_ivf')!;
    t.deepEqual(tableToIPC(ivf.toArrow()), tableToIPC(reference.toArrow()), `seed ${seed}: the IVF-PQ index equals one built in order`);
    t.is(indexes.index<InvertedIndex>('text_fts')!.endPosition, rows, `seed ${seed}: every row is in the full-text index`);
    t.is(indexes.rowCount, rows);
  }
});

test("an entry's vectors go to the encode worker in one piece, before its slices, when it takes them", async (t) => {
  const enc = new HeldEncoder(new Rng(3));
  const { mt } = indexedMemTable();
  mt.append(batchOf(0, 1000, 1));
  mt.append(batchOf(1000, 700, 2));
  const done = mt.indexInSlices(mt.batchCount, enc.encode, 128);
  await turn();
  t.deepEqual(enc.sizes, [1000, 700], 'both batches were sent whole at the first slice');
  while (enc.held.length > 0 || mt.indexed < mt.batchCount) {
    enc.releaseSome();
    await turn();
  }
  await done;
  t.deepEqual(enc.sizes, [1000, 700], 'and nothing was sent again by the slices');

  // Not ready (refused): nothing goes ahead, the slices encode their own rows (here, in turn).
  const refusing = new HeldEncoder(new Rng(4));
  refusing.refuse = 1;
  const second = indexedMemTable();
  second.mt.append(batchOf(0, 1000, 1));
  await second.mt.indexInSlices(1, refusing.encode, 128);
  second.mt.markVisible(1);
  t.is(second.indexes.index<IvfPqIndex>('vec_ivf')!.toArrow().numRows, 1000);
});
