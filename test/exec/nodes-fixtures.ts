/**
 * Fixtures for the relational exec node tests: a seeded generator of typed columns (NULLs,
 * duplicates, negatives, NaN, ±0, ±Infinity, 64-bit values beyond 2^53, empty and multi-byte
 * strings), batches split at random sizes with empty and sliced (non-zero offset) ones, a source
 * node that counts pulls and records its `finally`, and reference comparators over JS values.
 */
import {
  Bool,
  type Data,
  DataType,
  DateDay,
  Dictionary,
  Field,
  Float32,
  Float64,
  Int16,
  Int32,
  Int64,
  Int8,
  makeData,
  makeVector,
  RecordBatch,
  Schema,
  Struct,
  TimestampMicrosecond,
  Uint32,
  Uint64,
  Utf8,
  vectorFromArray,
} from 'apache-arrow';
import { BaseExec, type ExecContext } from '../../exec/nodes/exec-node.js';
import { mulberry32 } from '../helpers/rng.js';

export type Raw = number | bigint | string | boolean | null;
export type ColKind = 'int8' | 'int16' | 'int32' | 'int64' | 'uint32' | 'uint64' | 'float32' | 'float64' | 'utf8' | 'bool' | 'date32' | 'timestamp' | 'dict';

export const ALL_KINDS: ColKind[] = ['int8', 'int16', 'int32', 'int64', 'uint32', 'uint64', 'float32', 'float64', 'utf8', 'bool', 'date32', 'timestamp', 'dict'];

export function arrowType(kind: ColKind): DataType {
  switch (kind) {
    case 'int8': return new Int8();
    case 'int16': return new Int16();
    case 'int32': return new Int32();
    case 'int64': return new Int64();
    case 'uint32': return new Uint32();
    case 'uint64': return new Uint64();
    case 'float32': return new Float32();
    case 'float64': return new Float64();
    case 'utf8': return new Utf8();
    case 'bool': return new Bool();
    case 'date32': return new DateDay();
    case 'timestamp': return new TimestampMicrosecond();
    case 'dict': return new Dictionary(new Utf8(), new Int32());
  }
}

const WORDS = ['', 'a', 'ab', 'abc', 'B', 'é', 'ée', 'z', 'zz', '日本', '日本語', '🙂', '\uFFFD', '\uE000x', 'aaaaaaab', 'aaaaaaaa', 'aaaaaa', 'abcdefgh', 'abcdefg'];

export class Rng {
  readonly next: () => number;
  constructor(seed: number) {
    this.next = mulberry32(seed);
  }
  int(n: number): number {
    return Math.floor(this.next() * n);
  }
  pick<T>(xs: readonly T[]): T {
    return xs[this.int(xs.length)];
  }
}

/** A raw value of `kind`; `distinct` bounds how many different values appear (duplicates). */
export function randomValue(rng: Rng, kind: ColKind, distinct: number, nullRate = 0.15): Raw {
  if (rng.next() < nullRate) return null;
  const r = rng.int(distinct);
  switch (kind) {
    case 'int8': return (r % 256) - 128;
    case 'int16': return r * 37 % 65536 - 32768;
    case 'int32': return r % 7 === 0 ? (r % 2 ? 2147483647 : -2147483648) : r * 7919 - 50000;
    case 'int64': {
      const wide = [9007199254740993n, -9007199254740993n, 9223372036854775807n, -9223372036854775808n, 4294967296n, -4294967296n, 4294967295n];
      return r % 5 === 0 ? wide[r % wide.length] : BigInt(r * 104729 - 300000);
    }
    case 'uint32': return r % 9 === 0 ? 4294967295 : r * 7919;
    case 'uint64': return r % 5 === 0 ? 18446744073709551615n - BigInt(r) : BigInt(r * 104729);
    case 'float32': {
      const special = [NaN, 0, -0, Infinity, -Infinity, 1.5, -1.5];
      return r % 6 === 0 ? special[r % special.length] : Math.fround((r - distinct / 2) * 0.25);
    }
    case 'float64': {
      const special = [NaN, 0, -0, Infinity, -Infinity, 1e300, -1e-300];
      return r % 6 === 0 ? special[r % special.length] : (r - distinct / 2) * 0.1;
    }
    case 'utf8':
    case 'dict': return r < WORDS.length ? WORDS[r] : `w${r % 3 === 0 ? 'é' : ''}${r}`;
    case 'bool': return r % 2 === 0;
    case 'date32': return r * 13 - 20000;
    case 'timestamp': return BigInt(r) * 1000003n - 5000000n;
  }
}

