import test from 'ava';
import { Field, Int32, Int64, Schema, Utf8 } from 'apache-arrow';
import { LimitExec } from '../../exec/nodes/limit-exec.js';
import { UnionExec } from '../../exec/nodes/union-exec.js';
import { ValuesExec } from '../../exec/nodes/values-exec.js';
import { collect, idsOf, makeBatch, makeColumn, randomDataset, readRows, Rng, SourceExec } from './nodes-fixtures.js';

const ctx = { params: [] };

test('limit/offset match slicing the input (many seeds, empty and sliced batches)', async (t) => {
  for (let seed = 1; seed <= 200; seed++) {
    const rng = new Rng(seed);
    const ds = randomDataset(rng, ['utf8', 'int64'], rng.int(600), 50);
    const limit = rng.next() < 0.15 ? null : rng.int(700);
    const offset = rng.next() < 0.4 ? 0 : rng.int(700);
    const out = await collect(new LimitExec(new SourceExec(ds.schema, ds.batches), limit, offset).execute(ctx));
    const want = ds.rows.slice(offset, limit === null ? undefined : offset + limit).map((r) => r[0]);
    t.deepEqual(idsOf(out), want, `seed ${seed}`);
    const input = new Map(readRows(ds.batches).map((r) => [r[0], r]));
    t.deepEqual(readRows(out), idsOf(out).map((id) => input.get(id)));
  }
});

test('limit stops pulling its child once it has enough rows', async (t) => {
  const schema = new Schema([new Field('id', new Int32())]);
  const batches = Array.from({ length: 10 }, (_, b) => makeBatch(schema, [makeColumn('int32', Array.from({ length: 10 }, (_, i) => b * 10 + i))]));
  // Limit 25 needs three batches; a fourth pull throws.
  const source = new SourceExec(schema, batches, { throwAfter: 3 });
  const out = await collect(new LimitExec(source, 25, 0).execute(ctx));
  t.is(idsOf(out).length, 25);
  t.is(source.pulls, 3);
  t.true(source.finallyRan);
  // Exactly at a batch boundary: still no extra pull.
  const exact = new SourceExec(schema, batches, { throwAfter: 2 });
  t.deepEqual(idsOf(await collect(new LimitExec(exact, 15, 5).execute(ctx))), Array.from({ length: 15 }, (_, i) => i + 5));
  t.is(exact.pulls, 2);
  // LIMIT 0 never pulls.
  const none = new SourceExec(schema, batches, { throwAfter: 0 });
  t.deepEqual(await collect(new LimitExec(none, 0, 3).execute(ctx)), []);
  t.is(none.pulls, 0);
});

test('limit explain and validation', (t) => {
  const schema = new Schema([new Field('id', new Int32())]);
  t.is(new LimitExec(new SourceExec(schema, []), 10, 5).explain(), 'Limit: 10 offset 5');
  t.is(new LimitExec(new SourceExec(schema, []), null, 5).explain(), 'Limit: all offset 5');
  t.throws(() => new LimitExec(new SourceExec(schema, []), -1, 0), { message: /LIMIT/ });
  t.throws(() => new LimitExec(new SourceExec(schema, []), 1, 1.5), { message: /OFFSET/ });
});

test('an aborted signal stops a limit mid-stream and runs the child finally', async (t) => {
  const schema = new Schema([new Field('id', new Int32())]);
  const batches = Array.from({ length: 50 }, (_, b) => makeBatch(schema, [makeColumn('int32', [b])]));
  const source = new SourceExec(schema, batches);
  const ac = new AbortController();
  let seen = 0;
  const err = await t.throwsAsync(async () => {
    for await (const _ of new LimitExec(source, 40, 0).execute({ params: [], signal: ac.signal })) {
      if (++seen === 3) ac.abort();
    }
  });
  t.is((err as { kind?: string }).kind, 'cancelled');
  t.is(seen, 3);
  t.true(source.finallyRan);
  t.true(source.pulls <= 4);
});

test('union all emits the children in order, one child at a time', async (t) => {
  const rng = new Rng(4);
  const parts = [randomDataset(rng, ['utf8'], 50, 10), randomDataset(rng, ['utf8'], 0, 10), randomDataset(rng, ['utf8'], 70, 10)];
  const order: string[] = [];
  class Tracking extends SourceExec {
    constructor(readonly name: string, ...args: ConstructorParameters<typeof SourceExec>) {
      super(...args);
    }
    protected override async *run(c: import('../../exec/nodes/exec-node.js').ExecContext) {
      order.push(`open ${this.name}`);
      yield* super.run(c);
      order.push(`close ${this.name}`);
    }
  }
  const node = new UnionExec(parts.map((p, i) => new Tracking(String(i), p.schema, p.batches)));
  const out = await collect(node.execute(ctx));
  t.deepEqual(readRows(out), parts.flatMap((p) => readRows(p.batches)));
  t.deepEqual(order, ['open 0', 'close 0', 'open 1', 'close 1', 'open 2', 'close 2']);
  t.is(node.explain(), 'Union: 3 inputs');
});

test('union rejects children whose columns do not match', (t) => {
  const a = new SourceExec(new Schema([new Field('x', new Int32())]), []);
  const b = new SourceExec(new Schema([new Field('x', new Int64())]), []);
  const c = new SourceExec(new Schema([new Field('x', new Int32()), new Field('y', new Utf8())]), []);
  t.throws(() => new UnionExec([a, b]), { message: /types Int32 and Int64/ });
  t.throws(() => new UnionExec([a, c]), { message: /same number of columns/ });
  // Names come from the first child; nullability is the union of the children's.
  const d = new SourceExec(new Schema([new Field('renamed', new Int32(), true)]), []);
  const e = new SourceExec(new Schema([new Field('x', new Int32(), false)]), []);
  const u = new UnionExec([e, d]);
  t.is(u.schema.fields[0].name, 'x');
  t.true(u.schema.fields[0].nullable);
});

test('values emits its batches under its schema', async (t) => {
  const schema = new Schema([new Field('?column?', new Int32())]);
  const other = new Schema([new Field('x', new Int32())]);
  const node = new ValuesExec(schema, [makeBatch(other, [makeColumn('int32', [2])]), makeBatch(other, [makeColumn('int32', [])])]);
  const out = await collect(node.execute(ctx));
  t.is(out.length, 1);
  t.is(out[0].schema.fields[0].name, '?column?');
  t.deepEqual(readRows(out), [[2]]);
  t.is(node.explain(), 'Values: 1 row');
  t.is(node.metrics.rows, 1);
});
