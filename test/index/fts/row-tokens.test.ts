/**
 * Rows tokenized on one thread and indexed on another (row-tokens.ts, tokenize-worker.ts): an
 * index fed `addTokenized` — the rows' tokens as ids of another lexicon, read through a mirror of
 * it — is the index `add` builds from the same texts: same term ids, same sidecar bytes, same
 * search results. Whatever the texts (ASCII, long words, stop words, non-ASCII, empty, null),
 * the tokenizer options, and wherever either lexicon starts over; and through the real worker.
 */
import test from 'ava';
import { runChildToExit } from '../../helpers/child-exit.js';
import { type Data, makeData, tableToIPC, Utf8, vectorFromArray } from 'apache-arrow';
import { InvertedIndex } from '../../../src/index/fts/inverted-index.js';
import { LexiconMirror, tokenizeRows, utf8Rows, type TokenizedRows } from '../../../src/index/fts/row-tokens.js';
import { SharedLexicon } from '../../../src/index/fts/shared-lexicon.js';
import { setTokenizeWorkerEnabled, tokenizeOffThread, tokenizeWorkerReady, tokenizeWorkerStats } from '../../../src/index/fts/tokenize-worker.js';
import { resolveTokenizerOptions, type TokenizerOptions } from '../../../src/index/fts/tokenizer.js';
import { Rng } from '../../../src/index/vector/kmeans.js';

const WORDS = ['the', 'Quick', 'brown', 'fox', 'jumps', 'over', 'lazy', 'dogs', 'running', 'runner', 'ran', 'and', 'of', 'a', 'database', 'databases', 'vector', 'Vectors', 'café', 'naïve', 'Straße', '東京', 'ÅNGSTRÖM', 'supercalifragilistic', 'extraordinarily', 'x1', '42', 'r2d2', 'emoji😀word', 'internationalization', '¼½¾¼½¾', 'ｆｕｌｌｗｉｄｔｈ', 'ﬁne'];

/** Seeded texts of every kind the tokenizers meet; every tenth row null, some empty. */
function texts(rng: Rng, n: number): (string | null)[] {
  return Array.from({ length: n }, (_, i) => {
    if (i % 10 === 9) return null;
    if (i % 17 === 5) return '';
    const len = 1 + rng.int(25);
    const parts: string[] = [];
    for (let k = 0; k < len; k++) {
      let w = WORDS[rng.int(WORDS.length)]!;
      if (rng.next() < 0.3) w = `w${rng.int(400)}`; // a long tail of rare words
      if (rng.next() < 0.05) w = w.repeat(4); // past the packed width, sometimes past maxTokenLength
      parts.push(w);
    }
    return parts.join(rng.next() < 0.2 ? ', ' : ' ');
  });
}

function utf8(values: readonly (string | null)[]): Data<Utf8> {
  return vectorFromArray(values, new Utf8()).data[0]!;
}

const rowsOf = (d: Data<Utf8>) => utf8Rows(d, false);

const sidecar = (index: InvertedIndex) => tableToIPC(index.toArrow());

/** Builds the same chunks with `add` and with `addTokenized` through a separate lexicon; returns both. */
function bothWays(chunks: Data<Utf8>[], opts: TokenizerOptions, between?: (i: number, other: SharedLexicon) => void, limit?: number) {
  const byAdd = new InvertedIndex(opts);
  const byTokens = new InvertedIndex(opts);
  const other = new SharedLexicon(resolveTokenizerOptions(opts), limit); // the worker's lexicon
  const mirror = new LexiconMirror();
  let pos = 0;
  chunks.forEach((d, i) => {
    between?.(i, other);
    const t = tokenizeRows(rowsOf(d), opts, 7, other);
    mirror.feed(t);
    byAdd.add(pos, d);
    byTokens.addTokenized(pos, t, mirror);
    pos += d.length + (i % 3 === 2 ? 5 : 0); // gaps between chunks too
  });
  return { byAdd, byTokens, mirror };
}

