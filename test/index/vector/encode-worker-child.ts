/**
 * Child process of code-queue.test.ts; the process must exit on its own afterwards (an idle
 * worker never holds it). Mode `start`: the first off-thread call starts the worker (and is
 * refused: not ready yet), then nothing more. Mode `ready`: waits until the worker is ready, then
 * nothing more. Mode `job`: waits until it is ready, then encodes one chunk on it.
 */
import { CodeQueue } from '../../../src/index/vector/code-queue.js';
import { encodeOffThread, encodeWorkerReady, encodeWorkerStats } from '../../../src/index/vector/encode-worker.js';
import { IvfPqIndex } from '../../../src/index/vector/ivf-pq-index.js';
import { trainIvfPq } from '../../../src/index/vector/ivf-pq-model.js';
import { VectorSource } from '../../../src/index/vector/vector-source.js';
import { clusteredVectors } from './fixtures.js';

const data = clusteredVectors({ n: 3000, dim: 8, clusters: 6, seed: 2 });
const chunk = { start: 0, count: 3000, data, validity: null, bitOffset: 0 };
const index = new IvfPqIndex(trainIvfPq(new VectorSource(8, [chunk]), { metric: 'l2', partitions: 8, subVectors: 2, seed: 1 }));
if (process.argv[2] === 'start') {
  console.log(`refused while starting: ${encodeOffThread(index.model, chunk) === undefined}`);
} else if (process.argv[2] === 'ready') {
  console.log(`ready: ${await encodeWorkerReady()}`);
} else {
  if (!(await encodeWorkerReady())) throw new Error('no encode worker');
  const queue = new CodeQueue();
  queue.add(index, chunk, encodeOffThread);
  await new Promise<void>((resolve) => queue.whenApplied(resolve));
  console.log(`indexed ${index.rowCount} rows, ${encodeWorkerStats.jobs} job(s) on the worker`);
}
