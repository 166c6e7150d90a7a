/**
 * Lance's object names for sequence numbers: the 64-bit number is bit-reversed and printed as 64
 * binary digits (1 -> "1000…0", 5 -> "1010…0"). Consecutive numbers then differ in their first
 * characters, which spreads sequential writes across S3's key-range partitions.
 */
const MASK64 = (1n << 64n) - 1n;

/** The bits of each byte value, least significant first: bit-reversal one byte at a time. */
const REVERSED_BYTES = Array.from({ length: 256 }, (_, b) => b.toString(2).padStart(8, '0').split('').reverse().join(''));

export function bitReversedName(n: number | bigint, ext: string): string {
  // Every WAL and manifest key goes through here: plain numbers take a table-driven path.
  if (typeof n === 'number' && Number.isSafeInteger(n) && n >= 0) {
    let lo = n % 0x1_0000_0000;
    let hi = Math.floor(n / 0x1_0000_0000);
    let s = '';
    for (let i = 0; i < 4; i++, lo >>>= 8) s += REVERSED_BYTES[lo & 0xff];
    for (let i = 0; i < 4; i++, hi >>>= 8) s += REVERSED_BYTES[hi & 0xff];
    return `${s}.${ext}`;
  }
  const v = BigInt(n);
  if (v < 0n || v > MASK64) throw new RangeError(`sequence number ${n} out of range`);
  return `${v.toString(2).padStart(64, '0').split('').reverse().join('')}.${ext}`;
}

/** The number a bit-reversed name encodes, or undefined when the name is not one. */
export function parseBitReversedName(name: string, ext: string): number | undefined {
  const suffix = `.${ext}`;
  if (!name.endsWith(suffix)) return undefined;
  const stem = name.slice(0, -suffix.length);
  if (stem.length !== 64 || !/^[01]{64}$/.test(stem)) return undefined;
  const v = BigInt(`0b${stem.split('').reverse().join('')}`);
  if (v > BigInt(Number.MAX_SAFE_INTEGER)) return undefined;
  return Number(v);
}
