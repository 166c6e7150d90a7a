/**
 * A WAL entry indexed in slices sends its full-text rows to the tokenize worker first
 * (`SourceIndexes.queueCodesAhead` with a tokenizer), and they enter the index when the answer
 * comes, in turn with everything else queued (issue 7). Whatever the worker does — answers late,
 * dies with jobs out (a restarted worker has a new lexicon), is not ready — and wherever a
 * synchronous `indexUpTo` / `markVisible` cuts in: every row enters the full-text index once, in
 * position order (the index ends byte-identical to one built by `add` in order), and no row is
 * visible before the index holds it. Checked by seeded schedules against that model.
 */
import test from 'ava';
import { type Data, makeVector, Table, tableToIPC, Utf8, vectorFromArray } from 'apache-arrow';
import { InvertedIndex } from '../../src/index/fts/inverted-index.js';
import { LexiconMirror, tokenizeRows, utf8Rows } from '../../src/index/fts/row-tokens.js';
import { SharedLexicon } from '../../src/index/fts/shared-lexicon.js';
import type { OffThreadTokenize, TokenizedElsewhere } from '../../src/index/fts/tokenize-worker.js';
import { resolveTokenizerOptions } from '../../src/index/fts/tokenizer.js';
import { SourceIndexes } from '../../src/index/source-indexes.js';
import type { OffThreadEncode } from '../../src/index/vector/code-queue.js';
import { type EncodedRows, IvfPqEncoder } from '../../src/index/vector/ivf-pq-encoder.js';
import { trainIvfPq } from '../../src/index/vector/ivf-pq-model.js';
import { Rng } from '../../src/index/vector/kmeans.js';
import { VectorSource } from '../../src/index/vector/vector-source.js';
import { MemTable } from '../../src/memtable/memtable.js';
import { TableSchema } from '../../src/schema/table-schema.js';
import { DIM, docsSchema, vectors } from '../helpers/data.js';

const schema = new TableSchema(docsSchema, ['id']);
const FTS = { name: 'text_fts', column: 'text', type: 'fts' as const };
const IVF = { name: 'vec_ivf', column: 'vec', type: 'ivf_pq' as const, model: 'm' };
const model = trainIvfPq(VectorSource.fromArrow(new Table({ vec: vectors(3000, DIM, 7) }).batches, 0), { metric: 'l2', partitions: 8, subVectors: 2, seed: 5 });
const WORDS = ['alpha', 'beta', 'gamma', 'running', 'runs', 'the', 'of', 'café', 'ÅNGSTRÖM', 'internationalization'];

function batchOf(rng: Rng, first: number, n: number) {
  const ids = Array.from({ length: n }, (_, i) => first + i);
  const text = ids.map((i) => (i % 13 === 7 ? null : `row${i % 97} ${WORDS[rng.int(WORDS.length)]} w${first + rng.int(150)} ${WORDS[rng.int(WORDS.length)]}`));
  const table = new Table({
    id: makeVector(BigInt64Array.from(ids.map(BigInt))),
    version: makeVector(BigInt64Array.from(ids.map(() => 1n))),
    text: vectorFromArray(text, new Utf8()),
    vec: vectors(n, DIM, first + 1),
  });
  return schema.normalize(table);
}

const rowsOf = (d: Data<Utf8>) => utf8Rows(d, false);

/**
 * A tokenize worker the schedule drives: answers in the order asked (as one worker thread does),
 * when released; sometimes dies with every job out (the next worker has a lexicon of its own);
 * sometimes is not ready.
 */
class HeldTokenizer {
  readonly held: { settle: (ok: boolean) => void }[] = [];
  refuse = 0;
  deaths = 0;
  answered = 0;
  private source = 1;
  private lexicon: SharedLexicon;
  private readonly mirror = new LexiconMirror();
  /** `lexiconLimit`: small, so the worker's lexicon starts over (new epochs) during the schedule. */
  constructor(
    private readonly rng: Rng,
    private readonly lexiconLimit = 1 << 18,
  ) {
    this.lexicon = new SharedLexicon(resolveTokenizerOptions({}), lexiconLimit);
  }
  readonly tokenize: OffThreadTokenize = (options, data) => {
    if (this.rng.next() < this.refuse) return undefined;
    // The worker tokenizes when it gets to the job; the answer is delivered when released.
    const rows = tokenizeRows(rowsOf(data), options, this.source, this.lexicon);
    return new Promise<TokenizedElsewhere>((resolve, reject) => {
      this.held.push({
        settle: (ok) => {
          if (!ok) return reject(new Error('worker died'));
          this.mirror.feed(rows);
          this.answered++;
          resolve({ rows, mirror: this.mirror });
        },
      });
    });
  };
  /** Answers the oldest jobs, or (one time in twelve) dies: every job out fails. */
  releaseSome(): void {
    if (this.held.length > 0 && this.rng.next() < 1 / 12) {
      this.deaths++;
      for (const job of this.held.splice(0)) job.settle(false);
      this.source++;
      this.lexicon = new SharedLexicon(resolveTokenizerOptions({}), this.lexiconLimit);
      return;
    }
    for (let n = this.rng.int(3); n > 0 && this.held.length > 0; n--) this.held.shift()!.settle(true);
  }
}

/** No encode worker is ever ready: codes are computed here. */
const noEncodeWorker: OffThreadEncode = () => undefined;

