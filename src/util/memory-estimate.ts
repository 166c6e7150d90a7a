/**
 * An estimate of the memory an object graph holds, for caches that must stay within a byte
 * budget. It walks own properties, counting typed-array buffers once each (by buffer), strings,
 * arrays, Maps and Sets with the engine's rough per-slot costs. Objects in `exclude` (and
 * everything only reachable through them) are not counted: things shared with other entries,
 * such as a trained model or the record batches a cache counts on its own; an excluded
 * ArrayBuffer is not counted through any view of it either.
 */
export const SLOT = 8;
export const OBJECT = 32;
export const MAP_ENTRY = 40;
/** A string's header; its characters are 2 bytes each. */
export const STRING = 16;

/**
 * An object may size some of its parts in bulk (a dictionary of tens of thousands of strings,
 * each a cache miss to walk): `[SIZED_PARTS]()` gives their bytes, the parts themselves (not
 * walked) and what in them must still be walked (e.g. buffers their views hold), and the walk
 * goes on through the object's other properties as usual.
 */
export const SIZED_PARTS = Symbol('sizedParts');

export interface SizedParts {
  bytes: number;
  parts: readonly object[];
  walk: readonly unknown[];
}

export function estimateBytes(root: unknown, exclude: Iterable<object> = []): number {
  const seen = new Set<object>(exclude);
  const buffers = new Set<ArrayBufferLike>();
  for (const x of seen) if (x instanceof ArrayBuffer || (typeof SharedArrayBuffer !== 'undefined' && x instanceof SharedArrayBuffer)) buffers.add(x);
  let bytes = 0;
  const stack: unknown[] = [root];
  while (stack.length > 0) {
    const v = stack.pop();
    if (typeof v === 'string') {
      bytes += STRING + 2 * v.length;
      continue;
    }
    if (typeof v !== 'object' || v === null || seen.has(v)) continue;
    seen.add(v);
    if (ArrayBuffer.isView(v)) {
      if (!buffers.has(v.buffer)) {
        buffers.add(v.buffer);
        bytes += v.buffer.byteLength;
      }
      continue;
    }
    if (v instanceof ArrayBuffer) {
      if (!buffers.has(v)) {
        buffers.add(v);
        bytes += v.byteLength;
      }
      continue;
    }
    if (v instanceof Map) {
      bytes += OBJECT + v.size * MAP_ENTRY;
      // forEach: no entry array per entry.
      v.forEach((x: unknown, k: unknown) => {
        if (typeof k === 'string') bytes += STRING + 2 * k.length;
        else if (typeof k === 'object' && k !== null) stack.push(k);
        if (typeof x === 'object' && x !== null) stack.push(x);
        else if (typeof x === 'string') bytes += STRING + 2 * x.length;
      });
      continue;
    }
    if (v instanceof Set) {
      bytes += OBJECT + v.size * MAP_ENTRY;
      for (const x of v) stack.push(x);
      continue;
    }
    if (Array.isArray(v)) {
      bytes += OBJECT + v.length * SLOT;
      for (const x of v) {
        // Typed-array views (an index's per-term postings: tens of thousands of them) are leaves
        // counted by their buffer: settled here, not pushed and remembered one by one.
        if (ArrayBuffer.isView(x)) {
          if (!buffers.has(x.buffer) && !seen.has(x)) {
            buffers.add(x.buffer);
            bytes += x.buffer.byteLength;
          }
        } else if (typeof x === 'string') bytes += STRING + 2 * x.length;
        else if (typeof x === 'object' && x !== null) stack.push(x);
      }
      continue;
    }
    bytes += OBJECT;
    const sized = (v as { [SIZED_PARTS]?: () => SizedParts })[SIZED_PARTS];
    if (typeof sized === 'function') {
      const r = sized.call(v);
      bytes += r.bytes;
      for (const p of r.parts) seen.add(p);
      for (const w of r.walk) stack.push(w);
    }
    for (const key of Object.keys(v)) {
      bytes += SLOT;
      stack.push((v as Record<string, unknown>)[key]);
    }
  }
  return bytes;
}
