/**
 * `a`, or a copy at least twice as long (and at least 1 024 long) when index `i` is past its end:
 * the id → id maps of the full-text write path grow by doubling as ids arrive.
 */
export function int32WithRoom(a: Int32Array, i: number): Int32Array {
  if (i < a.length) return a;
  const next = new Int32Array(Math.max(2 * a.length, i + 1, 1024));
  next.set(a);
  return next;
}
