/** Deterministic synthetic corpora for the FTS tests and benchmark: Zipfian pseudo-words, skewed documents of `wN` words. */
export { mulberry32 } from '../../helpers/rng.js';

const SYL = ['ka', 'lo', 'mi', 'ne', 'ru', 'sa', 'ti', 'vo', 'ze', 'pa', 'do', 'gu', 'be', 'fi', 'ho', 'ja', 'xo', 'wy', 'ce', 'qu'];

export interface Zipf {
  vocab: string[];
  sample(): number;
}

/** Vocabulary of `size` distinct pseudo-words with Zipf(s) rank frequencies. */
export function zipf(size: number, s: number, rnd: () => number): Zipf {
  const vocab: string[] = [];
  const seen = new Set<string>();
  while (vocab.length < size) {
    const n = 2 + Math.floor(rnd() * 3);
    let w = '';
    for (let i = 0; i < n; i++) w += SYL[Math.floor(rnd() * SYL.length)]!;
    if (rnd() < 0.3) w += 'x';
    if (!seen.has(w)) {
      seen.add(w);
      vocab.push(w);
    }
  }
  const cdf = new Float64Array(size);
  let sum = 0;
  for (let i = 0; i < size; i++) cdf[i] = sum += 1 / Math.pow(i + 1, s);
  for (let i = 0; i < size; i++) cdf[i]! /= sum;
  return {
    vocab,
    sample() {
      const u = rnd();
      let lo = 0;
      let hi = size - 1;
      while (lo < hi) {
        const mid = (lo + hi) >>> 1;
        if (cdf[mid]! < u) lo = mid + 1;
        else hi = mid;
      }
      return lo;
    },
  };
}

export function syntheticDocs(n: number, z: Zipf, rnd: () => number, minLen = 10, maxLen = 150): string[] {
  const docs: string[] = new Array(n);
  for (let d = 0; d < n; d++) {
    const len = minLen + Math.floor(rnd() * (maxLen - minLen + 1));
    const words: string[] = new Array(len);
    for (let i = 0; i < len; i++) words[i] = z.vocab[z.sample()]!;
    docs[d] = words.join(' ');
  }
  return docs;
}

/** Words `w0` … `w{n-1}`. */
export function wordList(n: number): string[] {
  return Array.from({ length: n }, (_, i) => `w${i}`);
}

/**
 * `n` documents for index tests: a fraction `nulls` of them null, `empties` empty, the rest of
 * 1 … `maxWords` words drawn from `words` skewed towards the first (index ⌊rng()·rng()·|words|⌋,
 * so words repeat within a document).
 */
export function skewedTexts(rng: () => number, n: number, words: readonly string[], maxWords: number, nulls = 0, empties = 0): (string | null)[] {
  return Array.from({ length: n }, () => {
    const r = rng();
    if (r < nulls) return null;
    if (r < nulls + empties) return '';
    return Array.from({ length: 1 + Math.floor(rng() * maxWords) }, () => words[Math.floor(rng() * rng() * words.length)]).join(' ');
  });
}
