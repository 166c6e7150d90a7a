/**
 * A forward index: the distinct term ids of each document of an inverted index, rows local to
 * the index's base position, laid out CSR-style: row r's ids are entries offsets[r] ..
 * offsets[r + 1] of one sequence stored in fixed-size chunks (entry k is
 * `chunks[k >>> CHUNK_SHIFT][k & CHUNK_MASK]`), so growing it never copies or page-faults in
 * one large array at once (a doubling of a 20 MB array stalled an ingest for ~80 ms here).
 *
 * Why: a table keeps BM25's live document frequencies up to date as rows are superseded. A
 * cleared row must take one off the frequency of every term it holds; with the postings alone
 * that is a search per (term, cleared row), paid again for each term the next time it is asked.
 * With this, a cleared row costs one contiguous read of its ~20 ids, once for all terms.
 * Memory: 4 bytes per distinct term of a document, plus 4 per row.
 */
export const CHUNK_SHIFT = 18;
export const CHUNK_MASK = (1 << CHUNK_SHIFT) - 1;
const CHUNK = 1 << CHUNK_SHIFT;

export class RowTerms {
  /** offsets[r] = start of row r's ids; valid for r ≤ rows. */
  offsets: Uint32Array = new Uint32Array(17);
  /** The id sequence, CHUNK entries a chunk. */
  readonly chunks: Uint32Array[] = [];
  /** Rows recorded (their ids final). */
  rows = 0;
  private used = 0;
  /** `appendSegment`'s per-row write cursors (scratch). */
  private cursor: Uint32Array = new Uint32Array(64);

  /** Entry k of the id sequence. */
  id(k: number): number {
    return this.chunks[k >>> CHUNK_SHIFT]![k & CHUNK_MASK]!;
  }

  /** Start and end of local row `r`'s ids in the sequence (empty past the rows recorded). */
  start(r: number): number {
    return r < this.rows ? this.offsets[r]! : 0;
  }
  end(r: number): number {
    return r < this.rows ? this.offsets[r + 1]! : 0;
  }

  /**
   * Records the postings of a segment of rows (posting-segments.ts): term `terms[u]` (u < nTerms)
   * is in the documents `post[2j]` (global positions, ≥ `base` + the rows closed so far) for the
   * pairs j of `post[postEnd[u − 1] .. postEnd[u])`; then closes every row below `span` (local).
   * A posting is one (term, document), so no row records a term twice; rows hold their ids
   * ascending. A counting sort by row: one pass to count, one to place, both sequential over
   * the segment.
   */
  appendSegment(terms: Uint32Array, nTerms: number, postEnd: Uint32Array, post: Uint32Array, base: number, span: number): void {
    const first = this.rows;
    if (span <= first) return;
    if (span + 1 > this.offsets.length) this.offsets = grown(this.offsets, span + 1);
    const o = this.offsets;
    // o[r + 1] counts row r's ids, then becomes its end.
    o.fill(0, first + 1, span + 1);
    const np = nTerms === 0 ? 0 : postEnd[nTerms - 1]!;
    for (let q = 0; q < np; q += 2) o[post[q]! - base + 1]!++;
    const used = this.used;
    o[first] = used;
    for (let r = first; r < span; r++) o[r + 1]! += o[r]!;
    const total = np >>> 1;
    while (this.chunks.length * CHUNK < used + total) this.chunks.push(new Uint32Array(CHUNK));
    // Each row's write cursor, from its start.
    let cursor = this.cursor;
    if (cursor.length < span - first) cursor = this.cursor = new Uint32Array(Math.max(span - first, 2 * cursor.length));
    cursor.set(o.subarray(first, span));
    const chunks = this.chunks;
    let q = 0;
    for (let u = 0; u < nTerms; u++) {
      const id = terms[u]!;
      for (const e = postEnd[u]!; q < e; q += 2) {
        const k = cursor[post[q]! - base - first]!++;
        chunks[k >>> CHUNK_SHIFT]![k & CHUNK_MASK] = id;
      }
    }
    this.used = used + total;
    this.rows = span;
  }

