/**
 * IVF-PQ codes computed off the calling thread (issue 7): whatever order the encode worker's
 * answers arrive in, whichever jobs fail or are refused, and wherever the caller forces the
 * queue to finish, the index ends up byte-identical to one built by `add` in insertion order,
 * every `whenApplied` callback runs exactly once, in submission order, when exactly the rows submitted
 * before it are indexed — checked by seeded schedules against that model, plus the real worker.
 */
import test from 'ava';
import { runChildToExit } from '../../helpers/child-exit.js';
import { tableToIPC } from 'apache-arrow';
import { CodeQueue, MIN_OFF_THREAD_ROWS, type OffThreadEncode } from '../../../src/index/vector/code-queue.js';
import { encodeOffThread, encodeWorkerReady, encodeWorkerStats } from '../../../src/index/vector/encode-worker.js';
import { type EncodedRows, IvfPqEncoder } from '../../../src/index/vector/ivf-pq-encoder.js';
import { IvfPqIndex } from '../../../src/index/vector/ivf-pq-index.js';
import { trainIvfPq } from '../../../src/index/vector/ivf-pq-model.js';
import { Rng } from '../../../src/index/vector/kmeans.js';
import { type VectorChunk, VectorSource } from '../../../src/index/vector/vector-source.js';
import { clusteredVectors } from './fixtures.js';

const DIM = 16;
const data = clusteredVectors({ n: 6000, dim: DIM, clusters: 12, seed: 41 });
const model = trainIvfPq(new VectorSource(DIM, [chunkAt(0, 6000)]), { metric: 'l2', partitions: 16, subVectors: 4, seed: 3 });

function chunkAt(start: number, count: number): VectorChunk {
  return { start, count, data: data.subarray(start * DIM, (start + count) * DIM), validity: null, bitOffset: 0 };
}

/** An off-thread encoder whose answers the schedule releases (or fails, or refuses) at will. */
class HeldEncoder {
  readonly held: { settle: (ok: boolean) => void }[] = [];
  refused = 0;
  failed = 0;
  constructor(private readonly rng: Rng) {}
  readonly encode: OffThreadEncode = (m, chunk) => {
    if (this.rng.next() < 0.1) {
      this.refused++;
      return undefined; // no worker ready: the queue encodes it itself
    }
    // The worker sees a copy: the caller may not rely on the chunk staying as it was.
    const copy = { ...chunk, data: chunk.data.slice() };
    return new Promise<EncodedRows>((resolve, reject) => {
      this.held.push({ settle: (ok) => (ok ? resolve(IvfPqEncoder.of(m).encode(copy)) : reject(new Error('worker died'))) });
    });
  };
  /** Settles one held job at random (a failure one time in eight). */
  releaseOne(): void {
    const i = this.rng.int(this.held.length);
    const [job] = this.held.splice(i, 1);
    const ok = this.rng.next() >= 0.125;
    if (!ok) this.failed++;
    job.settle(ok);
  }
}

const flushMicrotasks = () => new Promise<void>((r) => setImmediate(r));

