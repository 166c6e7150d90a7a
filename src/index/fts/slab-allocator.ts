/**
 * Storage of an inverted index's per-term arrays (`InvertedIndex.post[id]` and `tokPos[id]`):
 * 1 MiB chunks (one Uint32Array each) with per-size free lists. A separate backing store per
 * array, and fresh never-touched memory for every growth, made allocation (page faults,
 * external-memory accounting) dominate indexing with ~10^5 short posting lists. Arrays replaced
 * by growth go back to the free list of their size (all sizes handed out are powers of two) and
 * are reused by later growths. Arrays above 32 Ki entries get a chunk of their own, dropped when
 * they are replaced.
 *
 * An array is a location (chunk, offset; `alloc` reports it in `chunk` / `offset`, the index
 * keeps it per term with its capacity). The insertion path writes through the chunk there; a
 * reader gets a view (`subarray`) made when it first reads the term (`InvertedIndex.postOf`).
 * Views are heap objects of ~120 bytes each: made for every array up front, a MemTable of
 * 50 000 terms held 100 000 of them for readers that touch a few, and reaching the data through
 * them cost the insertion path a cache miss or two per term and flush.
 *
 * Chunks outlive their slab (issue 7). A MemTable's index fills ~40 chunks a 100 000 rows and
 * lets them go when it is sealed or dropped, while the next MemTable fills as many fresh ones:
 * first-touch page faults, ~11 µs each on the 2-core VMs this project is measured on (toolchain
 * facts in bench/results/search-notes.md), were ~1 µs of the main thread's time a row ingested.
 * So the standard chunks of a slab that is done go to a process-wide pool (`recycle`, called by
 * a sealing index, or by a finalizer once a slab is garbage), bounded by `MAX_IDLE_CHUNKS`, and
 * new chunks come from it first. A recycled chunk holds old entries: the index reads an array
 * only below its counts, which its own writes fill, as it already does for arrays reused from
 * the free lists.
 */

const NO_ENTRIES = new Uint32Array(0);
/** Entries of a standard chunk (1 MiB). */
export const SLAB_CHUNK_ENTRIES = 1 << 18;
const CHUNK_ENTRIES = SLAB_CHUNK_ENTRIES;
/** Arrays above this many entries get a chunk of their own. */
const MAX_SHARED_ENTRIES = 1 << 15;
/** Idle standard chunks the process keeps for reuse (64 MiB). */
const MAX_IDLE_CHUNKS = 64;

const idleChunks: Uint32Array[] = [];

/** What the chunk pool did in this process (tests and benchmarks read these). */
export const slabChunkStats = { fresh: 0, reused: 0, recycled: 0, dropped: 0 };

/**
 * A standard chunk, from the pool when it has one. Chunks are SharedArrayBuffer memory: the
 * pool also serves a MemTable index's posting segments (posting-segments.ts), which another
 * thread may read without a copy, and one pool for both lets sealing's new arrays reuse the
 * segments' memory of the MemTable flushed before.
 */
export function takeChunk(): Uint32Array {
  const c = idleChunks.pop();
  if (c !== undefined) {
    slabChunkStats.reused++;
    return c;
  }
  slabChunkStats.fresh++;
  return new Uint32Array(new SharedArrayBuffer(4 * CHUNK_ENTRIES));
}

/** Gives chunk `c` to the pool if it is a standard one and the pool has room; true when it was standard. */
function giveChunk(c: Uint32Array): boolean {
  if (c.length !== CHUNK_ENTRIES) return false;
  if (idleChunks.length < MAX_IDLE_CHUNKS) {
    idleChunks.push(c);
    slabChunkStats.recycled++;
  } else slabChunkStats.dropped++;
  return true;
}

/** Gives the standard chunks of `chunks` from index `from` on to the pool (up to its bound) and drops them from the list. */
export function recycleChunks(chunks: Uint32Array[], from = 1): void {
  for (let i = from; i < chunks.length; i++) giveChunk(chunks[i]!);
  chunks.length = from;
}

/** A slab that became garbage without being recycled (a dropped MemTable's index): its chunks, which nothing else reaches, go back. */
const unreachable = new FinalizationRegistry<Uint32Array[]>(recycleChunks);

