/**
 * Dev micro-benchmark (issue 7): the main thread's share of a MemTable's full-text index on the
 * write path, without a worker or a WAL — rows tokenized first (as the tokenize worker does, with
 * its own lexicon), then `addTokenized` in PUT-row jobs (128-row pieces, a segment per job, as
 * source-indexes.ts does), then `sealSteps` and `toArrowSteps` (what a flush does with it).
 * Knobs: N=100000 PUT=1000 REPS=5.
 */
import { Utf8, vectorFromArray } from 'apache-arrow';
import { InvertedIndex } from '../src/index/fts/inverted-index.js';
import { LexiconMirror, tokenizeRows, utf8Rows, type TokenCursor } from '../src/index/fts/row-tokens.js';
import { SharedLexicon } from '../src/index/fts/shared-lexicon.js';
import { resolveTokenizerOptions } from '../src/index/fts/tokenizer.js';
import { runSteps } from '../src/util/steps.js';
import { envNumber } from './env.js';
import { Rng, ZipfVocabulary } from './search-data.js';

const N = envNumber('N', 100_000);
const PUT = envNumber('PUT', 1000);
const REPS = envNumber('REPS', 5);
const vocab = new ZipfVocabulary(50_000, 1.0, 11);
const rng = new Rng(5);
// The rows bench:search writes: 8–40 words of a 50 000-word Zipf vocabulary.
const texts = Array.from({ length: N }, () => vocab.document(rng, 8, 40));
const options = resolveTokenizerOptions({});
// The worker's lexicon: one for the whole run (it outlives MemTables), like the worker's.
const workerLexicon = new SharedLexicon(options);
const mirror = new LexiconMirror();
const jobs = [];
for (let s = 0; s < N; s += PUT) {
  const data = vectorFromArray(texts.slice(s, s + PUT), new Utf8()).data[0]!;
  const rows = tokenizeRows(utf8Rows(data, true), options, 1, workerLexicon);
  mirror.feed(rows);
  jobs.push({ first: s, rows, n: data.length });
}
let tokens = 0;
for (const j of jobs) tokens += j.rows.tokTerm.length;
console.log(`${N} rows, ${(tokens / N).toFixed(1)} tokens a row, ${workerLexicon.termsFrom(0).length} terms`);
for (let rep = 0; rep < REPS; rep++) {
  const index = new InvertedIndex();
  const t0 = performance.now();
  for (const j of jobs) {
    const cursor: TokenCursor = { row: 0, token: 0 };
    while (cursor.row < j.n) {
      const end = Math.min(j.n, cursor.row + 128);
      index.addTokenized(j.first, j.rows, mirror, end < j.n, cursor, end);
    }
  }
  const t1 = performance.now();
  const sealed = runSteps(index.sealSteps());
  const t2 = performance.now();
  runSteps(sealed.toArrowSteps());
  const t3 = performance.now();
  const us = (ms: number) => ((ms * 1000) / N).toFixed(2);
  console.log(`rep ${rep}: addTokenized ${us(t1 - t0)} µs/row, sealSteps ${us(t2 - t1)}, toArrowSteps ${us(t3 - t2)}`);
}
