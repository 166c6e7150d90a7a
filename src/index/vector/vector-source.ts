/**
 * A read-only view of a vector column as a list of contiguous chunks, addressed by global row
 * position (a MemTable's row position or a generation file's row index).
 *
 * Each chunk is one flat `Float32Array` (row i at `i * dim`) plus an optional Arrow validity
 * bitmap, so the distance kernels run over plain typed arrays and never build per-row objects.
 * `fromArrow` wraps `FixedSizeList<Float32>[dim]` columns without copying (toolchain.md §3.1,
 * §3.4): after a slice the child's `values` already starts at the slice, while the list's own
 * validity bitmap is not sliced and is read at bit `data.offset + i`.
 *
 * Chunks must be appended in increasing position order without overlap; gaps are allowed (rows
 * in a gap simply do not exist, `locate` returns null for them).
 */
import { type Data, type FixedSizeList, type RecordBatch, Type } from 'apache-arrow';
import { normSqAt } from './distance.js';

export interface VectorChunk {
  /** Row position of the chunk's first vector. */
  start: number;
  count: number;
  /** count × dim values, row i at i × dim. */
  data: Float32Array;
  /** Arrow validity bitmap (bit set = valid) or null when every row is valid. */
  validity: Uint8Array | null;
  /** Bit index of row 0 in `validity`. */
  bitOffset: number;
}

/** Where a vector lives: `data[offset .. offset + dim)`. */
export interface VectorLocation {
  data: Float32Array;
  offset: number;
}

/** True when row `i` of the chunk holds a (non-null) vector. */
export function isValidAt(validity: Uint8Array | null, bitOffset: number, i: number): boolean {
  if (validity === null) return true;
  const b = bitOffset + i;
  return (validity[b >> 3] & (1 << (b & 7))) !== 0;
}

export class VectorSource {
  readonly chunks: VectorChunk[] = [];
  /** Chunk start positions, for binary search (parallel to `chunks`). */
  private starts: number[] = [];
  private rows = 0;
  /** Per chunk, ‖x‖ of every row (computed on first use; chunks are immutable). */
  private norms: (Float64Array | undefined)[] = [];

  constructor(readonly dim: number, chunks: VectorChunk[] = []) {
    if (!Number.isInteger(dim) || dim <= 0) throw new Error(`vector dimension must be a positive integer, got ${dim}`);
    for (const c of chunks) this.append(c);
  }

  /**
   * Zero-copy source over column `columnIndex` (a `FixedSizeList<Float32>`) of `batches`; the
   * first batch's row 0 gets position `firstPosition`, later batches follow contiguously.
   */
  static fromArrow(batches: RecordBatch[], columnIndex: number, firstPosition = 0): VectorSource {
    let dim = -1;
    const chunks: VectorChunk[] = [];
    let pos = firstPosition;
    for (const batch of batches) {
      const col = batch.data.children[columnIndex] as Data | undefined;
      if (col === undefined) throw new Error(`record batch has no column ${columnIndex}`);
      const chunk = chunkFromData(col, pos);
      const d = (col.type as unknown as FixedSizeList).listSize;
      if (dim === -1) dim = d;
      else if (d !== dim) throw new Error(`vector column changes dimension from ${dim} to ${d}`);
      if (chunk.count > 0) chunks.push(chunk);
      pos += col.length;
    }
    if (dim === -1) {
      if (batches.length === 0) throw new Error('VectorSource.fromArrow needs at least one record batch to learn the dimension');
    }
    return new VectorSource(dim, chunks);
  }

  /** Appends a chunk; it must start at or after the end of the previous one. */
  append(chunk: VectorChunk): void {
    const { start, count, data, validity, bitOffset } = chunk;
    if (!Number.isInteger(start) || start < 0 || !Number.isInteger(count) || count < 0) {
      throw new Error(`invalid vector chunk start=${start} count=${count}`);
    }
    if (start + count > 0x1_0000_0000) throw new Error(`row positions must fit in 32 bits (chunk ends at ${start + count})`);
    if (data.length < count * this.dim) throw new Error(`vector chunk holds ${data.length} values, needs ${count} × ${this.dim}`);
    if (validity !== null && validity.length * 8 < bitOffset + count) throw new Error('vector chunk validity bitmap is too short');
    if (count === 0) return;
    const end = this.endPosition;
    if (start < end) throw new Error(`vector chunk at ${start} overlaps or precedes the previous chunk (ends at ${end})`);
    this.chunks.push(chunk);
    this.starts.push(start);
    this.norms.push(undefined);
    this.rows += count;
  }

  /** Number of row slots (null rows included) over all chunks. */
  get rowCount(): number {
    return this.rows;
  }

  /** One past the last row position (0 when empty). */
  get endPosition(): number {
    const n = this.chunks.length;
    if (n === 0) return 0;
    const last = this.chunks[n - 1];
    return last.start + last.count;
  }

  /**
   * ‖x‖ of every row of chunk `ci` (sqrt of `normSqAt`, so bit-identical to `normAt`), cached:
   * cosine scans then cost the same as dot-product scans.
   */
  normsOf(ci: number): Float64Array {
    let n = this.norms[ci];
    if (n === undefined) {
      const c = this.chunks[ci];
      const dim = this.dim;
      n = new Float64Array(c.count);
      for (let i = 0; i < c.count; i++) n[i] = Math.sqrt(normSqAt(c.data, i * dim, dim));
      this.norms[ci] = n;
    }
    return n;
  }

  /** Index of the chunk holding `pos`, or −1. */
  chunkIndexOf(pos: number): number {
    const starts = this.starts;
    let lo = 0;
    let hi = starts.length - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      if (starts[mid] <= pos) lo = mid + 1;
      else hi = mid - 1;
    }
    if (hi < 0) return -1;
    const c = this.chunks[hi];
    return pos < c.start + c.count ? hi : -1;
  }

  /** The vector at `pos`, or null when the row is null or does not exist. */
  locate(pos: number): VectorLocation | null {
    const ci = this.chunkIndexOf(pos);
    if (ci < 0) return null;
    const c = this.chunks[ci];
    const i = pos - c.start;
    if (!isValidAt(c.validity, c.bitOffset, i)) return null;
    return { data: c.data, offset: i * this.dim };
  }
}

function chunkFromData(col: Data, start: number): VectorChunk {
  if (col.typeId !== Type.FixedSizeList) throw new Error(`vector column must be FixedSizeList<Float32>, got ${String(col.type)}`);
  const dim = (col.type as unknown as FixedSizeList).listSize;
  const child = col.children[0];
  if (child === undefined || child.typeId !== Type.Float || !(child.values instanceof Float32Array)) {
    throw new Error(`vector column must be FixedSizeList<Float32>, got ${String(col.type)}`);
  }
  const count = col.length;
  // `values` already begins at this slice's first vector (child.offset is informational).
  const data = (child.values as Float32Array).subarray(0, count * dim);
  if (data.length < count * dim) throw new Error(`vector column child holds ${data.length} values, needs ${count} × ${dim}`);
  const hasNulls = col.nullCount > 0 && col.nullBitmap !== undefined && col.nullBitmap.length > 0;
  return { start, count, data, validity: hasNulls ? col.nullBitmap! : null, bitOffset: hasNulls ? col.offset : 0 };
}