/** Test hook: fills every idle chunk with `value`, so a test sees whether stale entries are ever read. */
export function fillIdleSlabChunksForTests(value: number): number {
  for (const c of idleChunks) c.fill(value);
  return idleChunks.length;
}

export class SlabAllocator {
  /** Chunk arrays; `chunks[0]` is empty, so location 0 means "not allocated here". */
  readonly chunks: Uint32Array[] = [NO_ENTRIES];
  private cur = 0;
  private used = CHUNK_ENTRIES;
  private registered = false;
  /** Chunk indices of dropped large arrays, for reuse. */
  private readonly freeChunks: number[] = [];
  /** Per size class (log2 entries): free arrays' chunks and offsets, in pairs. */
  private readonly freeLocs: number[][] = Array.from({ length: 16 }, () => []);
  /** Location of the array last allocated: chunk index (≥ 1) and offset in it. */
  chunk = 0;
  offset = 0;

  /** Allocates an array of `n` entries; its location is then in `chunk` / `offset`. */
  alloc(n: number): void {
    if (n > MAX_SHARED_ENTRIES) {
      const c = this.freeChunks.length > 0 ? this.freeChunks.pop()! : this.chunks.length;
      this.chunks[c] = new Uint32Array(n);
      this.chunk = c;
      this.offset = 0;
      return;
    }
    if ((n & (n - 1)) === 0) {
      const locs = this.freeLocs[31 - Math.clz32(n)]!;
      if (locs.length > 0) {
        this.offset = locs.pop()!;
        this.chunk = locs.pop()!;
        return;
      }
    }
    this.allocExact(n);
  }

  /** Allocates exactly `n` (≤ 32 Ki) entries in a standard chunk, with no size class (a compacted array's). */
  allocExact(n: number): void {
    if (this.used + n > CHUNK_ENTRIES) {
      if (!this.registered) {
        this.registered = true;
        unreachable.register(this, this.chunks, this);
      }
      this.cur = this.chunks.length;
      this.chunks.push(takeChunk());
      this.used = 0;
    }
    this.chunk = this.cur;
    this.offset = this.used;
    this.used += n;
  }

  /**
   * Allocates exactly `n` entries for an array that will not grow (a sealed index's): in a
   * standard chunk up to half a chunk (pooled memory, no page faults), else a chunk of its own.
   */
  allocFixed(n: number): void {
    if (n > CHUNK_ENTRIES / 2) this.alloc(n);
    else this.allocExact(n);
  }

  /** Whether chunk `c` holds one large array of its own (not moved by a compaction). */
  isOwnChunk(c: number): boolean {
    return this.chunks[c]!.length !== CHUNK_ENTRIES;
  }

  /**
   * Starts moving every array of the standard chunks into new ones (`allocExact`): later
   * allocations take new chunks, and nothing goes to the free lists of the old ones. Returns the
   * end of the old chunks, for `recycleBefore`.
   */
  startCompaction(): number {
    this.used = CHUNK_ENTRIES;
    this.freeChunks.length = 0;
    for (const locs of this.freeLocs) locs.length = 0;
    return this.chunks.length;
  }

  /**
   * Ends a compaction: the standard chunks below `end` (every array moved out of them, no view of
   * them kept) go to the pool; arrays in chunks of their own stay where they are.
   */
  recycleBefore(end: number): void {
    for (let i = 1; i < end; i++) {
      if (giveChunk(this.chunks[i]!)) {
        this.chunks[i] = NO_ENTRIES;
        this.freeChunks.push(i);
      }
    }
  }

  /** Takes back the array of `n` entries at chunk `c`, offset `off`, once nothing refers to it. */
  release(n: number, c: number, off: number): void {
    if (n > MAX_SHARED_ENTRIES) {
      this.chunks[c] = NO_ENTRIES;
      this.freeChunks.push(c);
    } else if ((n & (n - 1)) === 0) {
      this.freeLocs[31 - Math.clz32(n)]!.push(c, off);
    }
  }

  /**
   * Gives every chunk to the pool for other slabs. The caller promises nothing reads or writes
   * them through this slab again (no location or view into them is kept); the slab is unusable.
   */
  recycle(): void {
    if (this.registered) unreachable.unregister(this);
    this.registered = false;
    recycleChunks(this.chunks);
  }
}