  /**
   * The forward index of an inverted index's postings: term `id`'s are `postCount[id]` pairs
   * (global row position, token end) from entry `postAt[id]` of `post`, positions in
   * [base, base + span). Two passes (count, then fill) over the postings; rows hold their ids
   * ascending. Pauses (yields) about every `sliceWork` postings.
   */
  static *fromPostingsSteps(post: Uint32Array, postAt: Uint32Array, postCount: Uint32Array, termCount: number, base: number, span: number, sliceWork = Infinity): Generator<void, RowTerms, void> {
    const out = new RowTerms();
    const offsets = new Uint32Array(span + 1);
    let total = 0;
    let work = 0;
    for (let id = 0; id < termCount; id++) {
      const a = postAt[id]!;
      const c = postCount[id]!;
      total += c;
      for (let j = a; j < a + 2 * c; j += 2) offsets[post[j]! - base + 1]!++;
      if ((work += c) >= sliceWork) {
        work = 0;
        yield;
      }
    }
    for (let r = 0; r < span; r++) offsets[r + 1]! += offsets[r]!;
    for (let k = 0; k < total; k += CHUNK) out.chunks.push(new Uint32Array(CHUNK));
    const chunks = out.chunks;
    const cursor = offsets.slice(0, Math.max(1, span));
    for (let id = 0; id < termCount; id++) {
      const a = postAt[id]!;
      const c = postCount[id]!;
      for (let j = a; j < a + 2 * c; j += 2) {
        const k = cursor[post[j]! - base]!++;
        chunks[k >>> CHUNK_SHIFT]![k & CHUNK_MASK] = id;
      }
      if ((work += c) >= sliceWork) {
        work = 0;
        yield;
      }
    }
    out.offsets = offsets;
    out.rows = span;
    out.used = total;
    return out;
  }

  /**
   * The forward index after a flush's position map (see `InvertedIndex.remapped`), in steps that
   * pause (yield) after about `sliceWork` ids are copied: old local row
   * i (global base + i) moves to new local row newPosition[base + i], or is dropped (−1, or past
   * the map); term ids are renumbered by `newId` (every term a kept row holds survives).
   */
  *remapSteps(newPosition: Int32Array, base: number, newId: Int32Array, newSpan: number, sliceWork: number): Generator<void, RowTerms, void> {
    const out = new RowTerms();
    const offsets = new Uint32Array(newSpan + 1);
    const limit = Math.min(this.rows, newPosition.length - base);
    let total = 0;
    for (let i = 0; i < limit; i++) if (newPosition[base + i]! >= 0) total += this.offsets[i + 1]! - this.offsets[i]!;
    for (let k = 0; k < total; k += CHUNK) out.chunks.push(new Uint32Array(CHUNK));
    const chunks = out.chunks;
    const from = this.chunks;
    let used = 0;
    let next = 0; // new rows [0, next) have their offsets
    let work = 0;
    for (let i = 0; i < limit; i++) {
      if (work >= sliceWork) {
        work = 0;
        yield;
      }
      const j = newPosition[base + i]!;
      work += 4;
      if (j < 0) continue;
      work += this.offsets[i + 1]! - this.offsets[i]!;
      while (next <= j) offsets[next++] = used;
      for (let k = this.offsets[i]!; k < this.offsets[i + 1]!; k++, used++) {
        chunks[used >>> CHUNK_SHIFT]![used & CHUNK_MASK] = newId[from[k >>> CHUNK_SHIFT]![k & CHUNK_MASK]!]!;
      }
    }
    while (next <= newSpan) offsets[next++] = used;
    out.offsets = offsets;
    out.rows = newSpan;
    out.used = used;
    return out;
  }
}

function grown(a: Uint32Array, need: number): Uint32Array {
  const next = new Uint32Array(Math.max(need, a.length * 2));
  next.set(a);
  return next;
}
