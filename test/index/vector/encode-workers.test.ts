/**
 * Several encode workers (issue 7): a chunk split over the idle workers is answered as one,
 * equal to encoding it whole on this thread (nulls, non-finite rows and a validity bitmap that
 * does not start at bit 0 included); a chunk that finds the workers busy goes whole to one.
 * The worker count is set before the module is loaded (it is read once, at import).
 */
import test from 'ava';
import type { VectorChunk } from '../../../src/index/vector/vector-source.js';
import { IvfPqEncoder } from '../../../src/index/vector/ivf-pq-encoder.js';
import { trainIvfPq } from '../../../src/index/vector/ivf-pq-model.js';
import { VectorSource } from '../../../src/index/vector/vector-source.js';
import { Rng } from '../../../src/index/vector/kmeans.js';
import { clusteredVectors } from './fixtures.js';

process.env.QUIVER_ENCODE_WORKERS = '2';
const { encodeOffThread, encodeWorkerCount, encodeWorkerReady, encodeWorkerStats, setEncodeWorkerEnabled } = await import('../../../src/index/vector/encode-worker.js');

const DIM = 16;
const data = clusteredVectors({ n: 6000, dim: DIM, clusters: 12, seed: 43 });
const model = trainIvfPq(new VectorSource(DIM, [{ start: 0, count: 6000, data, validity: null, bitOffset: 0 }]), { metric: 'l2', partitions: 16, subVectors: 4, seed: 5 });

/** Rows [start, start + count), with every seventh row null and a few rows holding NaN (left out and counted). */
function holeyChunk(start: number, count: number, rng: Rng): VectorChunk {
  const bitOffset = 5;
  const validity = new Uint8Array(Math.ceil((count + bitOffset) / 8)).fill(0xff);
  for (let i = 0; i < count; i += 7) validity[(bitOffset + i) >> 3]! &= ~(1 << ((bitOffset + i) & 7));
  const rows = data.slice(start * DIM, (start + count) * DIM);
  for (let k = 0; k < 5; k++) rows[Math.floor(rng.next() * count) * DIM + 3] = NaN;
  return { start, count, data: rows, validity, bitOffset };
}

test.serial('a chunk is split over the idle workers and answered as the whole chunk encoded here', async (t) => {
  t.is(encodeWorkerCount(), 2);
  t.true(await encodeWorkerReady(), 'the workers start');
  const rng = new Rng(9);
  for (const count of [1000, 257, 4999]) {
    const chunk = holeyChunk(100, count, rng);
    const requests0 = encodeWorkerStats.requests;
    const jobs0 = encodeWorkerStats.jobs;
    const away = encodeOffThread(model, chunk);
    if (away === undefined) return t.fail('the workers refused a job');
    const here = IvfPqEncoder.of(model).encode(chunk);
    t.true(here.skipped > 0, 'the chunk has rows left out');
    t.deepEqual(await away, here, `${count} rows`);
    t.is(encodeWorkerStats.jobs - jobs0, 1, 'one job');
    t.is(encodeWorkerStats.requests - requests0, 2, 'in two parts');
  }
});

test.serial('a chunk too small to split, or one that finds the workers busy, goes whole to one worker', async (t) => {
  t.true(await encodeWorkerReady());
  const rng = new Rng(11);
  const small = holeyChunk(0, 255, rng);
  const requests0 = encodeWorkerStats.requests;
  t.deepEqual(await encodeOffThread(model, small), IvfPqEncoder.of(model).encode(small));
  t.is(encodeWorkerStats.requests - requests0, 1, 'a 255-row chunk is not split in parts under 128 rows');
  // Three chunks at once: the first finds both workers idle (two parts), the others do not.
  const chunks = [holeyChunk(0, 2000, rng), holeyChunk(2000, 2000, rng), holeyChunk(4000, 2000, rng)];
  const requests1 = encodeWorkerStats.requests;
  const answers = chunks.map((c) => encodeOffThread(model, c));
  t.is(encodeWorkerStats.requests - requests1, 4);
  for (const [i, c] of chunks.entries()) t.deepEqual(await answers[i], IvfPqEncoder.of(model).encode(c), `chunk ${i}`);
});

test.serial('a split job whose worker goes away rejects (the caller encodes the chunk itself)', async (t) => {
  t.true(await encodeWorkerReady());
  const chunk = holeyChunk(0, 4000, new Rng(13));
  const away = encodeOffThread(model, chunk);
  if (away === undefined) return t.fail('the workers refused a job');
  setEncodeWorkerEnabled(false);
  await t.throwsAsync(away);
  setEncodeWorkerEnabled(true);
  t.true(await encodeWorkerReady(), 'switched on again, the workers start again');
  const requests0 = encodeWorkerStats.requests;
  t.deepEqual(await encodeOffThread(model, chunk), IvfPqEncoder.of(model).encode(chunk), 'and encode as before');
  t.is(encodeWorkerStats.requests - requests0, 2, 'split again: the failed jobs left no rows counted as out');
});
