/**
 * A deliberately plain reference implementation of the FTS semantics, written straight from the
 * formulas in src/index/fts/inverted-index.ts: no posting lists, no caching, everything
 * recomputed per query from the tokenized documents.
 */
import { tokenize, type TokenizerOptions } from '../../../src/index/fts/tokenizer.js';
import type { FtsClause, FtsQuery } from '../../../src/index/fts/query.js';

export interface RefDoc {
  pos: number;
  terms: string[] | null; // null = null text (not a document)
  positions: number[];
}

export interface RefHit {
  pos: number;
  score: number;
}

export function refDocs(first: number, texts: (string | null)[], opts: TokenizerOptions): RefDoc[] {
  return texts.map((t, i) => {
    if (t === null) return { pos: first + i, terms: null, positions: [] };
    const tok = tokenize(t, opts);
    return { pos: first + i, terms: tok.terms, positions: Array.from(tok.positions) };
  });
}

/** Plain dynamic-programming Levenshtein over code points. */
export function levenshtein(a: string, b: string): number {
  const x = Array.from(a);
  const y = Array.from(b);
  const d: number[][] = [];
  for (let i = 0; i <= x.length; i++) {
    d.push([]);
    for (let j = 0; j <= y.length; j++) {
      if (i === 0) d[i]!.push(j);
      else if (j === 0) d[i]!.push(i);
      else {
        d[i]!.push(Math.min(d[i - 1]![j]! + 1, d[i]![j - 1]! + 1, d[i - 1]![j - 1]! + (x[i - 1] === y[j - 1] ? 0 : 1)));
      }
    }
  }
  return d[x.length]![y.length]!;
}

/**
 * Number of start positions p0 (holding terms[0]) from which some choice of positions
 * p1 < p2 < … exists with pj holding terms[j], pj − pj−1 ≥ offsets[j] − offsets[j−1], and
 * (pn−1 − p0) − (offsets[n−1] − offsets[0]) ≤ slop. Exhaustive search over all choices.
 */
export function refPhraseFreq(doc: RefDoc, terms: string[], offsets: number[], slop: number): number {
  if (doc.terms === null) return 0;
  const at = (t: string): number[] => doc.positions.filter((_, i) => doc.terms![i] === t);
  const lists = terms.map(at);
  const span = offsets[offsets.length - 1]! - offsets[0]!;
  const extend = (j: number, p0: number, prev: number): boolean => {
    if (j === terms.length) return prev - p0 - span <= slop;
    for (const p of lists[j]!) {
      if (p - prev >= offsets[j]! - offsets[j - 1]! && extend(j + 1, p0, p)) return true;
    }
    return false;
  };
  let count = 0;
  for (const p0 of lists[0]!) if (extend(1, p0, p0)) count++;
  return count;
}

export class RefIndex {
  // Plain memo tables so that larger corpora stay usable; every value is computed by a scan.
  private readonly memo = new Map<string, unknown>();

  constructor(readonly docs: RefDoc[]) {}

  private cached<T>(key: string, f: () => T): T {
    if (!this.memo.has(key)) this.memo.set(key, f());
    return this.memo.get(key) as T;
  }

  visible(maxPosition?: number): RefDoc[] {
    return this.cached(`visible ${maxPosition}`, () =>
      this.docs.filter((d) => d.terms !== null && (maxPosition === undefined || d.pos < maxPosition)));
  }

  N(maxPosition?: number): number {
    return this.visible(maxPosition).length;
  }

  totalTokens(maxPosition?: number): number {
    return this.cached(`total ${maxPosition}`, () => this.visible(maxPosition).reduce((s, d) => s + d.terms!.length, 0));
  }

  df(term: string, maxPosition?: number): number {
    return this.cached(`df ${maxPosition} ${term}`, () => this.visible(maxPosition).filter((d) => d.terms!.includes(term)).length);
  }

  /** BM25 of one term given tf and dl, straight from the formula. */
  bm25(term: string, tf: number, dl: number, maxPosition?: number): number {
    const N = this.N(maxPosition);
    const df = this.df(term, maxPosition);
    const idf = Math.log((N - df + 0.5) / (df + 0.5) + 1);
    const avgdl = this.totalTokens(maxPosition) / N;
    const k1 = 1.2;
    const b = 0.75;
    return idf * tf * (k1 + 1) / (tf + k1 * (1 - b + b * dl / avgdl));
  }

  expansions(term: string, fuzziness: number, maxExpansions: number, maxPosition?: number): string[] {
    return this.cached(`exp ${maxPosition} ${fuzziness} ${maxExpansions} ${term}`, () => this.expansionsUncached(term, fuzziness, maxExpansions, maxPosition));
  }

  private expansionsUncached(term: string, fuzziness: number, maxExpansions: number, maxPosition?: number): string[] {
    const all = new Set<string>();
    for (const d of this.visible(maxPosition)) for (const t of d.terms!) all.add(t);
    const cands = [...all]
      .map((t) => ({ t, dist: levenshtein(term, t) }))
      .filter((c) => c.dist <= fuzziness);
    cands.sort((a, b) => a.dist - b.dist || (a.t < b.t ? -1 : a.t > b.t ? 1 : 0));
    return cands.slice(0, maxExpansions).map((c) => c.t);
  }

  /** [matches, score] of one clause in one document. */
  clause(c: FtsClause, d: RefDoc, maxPosition?: number): [boolean, number] {
    const terms = d.terms!;
    const dl = terms.length;
    const tf = (t: string) => terms.filter((x) => x === t).length;
    if (c.kind === 'term') {
      const f = tf(c.term);
      return f > 0 ? [true, c.boost * this.bm25(c.term, f, dl, maxPosition)] : [false, 0];
    }
    if (c.kind === 'phrase') {
      const pf = refPhraseFreq(d, c.terms, c.offsets, c.slop);
      if (pf === 0) return [false, 0];
      let s = 0;
      for (const t of c.terms) s += this.bm25(t, pf, dl, maxPosition);
      return [true, c.boost * s];
    }
    let matched = false;
    let s = 0;
    for (const t of this.expansions(c.term, c.fuzziness, c.maxExpansions, maxPosition)) {
      const f = tf(t);
      if (f > 0) {
        matched = true;
        s += this.bm25(t, f, dl, maxPosition);
      }
    }
    return [matched, c.boost * s];
  }

  /** Every matching document with its score (unsorted). */
  search(q: FtsQuery, maxPosition?: number): RefHit[] {
    const hits: RefHit[] = [];
    if (q.must.length + q.should.length === 0) return hits;
    for (const d of this.visible(maxPosition)) {
      let ok = true;
      let score = 0;
      for (const c of q.must) {
        const [m, s] = this.clause(c, d, maxPosition);
        if (!m) ok = false;
        score += s;
      }
      for (const c of q.mustNot) if (this.clause(c, d, maxPosition)[0]) ok = false;
      let anyShould = false;
      for (const c of q.should) {
        const [m, s] = this.clause(c, d, maxPosition);
        if (m) anyShould = true;
        score += s;
      }
      if (q.must.length === 0 && !anyShould) ok = false;
      if (ok) hits.push({ pos: d.pos, score });
    }
    return hits;
  }
}

/** Sorted like the index: score descending, ties by position. */
export function topK(hits: RefHit[], k: number, allowed?: (pos: number) => boolean): RefHit[] {
  return hits
    .filter((h) => allowed === undefined || allowed(h.pos))
    .sort((a, b) => b.score - a.score || a.pos - b.pos)
    .slice(0, k);
}
