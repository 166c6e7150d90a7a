import test from 'ava';
import { Field, Float64, Int32, Int64, Schema } from 'apache-arrow';
import { type AggregateFn, type AggregateSpec, HashAggregateExec } from '../../exec/nodes/hash-aggregate-exec.js';
import { ALL_KINDS, collect, type ColKind, compareRaw, makeBatch, makeColumn, randomDataset, type Raw, readRows, Rng, SourceExec } from './nodes-fixtures.js';

const ctx = { params: [] };
const NUMERIC: ColKind[] = ['int8', 'int16', 'int32', 'int64', 'uint32', 'uint64', 'float32', 'float64'];
const MINMAX: ColKind[] = [...NUMERIC, 'utf8', 'bool', 'date32', 'timestamp', 'dict'];

function keyOf(v: Raw): string {
  if (v === null) return 'N';
  if (typeof v === 'number') return Number.isNaN(v) ? 'NaN' : `n${v === 0 ? 0 : v}`;
  if (typeof v === 'bigint') return `b${v}`;
  return `${typeof v}:${String(v)}`;
}

/** Reference GROUP BY: expected output rows (cells as readRows gives them) or 'overflow'. */
function referenceAggregate(rows: Raw[][], cells: unknown[][], groupCols: number[], aggs: AggregateSpec[], kinds: ColKind[]): unknown[][] | 'overflow' {
  const groups = new Map<string, number[]>();
  rows.forEach((r, i) => {
    const k = groupCols.map((c) => keyOf(r[c])).join('|');
    let g = groups.get(k);
    if (!g) groups.set(k, (g = []));
    g.push(i);
  });
  if (groupCols.length === 0 && groups.size === 0) groups.set('', []);
  const out: unknown[][] = [];
  for (const members of groups.values()) {
    const row: unknown[] = groupCols.map((c) => cells[members[0]][c]);
    for (const a of aggs) {
      if (a.fn === 'count_star') {
        row.push(BigInt(members.length));
        continue;
      }
      const c = a.column as number;
      let use = members.filter((i) => rows[i][c] !== null);
      if (a.distinct) {
        const seen = new Set<string>();
        use = use.filter((i) => !seen.has(keyOf(rows[i][c])) && !!seen.add(keyOf(rows[i][c])));
      }
      const kind = kinds[c - 1];
      const isInt = ['int8', 'int16', 'int32', 'int64', 'uint32', 'uint64'].includes(kind);
      switch (a.fn) {
        case 'count':
          row.push(BigInt(use.length));
          break;
        case 'sum':
        case 'avg': {
          if (use.length === 0) {
            row.push(null);
            break;
          }
          if (isInt) {
            const s = use.reduce((acc, i) => acc + BigInt(rows[i][c] as number | bigint), 0n);
            if (a.fn === 'sum' && (s > 2n ** 63n - 1n || s < -(2n ** 63n))) return 'overflow';
            row.push(a.fn === 'sum' ? s : Number(s) / use.length);
          } else {
            const s = use.reduce((acc, i) => acc + (rows[i][c] as number), 0);
            row.push(a.fn === 'sum' ? s : s / use.length);
          }
          break;
        }
        case 'min':
        case 'max': {
          if (use.length === 0) {
            row.push(null);
            break;
          }
          let best = use[0];
          for (const i of use) {
            const cmp = compareRaw(rows[i][c], rows[best][c]);
            if (a.fn === 'max' ? cmp > 0 : cmp < 0) best = i;
          }
          row.push(cells[best][c]);
          break;
        }
      }
    }
    out.push(row);
  }
  return out;
}