test('addTokenized builds the index add builds: term ids, sidecar bytes and search results', (t) => {
  const rng = new Rng(5);
  for (const opts of [{}, { stem: false }, { stopWords: false }, { maxTokenLength: 9 }, { stem: false, stopWords: false, maxTokenLength: 60 }] as TokenizerOptions[]) {
    const chunks = Array.from({ length: 6 }, () => utf8(texts(rng, 1 + rng.int(300))));
    const { byAdd, byTokens } = bothWays(chunks, opts);
    t.is(byTokens.termCount, byAdd.termCount, JSON.stringify(opts));
    t.deepEqual(sidecar(byTokens), sidecar(byAdd), `sidecar ${JSON.stringify(opts)}`);
    for (const q of ['quick fox', 'running', 'café naïve', '東京', 'w17 w3', 'supercalifragilistic']) {
      t.deepEqual(byTokens.search(byTokens.parseQuery(q), { k: 10 }), byAdd.search(byAdd.parseQuery(q), { k: 10 }), `${q} ${JSON.stringify(opts)}`);
    }
  }
});

test('text that normalisation splits into more words than it has bytes / 2 (¼ → 1⁄4) loses no token', (t) => {
  const chunks = [utf8(Array.from({ length: 50 }, (_, i) => (i % 5 ? '¼ ½ ¾ ¼ ½ ¾' : '⅓⅔ ¼ ①②③')))];
  const { byAdd, byTokens } = bothWays(chunks, { stopWords: false });
  t.true(byAdd.stats([]).totalTokens > 50 * 6);
  t.deepEqual(sidecar(byTokens), sidecar(byAdd));
});

test('a chunk added a piece at a time (a cursor) builds the same index; the rest can go through add', (t) => {
  const rng = new Rng(31);
  const opts = {};
  const chunks = Array.from({ length: 4 }, () => utf8(texts(rng, 100 + rng.int(400))));
  const byAdd = new InvertedIndex(opts);
  const byPieces = new InvertedIndex(opts);
  const other = new SharedLexicon(resolveTokenizerOptions(opts));
  const mirror = new LexiconMirror();
  let pos = 0;
  chunks.forEach((d, c) => {
    const tk = tokenizeRows(rowsOf(d), opts, 3, other);
    mirror.feed(tk);
    byAdd.add(pos, d);
    const cursor = { row: 0, token: 0 };
    // Pieces of 1..150 rows, tokens left buffered between them; in the last chunk the rest
    // after a few pieces goes through `add`, as when the mirror moved on mid-chunk.
    for (let piece = 0; cursor.row < d.length; piece++) {
      if (c === 3 && piece === 3) {
        byPieces.add(pos + cursor.row, d.slice(cursor.row, d.length - cursor.row));
        break;
      }
      const end = Math.min(d.length, cursor.row + 1 + rng.int(150));
      byPieces.addTokenized(pos, tk, mirror, end < d.length, cursor, end);
    }
    pos += d.length;
  });
  t.deepEqual(sidecar(byPieces), sidecar(byAdd));
});

test('either lexicon starting over, between chunks or inside one, changes nothing', (t) => {
  const rng = new Rng(9);
  const chunks = Array.from({ length: 8 }, () => utf8(texts(rng, 200)));
  // The worker's lexicon starts over between chunks (a new epoch: a new mirror generation).
  const a = bothWays(chunks, {}, (i, other) => (i % 3 === 2 ? other.startOver() : undefined));
  t.deepEqual(sidecar(a.byTokens), sidecar(a.byAdd));
  t.true(a.mirror.generation >= 3, 'the mirror started over with the lexicon');
  // This thread's lexicon starts over between chunks.
  const b = bothWays(chunks, {}, (i) => (i % 2 === 1 ? SharedLexicon.of({}).startOver() : undefined));
  t.deepEqual(sidecar(b.byTokens), sidecar(b.byAdd));
  // A worker lexicon small enough to start over inside chunks: the chunk is tokenized again in
  // the new epoch.
  const small = chunks.map((d, j) => utf8(Array.from({ length: d.length }, (_, i) => (i % 10 === 9 ? null : `w${j * 10 + (i % 40)} v${(i * 7) % 20} the`))));
  const c = bothWays(small, {}, undefined, 100);
  t.deepEqual(sidecar(c.byTokens), sidecar(c.byAdd));
  t.true(c.mirror.generation > 1);
});

test('a chunk with more distinct words than the lexicon holds is refused, not mangled', (t) => {
  const opts = {};
  const lex = new SharedLexicon(resolveTokenizerOptions(opts), 50);
  const d = utf8(Array.from({ length: 100 }, (_, i) => `word${i}`));
  t.throws(() => tokenizeRows(rowsOf(d), opts, 1, lex), { message: /more distinct words than the lexicon keeps/ });
});

