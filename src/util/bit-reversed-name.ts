/**
 * Lance's object names for sequence numbers: the 64-bit number is bit-reversed and printed as 64
 * binary digits (1 -> "1000…0", 5 -> "1010…0"). Consecutive numbers then differ in their first
 * characters, which spreads sequential writes across S3's key-range partitions.
 */
const MASK64 = (1n << 64n) - 1n;

export function bitReversedName(n: number | bigint, ext: string): string {
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
