import test from 'ava';
import { SortExec } from '../../exec/nodes/sort-exec.js';
import { ALL_KINDS, collect, type ColKind, idsOf, randomDataset, readRows, referenceSort, type RefKey, Rng, SourceExec } from './nodes-fixtures.js';

const ctx = { params: [] };

async function checkSort(t: import('ava').ExecutionContext, seed: number, kinds: ColKind[], nRows: number, distinct: number, keysOf: (rng: Rng) => RefKey[]) {
  const rng = new Rng(seed);
  const ds = randomDataset(rng, kinds, nRows, distinct);
  const keys = keysOf(rng);
  const node = new SortExec(new SourceExec(ds.schema, ds.batches), keys);
  const out = await collect(node.execute(ctx));
  for (const b of out) t.true(b.numRows > 0 && b.numRows <= 8192);
  const expected = referenceSort(ds.rows, keys).map((r) => r[0]);
  const got = idsOf(out);
  if (JSON.stringify(got) !== JSON.stringify(expected)) {
    t.fail(`seed ${seed} kinds ${kinds} keys ${JSON.stringify(keys)}: ids differ at ${got.findIndex((x, i) => x !== expected[i])}`);
    return;
  }
  // Payload cells were gathered from the right rows.
  const inputById = new Map(readRows(ds.batches).map((r) => [r[0] as number, r]));
  const outRows = readRows(out);
  t.deepEqual(outRows, got.map((id) => inputById.get(id)));
}

for (const kind of ALL_KINDS) {
  test(`sort by one ${kind} key, both directions, matches the reference`, async (t) => {
    for (let seed = 1; seed <= 12; seed++) {
      await checkSort(t, seed * 101 + kind.length, [kind, 'int32'], 400 + seed * 20, seed % 3 === 0 ? 8 : 200, (rng) => [{ column: 1, descending: rng.next() < 0.5, nullsFirst: rng.next() < 0.3 ? rng.next() < 0.5 : undefined }]);
    }
  });
}

test('sort by several keys of mixed types matches the reference (many seeds)', async (t) => {
  for (let seed = 1; seed <= 60; seed++) {
    const rng = new Rng(seed);
    const kinds = Array.from({ length: 3 }, () => rng.pick(ALL_KINDS));
    await checkSort(t, seed, kinds, rng.int(1500), 1 + rng.int(12), (r) =>
      [1, 2, 3].slice(0, 1 + r.int(3)).map((column) => ({ column, descending: r.next() < 0.5, nullsFirst: r.next() < 0.3 ? r.next() < 0.5 : undefined })),
    );
  }
});

test('sort over zero rows and only empty batches yields nothing', async (t) => {
  const ds = randomDataset(new Rng(3), ['int32'], 0, 5);
  const out = await collect(new SortExec(new SourceExec(ds.schema, ds.batches), [{ column: 1, descending: false }]).execute(ctx));
  t.is(out.length, 0);
});

test('sort output comes in batches of at most 8192 rows', async (t) => {
  const rng = new Rng(9);
  const ds = randomDataset(rng, ['float64'], 20000, 5000, 0.05);
  const out = await collect(new SortExec(new SourceExec(ds.schema, ds.batches), [{ column: 1, descending: true }]).execute(ctx));
  t.deepEqual(out.map((b) => b.numRows), [8192, 8192, 3616]);
  t.deepEqual(idsOf(out), referenceSort(ds.rows, [{ column: 1, descending: true }]).map((r) => r[0]));
});

test('sort explain names the keys', (t) => {
  const ds = randomDataset(new Rng(1), ['int32', 'utf8'], 10, 5);
  const node = new SortExec(new SourceExec(ds.schema, ds.batches), [{ column: 1, descending: true, nullsFirst: true }, { column: 0, descending: false }]);
  t.is(node.explain(), 'Sort: c0_int32 DESC NULLS FIRST, id ASC');
});

