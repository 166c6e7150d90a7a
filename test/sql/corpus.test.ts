/**
 * The SQL conformance corpus (issue 8): every statement of test/sql/corpus/*.sql runs on Quiver
 * (`db.sql`, and `db.query` when it exists) and on DuckDB over the same live rows; one test per
 * corpus file. The format and the comparison rules are in corpus-runner.ts; for triage run
 * `node --import=tsx test/sql/corpus-runner.ts --file <name>.sql --verbose`.
 *
 * The fixture (corpus-fixture.ts) is built once: Quiver gets a history of puts, upserts, deletes
 * and flushes; DuckDB gets the model of the rows that must be live, never a Quiver scan.
 */
import test from 'ava';
import { buildFixture, COLUMNS, type FixtureModel, type Row } from './corpus-fixture.js';
import { arrowResult, corpusFiles, loadCorpus, openDuckDb, runFile, sameValue, show, sqlOf, type Value } from './corpus-runner.js';
import { connect, type Database } from '../../src/quiver.js';

let db: Database;
let model: FixtureModel;
let duck: Awaited<ReturnType<typeof openDuckDb>>;

test.before(async () => {
  db = await connect('memory://');
  model = await buildFixture(db);
  duck = await openDuckDb(model);
});

test.after.always(async () => {
  duck?.close();
  await db?.close();
});

function modelValue(row: Row, column: (typeof COLUMNS)[number]): Value {
  const v = row[column];
  if (v === null) return null;
  switch (column) {
    case 'id':
    case 'qty':
    case 'year':
      return { t: 'int', v: BigInt(v as number | bigint) };
    case 'price':
      return { t: 'float', v: v as number };
    case 'active':
      return { t: 'bool', v: v as boolean };
    case 'created':
      return { t: 'date', days: v as number };
    case 'updated':
      return { t: 'ts', micros: v as bigint };
    default:
      return { t: 'str', v: v as string };
  }
}

test.serial('fixture: table.scan() returns exactly the model of the live rows', async (t) => {
  for (const name of ['items', 'tiny', 'empty_t', 'gone'] as const) {
    const table = await db.openTable(name);
    const batches = [];
    for await (const b of table.scan()) batches.push(b);
    const got = batches.length ? arrowResult({ schema: batches[0].schema, batches }).rows : [];
    const byId = new Map<bigint, Value[]>();
    for (const row of got) {
      const id = (row[0] as { v: bigint }).v;
      t.false(byId.has(id), `${name}: key ${id} returned twice`);
      byId.set(id, row);
    }
    const want = model[name];
    t.is(byId.size, want.size, `${name}: live row count`);
    for (const [id, row] of want) {
      const scanned = byId.get(id);
      if (!scanned) {
        t.fail(`${name}: key ${id} missing from the scan`);
        continue;
      }
      const expected = COLUMNS.map((c) => modelValue(row, c));
      if (expected.some((v, i) => !sameValue(scanned[i], v))) {
        t.fail(`${name}: key ${id}\n  scan:  ${scanned.map(show).join(', ')}\n  model: ${expected.map(show).join(', ')}`);
      }
    }
  }
  t.true(model.items.size > 3000, 'items holds a few thousand live rows');
  t.is(loadCorpus().length >= 150, true, 'the corpus holds at least 150 statements');
});

for (const file of corpusFiles()) {
  test.serial(`corpus ${file}`, async (t) => {
    if (!sqlOf(db)) {
      t.fail(`db.sql is not implemented (issue 8): ${loadCorpus([file]).length} statements of ${file} cannot run`);
      return;
    }
    const { ran, failed, failures } = await runFile(file, db, duck.conn);
    const shown = failures.slice(0, 15).join('\n\n');
    const more = failures.length > 15 ? `\n\n… and ${failures.length - 15} more failures` : '';
    t.is(failed, 0, `${failed} of ${ran} statements of ${file} do not conform:\n\n${shown}${more}`);
  });
}