/** An Arrow column of `kind` holding `values` (one chunk). */
export function makeColumn(kind: ColKind, values: readonly Raw[]): Data {
  const type = arrowType(kind);
  const n = values.length;
  if (kind === 'utf8' || kind === 'dict' || kind === 'bool') return vectorFromArray(values as (string | boolean | null)[], type).data[0];
  const nullBitmap = new Uint8Array((n + 7) >> 3);
  let nullCount = 0;
  const Ctor = (type as unknown as { ArrayType: new (n: number) => { [i: number]: number | bigint } }).ArrayType;
  const data = new Ctor(n);
  for (let i = 0; i < n; i++) {
    const v = values[i];
    if (v === null) nullCount++;
    else {
      nullBitmap[i >> 3] |= 1 << (i & 7);
      data[i] = v as number | bigint;
    }
  }
  return makeData({ type, length: n, nullCount, nullBitmap: nullCount ? nullBitmap : undefined, data } as never);
}

export function makeBatch(schema: Schema, children: Data[]): RecordBatch {
  const length = children[0]?.length ?? 0;
  return new RecordBatch(schema, makeData({ type: new Struct(schema.fields), length, nullCount: 0, children }));
}

export interface Dataset {
  schema: Schema;
  kinds: ColKind[];
  /** Rows as raw values; column 0 is the row id (Int32, input order). */
  rows: Raw[][];
  batches: RecordBatch[];
}

/**
 * `nRows` rows of an `id` column then one column per kind, split into batches of random sizes,
 * some empty and some sliced out of a larger batch (non-zero offsets).
 */
export function randomDataset(rng: Rng, kinds: readonly ColKind[], nRows: number, distinct: number, nullRate = 0.15): Dataset {
  const schema = new Schema([new Field('id', new Int32(), false), ...kinds.map((k, i) => new Field(`c${i}_${k}`, arrowType(k), true))]);
  const rows: Raw[][] = [];
  for (let i = 0; i < nRows; i++) rows.push([i, ...kinds.map((k) => randomValue(rng, k, distinct, nullRate))]);
  const batches: RecordBatch[] = [];
  let at = 0;
  while (at < nRows || batches.length === 0) {
    const size = rng.next() < 0.15 ? 0 : 1 + rng.int(Math.max(1, Math.min(300, nRows)));
    const take = Math.min(size, nRows - at);
    const part = rows.slice(at, at + take);
    if (rng.next() < 0.4 && take > 0) {
      // A sliced batch: padded with junk rows before and after.
      const pad = 1 + rng.int(9);
      const padRows = (m: number) => Array.from({ length: m }, () => [-1, ...kinds.map((k) => randomValue(rng, k, distinct, nullRate))]);
      const big = [...padRows(pad), ...part, ...padRows(3)];
      const batch = makeBatch(schema, [makeColumn('int32', big.map((r) => r[0])), ...kinds.map((k, c) => makeColumn(k, big.map((r) => r[c + 1])))]);
      batches.push(batch.slice(pad, pad + take));
    } else {
      batches.push(makeBatch(schema, [makeColumn('int32', part.map((r) => r[0])), ...kinds.map((k, c) => makeColumn(k, part.map((r) => r[c + 1])))]));
    }
    at += take;
    if (nRows === 0 && batches.length >= 2) break;
  }
  return { schema, kinds: [...kinds], rows, batches };
}