async function checkAggregate(t: import('ava').ExecutionContext, seed: number) {
  const rng = new Rng(seed);
  const nGroupCols = rng.int(3);
  const kinds: ColKind[] = [
    ...Array.from({ length: nGroupCols }, () => rng.pick(ALL_KINDS)),
    rng.pick(NUMERIC),
    rng.pick(MINMAX),
    rng.pick(ALL_KINDS),
  ];
  const ds = randomDataset(rng, kinds, rng.next() < 0.1 ? 0 : rng.int(1500), 1 + rng.int(rng.next() < 0.5 ? 6 : 60), rng.pick([0, 0.15, 0.6]));
  const groupCols = Array.from({ length: nGroupCols }, (_, i) => i + 1);
  const numCol = nGroupCols + 1;
  const mmCol = nGroupCols + 2;
  const anyCol = nGroupCols + 3;
  const aggs: AggregateSpec[] = [
    { fn: 'count_star', name: 'n' },
    { fn: 'count', column: anyCol, name: 'cnt' },
    { fn: 'count', column: anyCol, distinct: true, name: 'cntd' },
    { fn: 'sum', column: numCol, name: 's' },
    { fn: 'sum', column: numCol, distinct: true, name: 'sd' },
    { fn: 'avg', column: numCol, name: 'a' },
    { fn: 'min', column: mmCol, name: 'lo' },
    { fn: 'max', column: mmCol, name: 'hi' },
  ];
  const node = new HashAggregateExec(new SourceExec(ds.schema, ds.batches), groupCols, aggs);
  const cells = readRows(ds.batches);
  const want = referenceAggregate(ds.rows, cells, groupCols, aggs, ds.kinds);
  if (want === 'overflow') {
    await t.throwsAsync(collect(node.execute(ctx)), { message: 'bigint out of range' }, `seed ${seed}`);
    return 'overflow';
  }
  const out = await collect(node.execute(ctx));
  t.deepEqual(readRows(out), want, `seed ${seed} kinds ${kinds}`);
  t.deepEqual(node.schema.fields.map((f) => f.name), [...groupCols.map((c) => ds.schema.fields[c].name), 'n', 'cnt', 'cntd', 's', 'sd', 'a', 'lo', 'hi']);
  return 'ok';
}

test('hash aggregate matches the reference (many seeds: all key types, NULL keys, DISTINCT, empty input)', async (t) => {
  let ok = 0;
  for (let seed = 1; seed <= 250; seed++) if ((await checkAggregate(t, seed)) === 'ok') ok++;
  t.true(ok > 150, `ok ${ok}`);
});

function oneColumn(kind: ColKind, values: Raw[], batchSize = 3) {
  const schema = new Schema([new Field('g', new Int32()), new Field('x', kind === 'int64' ? new Int64() : kind === 'float64' ? new Float64() : new Int32())]);
  const batches = [];
  for (let at = 0; at < values.length; at += batchSize) {
    const part = values.slice(at, at + batchSize);
    batches.push(makeBatch(schema, [makeColumn('int32', part.map(() => 1)), makeColumn(kind, part)]));
  }
  return new SourceExec(schema, batches);
}

test('integer sums are exact past 2^53 and overflow is an error', async (t) => {
  const big = 2n ** 62n;
  const sum = async (values: Raw[], fn: AggregateFn = 'sum') => readRows(await collect(new HashAggregateExec(oneColumn('int64', values), [], [{ fn, column: 1, name: 's' }]).execute(ctx)))[0][0];
  t.is(await sum([big, big - 1n, -big, 3n]), big + 2n);
  t.is(await sum([9007199254740993n, 1n, 1n]), 9007199254740995n);
  t.is(await sum([-(2n ** 63n), 5n, -5n]), -(2n ** 63n));
  await t.throwsAsync(sum([big, big]), { message: 'bigint out of range', instanceOf: Error });
  await t.throwsAsync(sum([2n ** 63n - 1n, 1n]), { message: 'bigint out of range' });
  // Intermediate overflow that comes back in range is fine (exact arithmetic).
  t.is(await sum([2n ** 63n - 1n, 1n, -2n]), 2n ** 63n - 2n);
  t.is(await sum([big, big, -big], 'avg'), Number(big) / 3);
  // Many int32 rows: the double accumulator spills into BigInt exactly.
  const many = Array.from({ length: 3_000_000 }, (_, i) => (i % 2 ? 2147483647 : 2147483600));
  const got = readRows(await collect(new HashAggregateExec(oneColumn('int32', many, 65536), [], [{ fn: 'sum', column: 1, name: 's' }]).execute(ctx)))[0][0];
  t.is(got, 1_500_000n * 2147483647n + 1_500_000n * 2147483600n);
});