test('seeded schedules: codes applied in insertion order whatever order the worker answers in', async (t) => {
  const reference = new IvfPqIndex(model);
  for (let start = 0; start < data.length / DIM; start += 500) reference.add(chunkAt(start, Math.min(500, 6000 - start)));
  const expected = tableToIPC(reference.toArrow());

  let schedules = 0;
  const seen = { refused: 0, failed: 0, finished: 0 };
  for (let seed = 1; seed <= 60; seed++) {
    const rng = new Rng(seed);
    const enc = new HeldEncoder(rng);
    const index = new IvfPqIndex(model);
    const queue = new CodeQueue();
    const fired: number[] = [];
    let thenCount = 0;
    let pos = 0;
    while (pos < 6000) {
      const step = rng.next();
      if (step < 0.5) {
        // Chunks of 1..300 rows: those below MIN_OFF_THREAD_ROWS are never sent away.
        const count = Math.min(6000 - pos, 1 + rng.int(300));
        queue.add(index, chunkAt(pos, count), enc.encode);
        pos += count;
      } else if (step < 0.7) {
        const id = thenCount++;
        const submitted = pos;
        queue.whenApplied(() => {
          fired.push(id);
          t.is(index.rowCount, submitted, `seed ${seed}: then #${id} ran with exactly the rows submitted before it indexed`);
        });
      } else if (step < 0.95 && enc.held.length > 0) {
        enc.releaseOne();
        await flushMicrotasks();
      } else if (step >= 0.97) {
        seen.finished++;
        queue.finishNow(); // a caller that needs every row indexed now (markVisible)
        t.true(queue.idle);
        t.is(index.rowCount, pos, `seed ${seed}: finishNow applied everything`);
      }
    }
    const last = thenCount++;
    queue.whenApplied(() => fired.push(last));
    while (enc.held.length > 0) {
      enc.releaseOne();
      await flushMicrotasks();
    }
    await flushMicrotasks();
    t.true(queue.idle, `seed ${seed}: idle once every answer is in`);
    t.deepEqual(fired, Array.from({ length: thenCount }, (_, i) => i), `seed ${seed}: each then ran once, in order`);
    t.deepEqual(tableToIPC(index.toArrow()), expected, `seed ${seed}: index identical to add() in order`);
    schedules++;
    seen.refused += enc.refused;
    seen.failed += enc.failed;
  }
  t.is(schedules, 60);
  // The schedules did reach every path: refused jobs, failed jobs, forced finishes.
  t.true(seen.refused > 0 && seen.failed > 0 && seen.finished > 0, JSON.stringify(seen));
});

test('small chunks are encoded here and wait behind codes that are away', async (t) => {
  const index = new IvfPqIndex(model);
  const queue = new CodeQueue();
  let release: (() => void) | undefined;
  let sent = 0;
  const away: OffThreadEncode = (m, chunk) => {
    sent++;
    return new Promise((resolve) => (release = () => resolve(IvfPqEncoder.of(m).encode(chunk))));
  };
  queue.add(index, chunkAt(0, MIN_OFF_THREAD_ROWS), away);
  queue.add(index, chunkAt(MIN_OFF_THREAD_ROWS, 5), away);
  t.is(sent, 1, 'the 5-row chunk is not sent away');
  t.is(index.rowCount, 0, 'nor applied ahead of the chunk before it');
  t.false(queue.idle);
  release!();
  await flushMicrotasks();
  t.is(index.rowCount, MIN_OFF_THREAD_ROWS + 5);
  t.true(queue.idle);
});

test('answers that arrive together are applied a few milliseconds a turn, in order, callbacks in turn', async (t) => {
  // A clock that moves 1 ms per job applied: a drain takes about four a turn, then yields.
  let now = 0;
  const queue = new CodeQueue(() => now);
  const applied: number[] = [];
  const callbacks: number[] = [];
  const settle: (() => void)[] = [];
  for (let j = 0; j < 20; j++) {
    queue.addJob(new Promise<number>((resolve) => settle.push(() => resolve(j))), (r) => {
      now += 1;
      applied.push(r ?? -1);
    });
    if (j % 5 === 4) queue.whenApplied(() => callbacks.push(j));
  }
  for (const s of settle) s(); // every answer in at once
  await Promise.resolve();
  await Promise.resolve();
  await Promise.resolve();
  t.true(applied.length > 0 && applied.length <= 5, `one turn applied ${applied.length}`);
  t.false(queue.idle);
  let turns = 0;
  while (!queue.idle) {
    await flushMicrotasks();
    turns++;
  }
  t.deepEqual(applied, Array.from({ length: 20 }, (_, j) => j), 'every job once, in order');
  t.deepEqual(callbacks, [4, 9, 14, 19], 'each callback after the jobs before it');
  t.true(turns >= 3, `over several turns (${turns})`);
  // A job done a piece at a time (returning false while there is more) stays at the head: the
  // job behind it waits, whatever the turns.
  const order: string[] = [];
  let pieces = 0;
  queue.addJob(Promise.resolve(1), () => {
    now += 2;
    order.push(`piece ${++pieces}`);
    return pieces === 6;
  });
  queue.addJob(Promise.resolve(2), () => void order.push('next'));
  queue.whenApplied(() => order.push('after'));
  while (!queue.idle) await flushMicrotasks();
  t.deepEqual(order, ['piece 1', 'piece 2', 'piece 3', 'piece 4', 'piece 5', 'piece 6', 'next', 'after']);
  // finishNow still applies everything at once.
  const q2 = new CodeQueue(() => now);
  const out: number[] = [];
  const later: (() => void)[] = [];
  for (let j = 0; j < 10; j++) q2.addJob(new Promise<void>((r) => later.push(r)), () => void ((now += 1), out.push(100 + j)));
  q2.finishNow();
  t.is(out.filter((v) => v >= 100).length, 10);
  t.true(q2.idle);
  for (const r of later) r();
  await flushMicrotasks();
  t.is(out.filter((v) => v >= 100).length, 10, 'late answers are not applied again');
});

