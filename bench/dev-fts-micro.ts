// Dev micro-benchmark: one InvertedIndex of N Zipf documents, single- and multi-word top-10 queries.
import { InvertedIndex, ftsSearchWork } from '../src/index/fts/inverted-index.js';
import { parseFtsQuery } from '../src/index/fts/query.js';
import { Rng, ZipfVocabulary } from './search-data.js';
const N = Number(process.env.N ?? 100_000);
const vocab = new ZipfVocabulary(50_000, 1.0, 11);
const rng = new Rng(5);
const texts: string[] = [];
for (let i = 0; i < N; i++) {
  const n = 8 + rng.int(33);
  const w: string[] = [];
  for (let j = 0; j < n; j++) w.push(vocab.sample(rng));
  texts.push(w.join(' '));
}
const index = new InvertedIndex();
index.add(0, texts);
const qs = (process.env.QS ?? 'mido|dokagu|mido dokagu|sazesa dosa').split('|');
for (const q of qs) {
  const query = parseFtsQuery(q, index.options);
  for (let i = 0; i < 50; i++) index.search(query, { k: 10 });
  Object.assign(ftsSearchWork, { prunedScored: 0, prunedSkipped: 0 });
  const R = 200;
  const t = performance.now();
  for (let i = 0; i < R; i++) index.search(query, { k: 10 });
  const ms = (performance.now() - t) / R;
  console.log(`${q}: ${(ms * 1000).toFixed(1)} µs/query, scored ${ftsSearchWork.prunedScored / R}, skipped ${ftsSearchWork.prunedSkipped / R}`);
}
{
  const { Session } = await import('node:inspector/promises');
  const { writeFile } = await import('node:fs/promises');
  const s = new Session();
  s.connect();
  await s.post('Profiler.enable');
  await s.post('Profiler.start');
  const query = parseFtsQuery(qs[0], index.options);
  for (let i = 0; i < 5000; i++) index.search(query, { k: 10 });
  const { profile } = await s.post('Profiler.stop');
  await writeFile('/tmp/q/micro.cpuprofile', JSON.stringify(profile));
}
