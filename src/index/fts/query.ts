/**
 * Full-text query model and query-string parser.
 *
 * Query model (Lance's `Boolean{must, should, must_not}`):
 *  - a document matches when it matches every `must` clause and no `mustNot` clause, and, when
 *    there is no `must` clause, at least one `should` clause;
 *  - with `must` clauses present, `should` clauses only add score;
 *  - a query with no positive clause (only `mustNot`, or nothing left after analysis) matches
 *    nothing;
 *  - a document's score is Σ over the positive clauses it matches of (clause boost × clause
 *    score). `mustNot` clauses never score.
 *
 * Query-string syntax (whitespace separates clauses; there are no AND/OR keywords, no
 * parentheses and no escapes — the words "AND"/"OR" are ordinary terms):
 *
 *   quick brown        two optional (should) term clauses, OR-ed, scores summed (Match)
 *   "quick brown"      phrase (slop 0)
 *   "quick fox"~2      phrase with slop 2 (at most 2 extra words inside the match, in order)
 *   +term  +"a b"      required (must)
 *   -term  -"a b"      excluded (mustNot)
 *   term~              fuzzy, automatic fuzziness: 0 for ≤ 2 chars, 1 for 3–5, 2 for ≥ 6
 *                      (length of the analysed term in code points)
 *   term~1             fuzzy with explicit fuzziness (0, 1 or 2); at most 50 expansions
 *   term^2 "a b"^3     boost: multiplies the clause's score (a non-negative decimal number)
 *   suffixes combine:  +"a b"~3^2, color~1^0.5, color^0.5~1
 *
 * `+`/`-` are operators only at the start of a clause; inside a word they are separators handled
 * by the tokenizer ("e-mail" is the word sequence e, mail).
 *
 * Analysis: every term and phrase goes through the same `tokenize` as the documents.
 *  - A bare word that yields several tokens ("e-mail", "U.S.A", "don't") becomes a phrase with
 *    slop 0 over those tokens (keeping their relative positions); this favours precision like
 *    Lucene's auto-generated phrase queries. A fuzzy word must yield exactly one token.
 *  - A word or phrase that yields no token (a stop word, pure punctuation) is dropped from the
 *    query, whatever its operator (so with stop words on, "+the +fox" means "+fox").
 *  - A phrase or word that yields exactly one token becomes a term clause; fuzziness 0 also
 *    gives a term clause.
 *  - Phrase tokens keep their word offsets, so removed stop words remain gaps (see tokenizer).
 */
import { tokenize, type TokenizerOptions } from './tokenizer.js';

/** Maximum number of dictionary terms a fuzzy clause expands to. */
export const MAX_FUZZY_EXPANSIONS = 50;

export interface FtsTermClause {
  kind: 'term';
  term: string;
  boost: number;
}

export interface FtsPhraseClause {
  kind: 'phrase';
  /** Analysed tokens, in order (duplicates allowed). */
  terms: string[];
  /** Word offset of each token relative to the first (offsets[0] = 0, strictly increasing). */
  offsets: number[];
  /** Extra words allowed inside an in-order match (0 = exact phrase). */
  slop: number;
  boost: number;
}

export interface FtsFuzzyClause {
  kind: 'fuzzy';
  term: string;
  /** Maximum Levenshtein distance (code points), 1 or 2 after parsing. */
  fuzziness: number;
  maxExpansions: number;
  boost: number;
}

export type FtsClause = FtsTermClause | FtsPhraseClause | FtsFuzzyClause;

export interface FtsQuery {
  must: FtsClause[];
  should: FtsClause[];
  mustNot: FtsClause[];
}

/** A malformed query string; `position` is the 0-based index of the offending character. */
export class FtsQueryError extends Error {
  readonly position: number;
  readonly query: string;
  constructor(problem: string, position: number, query: string) {
    super(`invalid full-text query at position ${position}: ${problem} (query: ${JSON.stringify(query)})`);
    this.name = 'FtsQueryError';
    this.position = position;
    this.query = query;
  }
}

