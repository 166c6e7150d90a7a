/**
 * Word analysis shared by every inverted index of one tokenizer configuration on this thread
 * (issue 7).
 *
 * Each MemTable starts a fresh inverted index, and an index's own word caches start empty, so
 * every MemTable analysed (lower-cased, stemmed) each of its distinct words again and inserted
 * each of its terms into a string-keyed map: ~50 000 of each per 100 000 rows of Zipf text,
 * ~1 µs of the main thread a row. What a word analyses to depends only on the word and the
 * options, so it is done once here: a short ASCII word, packed (tokenizer.ts `WordSpans`), maps to
 * a lexicon id — one per distinct term, shared by every index — and an index maps lexicon ids
 * to its own term ids in a flat array (`InvertedIndex.localOf`); a term new to an index then
 * costs an array store, not a string hash (the index's string → id map is filled when a read
 * first needs it).
 *
 * Bounded: past `limit` words or terms everything is dropped and `epoch` moves on; an index
 * that sees the epoch change forgets its lexicon ids and finds its terms by string again.
 */
import { PackedWordTable } from './word-table.js';
import { analyzeWord, detachString, resolveTokenizerOptions, type ResolvedTokenizerOptions, type TokenizerOptions, unpackWord } from './tokenizer.js';

/**
 * Words (and terms) a lexicon holds before it starts over: it outlives the indexes, so it is
 * kept to ~25 MB (its word table, terms and their map) per tokenizer configuration; a start-over
 * costs the indexes alive then their string maps' fill, and their reads go by string after it.
 */
const LEXICON_LIMIT = 1 << 18;

export class SharedLexicon {
  /** Moves on whenever the lexicon starts over: ids from an earlier epoch mean nothing now. */
  epoch = 0;
  /** Packed word → lexicon id of its term (−1: stop word). Read directly by the indexing loop. */
  readonly words = new PackedWordTable();
  /** Lexicon id → term. */
  private terms: string[] = [];
  private readonly ids = new Map<string, number>();
  /** Words analysed here, over the process's life (tests read it, never timings). */
  analysed = 0;

  constructor(
    readonly options: ResolvedTokenizerOptions,
    private readonly limit = LEXICON_LIMIT,
  ) {}

  /** The lexicon of `opts` on this thread (one per distinct resolved configuration). */
  static of(opts: TokenizerOptions): SharedLexicon {
    const o = resolveTokenizerOptions(opts);
    const key = `${o.stem}|${o.stopWords}|${o.maxTokenLength}`;
    let lex = lexicons.get(key);
    if (lex === undefined) lexicons.set(key, (lex = new SharedLexicon(o)));
    return lex;
  }

  /** Lexicon id (−1: stop word) of a packed word not in `words` yet (it is then). May start a new epoch. */
  addWord(w0: number, w1: number, w2: number): number {
    if (this.words.size >= this.limit) this.startOver();
    this.analysed++;
    const t = analyzeWord(unpackWord(w0, w1, w2), this.options);
    const g = t === null ? -1 : this.idOf(t);
    this.words.set(w0, w1, w2, g);
    return g;
  }

  /** Lexicon id of `term` (added when new). May start a new epoch. */
  idOf(term: string): number {
    let g = this.ids.get(term);
    if (g === undefined) {
      if (this.terms.length >= this.limit) this.startOver();
      const t = detachString(term);
      g = this.terms.length;
      this.terms.push(t);
      this.ids.set(t, g);
    }
    return g;
  }

  /** Lexicon id of `term`, or undefined when it is not here (nothing is added). */
  peek(term: string): number | undefined {
    return this.ids.get(term);
  }

  /** The terms of lexicon ids from `g` on (current epoch), in id order. */
  termsFrom(g: number): string[] {
    return this.terms.slice(g);
  }

  /** The term of lexicon id `g` (of the current epoch). */
  term(g: number): string {
    return this.terms[g]!;
  }

  /** Drops every word and term and moves to the next epoch (past `limit`; tests call it directly). */
  startOver(): void {
    this.epoch++;
    this.words.clear();
    this.terms = [];
    this.ids.clear();
  }
}

const lexicons = new Map<string, SharedLexicon>();
