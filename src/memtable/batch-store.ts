/**
 * The append-only batch list of one MemTable.
 *
 * Batches are only ever appended; a slot never changes once written. A row's position is its
 * global offset in the store (rows before its batch + index in batch), which is the order that
 * decides "newest wins" inside a MemTable and becomes the row id in a flushed generation.
 *
 * Readers take a *snapshot*: the store plus a batch count captured at one instant. Because the
 * list is append-only and JS runs a snapshot's capture synchronously, later appends never change
 * what a snapshot sees — a snapshot never tears.
 */
import { type Data, type RecordBatch, Type } from 'apache-arrow';

export class BatchStore {
  private readonly batches: RecordBatch[] = [];
  private readonly offsets: number[] = [];
  /**
   * Bytes of batches [0, i) at index i: `bytesOf` is asked on every put for the whole
   * not-yet-logged range (up to a WAL buffer's worth of batches), so summing per call would make
   * a WAL entry of n puts cost O(n²).
   */
  private readonly byteOffsets: number[] = [];
  private rows = 0;
  private bytes = 0;

  get batchCount(): number {
    return this.batches.length;
  }
  get rowCount(): number {
    return this.rows;
  }
  /** Estimated memory held: the Arrow buffers of every batch. */
  get byteSize(): number {
    return this.bytes;
  }

  /** Appends all batches at once; returns the batch index range they occupy. */
  append(batches: readonly RecordBatch[]): { start: number; end: number } {
    const start = this.batches.length;
    for (const b of batches) {
      this.offsets.push(this.rows);
      this.byteOffsets.push(this.bytes);
      this.batches.push(b);
      this.rows += b.numRows;
      this.bytes += batchBytes(b);
    }
    return { start, end: this.batches.length };
  }

  batch(i: number): RecordBatch {
    return this.batches[i];
  }
  /** Row position of each batch's first row (append-only: a snapshot's prefix never changes). */
  get rowOffsets(): readonly number[] {
    return this.offsets;
  }
  /** Batches [start, end). */
  range(start: number, end: number): RecordBatch[] {
    return this.batches.slice(start, end);
  }
  /** Rows in batches [0, count). */
  rowsBefore(count: number): number {
    return count >= this.batches.length ? this.rows : this.offsets[count];
  }
  /** Bytes of batches [start, end), as `batchBytes` counts them. */
  bytesOf(start: number, end: number): number {
    if (end <= start) return 0;
    return this.bytesBefore(end) - this.bytesBefore(start);
  }
  private bytesBefore(count: number): number {
    return count >= this.batches.length ? this.bytes : this.byteOffsets[count];
  }
}

export function batchBytes(batch: RecordBatch): number {
  return dataBytes(batch.data);
}

/**
 * Bytes of the rows a Data covers, not of the buffers it points into: a slice of a large
 * batch must not count the whole parent (variable-width values and bit maps are not sliced).
 */
export function dataBytes(data: Data): number {
  const n = data.length;
  let bytes = data.nullCount > 0 ? (n + 7) >> 3 : 0;
  const offsets = data.valueOffsets as Int32Array | undefined;
  if (offsets && offsets.length > 0) {
    bytes += offsets.BYTES_PER_ELEMENT * (n + 1);
    if (data.children.length === 0) bytes += Number(offsets[n]) - Number(offsets[0]);
  } else if (data.typeId === Type.Bool) {
    bytes += (n + 7) >> 3;
  } else if (data.values) {
    bytes += (data.values as unknown as ArrayBufferView).byteLength;
  }
  for (const c of data.children) bytes += dataBytes(c as Data);
  return bytes;
}