/** Lance/Elasticsearch "AUTO" fuzziness for a term of the given length (code points). */
export function autoFuzziness(term: string): number {
  const len = codePointLength(term);
  return len <= 2 ? 0 : len <= 5 ? 1 : 2;
}

export function codePointLength(s: string): number {
  let n = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff && i + 1 < s.length) {
      const d = s.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) i++;
    }
    n++;
  }
  return n;
}

const isSpace = (c: string): boolean => /\s/u.test(c);

/** Parses a query string; terms are analysed with `opts` (use the index's tokenizer options). */
export function parseFtsQuery(text: string, opts: TokenizerOptions = {}): FtsQuery {
  const q: FtsQuery = { must: [], should: [], mustNot: [] };
  const n = text.length;
  let i = 0;
  let clauses = 0;
  const fail = (problem: string, pos: number): never => {
    throw new FtsQueryError(problem, pos, text);
  };

  const readNumber = (start: number, allowFraction: boolean): { value: number; end: number } | null => {
    let j = start;
    while (j < n && text[j]! >= '0' && text[j]! <= '9') j++;
    const intEnd = j;
    if (allowFraction && j < n && text[j] === '.') {
      j++;
      const fracStart = j;
      while (j < n && text[j]! >= '0' && text[j]! <= '9') j++;
      if (j === fracStart) return null;
    }
    if (j === start || (intEnd === start && !allowFraction)) return null;
    return { value: Number(text.slice(start, j)), end: j };
  };

  while (true) {
    while (i < n && isSpace(text[i]!)) i++;
    if (i >= n) break;
    const clauseStart = i;
    let occur: 'must' | 'should' | 'mustNot' = 'should';
    if (text[i] === '+' || text[i] === '-') {
      occur = text[i] === '+' ? 'must' : 'mustNot';
      i++;
      if (i >= n || isSpace(text[i]!)) fail(`'${text[clauseStart]}' must be followed by a term or a phrase`, clauseStart);
      if (text[i] === '+' || text[i] === '-') fail(`repeated operator '${text[i]}'`, i);
    }

    let isPhrase = false;
    let body: string;
    const bodyStart = i;
    if (text[i] === '"') {
      isPhrase = true;
      const close = text.indexOf('"', i + 1);
      if (close < 0) fail('unbalanced quote: this phrase has no closing quote', i);
      body = text.slice(i + 1, close);
      if (body.trim() === '') fail('empty phrase', i);
      i = close + 1;
    } else {
      let j = i;
      while (j < n && !isSpace(text[j]!) && text[j] !== '"' && text[j] !== '~' && text[j] !== '^') j++;
      if (j === i) fail(`operator '${text[i]}' must follow a term or a phrase`, i);
      if (j < n && text[j] === '"') fail('unexpected quote inside a term (a phrase must start at a clause boundary)', j);
      body = text.slice(i, j);
      i = j;
    }

    // Suffixes: ~[N] and ^X, each at most once, in either order.
    let tilde: number | 'auto' | undefined;
    let boost: number | undefined;
    while (i < n && (text[i] === '~' || text[i] === '^')) {
      const opPos = i;
      if (text[i] === '~') {
        if (tilde !== undefined) fail("repeated '~'", opPos);
        const num = readNumber(i + 1, false);
        if (num === null) {
          if (i + 1 < n && !isSpace(text[i + 1]!) && text[i + 1] !== '^') {
            fail(isPhrase ? "phrase slop '~' must be followed by a non-negative integer"
              : "fuzziness '~' must be followed by 0, 1, 2 or nothing", i + 1);
          }
          if (isPhrase) fail("phrase slop '~' must be followed by a non-negative integer", i + 1);
          tilde = 'auto';
          i++;
        } else {
          if (!Number.isSafeInteger(num.value) || num.value > 0x7fffffff) fail(`slop/fuzziness ${text.slice(i + 1, num.end)} is too large`, i + 1);
          if (!isPhrase && num.value > 2) fail(`fuzziness must be 0, 1 or 2, got ${num.value}`, i + 1);
          tilde = num.value;
          i = num.end;
        }
      } else {
        if (boost !== undefined) fail("repeated '^'", opPos);
        const num = readNumber(i + 1, true);
        if (num === null || !Number.isFinite(num.value)) fail("boost '^' must be followed by a non-negative number such as 2 or 0.5", i + 1);
        boost = num!.value;
        i = num!.end;
      }
    }
    if (i < n && !isSpace(text[i]!)) {
      fail(`unexpected character ${JSON.stringify(text[i])} after ${isPhrase ? 'a phrase' : 'a term'}`, i);
    }
    clauses++;

    const clause = analyse(body, isPhrase, tilde, boost ?? 1, opts, (p) => fail(p, bodyStart));
    if (clause !== null) q[occur].push(clause);
  }
  if (clauses === 0) fail('empty query', 0);
  return q;
}

