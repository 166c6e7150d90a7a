/**
 * An estimate of the memory an object graph holds, for caches that must stay within a byte
 * budget. It walks own properties, counting typed-array buffers once each (by buffer), strings,
 * arrays, Maps and Sets with the engine's rough per-slot costs. Objects in `exclude` (and
 * everything only reachable through them) are not counted: things shared with other entries,
 * such as a trained model or the record batches a cache counts on its own; an excluded
 * ArrayBuffer is not counted through any view of it either.
 */
const SLOT = 8;
const OBJECT = 32;
const MAP_ENTRY = 40;

export function estimateBytes(root: unknown, exclude: Iterable<object> = []): number {
  const seen = new Set<object>(exclude);
  const buffers = new Set<ArrayBufferLike>();
  for (const x of seen) if (x instanceof ArrayBuffer || (typeof SharedArrayBuffer !== 'undefined' && x instanceof SharedArrayBuffer)) buffers.add(x);
  let bytes = 0;
  const stack: unknown[] = [root];
  while (stack.length > 0) {
    const v = stack.pop();
    if (typeof v === 'string') {
      bytes += 16 + 2 * v.length;
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
      for (const [k, x] of v) {
        if (typeof k === 'string') bytes += 16 + 2 * k.length;
        else if (typeof k === 'object' && k !== null) stack.push(k);
        if (typeof x === 'object' && x !== null) stack.push(x);
        else if (typeof x === 'string') bytes += 16 + 2 * x.length;
      }
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
        } else if (typeof x === 'string') bytes += 16 + 2 * x.length;
        else if (typeof x === 'object' && x !== null) stack.push(x);
      }
      continue;
    }
    bytes += OBJECT;
    for (const key of Object.keys(v)) {
      bytes += SLOT;
      stack.push((v as Record<string, unknown>)[key]);
    }
  }
  return bytes;
}