test('the mirror takes answers only in order, and says when it cannot serve rows', (t) => {
  const opts = {};
  const lex = new SharedLexicon(resolveTokenizerOptions(opts));
  const first = tokenizeRows(rowsOf(utf8(['alpha beta', 'gamma'])), opts, 1, lex);
  const second = tokenizeRows(rowsOf(utf8(['delta alpha'])), opts, 1, lex);
  t.is(second.termsFrom, first.newTerms.length, 'only terms not sent before');
  const mirror = new LexiconMirror();
  t.false(mirror.serves(first));
  t.throws(() => mirror.feed(second), { message: /lexicon terms from/ });
  mirror.feed(first);
  mirror.feed(second);
  t.true(mirror.serves(first) && mirror.serves(second));
  // Another source (a restarted worker) starts a new mirror generation; old rows are not served.
  const restarted = tokenizeRows(rowsOf(utf8(['omega'])), opts, 2, new SharedLexicon(resolveTokenizerOptions(opts)));
  mirror.feed(restarted);
  t.false(mirror.serves(first));
  const index = new InvertedIndex(opts);
  t.throws(() => index.addTokenized(0, first, mirror), { message: /not fed/ });
  t.is(index.endPosition, -1, 'nothing was added');
});

test('rows tokenized by the real worker thread build the same index', async (t) => {
  setTokenizeWorkerEnabled(true);
  t.true(await tokenizeWorkerReady());
  const rng = new Rng(21);
  const chunks = Array.from({ length: 5 }, () => utf8(texts(rng, 400)));
  // A sliced chunk (offsets not from 0, nulls at an offset) as a MemTable's slices are.
  const whole = utf8(texts(rng, 300));
  chunks.push(whole.slice(37, 200));
  const rowsBefore = tokenizeWorkerStats.rows;
  const answers = await Promise.all(chunks.map((d) => tokenizeOffThread({}, d)!));
  t.is(tokenizeWorkerStats.rows - rowsBefore, chunks.reduce((n, d) => n + d.length, 0));
  // Answers of pooled size come in shared memory (util/buffer-pool.ts): nothing transferred for
  // the collector to count.
  const pooled = answers.filter((a) => a.rows.tokTerm.buffer.byteLength >= 16 * 1024);
  t.true(pooled.length > 0);
  for (const a of pooled) t.true(a.rows.tokTerm.buffer instanceof SharedArrayBuffer);
  const byAdd = new InvertedIndex();
  const byTokens = new InvertedIndex();
  let pos = 0;
  chunks.forEach((d, i) => {
    byAdd.add(pos, d);
    t.true(answers[i]!.mirror.serves(answers[i]!.rows));
    byTokens.addTokenized(pos, answers[i]!.rows, answers[i]!.mirror);
    pos += d.length;
  });
  t.deepEqual(sidecar(byTokens), sidecar(byAdd));
  // Switched off: no worker, the caller indexes the rows itself.
  setTokenizeWorkerEnabled(false);
  t.is(tokenizeOffThread({}, chunks[0]!), undefined);
  setTokenizeWorkerEnabled(true);
});

test('an empty chunk and an all-null chunk tokenize to nothing', (t) => {
  const opts = {};
  const lex = new SharedLexicon(resolveTokenizerOptions(opts));
  const empty: TokenizedRows = tokenizeRows(rowsOf(makeData({ type: new Utf8(), length: 0, nullCount: 0, valueOffsets: new Int32Array(1), data: new Uint8Array(0) })), opts, 1, lex);
  t.is(empty.docLen.length, 0);
  const nulls = tokenizeRows(rowsOf(utf8([null, null, null])), opts, 1, lex);
  t.deepEqual([...nulls.docLen], [-1, -1, -1]);
  t.is(nulls.tokTerm.length, 0);
});

for (const [mode, expected] of [
  ['start', /refused while starting: true/],
  ['job', /indexed 3 documents, 1 job\(s\) on the worker/],
] as const) {
  test(`a process whose tokenize worker is idle exits on its own (${mode})`, async (t) => {
    const { code, out } = await runChildToExit(new URL('tokenize-worker-child.ts', import.meta.url), mode);
    t.is(code, 0, 'exited by itself');
    t.regex(out, expected);
  });
}
