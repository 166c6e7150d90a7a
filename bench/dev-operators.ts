/**
 * Dev harness (issue 8): each relational operator on 1M synthetic rows in-process, fed 65,536-row
 * batches like a scan produces; prints the median rows/s over several runs.
 *
 *   node --import=tsx bench/dev-operators.ts [filter] [reps]
 */
import { Field, Float64, Int16, Int32, Int64, makeData, RecordBatch, Schema, Struct, type Data } from 'apache-arrow';
import { BaseExec, type ExecContext } from '../exec/nodes/exec-node.js';
import { HashAggregateExec } from '../exec/nodes/hash-aggregate-exec.js';
import { SortExec } from '../exec/nodes/sort-exec.js';
import { TopKExec } from '../exec/nodes/top-k-exec.js';
import { mulberry32 } from '../test/helpers/rng.js';

const N = 1_000_000;
const BATCH = 65536;
const filter = process.argv[2] ?? '';
const REPS = Number(process.argv[3] ?? 9);

const rnd = mulberry32(8);
const id = new BigInt64Array(N);
const a = new Int32Array(N);
const b = new Float64Array(N);
const c = new Int16Array(N);
const g = new Int32Array(N);
const w = new BigInt64Array(N); // ~100k groups, 64-bit
const gn = new Int32Array(N); // g with ~5% NULLs
const gnBits = new Uint8Array((N + 7) >> 3);
let gnNulls = 0;
for (let i = 0; i < N; i++) {
  id[i] = BigInt(i);
  a[i] = Math.floor(rnd() * 1_000_000);
  b[i] = rnd() * 1000;
  c[i] = Math.floor(rnd() * 2000) - 1000;
  g[i] = Math.floor(rnd() * 1000);
  w[i] = BigInt(Math.floor(rnd() * 100_000)) * 1_000_003n;
  if (rnd() < 0.05) gnNulls++;
  else {
    gn[i] = g[i];
    gnBits[i >> 3] |= 1 << (i & 7);
  }
}
const schema = new Schema([
  new Field('id', new Int64(), false),
  new Field('a', new Int32(), true),
  new Field('b', new Float64(), true),
  new Field('c', new Int16(), true),
  new Field('g', new Int32(), true),
  new Field('w', new Int64(), true),
  new Field('gn', new Int32(), true),
]);
const batches: RecordBatch[] = [];
for (let s = 0; s < N; s += BATCH) {
  const e = Math.min(N, s + BATCH);
  const len = e - s;
  const bits = new Uint8Array((len + 7) >> 3);
  let nulls = 0;
  for (let i = 0; i < len; i++) {
    if (gnBits[(s + i) >> 3] & (1 << ((s + i) & 7))) bits[i >> 3] |= 1 << (i & 7);
    else nulls++;
  }
  const children: Data[] = [
    makeData({ type: new Int64(), length: len, nullCount: 0, data: id.subarray(s, e) }),
    makeData({ type: new Int32(), length: len, nullCount: 0, data: a.subarray(s, e) }),
    makeData({ type: new Float64(), length: len, nullCount: 0, data: b.subarray(s, e) }),
    makeData({ type: new Int16(), length: len, nullCount: 0, data: c.subarray(s, e) }),
    makeData({ type: new Int32(), length: len, nullCount: 0, data: g.subarray(s, e) }),
    makeData({ type: new Int64(), length: len, nullCount: 0, data: w.subarray(s, e) }),
    makeData({ type: new Int32(), length: len, nullCount: nulls, nullBitmap: bits, data: gn.subarray(s, e) }),
  ];
  batches.push(new RecordBatch(schema, makeData({ type: new Struct(schema.fields), length: len, nullCount: 0, children })));
}

class Source extends BaseExec {
  readonly kind = 'Source';
  constructor(readonly sch: Schema) {
    super(sch, []);
  }
  explain() {
    return 'Source';
  }
  protected async *run(_ctx: ExecContext): AsyncGenerator<RecordBatch> {
    yield* batches;
  }
}
/** The source with only columns `cols` (like a projection below the operator). */
function source(cols: number[]): { src: Source; remap: (c: number) => number } {
  const sch = new Schema(cols.map((i) => schema.fields[i]));
  const src = new Source(sch);
  const sub = batches.map((bt) => new RecordBatch(sch, makeData({ type: new Struct(sch.fields), length: bt.numRows, nullCount: 0, children: cols.map((i) => bt.data.children[i]) })));
  (src as unknown as { run: () => AsyncGenerator<RecordBatch> }).run = async function* () {
    yield* sub;
  };
  return { src, remap: (col) => cols.indexOf(col) };
}

