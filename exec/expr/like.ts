/**
 * LIKE / ILIKE pattern matching on UTF-8 bytes.
 *
 * Patterns with only `%` wildcards (the common `prefix%`, `%suffix`, `%infix%`) match directly on
 * the row's bytes: anchored prefix and suffix, then the middle pieces left to right. Greedy
 * leftmost search is exact for `%`, and byte matching is exact for UTF-8 because a valid
 * sequence cannot match at a non-character boundary. `_` (exactly one character, which may be
 * several bytes) and ILIKE fall back to a RegExp on the decoded row.
 */
import { InvalidError } from '../../src/errors.js';
import { utf8 } from './kernels.js';

export type LikeMatcher = (bytes: Uint8Array, start: number, end: number) => boolean;

/**
 * Compiles a LIKE pattern. Patterns with only `%` wildcards match on UTF-8 bytes (prefix,
 * suffix, then the middle pieces left to right — greedy-leftmost is exact for `%`); `_` (one
 * character) and ILIKE go through a RegExp on the decoded row.
 */
export function compileLike(pattern: string, escape: string, caseInsensitive: boolean): LikeMatcher {
  const pieces: string[] = [''];
  const tokens: ({ lit: string } | '%' | '_')[] = [];
  let hasUnderscore = false;
  const chars = [...pattern];
  for (let i = 0; i < chars.length; i++) {
    const ch = chars[i];
    if (escape !== '' && ch === escape) {
      if (i + 1 >= chars.length) throw new InvalidError(`LIKE pattern '${pattern}' must not end with the escape character`);
      const next = chars[++i];
      pieces[pieces.length - 1] += next;
      tokens.push({ lit: next });
    } else if (ch === '%') {
      pieces.push('');
      tokens.push('%');
    } else if (ch === '_') {
      hasUnderscore = true;
      tokens.push('_');
    } else {
      pieces[pieces.length - 1] += ch;
      tokens.push({ lit: ch });
    }
  }
  if (hasUnderscore || caseInsensitive) {
    const src = tokens
      .map((t) => (t === '%' ? '[\\s\\S]*' : t === '_' ? '[\\s\\S]' : t.lit.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')))
      .join('');
    const re = new RegExp(`^${src}$`, caseInsensitive ? 'iu' : 'u');
    const decoder = new TextDecoder();
    return (bytes, start, end) => re.test(decoder.decode(bytes.subarray(start, end)));
  }
  const segs = pieces.map(utf8);
  if (segs.length === 1) {
    const c = segs[0];
    return (bytes, start, end) => end - start === c.length && matchesAt(bytes, start, c);
  }
  const first = segs[0];
  const last = segs[segs.length - 1];
  const middle = segs.slice(1, -1).filter((s) => s.length > 0);
  return (bytes, start, end) => {
    if (end - start < first.length + last.length) return false;
    if (!matchesAt(bytes, start, first)) return false;
    const limit = end - last.length;
    if (!matchesAt(bytes, limit, last)) return false;
    let pos = start + first.length;
    for (const m of middle) {
      const at = indexOfBytes(bytes, m, pos, limit);
      if (at < 0) return false;
      pos = at + m.length;
    }
    return true;
  };
}

function matchesAt(bytes: Uint8Array, at: number, needle: Uint8Array): boolean {
  for (let k = 0; k < needle.length; k++) if (bytes[at + k] !== needle[k]) return false;
  return true;
}

/** First index in [from, to - needle.length] where `needle` occurs, or -1. */
function indexOfBytes(bytes: Uint8Array, needle: Uint8Array, from: number, to: number): number {
  const first = needle[0];
  const lastStart = to - needle.length;
  for (let i = from; i <= lastStart; i++) {
    if (bytes[i] !== first) continue;
    let k = 1;
    while (k < needle.length && bytes[i + k] === needle[k]) k++;
    if (k === needle.length) return i;
  }
  return -1;
}
