import { recycleChunks, SLAB_CHUNK_ENTRIES, takeChunk } from './slab-allocator.js';

/**
 * Immutable runs of a MemTable full-text index's postings, grouped by term (issue 7).
 *
 * Why: appending each flush of buffered tokens to every term's own growable arrays touched, per
 * distinct term of a 1 000-row write (~7.6 a row of Zipf text), a few cache lines at random
 * addresses — the counters, the term's slab arrays — ~400 ns a term on the 2-core VMs this
 * project is measured on, most of the event loop's share of full-text indexing on the write
 * path. A segment is the same flush grouped by term (a counting sort, sequential writes) and
 * kept as it is: a write pays for its own tokens only. A term's postings are moved into its
 * per-term arrays when a read asks for that term (`InvertedIndex.ensureTerm`), and every term's
 * at once when the index is sealed for a generation (one pass over the segments into exact
 * arrays, the copy sealing made anyway).
 *
 * Layout of one segment, rows [from, to) of the index: `terms[u]` (u < nTerms) are its term ids
 * in increasing order; the term's postings are pairs (row position, end of the document's token
 * positions in `tok`) in `post[postEnd[u − 1] .. postEnd[u])` (postEnd[−1] = 0), its token
 * positions `tok[tokEnd[u − 1] .. tokEnd[u])`, documents in increasing position. Segments of one
 * index cover consecutive row ranges in order, so a term's postings over all of them, segment
 * after segment, are in position order.
 *
 * The arrays are views into 1 MiB chunks of SharedArrayBuffer (`SegmentArena`), taken from the
 * slab allocator's process-wide pool and given back when the index no longer needs them: fresh
 * memory page-faults as it fills (~11 µs a 4 KiB page on those VMs, ~1 µs a row for a
 * segment's ~350 bytes a row), and a shared buffer can be read by another thread without a copy.
 */

/** Entries of a standard chunk (1 MiB), the slab's. */
const CHUNK_ENTRIES = SLAB_CHUNK_ENTRIES;

/** An arena that became garbage without being released (a dropped MemTable's index): its chunks go back. */
const unreachable = new FinalizationRegistry<Uint32Array[]>((chunks) => recycleChunks(chunks, 0));

/**
 * Bump allocation of exact arrays in pooled chunks. Nothing is freed one array at a time; the
 * whole arena goes back at once (`release`), when no segment of it is read any more.
 */
export class SegmentArena {
  private readonly chunks: Uint32Array[] = [];
  private cur: Uint32Array | undefined;
  private used = CHUNK_ENTRIES;
  private registered = false;

  /** A new array of `n` entries (contents unspecified: a pooled chunk holds old entries). */
  alloc(n: number): Uint32Array {
    if (n > CHUNK_ENTRIES) {
      // Larger than a chunk: a buffer of its own (not pooled).
      const own = new Uint32Array(new SharedArrayBuffer(4 * Math.max(1, n)));
      this.chunks.push(own);
      return own.subarray(0, n);
    }
    if (this.cur === undefined || this.used + n > CHUNK_ENTRIES) {
      if (!this.registered) {
        this.registered = true;
        unreachable.register(this, this.chunks, this);
      }
      this.cur = takeChunk();
      this.chunks.push(this.cur);
      this.used = 0;
    }
    const at = this.used;
    this.used += n;
    return this.cur.subarray(at, at + n);
  }

  /** Gives every chunk back to the pool. The caller promises no array of this arena is read again. */
  release(): void {
    if (this.registered) unreachable.unregister(this);
    this.registered = false;
    recycleChunks(this.chunks, 0);
    this.cur = undefined;
    this.used = CHUNK_ENTRIES;
  }
}

/** Postings of rows [from, to) grouped by term; see the module comment. */
export interface PostingSegment {
  readonly from: number;
  readonly to: number;
  readonly nTerms: number;
  readonly terms: Uint32Array;
  readonly postEnd: Uint32Array;
  readonly tokEnd: Uint32Array;
  readonly post: Uint32Array;
  readonly tok: Uint32Array;
}

/** Token positions a segment holds. */
export function segmentTokens(s: PostingSegment): number {
  return s.nTerms === 0 ? 0 : s.tokEnd[s.nTerms - 1]!;
}

/** Index u of term `id` in `s.terms`, or −1. */
export function segmentTermIndex(s: PostingSegment, id: number): number {
  const terms = s.terms;
  let lo = 0;
  let hi = s.nTerms;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    const t = terms[mid]!;
    if (t < id) lo = mid + 1;
    else if (t > id) hi = mid;
    else return mid;
  }
  return -1;
}

/**
 * First posting (pair index, from `ps`) of the run `post[ps .. pe)` (pairs) at a position ≥
 * `min`: the whole run when it starts there (the usual case), else a binary search.
 */
export function firstPostingFrom(post: Uint32Array, ps: number, pe: number, min: number): number {
  if (ps === pe || post[ps]! >= min) return ps;
  let lo = ps >>> 1;
  let hi = pe >>> 1;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (post[2 * mid]! < min) lo = mid + 1;
    else hi = mid;
  }
  return 2 * lo;
}

/**
 * One segment holding the postings of consecutive segments `segs` (each `from` the previous
 * one's `to`), term by term: a k-way merge of their sorted term lists, each term's runs copied
 * segment after segment (so its documents stay in position order) with token offsets moved.
 */
export function mergeSegments(segs: readonly PostingSegment[], arena: SegmentArena): PostingSegment {
  let nt = 0;
  let np = 0;
  let ntok = 0;
  for (const s of segs) {
    nt += s.nTerms;
    np += s.nTerms === 0 ? 0 : s.postEnd[s.nTerms - 1]!;
    ntok += segmentTokens(s);
  }
  // The union has at most `nt` terms; the unused tail of these arrays is left over.
  const terms = arena.alloc(nt);
  const postEnd = arena.alloc(nt);
  const tokEnd = arena.alloc(nt);
  const post = arena.alloc(np);
  const tok = arena.alloc(ntok);
  const k = segs.length;
  const cur = new Uint32Array(k);
  let u = 0;
  let w = 0;
  let t = 0;
  for (;;) {
    let min = 0xffffffff;
    for (let i = 0; i < k; i++) {
      const s = segs[i]!;
      const c = cur[i]!;
      if (c < s.nTerms && s.terms[c]! < min) min = s.terms[c]!;
    }
    if (min === 0xffffffff) break;
    for (let i = 0; i < k; i++) {
      const s = segs[i]!;
      const c = cur[i]!;
      if (c >= s.nTerms || s.terms[c] !== min) continue;
      const ps = c === 0 ? 0 : s.postEnd[c - 1]!;
      const pe = s.postEnd[c]!;
      const ts = c === 0 ? 0 : s.tokEnd[c - 1]!;
      const te = s.tokEnd[c]!;
      const shift = t - ts;
      const sp = s.post;
      for (let q = ps; q < pe; q += 2) {
        post[w++] = sp[q]!;
        post[w++] = sp[q + 1]! + shift;
      }
      const st = s.tok;
      for (let q = ts; q < te; q++) tok[t++] = st[q]!;
      cur[i] = c + 1;
    }
    terms[u] = min;
    postEnd[u] = w;
    tokEnd[u] = t;
    u++;
  }
  return { from: segs[0]!.from, to: segs[k - 1]!.to, nTerms: u, terms, postEnd, tokEnd, post, tok };
}
