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
  /** Rows closed (their ids final); ids appended now belong to row `rows`. */
  rows = 0;
  private used = 0;
  /** Per term id: 1 + the last row it was recorded for (drops repeats within a document). */
  private stamp: Uint32Array = new Uint32Array(64);

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
   * Records buffered tokens `terms[i]` of documents `docs[i]` (global positions, ascending, none
   * before a row already closed), i < n; then closes every row below `span` (local).
   */
  appendTokens(terms: Uint32Array, docs: Uint32Array, n: number, base: number, span: number): void {
    let used = this.used;
    let stamp = this.stamp;
    let chunk = this.chunks[used >>> CHUNK_SHIFT];
    for (let i = 0; i < n; i++) {
      const r = docs[i]! - base;
      if (r > this.rows) {
        this.used = used;
        this.closeTo(r);
      }
      const id = terms[i]!;
      if (id >= stamp.length) stamp = this.stamp = grown(stamp, id + 1);
      if (stamp[id] === r + 1) continue;
      stamp[id] = r + 1;
      if ((used & CHUNK_MASK) === 0 || chunk === undefined) {
        chunk = this.chunks[used >>> CHUNK_SHIFT];
        if (chunk === undefined) this.chunks.push((chunk = new Uint32Array(CHUNK)));
      }
      chunk[used & CHUNK_MASK] = id;
      used++;
    }
    this.used = used;
    this.closeTo(span);
  }

  /** Closes rows [rows, r): each ends where the ids appended so far end. */
  private closeTo(r: number): void {
    if (r <= this.rows) return;
    if (r + 1 > this.offsets.length) this.offsets = grown(this.offsets, r + 1);
    const o = this.offsets;
    for (let k = this.rows + 1; k <= r; k++) o[k] = this.used;
    this.rows = r;
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
    out.stamp = new Uint32Array(Math.max(64, termCount));
    // Every row is closed: a later `appendTokens` starts past them, so stale stamps cannot match.
    return out;
  }

  /**
   * The forward index after a flush's position map (see `InvertedIndex.remapped`), in steps that
   * pause (yield) after about `sliceWork` ids are copied: old local row
   * i (global base + i) moves to new local row newPosition[base + i], or is dropped (−1, or past
   * the map); term ids are renumbered by `newId` (every term a kept row holds survives).
   */
  *remapSteps(newPosition: Int32Array, base: number, newId: Int32Array, newSpan: number, termCount: number, sliceWork: number): Generator<void, RowTerms, void> {
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
    out.stamp = new Uint32Array(Math.max(64, termCount));
    return out;
  }
}

function grown(a: Uint32Array, need: number): Uint32Array {
  const next = new Uint32Array(Math.max(need, a.length * 2));
  next.set(a);
  return next;
}
