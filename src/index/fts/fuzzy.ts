/**
 * Fuzzy-matching helpers: bounded Levenshtein distance (in code points) and a 32-bit character
 * signature used to skip most dictionary terms before computing a distance.
 */

const SURROGATE_BIT = 0x80000000;

/**
 * Signature of a term: bit (c mod 31) for each UTF-16 code unit c, bit 31 when the term has a
 * surrogate pair. One edit (insert, delete, substitute) flips at most two bits, so two terms
 * within distance d differ in at most 2d of bits 0–30 (`mayBeWithin`).
 */
export function charMask(s: string): number {
  let m = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    m |= c >= 0xd800 && c <= 0xdfff ? SURROGATE_BIT : 1 << (c % 31);
  }
  return m >>> 0;
}

function popcount(x: number): number {
  x -= (x >>> 1) & 0x55555555;
  x = (x & 0x33333333) + ((x >>> 2) & 0x33333333);
  x = (x + (x >>> 4)) & 0x0f0f0f0f;
  return Math.imul(x, 0x01010101) >>> 24;
}

/** False only when the two terms are certainly further apart than `max` edits. */
export function mayBeWithin(maskA: number, maskB: number, max: number): boolean {
  if (((maskA | maskB) & SURROGATE_BIT) !== 0) return true;
  return popcount((maskA ^ maskB) & 0x7fffffff) <= 2 * max;
}

let rowA = new Int32Array(64);
let rowB = new Int32Array(64);

function hasSurrogate(s: string): boolean {
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdfff) return true;
  }
  return false;
}


/** Levenshtein distance between `a` and `b` in code points, or `max + 1` when it exceeds `max`. */
export function boundedLevenshtein(a: string, b: string, max: number): number {
  if (hasSurrogate(a) || hasSurrogate(b)) {
    const x = Array.from(a, (c) => c.codePointAt(0)!);
    const y = Array.from(b, (c) => c.codePointAt(0)!);
    return levenshtein(x.length, y.length, (i) => x[i]!, (j) => y[j]!, max);
  }
  return levenshteinUnits(a, b, max);
}

/** Two-row dynamic programme over UTF-16 code units with early exit (no surrogates present). */
function levenshteinUnits(a: string, b: string, max: number): number {
  const la = a.length;
  const lb = b.length;
  if (Math.abs(la - lb) > max) return max + 1;
  if (rowA.length <= lb) {
    rowA = new Int32Array(lb * 2 + 2);
    rowB = new Int32Array(lb * 2 + 2);
  }
  let prev = rowA;
  let cur = rowB;
  for (let j = 0; j <= lb; j++) prev[j] = j;
  for (let i = 1; i <= la; i++) {
    cur[0] = i;
    let rowMin = i;
    const ca = a.charCodeAt(i - 1);
    for (let j = 1; j <= lb; j++) {
      const sub = prev[j - 1]! + (ca === b.charCodeAt(j - 1) ? 0 : 1);
      const del = prev[j]! + 1;
      const ins = cur[j - 1]! + 1;
      const v = sub < del ? (sub < ins ? sub : ins) : del < ins ? del : ins;
      cur[j] = v;
      if (v < rowMin) rowMin = v;
    }
    if (rowMin > max) return max + 1;
    const t = prev;
    prev = cur;
    cur = t;
  }
  const d = prev[lb]!;
  return d > max ? max + 1 : d;
}

function levenshtein(la: number, lb: number, a: (i: number) => number, b: (j: number) => number, max: number): number {
  if (Math.abs(la - lb) > max) return max + 1;
  let prev = new Int32Array(lb + 1);
  let cur = new Int32Array(lb + 1);
  for (let j = 0; j <= lb; j++) prev[j] = j;
  for (let i = 1; i <= la; i++) {
    cur[0] = i;
    let rowMin = i;
    for (let j = 1; j <= lb; j++) {
      const v = Math.min(prev[j - 1]! + (a(i - 1) === b(j - 1) ? 0 : 1), prev[j]! + 1, cur[j - 1]! + 1);
      cur[j] = v;
      if (v < rowMin) rowMin = v;
    }
    if (rowMin > max) return max + 1;
    const t = prev;
    prev = cur;
    cur = t;
  }
  const d = prev[lb]!;
  return d > max ? max + 1 : d;
}

/**
 * Bounded edit distance from one fixed term to many candidates. For terms of at most 32 UTF-16
 * code units without surrogates it uses Myers' bit-parallel algorithm (Hyyrö's formulation for
 * the global distance): one pass over the candidate with a handful of 32-bit operations per
 * character; otherwise the dynamic programme of `boundedLevenshtein`.
 */
export class FuzzyMatcher {
  private readonly bitParallel: boolean;
  private readonly ascii = new Int32Array(128);
  private readonly other = new Map<number, number>();
  private readonly high: number;
  private readonly m: number;

  constructor(readonly term: string, readonly max: number) {
    this.m = term.length;
    this.bitParallel = this.m > 0 && this.m <= 32 && !hasSurrogate(term);
    this.high = this.m === 0 ? 0 : 1 << (this.m - 1);
    if (this.bitParallel) {
      for (let i = 0; i < this.m; i++) {
        const c = term.charCodeAt(i);
        if (c < 128) this.ascii[c]! |= 1 << i;
        else this.other.set(c, (this.other.get(c) ?? 0) | (1 << i));
      }
    }
  }

  /** Distance to `cand` in code points, or `max + 1` when it exceeds `max`. */
  distance(cand: string): number {
    const max = this.max;
    const n = cand.length;
    if (!this.bitParallel || hasSurrogate(cand)) return boundedLevenshtein(this.term, cand, max);
    if (Math.abs(n - this.m) > max) return max + 1;
    let pv = -1;
    let mv = 0;
    let score = this.m;
    const high = this.high;
    for (let j = 0; j < n; j++) {
      const c = cand.charCodeAt(j);
      const eq = c < 128 ? this.ascii[c]! : (this.other.get(c) ?? 0);
      const xv = eq | mv;
      const xh = ((((eq & pv) + pv) | 0) ^ pv) | eq;
      let ph = mv | ~(xh | pv);
      let mh = pv & xh;
      if (ph & high) score++;
      else if (mh & high) score--;
      // Each remaining character lowers the distance by at most one.
      if (score - (n - j - 1) > max) return max + 1;
      ph = (ph << 1) | 1;
      mh <<= 1;
      pv = mh | ~(xv | ph);
      mv = ph & xv;
    }
    return score > max ? max + 1 : score;
  }
}
