import test from 'ava';
import { LimitExec } from '../../exec/nodes/limit-exec.js';
import { SortExec } from '../../exec/nodes/sort-exec.js';
import { TopKExec } from '../../exec/nodes/top-k-exec.js';
import { ALL_KINDS, collect, idsOf, randomDataset, readRows, referenceSort, type RefKey, Rng, SourceExec } from './nodes-fixtures.js';

const ctx = { params: [] };

test('top-k equals sort + limit/offset, ties by input order (many seeds, all types, compactions)', async (t) => {
  let compactions = 0;
  let filtered = 0;
  for (let seed = 1; seed <= 150; seed++) {
    const rng = new Rng(seed * 7 + 1);
    const kinds = Array.from({ length: 2 }, () => rng.pick(ALL_KINDS));
    const ds = randomDataset(rng, kinds, rng.int(2500), 1 + rng.int(40));
    const keys: RefKey[] = [1, 2].slice(0, 1 + rng.int(2)).map((column) => ({ column, descending: rng.next() < 0.5, nullsFirst: rng.next() < 0.3 ? rng.next() < 0.5 : undefined }));
    const k = rng.pick([1, 2, 5, 10, 37, 100, 1000, 5000]);
    const offset = rng.next() < 0.5 ? 0 : rng.int(300);
    const node = new TopKExec(new SourceExec(ds.schema, ds.batches), keys, k, offset, { compactAfterRows: 1 + rng.int(200) });
    const out = await collect(node.execute(ctx));
    const want = referenceSort(ds.rows, keys).slice(offset, offset + k).map((r) => r[0]);
    t.deepEqual(idsOf(out), want, `seed ${seed} kinds ${kinds} keys ${JSON.stringify(keys)} k ${k} offset ${offset}`);
    const input = new Map(readRows(ds.batches).map((r) => [r[0], r]));
    t.deepEqual(readRows(out), idsOf(out).map((id) => input.get(id)));
    compactions += node.metrics.extra.compactions as number;
    filtered += node.metrics.extra.filteredOut as number;
  }
  t.true(compactions > 200, `compactions ${compactions}`);
  t.true(filtered > 10000, `filtered ${filtered}`);
});

test('top-k output matches SortExec + LimitExec exactly, default compaction', async (t) => {
  const rng = new Rng(77);
  const ds = randomDataset(rng, ['float64', 'utf8'], 30000, 300, 0.1);
  const keys = [{ column: 1, descending: true }, { column: 2, descending: false }];
  const topk = await collect(new TopKExec(new SourceExec(ds.schema, ds.batches), keys, 9000, 10).execute(ctx));
  const sorted = await collect(new LimitExec(new SortExec(new SourceExec(ds.schema, ds.batches), keys), 9000, 10).execute(ctx));
  t.deepEqual(idsOf(topk), idsOf(sorted));
  t.deepEqual(topk.map((b) => b.numRows), [8192, 808]);
});

test('top-k with k = 0 does not pull its child; explain', async (t) => {
  const ds = randomDataset(new Rng(1), ['int32'], 100, 10);
  const source = new SourceExec(ds.schema, ds.batches, { throwAfter: 0 });
  const node = new TopKExec(source, [{ column: 1, descending: true }], 0, 0);
  t.deepEqual(await collect(node.execute(ctx)), []);
  t.is(source.pulls, 0);
  t.is(new TopKExec(source, [{ column: 1, descending: true }], 10, 0).explain(), 'TopK: k=10 offset=0 by c0_int32 DESC');
});

test('an aborted signal stops top-k and runs the child finally', async (t) => {
  const ds = randomDataset(new Rng(5), ['int32'], 3000, 100);
  const source = new SourceExec(ds.schema, ds.batches, { delayMs: 1 });
  const ac = new AbortController();
  setTimeout(() => ac.abort(), 5);
  const err = await t.throwsAsync(collect(new TopKExec(source, [{ column: 1, descending: false }], 10).execute({ params: [], signal: ac.signal })));
  t.is((err as { kind?: string }).kind, 'cancelled');
  t.true(source.finallyRan);
});