test('sort past its memory budget fails with InvalidError naming the budget', async (t) => {
  const ds = randomDataset(new Rng(5), ['int64', 'utf8'], 5000, 1000);
  const source = new SourceExec(ds.schema, ds.batches);
  const node = new SortExec(source, [{ column: 1, descending: false }], { memoryLimitBytes: 64 * 1024 });
  const err = await t.throwsAsync(collect(node.execute(ctx)));
  t.is((err as { kind?: string }).kind, 'invalid');
  t.regex(err!.message, /^Sort needs more than its 64 KiB memory budget \(\d+ rows buffered\); add a LIMIT, filter more, or raise the memory limit$/);
  t.true(source.finallyRan);
});

test('sort rejects an unknown key column and an unsortable type', (t) => {
  const ds = randomDataset(new Rng(1), ['int32'], 10, 5);
  t.throws(() => new SortExec(new SourceExec(ds.schema, ds.batches), [{ column: 7, descending: false }]), { message: /column 7/ });
});

test('an aborted signal stops the sort and runs the child finally', async (t) => {
  const ds = randomDataset(new Rng(5), ['int32'], 3000, 100);
  const source = new SourceExec(ds.schema, ds.batches, { delayMs: 1 });
  const ac = new AbortController();
  const node = new SortExec(source, [{ column: 1, descending: false }]);
  setTimeout(() => ac.abort(), 5);
  const err = await t.throwsAsync(collect(node.execute({ params: [], signal: ac.signal })));
  t.is((err as { kind?: string }).kind, 'cancelled');
  t.true(source.finallyRan);
  t.true(source.pulls < ds.batches.length);
});

test('PostgreSQL order on a hand-written column: NULLs last ASC / first DESC, NaN above Infinity, C collation', async (t) => {
  const { makeColumn, makeBatch } = await import('./nodes-fixtures.js');
  const { Schema, Field, Float64, Utf8, Int32 } = await import('apache-arrow');
  const schema = new Schema([new Field('id', new Int32()), new Field('x', new Float64()), new Field('s', new Utf8())]);
  const xs = [3, null, NaN, -Infinity, Infinity, -0, 0, -2.5];
  const ss = ['b', null, 'é', '', 'a', 'B', '\uFFFD', '🙂'];
  const batch = makeBatch(schema, [makeColumn('int32', xs.map((_, i) => i)), makeColumn('float64', xs), makeColumn('utf8', ss)]);
  const run = async (column: number, descending: boolean, nullsFirst?: boolean) =>
    idsOf(await collect(new SortExec(new SourceExec(schema, [batch]), [{ column, descending, nullsFirst }]).execute(ctx)));
  t.deepEqual(await run(1, false), [3, 7, 5, 6, 0, 4, 2, 1]);
  t.deepEqual(await run(1, true), [1, 2, 4, 0, 5, 6, 7, 3]);
  t.deepEqual(await run(1, false, true), [1, 3, 7, 5, 6, 0, 4, 2]);
  t.deepEqual(await run(1, true, false), [2, 4, 0, 5, 6, 7, 3, 1]);
  // '' < 'B' < 'a' < 'b' < 'é' (U+00E9) < U+FFFD < 🙂 (U+1F642: after U+FFFD in code points, before it in UTF-16)
  t.deepEqual(await run(2, false), [3, 5, 4, 0, 2, 6, 7, 1]);
});

test('sort of ≥ 2048 rows (radix path) matches the reference for every non-string key type', async (t) => {
  const kinds = ALL_KINDS.filter((k) => k !== 'utf8' && k !== 'dict');
  for (let seed = 1; seed <= 16; seed++) {
    const rng = new Rng(seed * 13);
    const ks: ColKind[] = [rng.pick(kinds), rng.pick(kinds)];
    await checkSort(t, seed * 31, ks, 2500 + rng.int(3000), seed % 2 ? 20 : 5000, (r) =>
      [1, 2].slice(0, 1 + r.int(2)).map((column) => ({ column, descending: r.next() < 0.5, nullsFirst: r.next() < 0.3 ? r.next() < 0.5 : undefined })),
    );
  }
});
