/**
 * Memory budget for the operators that must hold their input (Sort) or their state
 * (HashAggregate) before they can emit anything.
 *
 * Why it exists: a pipelined operator holds one batch at a time, but a blocking one holds
 * everything it has seen, and an unbounded query (`SELECT * FROM big ORDER BY x`) would
 * otherwise grow the heap until V8 aborts the whole process — every other query and writer in
 * it included. The budget turns that into an `InvalidError` for this one query, with a message
 * that says what to change.
 *
 * Invariant: `used` is the operator's own estimate of the bytes it holds (typed-array
 * byteLengths of buffered batches and of its state arrays), and the operator never continues
 * past a `reserve`/`setUsed` that would take `used` beyond `limitBytes`. The estimate counts
 * buffers, not JS object headers; it is an upper bound for sliced batches that share buffers
 * with their parents only in the sense that a sliced Utf8 column counts its whole byte buffer.
 */
import type { Data, RecordBatch } from 'apache-arrow';
import { InvalidError } from '../../src/errors.js';

/** The default budget of one Sort or HashAggregate: 512 MiB. */
export const DEFAULT_OPERATOR_MEMORY_BYTES = 512 * 1024 * 1024;

export class MemoryBudget {
  private usedBytes = 0;
  private peakBytes = 0;

  /**
   * @param operator the operator name as the error message prints it ("Sort", "HashAggregate")
   * @param limitBytes the budget; `Infinity` disables the check
   * @param what how the operator describes what it holds, for the message ("rows buffered")
   */
  constructor(
    readonly operator: string,
    readonly limitBytes: number = DEFAULT_OPERATOR_MEMORY_BYTES,
    private readonly what: string = 'rows buffered',
  ) {
    if (!(limitBytes > 0)) throw new InvalidError(`${operator}: the memory limit must be a positive number of bytes, got ${limitBytes}`);
  }

  get used(): number {
    return this.usedBytes;
  }

  get peak(): number {
    return this.peakBytes;
  }

  /** Adds `bytes` to the held total; throws when that passes the budget. `count` goes into the message. */
  reserve(bytes: number, count: number): void {
    this.setUsed(this.usedBytes + bytes, count);
  }

  /** Sets the held total (for state that is re-measured rather than accumulated). */
  setUsed(bytes: number, count: number): void {
    if (bytes > this.limitBytes) {
      throw new InvalidError(
        `${this.operator} needs more than its ${formatBytes(this.limitBytes)} memory budget (${count} ${this.what}); ` +
          'add a LIMIT, filter more, or raise the memory limit',
      );
    }
    this.usedBytes = bytes;
    if (bytes > this.peakBytes) this.peakBytes = bytes;
  }

  release(): void {
    this.usedBytes = 0;
  }
}

/** "512 MiB", "64 KiB", "100 bytes". */
export function formatBytes(n: number): string {
  if (n >= 1024 * 1024 && n % (1024 * 1024) === 0) return `${n / (1024 * 1024)} MiB`;
  if (n >= 1024 * 1024) return `${(n / (1024 * 1024)).toFixed(1)} MiB`;
  if (n >= 1024 && n % 1024 === 0) return `${n / 1024} KiB`;
  if (n >= 1024) return `${(n / 1024).toFixed(1)} KiB`;
  return `${n} bytes`;
}

/**
 * Bytes held by the buffers of `data` (values, offsets, validity, children, dictionary). A
 * dictionary already in `seenDictionaries` is not counted again (batches of one column usually
 * share theirs).
 */
export function dataBytes(data: Data, seenDictionaries?: Set<unknown>): number {
  let n = 0;
  const { values, valueOffsets, nullBitmap } = data as unknown as { values?: ArrayBufferView; valueOffsets?: ArrayBufferView; nullBitmap?: ArrayBufferView };
  if (values) n += values.byteLength;
  if (valueOffsets) n += valueOffsets.byteLength;
  if (nullBitmap) n += nullBitmap.byteLength;
  for (const c of data.children) n += dataBytes(c, seenDictionaries);
  const dict = data.dictionary;
  if (dict && !seenDictionaries?.has(dict)) {
    seenDictionaries?.add(dict);
    for (const d of dict.data) n += dataBytes(d, seenDictionaries);
  }
  return n;
}

/** Bytes held by the columns of `batch`. */
export function batchBytes(batch: RecordBatch, seenDictionaries?: Set<unknown>): number {
  let n = 0;
  for (const c of batch.data.children) n += dataBytes(c, seenDictionaries);
  return n;
}