test('the encode worker returns the codes this thread computes, bit for bit', async (t) => {
  t.true(await encodeWorkerReady(), 'a worker thread starts');
  const jobs0 = encodeWorkerStats.jobs;
  const here = new IvfPqIndex(model);
  const there = new IvfPqIndex(model);
  const queue = new CodeQueue();
  for (let start = 0; start < 6000; start += 1000) {
    here.add(chunkAt(start, 1000));
    queue.add(there, chunkAt(start, 1000), encodeOffThread);
  }
  t.is(encodeWorkerStats.jobs - jobs0, 6, 'every chunk went to the worker');
  await new Promise<void>((resolve) => queue.whenApplied(resolve));
  t.deepEqual(tableToIPC(there.toArrow()), tableToIPC(here.toArrow()));
});

test.serial('jobs carry their vectors in buffers that come back and are reused, and a reused buffer holds only its own job’s vectors', async (t) => {
  t.true(await encodeWorkerReady(), 'a worker thread starts');
  const requests0 = encodeWorkerStats.requests;
  const back0 = encodeWorkerStats.buffersBack;
  const shared0 = encodeWorkerStats.sharedBack;
  const reused0 = encodeWorkerStats.buffersReused;
  // Large chunks first, then smaller ones into the same (larger) buffers: a reused buffer's
  // stale tail must never be read as vectors.
  // (Parts of a chunk split over workers stay over the pool's 64 KiB minimum: 1 024 rows of 16 floats.)
  const sizes = [5000, 2200, 5000, 2100, 4000, 2300];
  for (const [i, count] of sizes.entries()) {
    const chunk = chunkAt(i * 150, count);
    const pending = encodeOffThread(model, chunk);
    if (pending === undefined) return t.fail('the worker refused a job');
    t.deepEqual(await pending, IvfPqEncoder.of(model).encode(chunk), `chunk of ${count} rows`);
  }
  // A chunk may go to several workers in parts (encode-workers.test.ts): a request each.
  const requests = encodeWorkerStats.requests - requests0;
  t.true(requests >= sizes.length);
  t.is(encodeWorkerStats.buffersBack - back0, requests, 'every request handed its buffer back');
  t.is(encodeWorkerStats.sharedBack - shared0, requests, 'as shared memory (no transfer for the collector to count)');
  t.true(encodeWorkerStats.buffersReused - reused0 >= requests - 2, 'every request after the first (per worker) took a buffer that came back');
});

for (const [mode, expected] of [
  ['start', /refused while starting: true/],
  ['ready', /ready: true/],
  ['job', /indexed 3000 rows, 1 job\(s\) on the worker/],
] as const) {
  test(`a process whose encode worker is idle exits on its own (${mode})`, async (t) => {
    const { code, out } = await runChildToExit(new URL('encode-worker-child.ts', import.meta.url), mode);
    t.is(code, 0, 'exited by itself');
    t.regex(out, expected);
  });
}
