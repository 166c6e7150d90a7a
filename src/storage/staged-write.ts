/**
 * Writing large objects to a file through reused staging buffers.
 *
 * The kernel's first read of a user page costs far more than the copy itself on the VMs this
 * project is measured on: `write(2)` of a freshly allocated 64 MiB buffer took 95–200 ms of
 * system time, the same write from a buffer the kernel had read before 10 ms (`node`, one
 * process each, six rounds; the page-cache side is the same in both). A generation's files are
 * made of fresh memory every flush (its Arrow buffers, its index sidecars), and written directly
 * they cost ingest ~2.5 µs a row of libuv's threads' time (`perf`: `copy_folio_from_iter_atomic`,
 * 11 % of the process's CPU while ingesting with every index maintained). Copied first into a
 * buffer that goes round — a user-mode copy of memory already mapped, ~0.1 ms a MiB — the
 * kernel reads only pages it has read before.
 *
 * Two staging buffers per write alternate, so the next piece is copied while the last is
 * written. Small writes go out as they are: their pages cost little, and the file write worker
 * (file-write-worker.ts) already copies what it writes into buffers of its own.
 */
import type { FileHandle } from 'node:fs/promises';
import { BufferPool } from '../util/buffer-pool.js';

const MiB = 1024 * 1024;
/** One staging buffer; also the size of each `write` call of a staged write. */
export const STAGE_BYTES = 4 * MiB;
/** Writes of fewer bytes skip the staging buffers. */
export const STAGE_MIN_BYTES = 256 * 1024;
/** Idle staging buffers kept for the process (four: two writes at a time without a fresh one). */
const stagingBuffers = new BufferPool(STAGE_BYTES, 4 * STAGE_BYTES);

/** How staged writes went in this process (tests and benchmarks read these, never timings). */
export const stagedWriteStats = { writes: 0, bytes: 0, buffersReused: 0, buffersFresh: 0 };

/** Writes every byte of `parts`, in order, at the file's current position. */
export async function writeParts(fh: FileHandle, parts: readonly Uint8Array[]): Promise<void> {
  let total = 0;
  for (const p of parts) total += p.byteLength;
  if (total < STAGE_MIN_BYTES) return writeVectored(fh, parts);
  const reusedBefore = stagingBuffers.reused;
  const buffers = [stagingBuffers.take(STAGE_BYTES), stagingBuffers.take(STAGE_BYTES)];
  const reused = stagingBuffers.reused - reusedBefore;
  stagedWriteStats.writes++;
  stagedWriteStats.bytes += total;
  stagedWriteStats.buffersReused += reused;
  stagedWriteStats.buffersFresh += buffers.length - reused;
  let part = 0;
  let offset = 0;
  let turn = 0;
  let inFlight: Promise<void> | undefined;
  try {
    while (part < parts.length) {
      const buf = buffers[turn++ & 1]!;
      let n = 0;
      while (n < buf.byteLength && part < parts.length) {
        const p = parts[part]!;
        const take = Math.min(buf.byteLength - n, p.byteLength - offset);
        buf.set(p.subarray(offset, offset + take), n);
        n += take;
        offset += take;
        if (offset === p.byteLength) {
          part++;
          offset = 0;
        }
      }
      // The buffer filled now was last written two pieces ago: that write has been awaited.
      if (inFlight) await inFlight;
      inFlight = writeFully(fh, buf.subarray(0, n));
    }
    if (inFlight) await inFlight;
  } finally {
    // Every write started here has settled (a failure surfaces at the await of its promise, and
    // nothing else runs between starting one write and awaiting the one before).
    for (const b of buffers) stagingBuffers.give(b);
  }
}

/** `data` written whole, however short the writes the kernel makes. */
async function writeFully(fh: FileHandle, data: Uint8Array): Promise<void> {
  let at = 0;
  while (at < data.byteLength) {
    const { bytesWritten } = await fh.write(data, at, data.byteLength - at);
    at += bytesWritten;
  }
}

/** Buffers per writev call (Linux takes at most 1024). */
const WRITEV_PARTS = 512;

/** Every byte of the parts, in order, with as few system calls as writev allows. */
async function writeVectored(fh: FileHandle, parts: readonly Uint8Array[]): Promise<void> {
  let pending = parts.filter((p) => p.byteLength > 0);
  while (pending.length > 0) {
    const batch = pending.slice(0, WRITEV_PARTS);
    let { bytesWritten } = await fh.writev(batch);
    // A short write: drop what went out, go on from the first byte that did not.
    let i = 0;
    while (i < batch.length && bytesWritten >= batch[i]!.byteLength) bytesWritten -= batch[i++]!.byteLength;
    pending = i < batch.length ? [batch[i]!.subarray(bytesWritten), ...batch.slice(i + 1), ...pending.slice(batch.length)] : pending.slice(batch.length);
  }
}
