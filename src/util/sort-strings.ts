/**
 * Strings sorted in UTF-16 code-unit order (the default `Array.prototype.sort`, like `<`), in
 * steps: a flush sorts a MemTable's whole dictionary (~50 000 terms, 15–30 ms in one call on a
 * cold cache), which in one piece held the event loop that long. The strings are grouped by
 * their first code unit, groups taken in that unit's order and each sorted on its own, so a
 * step is about `sliceStrings` strings; the result is the same as one `sort()`.
 */
export function* sortStringsSteps(strings: readonly string[], sliceStrings: number): Generator<void, string[], void> {
  if (strings.length <= sliceStrings) return strings.slice().sort();
  const groups = new Map<number, string[]>();
  for (const s of strings) {
    // '' has no first code unit: −1 sorts it first, as `sort()` does.
    const c = s.length === 0 ? -1 : s.charCodeAt(0);
    let g = groups.get(c);
    if (g === undefined) groups.set(c, (g = []));
    g.push(s);
  }
  yield;
  const out: string[] = [];
  let work = 0;
  for (const c of [...groups.keys()].sort((a, b) => a - b)) {
    const g = groups.get(c)!;
    g.sort();
    for (const s of g) out.push(s);
    if ((work += g.length) >= sliceStrings) {
      work = 0;
      yield;
    }
  }
  return out;
}