test('no GROUP BY over zero rows gives one row; GROUP BY over zero rows gives none', async (t) => {
  const aggs: AggregateSpec[] = [{ fn: 'count_star', name: 'n' }, { fn: 'count', column: 1, name: 'c' }, { fn: 'sum', column: 1, name: 's' }, { fn: 'avg', column: 1, name: 'a' }, { fn: 'min', column: 1, name: 'm' }];
  t.deepEqual(readRows(await collect(new HashAggregateExec(oneColumn('int32', []), [], aggs).execute(ctx))), [[0n, 0n, null, null, null]]);
  t.deepEqual(readRows(await collect(new HashAggregateExec(oneColumn('int32', []), [0], aggs).execute(ctx))), []);
  // All-NULL input: count 0, the rest NULL.
  t.deepEqual(readRows(await collect(new HashAggregateExec(oneColumn('int32', [null, null]), [], aggs).execute(ctx))), [[2n, 0n, null, null, null]]);
});

test('aggregate schema, explain and validation', (t) => {
  const ds = randomDataset(new Rng(1), ['int32', 'float64', 'utf8'], 10, 5);
  const node = new HashAggregateExec(new SourceExec(ds.schema, ds.batches), [1], [
    { fn: 'count_star', name: 'n' },
    { fn: 'sum', column: 2, name: 'total' },
    { fn: 'count', column: 3, distinct: true, name: 'd' },
  ]);
  t.is(node.explain(), 'HashAggregate: group by [c0_int32] aggregates [count(*) AS n, sum(c1_float64) AS total, count(DISTINCT c2_utf8) AS d]');
  t.deepEqual(node.schema.fields.map((f) => `${f.name}:${String(f.type)}:${f.nullable}`), ['c0_int32:Int32:true', 'n:Int64:false', 'total:Float64:true', 'd:Int64:false']);
  t.throws(() => new HashAggregateExec(new SourceExec(ds.schema, ds.batches), [], [{ fn: 'sum', column: 3, name: 's' }]), { message: /function sum\(Utf8\) does not exist/ });
  t.throws(() => new HashAggregateExec(new SourceExec(ds.schema, ds.batches), [9], []), { message: /group column 9/ });
});

test('hash aggregate past its memory budget fails with InvalidError', async (t) => {
  const ds = randomDataset(new Rng(2), ['utf8'], 20000, 1e9, 0);
  const source = new SourceExec(ds.schema, ds.batches);
  const node = new HashAggregateExec(source, [1], [{ fn: 'count_star', name: 'n' }], { memoryLimitBytes: 100 * 1024 });
  const err = await t.throwsAsync(collect(node.execute(ctx)));
  t.is((err as { kind?: string }).kind, 'invalid');
  t.regex(err!.message, /^HashAggregate needs more than its 100 KiB memory budget \(\d+ groups\); add a LIMIT, filter more, or raise the memory limit$/);
  t.true(source.finallyRan);
});

test('an aborted signal stops the aggregate and runs the child finally', async (t) => {
  const ds = randomDataset(new Rng(5), ['int32'], 3000, 100);
  const source = new SourceExec(ds.schema, ds.batches, { delayMs: 1 });
  const ac = new AbortController();
  setTimeout(() => ac.abort(), 5);
  const err = await t.throwsAsync(collect(new HashAggregateExec(source, [1], [{ fn: 'count_star', name: 'n' }]).execute({ params: [], signal: ac.signal })));
  t.is((err as { kind?: string }).kind, 'cancelled');
  t.true(source.finallyRan);
});
