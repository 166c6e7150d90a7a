/**
 * Child process of row-tokens.test.ts; the process must exit on its own afterwards (an idle
 * tokenize worker never holds it). Mode `start`: the first off-thread call starts the worker (and
 * is refused: not ready yet), then nothing more. Mode `job`: waits until it is ready, then
 * tokenizes one chunk there and indexes it.
 */
import { Utf8, vectorFromArray } from 'apache-arrow';
import { InvertedIndex } from '../../../src/index/fts/inverted-index.js';
import { tokenizeOffThread, tokenizeWorkerReady, tokenizeWorkerStats } from '../../../src/index/fts/tokenize-worker.js';

const data = vectorFromArray(['the quick brown fox', 'jumps over', null, 'lazy dogs'], new Utf8()).data[0]!;
if (process.argv[2] === 'start') {
  console.log(`refused while starting: ${tokenizeOffThread({}, data) === undefined}`);
} else {
  if (!(await tokenizeWorkerReady())) throw new Error('no tokenize worker');
  const t = await tokenizeOffThread({}, data)!;
  const index = new InvertedIndex();
  index.addTokenized(0, t.rows, t.mirror);
  console.log(`indexed ${index.documentCount} documents, ${tokenizeWorkerStats.jobs} job(s) on the worker`);
}