function analyse(
  body: string,
  isPhrase: boolean,
  tilde: number | 'auto' | undefined,
  boost: number,
  opts: TokenizerOptions,
  fail: (problem: string) => never,
): FtsClause | null {
  const { terms, positions } = tokenize(body, opts);
  if (terms.length === 0) return null;
  if (!isPhrase && tilde !== undefined) {
    if (terms.length > 1) fail(`fuzzy term ${JSON.stringify(body)} yields ${terms.length} tokens (${terms.join(', ')}); fuzzy matching needs a single word`);
    const term = terms[0]!;
    const fuzziness = tilde === 'auto' ? autoFuzziness(term) : tilde;
    if (fuzziness === 0) return { kind: 'term', term, boost };
    return { kind: 'fuzzy', term, fuzziness, maxExpansions: MAX_FUZZY_EXPANSIONS, boost };
  }
  if (terms.length === 1) return { kind: 'term', term: terms[0]!, boost };
  const base = positions[0]!;
  const offsets = Array.from(positions, (p) => p - base);
  return { kind: 'phrase', terms, offsets, slop: typeof tilde === 'number' ? tilde : 0, boost };
}

/** Builds a phrase clause from a string (analysed with `opts`); null when it yields no token. */
export function phraseClause(text: string, opts: TokenizerOptions = {}, slop = 0, boost = 1): FtsClause | null {
  const { terms, positions } = tokenize(text, opts);
  if (terms.length === 0) return null;
  if (terms.length === 1) return { kind: 'term', term: terms[0]!, boost };
  const base = positions[0]!;
  return { kind: 'phrase', terms, offsets: Array.from(positions, (p) => p - base), slop, boost };
}

/** Validates a (possibly hand-built) query; throws a RangeError naming the bad clause. */
export function validateFtsQuery(q: FtsQuery): void {
  for (const [name, list] of [['must', q.must], ['should', q.should], ['mustNot', q.mustNot]] as const) {
    list.forEach((c, idx) => {
      const where = `${name}[${idx}]`;
      if (!(c.boost >= 0) || !Number.isFinite(c.boost)) throw new RangeError(`${where}: boost must be a finite number ≥ 0`);
      if (c.kind === 'phrase') {
        if (c.terms.length === 0 || c.terms.length !== c.offsets.length) throw new RangeError(`${where}: phrase terms and offsets must be non-empty and of equal length`);
        if (c.offsets[0] !== 0) throw new RangeError(`${where}: phrase offsets must start at 0`);
        for (let k = 1; k < c.offsets.length; k++) {
          if (!(c.offsets[k]! > c.offsets[k - 1]!)) throw new RangeError(`${where}: phrase offsets must be strictly increasing`);
        }
        if (!Number.isInteger(c.slop) || c.slop < 0) throw new RangeError(`${where}: slop must be an integer ≥ 0`);
      } else if (c.kind === 'fuzzy') {
        if (!Number.isInteger(c.fuzziness) || c.fuzziness < 0 || c.fuzziness > 2) throw new RangeError(`${where}: fuzziness must be 0, 1 or 2`);
        if (!Number.isInteger(c.maxExpansions) || c.maxExpansions < 1) throw new RangeError(`${where}: maxExpansions must be a positive integer`);
      }
    });
  }
}
