/**
 * Reusable large buffers: WAL entries' output, and the buffers a write or an encoding job
 * carries to a worker thread and back (file-write-worker.ts, encode-worker.ts).
 *
 * Encoding a 10 MiB entry into freshly allocated memory costs ~40 ms on this class of machine,
 * almost all of it first-touch page faults; into an already-touched buffer it costs ~5 ms, plus
 * ~4.5 ms for the entry's CRC-32 trailer (toolchain.md §3.2; measured by bench/write.bench.ts). The appender therefore encodes into a
 * buffer taken from this pool and gives it back once the entry's write has *succeeded* — then
 * the store no longer reads it (the ObjectStore contract: `data` is not used after the returned
 * promise settles). A failed write's buffer is never reused, in case a timed-out request still
 * reads from it.
 *
 * The same holds for a buffer a worker job carries: a fresh one per job page-faults as it is
 * filled and adds to V8's external memory, whose growth triggers garbage collections (an ingest
 * of 100 000 rows sent ~120 MB of fresh buffers to the two workers). A job's buffer is therefore
 * taken here, sent to the worker, sent back with its answer and given back.
 *
 * A pool whose buffers cross threads is `shared`: its memory is a SharedArrayBuffer, posted to
 * the worker and back rather than transferred. A transferred buffer arrives as a new ArrayBuffer
 * whose length V8 counts as external memory of the receiving thread's young generation until it
 * is sent on again, and once such memory passes 32 MiB an allocation starts a scavenge
 * ("external memory pressure"): the main thread ran 21–25 of them per 200 000 indexed rows
 * ingested (bench/dev-ingest.ts, --trace-gc), 1–2 with shared pools. V8 does not count shared
 * memory against a thread, so its round trips cost the collector nothing. (The 6–8 mark-compacts
 * per 200 000 rows, started by the old generation's limit, are unchanged.) `transferable` drops
 * shared buffers from a transfer list, where they may not be.
 *
 * One pool per use serves the whole process, so idle buffers stay bounded by `maxIdleBytes`
 * however many regions are open. Small buffers skip the pool: their allocation is cheap.
 */
const MiB = 1024 * 1024;

export class BufferPool {
  private idle: Uint8Array[] = [];
  private idleBytes = 0;
  /** Takes served by an idle buffer (tests and benchmarks read it). */
  reused = 0;
  /** Takes of a poolable size served by a fresh buffer (no idle one large enough). */
  fresh = 0;

  constructor(
    /** Entries smaller than this are allocated fresh. */
    readonly minPooledSize = 256 * 1024,
    /** Upper bound on the bytes of idle buffers kept for reuse. */
    readonly maxIdleBytes = 64 * MiB,
    /** Pooled buffers are SharedArrayBuffer memory (buffers that go to worker threads and back). */
    readonly shared = false,
  ) {}

  /** A buffer of at least `size` bytes (contents undefined). */
  take(size: number): Uint8Array {
    if (size < this.minPooledSize) return new Uint8Array(size);
    let best = -1;
    for (let i = 0; i < this.idle.length; i++) {
      const cap = this.idle[i].byteLength;
      if (cap >= size && (best < 0 || cap < this.idle[best].byteLength)) best = i;
    }
    if (best >= 0) {
      const buf = this.idle[best];
      this.idle.splice(best, 1);
      this.idleBytes -= buf.byteLength;
      this.reused++;
      return buf;
    }
    // Round up (to a power of two below 1 MiB, else to whole MiB) so requests of similar size
    // (the usual case under a steady load) fit each other's buffers. Not further: a fresh buffer
    // is zeroed, and first-touch page faults cost the whole length.
    this.fresh++;
    const bytes = size < MiB ? 2 ** Math.ceil(Math.log2(size)) : Math.ceil(size / MiB) * MiB;
    return new Uint8Array(this.shared ? new SharedArrayBuffer(bytes) : new ArrayBuffer(bytes));
  }

  /** Returns a buffer obtained from `take` (pass the whole buffer or any view of it). */
  give(view: Uint8Array): void {
    const buf = view.byteOffset === 0 && view.byteLength === view.buffer.byteLength ? view : new Uint8Array(view.buffer);
    if (buf.byteLength < this.minPooledSize) return;
    // Keep the largest buffers: a small one can stand in for nothing a large one cannot.
    this.idle.push(buf);
    this.idleBytes += buf.byteLength;
    this.idle.sort((a, b) => b.byteLength - a.byteLength);
    while (this.idleBytes > this.maxIdleBytes) this.idleBytes -= this.idle.pop()!.byteLength;
  }

  /** Bytes held by idle buffers (tests, diagnostics). */
  get idleByteLength(): number {
    return this.idleBytes;
  }
}

/**
 * The buffers of `buffers` that a `postMessage` can transfer: shared memory is posted as it is
 * (it may not be in a transfer list, and needs no transfer to be seen by the other side).
 */
export function transferable(buffers: readonly ArrayBufferLike[]): ArrayBuffer[] {
  const out: ArrayBuffer[] = [];
  for (const b of buffers) if (!(b instanceof SharedArrayBuffer)) out.push(b as ArrayBuffer);
  return out;
}