const ID = 0, A = 1, B = 2, C = 3, G = 4, W = 5, GN = 6;
const cases: [string, () => BaseExec][] = [
  ['agg g: count(*), sum(b), avg(a) [bench q3]', () => new HashAggregateExec(source([G, B, A]).src, [0], [{ fn: 'count_star', name: 'n' }, { fn: 'sum', column: 1, name: 's' }, { fn: 'avg', column: 2, name: 'av' }])],
  ['agg gn (5% NULL keys): count(*), sum(b)', () => new HashAggregateExec(source([GN, B]).src, [0], [{ fn: 'count_star', name: 'n' }, { fn: 'sum', column: 1, name: 's' }])],
  ['agg c (int16): sum(a), min(b), max(b)', () => new HashAggregateExec(source([C, A, B]).src, [0], [{ fn: 'sum', column: 1, name: 's' }, { fn: 'min', column: 2, name: 'lo' }, { fn: 'max', column: 2, name: 'hi' }])],
  ['agg w (int64, 100k groups): count(*), sum(a)', () => new HashAggregateExec(source([W, A]).src, [0], [{ fn: 'count_star', name: 'n' }, { fn: 'sum', column: 1, name: 's' }])],
  ['agg (g, c) two keys: count(*)', () => new HashAggregateExec(source([G, C]).src, [0, 1], [{ fn: 'count_star', name: 'n' }])],
  ['agg none: count(*), sum(a), avg(b)', () => new HashAggregateExec(source([A, B]).src, [], [{ fn: 'count_star', name: 'n' }, { fn: 'sum', column: 0, name: 's' }, { fn: 'avg', column: 1, name: 'av' }])],
  ['topk b DESC LIMIT 10 [bench q4]', () => new TopKExec(source([ID, B]).src, [{ column: 1, descending: true }], 10)],
  ['topk a ASC LIMIT 100 (int32)', () => new TopKExec(source([ID, A, B]).src, [{ column: 1, descending: false }], 100)],
  ['topk (g DESC, b) LIMIT 10 two keys', () => new TopKExec(source([ID, G, B]).src, [{ column: 1, descending: true }, { column: 2, descending: false }], 10)],
  ['sort (id, b) by b', () => new SortExec(source([ID, B]).src, [{ column: 1, descending: false }])],
  ['sort (id, a, b, c) by a DESC', () => new SortExec(source([ID, A, B, C]).src, [{ column: 1, descending: true }])],
];

const ctx = { params: [] };
/** [wall ms, CPU ms of this process (user + system, GC threads included)] of one run. */
async function runOnce(make: () => BaseExec): Promise<[number, number]> {
  const node = make();
  const cpu0 = process.cpuUsage();
  const start = performance.now();
  let rows = 0;
  for await (const bt of node.execute(ctx)) rows += bt.numRows;
  const ms = performance.now() - start;
  const cpu = process.cpuUsage(cpu0);
  if (rows === 0) throw new Error('no output');
  return [ms, (cpu.user + cpu.system) / 1000];
}

const { loadavg } = await import('node:os');
console.log(`load ${loadavg().map((x) => x.toFixed(2)).join(' ')}, ${N} rows in ${batches.length} batches, ${REPS} reps (median)`);
for (const [name, make] of cases) {
  if (filter && !name.includes(filter)) continue;
  for (let i = 0; i < 2; i++) await runOnce(make);
  const wall: number[] = [];
  const cpu: number[] = [];
  for (let i = 0; i < REPS; i++) {
    const [w, c] = await runOnce(make);
    wall.push(w);
    cpu.push(c);
  }
  wall.sort((x, y) => x - y);
  cpu.sort((x, y) => x - y);
  const med = wall[wall.length >> 1];
  const cmed = cpu[cpu.length >> 1];
  const mrs = (ms: number) => (N / ms / 1000).toFixed(2).padStart(7);
  console.log(`${name.padEnd(46)} wall ${med.toFixed(1).padStart(7)} ms ${mrs(med)} M/s (best ${mrs(wall[0])}) | cpu ${cmed.toFixed(1).padStart(7)} ms ${mrs(cmed)} M/s`);
}
