/**
 * The primary-key filter of a flushed generation: a Bloom filter sized to the generation's row
 * count, with a documented, portable hash so any reader can recompute it (Lance's first version
 * persisted a fixed-size filter with a non-portable hash; lance-memwal.md pitfall 12).
 *
 * Hash: the key's bytes are hashed with MurmurHash3 x86 32-bit, h1 = murmur3(bytes, 0) and
 * h2 = murmur3(bytes, 0x9747b28c); probe i sets bit (h1 + i·h2) mod m (Kirsch–Mitzenmacher).
 * Key bytes: integers (any width) as 8-byte little-endian two's complement, strings as UTF-8,
 * composite keys as the UTF-8 of their joined form (see primary-key.ts).
 *
 * File (`pk_filter.bin`): "QPKF", u8 format version 1, u8 k, u16 reserved 0, u32 LE bit count m,
 * u32 LE key count n, then ceil(m/8) bytes of bits (bit j is byte j>>3, mask 1<<(j&7)).
 */
import { DataError } from '../errors.js';
import type { KeyValue } from '../schema/primary-key.js';
import { murmur3 } from '../util/murmur3.js';

const MAGIC = [0x51, 0x50, 0x4b, 0x46]; // "QPKF"
const HEADER = 16;
const SEED2 = 0x9747b28c;
const encoder = new TextEncoder();
const int64 = new DataView(new ArrayBuffer(8));
const int64Bytes = new Uint8Array(int64.buffer);
/** The same 8 bytes as two 32-bit words, low first (written little-endian below). */
const int64Words = new DataView(int64.buffer);

export function keyBytes(key: KeyValue): Uint8Array {
  if (typeof key === 'string') return encoder.encode(key);
  int64.setBigInt64(0, BigInt.asIntN(64, BigInt(key)), true);
  return int64Bytes;
}

export class PrimaryKeyFilter {
  private constructor(
    readonly bits: Uint8Array,
    readonly m: number,
    readonly k: number,
    readonly n: number,
  ) {}

  /** An empty filter for `n` keys at false-positive rate `fpp`. */
  static forKeys(n: number, fpp = 0.01): PrimaryKeyFilter {
    const m = Math.max(64, Math.ceil((-Math.max(1, n) * Math.log(fpp)) / (Math.LN2 * Math.LN2)));
    const k = Math.min(16, Math.max(1, Math.round((m / Math.max(1, n)) * Math.LN2)));
    return new PrimaryKeyFilter(new Uint8Array(Math.ceil(m / 8)), m, k, n);
  }

  add(key: KeyValue): void {
    this.addBytes(keyBytes(key));
  }

  /**
   * `add` of an integer key given as the two 32-bit words of its 64-bit two's complement (low
   * first), as a flush reads them from the key column: the same key bytes, no BigInt per row.
   */
  addKeyWords(lo: number, hi: number): void {
    int64Words.setInt32(0, lo, true);
    int64Words.setInt32(4, hi, true);
    this.addBytes(int64Bytes);
  }

  private addBytes(b: Uint8Array): void {
    const h1 = murmur3(b, 0) >>> 0;
    const h2 = murmur3(b, SEED2) >>> 0;
    for (let i = 0; i < this.k; i++) {
      const bit = (h1 + Math.imul(i, h2)) >>> 0;
      const j = bit % this.m;
      this.bits[j >> 3] |= 1 << (j & 7);
    }
  }

  /** False means the key is certainly absent; true means it may be present. */
  mightContain(key: KeyValue): boolean {
    const b = keyBytes(key);
    const h1 = murmur3(b, 0) >>> 0;
    const h2 = murmur3(b, SEED2) >>> 0;
    for (let i = 0; i < this.k; i++) {
      const j = ((h1 + Math.imul(i, h2)) >>> 0) % this.m;
      if ((this.bits[j >> 3] & (1 << (j & 7))) === 0) return false;
    }
    return true;
  }

  encode(): Uint8Array {
    const out = new Uint8Array(HEADER + this.bits.length);
    const view = new DataView(out.buffer);
    out.set(MAGIC, 0);
    out[4] = 1;
    out[5] = this.k;
    view.setUint32(8, this.m, true);
    view.setUint32(12, this.n, true);
    out.set(this.bits, HEADER);
    return out;
  }

  static decode(bytes: Uint8Array, what: string): PrimaryKeyFilter {
    const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    if (bytes.length < HEADER || MAGIC.some((c, i) => bytes[i] !== c) || bytes[4] !== 1) {
      throw new DataError(`corrupt primary-key filter ${what}`);
    }
    const m = view.getUint32(8, true);
    if (bytes.length !== HEADER + Math.ceil(m / 8)) throw new DataError(`corrupt primary-key filter ${what}: size mismatch`);
    return new PrimaryKeyFilter(bytes.slice(HEADER), m, bytes[5], view.getUint32(12, true));
  }
}
