/**
 * Selections: which rows of a batch survive. A *mask* is one byte per row (1 = selected, as
 * `evaluateFilter` returns); *indices* are the selected row numbers, ascending, as `takeData`
 * (exec/kernels/take.ts) consumes them. Masks are cheap to combine; indices are cheap to apply.
 */

/** Number of selected rows. */
export function countSelected(mask: Uint8Array): number {
  let c = 0;
  for (let i = 0; i < mask.length; i++) c += mask[i] !== 0 ? 1 : 0;
  return c;
}

/** The selected row numbers, ascending. */
export function maskToIndices(mask: Uint8Array): Uint32Array {
  const out = new Uint32Array(countSelected(mask));
  let k = 0;
  for (let i = 0; i < mask.length; i++) if (mask[i] !== 0) out[k++] = i;
  return out;
}

/** A mask of `length` rows with `indices` selected (indices past the end are an error). */
export function indicesToMask(indices: ArrayLike<number>, length: number): Uint8Array {
  const out = new Uint8Array(length);
  for (let i = 0; i < indices.length; i++) {
    const r = indices[i];
    if (r < 0 || r >= length || !Number.isInteger(r)) throw new RangeError(`row index ${r} outside 0..${length - 1}`);
    out[r] = 1;
  }
  return out;
}

function sameLength(a: Uint8Array, b: Uint8Array): void {
  if (a.length !== b.length) throw new RangeError(`masks differ in length: ${a.length} vs ${b.length}`);
}

/** Rows selected by both; written into `out` when given (it may be `a`). */
export function andMasks(a: Uint8Array, b: Uint8Array, out: Uint8Array = new Uint8Array(a.length)): Uint8Array {
  sameLength(a, b);
  for (let i = 0; i < a.length; i++) out[i] = a[i] !== 0 && b[i] !== 0 ? 1 : 0;
  return out;
}

/** Rows selected by either; written into `out` when given (it may be `a`). */
export function orMasks(a: Uint8Array, b: Uint8Array, out: Uint8Array = new Uint8Array(a.length)): Uint8Array {
  sameLength(a, b);
  for (let i = 0; i < a.length; i++) out[i] = a[i] !== 0 || b[i] !== 0 ? 1 : 0;
  return out;
}

/** Rows of `a` not in `b` (e.g. drop deleted or superseded rows). */
export function andNotMasks(a: Uint8Array, b: Uint8Array, out: Uint8Array = new Uint8Array(a.length)): Uint8Array {
  sameLength(a, b);
  for (let i = 0; i < a.length; i++) out[i] = a[i] !== 0 && b[i] === 0 ? 1 : 0;
  return out;
}

/** The complement. Note a filter's complement is not `NOT filter` (NULL rows fail both). */
export function notMask(a: Uint8Array, out: Uint8Array = new Uint8Array(a.length)): Uint8Array {
  for (let i = 0; i < a.length; i++) out[i] = a[i] !== 0 ? 0 : 1;
  return out;
}

/** Whether every row is selected (a filter that keeps the batch as is). */
export function allSelected(mask: Uint8Array): boolean {
  for (let i = 0; i < mask.length; i++) if (mask[i] === 0) return false;
  return true;
}

/** Whether no row is selected (the batch can be skipped). */
export function noneSelected(mask: Uint8Array): boolean {
  for (let i = 0; i < mask.length; i++) if (mask[i] !== 0) return false;
  return true;
}

/** Ascending row numbers in both sorted index lists. */
export function intersectIndices(a: Uint32Array, b: Uint32Array): Uint32Array {
  const out = new Uint32Array(Math.min(a.length, b.length));
  let i = 0;
  let j = 0;
  let k = 0;
  while (i < a.length && j < b.length) {
    if (a[i] < b[j]) i++;
    else if (a[i] > b[j]) j++;
    else {
      out[k++] = a[i];
      i++;
      j++;
    }
  }
  return out.slice(0, k);
}

/** Ascending row numbers in either sorted index list, without duplicates. */
export function unionIndices(a: Uint32Array, b: Uint32Array): Uint32Array {
  const out = new Uint32Array(a.length + b.length);
  let i = 0;
  let j = 0;
  let k = 0;
  while (i < a.length || j < b.length) {
    if (j >= b.length || (i < a.length && a[i] < b[j])) out[k++] = a[i++];
    else if (i >= a.length || b[j] < a[i]) out[k++] = b[j++];
    else {
      out[k++] = a[i++];
      j++;
    }
  }
  return out.slice(0, k);
}