/** A child node that emits `batches`, counts pulls, can throw after N batches and records `finally`. */
export class SourceExec extends BaseExec {
  readonly kind = 'Source';
  pulls = 0;
  finallyRan = false;
  constructor(
    schema: Schema,
    readonly batches: readonly RecordBatch[],
    readonly options: { throwAfter?: number; delayMs?: number } = {},
  ) {
    super(schema, []);
  }
  explain(): string {
    return `Source: ${this.batches.length} batches`;
  }
  protected async *run(_ctx: ExecContext): AsyncGenerator<RecordBatch> {
    try {
      for (const b of this.batches) {
        if (this.options.throwAfter !== undefined && this.pulls >= this.options.throwAfter) throw new Error(`pulled past batch ${this.options.throwAfter}`);
        this.pulls++;
        if (this.options.delayMs) await new Promise((r) => setTimeout(r, this.options.delayMs));
        yield b;
      }
    } finally {
      this.finallyRan = true;
    }
  }
}

/** Every row of `batches` as arrays of cells read back with `get` (for comparing outputs). */
export function readRows(batches: readonly RecordBatch[]): unknown[][] {
  const out: unknown[][] = [];
  for (const b of batches) {
    const cols = b.schema.fields.map((_, c) => makeVector(b.data.children[c]));
    for (let i = 0; i < b.numRows; i++) out.push(cols.map((v) => normalize(v.get(i))));
  }
  return out;
}

function normalize(x: unknown): unknown {
  if (x === 0) return 0; // -0 reads back as 0 where grouping canonicalized it
  if (x instanceof Uint8Array || ArrayBuffer.isView(x)) return Array.from(x as unknown as ArrayLike<number>);
  return x;
}

export async function collect(it: AsyncIterable<RecordBatch>): Promise<RecordBatch[]> {
  const out: RecordBatch[] = [];
  for await (const b of it) out.push(b);
  return out;
}

const enc = new TextEncoder();

/** PostgreSQL ordering of two non-null raw values of one kind: NaN above numbers, strings by UTF-8 bytes. */
export function compareRaw(a: Raw, b: Raw): number {
  if (typeof a === 'string' && typeof b === 'string') return Buffer.compare(enc.encode(a), enc.encode(b));
  if (typeof a === 'boolean') return Number(a) - Number(b);
  if (typeof a === 'bigint' && typeof b === 'bigint') return a < b ? -1 : a > b ? 1 : 0;
  const x = a as number;
  const y = b as number;
  const xn = Number.isNaN(x);
  const yn = Number.isNaN(y);
  if (xn || yn) return xn && yn ? 0 : xn ? 1 : -1;
  return x < y ? -1 : x > y ? 1 : 0;
}

export interface RefKey {
  column: number;
  descending: boolean;
  nullsFirst?: boolean;
}

/** Reference ORDER BY over row arrays (stable: Array.prototype.sort is). */
export function referenceSort(rows: readonly Raw[][], keys: readonly RefKey[]): Raw[][] {
  return [...rows].sort((ra, rb) => {
    for (const k of keys) {
      const a = ra[k.column];
      const b = rb[k.column];
      const nullsFirst = k.nullsFirst ?? k.descending;
      if (a === null || b === null) {
        if (a === null && b === null) continue;
        return (a === null ? -1 : 1) * (nullsFirst ? 1 : -1);
      }
      const c = compareRaw(a, b);
      if (c !== 0) return k.descending ? -c : c;
    }
    return 0;
  });
}

export function idsOf(batches: readonly RecordBatch[]): number[] {
  const ids: number[] = [];
  for (const b of batches) {
    const v = b.data.children[0].values as Int32Array;
    for (let i = 0; i < b.numRows; i++) ids.push(v[i]);
  }
  return ids;
}