/** An encode worker answering late, in any order: full-text jobs then wait behind its codes in the queue. */
class HeldEncoder {
  readonly held: (() => void)[] = [];
  constructor(private readonly rng: Rng) {}
  readonly encode: OffThreadEncode = (m, chunk) => {
    const copy = { ...chunk, data: chunk.data.slice() };
    return new Promise<EncodedRows>((resolve) => this.held.push(() => resolve(IvfPqEncoder.of(m).encode(copy))));
  };
  releaseSome(): void {
    for (let n = this.rng.int(2); n > 0 && this.held.length > 0; n--) this.held.splice(this.rng.int(this.held.length), 1)[0]!();
  }
}
const turn = () => new Promise<void>((r) => setImmediate(r));

function indexedMemTable(withIvf = false) {
  const indexes = new SourceIndexes(schema);
  indexes.addIndex(FTS, () => undefined, []);
  if (withIvf) indexes.addIndex(IVF, () => model, []);
  return { mt: new MemTable(1, 0, indexes), indexes };
}

/** Rows in batches [0, end) of `mt`. */
function rowsIn(mt: MemTable, end: number): number {
  let n = 0;
  for (let b = 0; b < end; b++) n += mt.store.batch(b).numRows;
  return n;
}

test('seeded schedules: rows tokenized elsewhere enter the full-text index once each, in order, before they are visible', async (t) => {
  let answered = 0;
  let deaths = 0;
  for (let seed = 1; seed <= 16; seed++) {
    const rng = new Rng(seed);
    // Odd seeds: a small worker lexicon (epochs change under queued answers) and IVF-PQ codes
    // answered late, so answers wait in the queue while later ones arrive.
    const tok = new HeldTokenizer(rng, seed % 2 === 1 ? 300 : undefined);
    tok.refuse = [0, 0.25, 1, 0][seed % 4]!;
    const enc = seed % 2 === 1 ? new HeldEncoder(rng) : undefined;
    const encode = enc?.encode ?? noEncodeWorker;
    const { mt, indexes } = indexedMemTable(enc !== undefined);
    const fts = () => indexes.index<InvertedIndex>('text_fts')!;
    const reference = new InvertedIndex({});
    let rows = 0;
    const slicings: Promise<void>[] = [];
    const checkVisible = () => {
      const visibleRows = rowsIn(mt, mt.visible);
      if (visibleRows > 0 && fts().endPosition < visibleRows) t.fail(`seed ${seed}: ${visibleRows} rows visible, the index holds ${fts().endPosition}`);
    };
    for (let entry = 0; entry < 10; entry++) {
      // An entry of 1–3 batches, from a few rows (below the off-thread minimum) to several slices.
      const nb = 1 + rng.int(3);
      for (let b = 0; b < nb; b++) {
        const n = 1 + rng.int(rng.next() < 0.3 ? 40 : 700);
        const batch = batchOf(rng, rows, n);
        let at = rows;
        for (const rb of batch) {
          reference.add(at, rb.data.children[2] as Data<Utf8>);
          at += rb.numRows;
        }
        mt.append(batch);
        rows += n;
      }
      const end = mt.batchCount;
      if (rng.next() < 0.75) {
        const sliced = mt.indexInSlices(end, encode, [64, 128, 300][rng.int(3)]!, tok.tokenize);
        slicings.push(sliced.then(() => mt.markVisibleWhenIndexed(end, encode)));
      } else mt.markVisibleWhenIndexed(end, encode); // indexes at once, what is queued in turn
      for (let k = rng.int(4); k > 0; k--) {
        tok.releaseSome();
        enc?.releaseSome();
        await turn();
        checkVisible();
      }
      if (rng.next() < 0.15) {
        mt.markVisible(mt.batchCount); // finishes indexing here, now
        t.is(fts().endPosition, rows, `seed ${seed}: markVisible leaves nothing pending`);
      }
      checkVisible();
    }
    while (tok.held.length > 0 || (enc?.held.length ?? 0) > 0) {
      tok.releaseSome();
      enc?.releaseSome();
      await turn();
      checkVisible();
    }
    await Promise.all(slicings);
    mt.markVisible(mt.batchCount);
    t.deepEqual(tableToIPC(fts().toArrow()), tableToIPC(reference.toArrow()), `seed ${seed}: the index equals one built in order`);
    answered += tok.answered;
    deaths += tok.deaths;
  }
  t.true(answered > 20, `answers from the worker were used (${answered})`);
  t.true(deaths > 0, 'and workers died with jobs out');
});

test("an entry's full-text rows go to the tokenizer whole, before its slices; a small entry's stay here", async (t) => {
  const rng = new Rng(3);
  const tok = new HeldTokenizer(rng);
  const asked: number[] = [];
  const counting: OffThreadTokenize = (o, d) => {
    asked.push(d.length);
    return tok.tokenize(o, d);
  };
  const { mt, indexes } = indexedMemTable();
  mt.append(batchOf(rng, 0, 1000));
  mt.append(batchOf(rng, 1000, 700));
  const done = mt.indexInSlices(mt.batchCount, noEncodeWorker, 128, counting);
  await turn();
  t.deepEqual(asked, [1000, 700], 'both batches were sent whole at the first slice');
  t.is(indexes.index<InvertedIndex>('text_fts')!.endPosition, -1, 'nothing is in the index before the answers');
  while (tok.held.length > 0) {
    tok.held.shift()!.settle(true);
    await turn();
  }
  await done;
  t.is(indexes.index<InvertedIndex>('text_fts')!.endPosition, 1700);
  // Fewer rows than the off-thread minimum: indexed by the slices, nothing asked.
  mt.append(batchOf(rng, 1700, 20));
  await mt.indexInSlices(mt.batchCount, noEncodeWorker, 128, counting);
  t.deepEqual(asked, [1000, 700]);
  t.is(indexes.index<InvertedIndex>('text_fts')!.endPosition, 1720);
});
