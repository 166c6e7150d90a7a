/**
 * The data the SQL conformance corpus runs on (issue 8), built twice from one model:
 *
 * - in Quiver through the embedded API, with a history: three flushed generations plus rows left
 *   in the MemTable, keys upserted (the newer version flushed or still in memory, sometimes twice),
 *   keys deleted (in generations and in the MemTable), deleted keys put again;
 * - in DuckDB (the oracle) from the *model* of the live rows, never from a Quiver scan, so a
 *   Quiver bug in deduplication or tombstones cannot leak into the expected results.
 *
 * Superseded versions and deleted rows are written with marker values (category 'zombie' /
 * 'ghost', names 'superseded …' / 'deleted …', prices above 1e6, year 1999) that no live row has,
 * so a query that sees an old version returns something DuckDB cannot.
 *
 * Everything is deterministic (mulberry32, fixed seed): a failure reproduces exactly.
 */
import {
  Bool,
  type Data,
  type DataType,
  DateDay,
  Field,
  Float64,
  Int16,
  Int32,
  Int64,
  makeData,
  RecordBatch,
  Schema,
  Struct,
  TimestampMicrosecond,
  Utf8,
  vectorFromArray,
} from 'apache-arrow';
import type { DuckDBConnection } from '@duckdb/node-api';
import type { Database, Table as QuiverTable } from '../../src/quiver.js';
import { mulberry32 } from '../helpers/rng.js';

/** One row of the fixture tables, as the model holds it. */
export interface Row {
  id: bigint;
  name: string | null;
  category: string | null;
  price: number | null;
  qty: number | null;
  year: number | null;
  active: boolean | null;
  /** Days since 1970-01-01. */
  created: number | null;
  /** Microseconds since 1970-01-01 00:00:00. */
  updated: bigint | null;
}

export const COLUMNS = ['id', 'name', 'category', 'price', 'qty', 'year', 'active', 'created', 'updated'] as const;

/** Arrow schema of items, tiny, empty_t and gone (DESIGN.md's SQL type table). */
export const rowSchema = new Schema([
  new Field('id', new Int64(), false),
  new Field('name', new Utf8(), true),
  new Field('category', new Utf8(), true),
  new Field('price', new Float64(), true),
  new Field('qty', new Int32(), true),
  new Field('year', new Int16(), true),
  new Field('active', new Bool(), true),
  new Field('created', new DateDay(), true),
  new Field('updated', new TimestampMicrosecond(), true),
]);

/** The same columns in DuckDB. */
const DUCKDB_COLUMNS =
  'id BIGINT PRIMARY KEY, name VARCHAR, category VARCHAR, price DOUBLE, qty INTEGER, year SMALLINT, active BOOLEAN, created DATE, updated TIMESTAMP';

/** Names of every table the corpus may read, with the live rows each must hold. */
export interface FixtureModel {
  items: Map<bigint, Row>;
  tiny: Map<bigint, Row>;
  empty_t: Map<bigint, Row>;
  gone: Map<bigint, Row>;
}

export const SEED = 0x5eed_0008;

// ---------------------------------------------------------------------------------------------
// Row generation

/** Names with NULLs, the empty string, mixed case, padding, LIKE metacharacters, multi-byte UTF-8
 * (accents, CJK, emoji outside the BMP and fullwidth letters: the two sort in the opposite order by
 * UTF-16 code units, as JavaScript compares strings, than by code points, as PostgreSQL's C collation
 * and DuckDB do). */
const NAMES = [
  'Widget', 'widget', 'WIDGET', 'Gadget', 'gadget', 'Gizmo', 'doohickey', 'Thingamajig', 'sprocket', 'Sprocket',
  'cog', 'Cog wheel', 'bolt', 'Bolt', 'nut', 'washer', 'Ünïcødé', 'ünïcødé', '日本語', '日本', 'emoji 🎉',
  '🎉 party', 'ＷＩＤＧＥＴ', '  padded  ', 'tab\tname', '100% cotton', 'under_score', "O'Brien", 'zeta', 'Alpha', 'alpha',
];
const CATEGORIES = ['alpha', 'beta', 'gamma', 'delta'];
const DAY_2019 = Date.UTC(2019, 0, 1) / 86_400_000;
const MICROS_2020 = BigInt(Date.UTC(2020, 0, 1)) * 1000n;
const MICROS_SPAN = BigInt(5 * 365 * 86_400) * 1_000_000n;

type Rand = () => number;
const pick = <T>(r: Rand, xs: readonly T[]): T => xs[Math.floor(r() * xs.length)];

function randomRow(r: Rand, id: bigint): Row {
  const u = r();
  const name = u < 0.1 ? null : u < 0.14 ? '' : pick(r, NAMES);
  const category = r() < 0.12 ? null : pick(r, CATEGORIES);
  // Prices: 0, integers, or cents not ending in 0 or 5, so round(price) / round(price, 1) and
  // CAST(price AS INT) never meet a tie (where PostgreSQL and DuckDB round differently).
  let price: number | null;
  const p = r();
  if (p < 0.08) price = null;
  else if (p < 0.13) price = 0;
  else if (p < 0.2) price = Math.floor(r() * 200) - 50;
  else {
    let cents = Math.floor(r() * 100_000) - 10_000;
    if (cents % 5 === 0) cents += 1;
    price = cents / 100;
  }
  const q = r();
  const qty = q < 0.07 ? null : q < 0.12 ? 0 : 1 + Math.floor(r() * 500);
  const year = r() < 0.03 ? null : 2015 + Math.floor(r() * 10);
  const a = r();
  const active = a < 0.1 ? null : a < 0.64;
  const created = r() < 0.05 ? null : DAY_2019 + Math.floor(r() * 6 * 365);
  const updated = r() < 0.05 ? null : MICROS_2020 + BigInt(Math.floor(r() * Number(MICROS_SPAN)));
  return { id, name, category, price, qty, year, active, created, updated };
}

/** A version that must never be seen: superseded later by a put, or deleted. */
function doomedRow(id: bigint, marker: 'zombie' | 'ghost'): Row {
  return {
    id,
    name: `${marker === 'zombie' ? 'superseded' : 'deleted'} ${id}`,
    category: marker,
    price: 1_000_000 + Number(id),
    qty: 999_999,
    year: 1999,
    active: true,
    created: DAY_2019 - 1000,
    updated: MICROS_2020 - 1n,
  };
}

const range = (from: number, to: number): bigint[] => Array.from({ length: to - from + 1 }, (_, i) => BigInt(from + i));

// ---------------------------------------------------------------------------------------------
// Arrow batches

function column(type: DataType, values: readonly unknown[]): Data {
  if (type instanceof DateDay || type instanceof TimestampMicrosecond) {
    const n = values.length;
    const data = type instanceof DateDay ? new Int32Array(n) : new BigInt64Array(n);
    const bitmap = new Uint8Array((n + 7) >> 3);
    let nulls = 0;
    values.forEach((v, i) => {
      if (v === null) nulls++;
      else {
        (data as unknown as (number | bigint)[])[i] = v as never;
        bitmap[i >> 3] |= 1 << (i & 7);
      }
    });
    return makeData({ type: type as never, length: n, nullCount: nulls, nullBitmap: nulls ? bitmap : undefined, data: data as never });
  }
  return vectorFromArray(values as never[], type as never).data[0] as Data;
}

export function rowsToBatch(rows: readonly Row[]): RecordBatch {
  const children = rowSchema.fields.map((f) => column(f.type, rows.map((r) => r[f.name as keyof Row])));
  return new RecordBatch(rowSchema, makeData({ type: new Struct(rowSchema.fields), length: rows.length, nullCount: 0, children }));
}

// ---------------------------------------------------------------------------------------------
// The history, applied to Quiver and to the model in the same order

class History {
  readonly model = new Map<bigint, Row>();
  /** Without a table, only the model is kept (`--duckdb-only`). */
  constructor(private readonly table: QuiverTable | undefined) {}

  async put(rows: Row[]): Promise<void> {
    // Large puts go in batches of 400 rows (several WAL entries); order is kept.
    if (this.table) for (let i = 0; i < rows.length; i += 400) await this.table.put(rowsToBatch(rows.slice(i, i + 400)));
    for (const r of rows) this.model.set(r.id, r);
  }

  async delete(ids: bigint[]): Promise<void> {
    await this.table?.delete(ids);
    for (const id of ids) this.model.delete(id);
  }

  async flush(): Promise<void> {
    await this.table?.flush();
  }
}

async function buildItems(db: Database | undefined): Promise<Map<bigint, Row>> {
  const r = mulberry32(SEED);
  const h = new History(await db?.createTable('items', rowSchema, { primaryKey: 'id' }));
  const fresh = (ids: bigint[]) => ids.map((id) => randomRow(r, id));
  const doomed = (ids: bigint[], marker: 'zombie' | 'ghost') => ids.map((id) => doomedRow(id, marker));

  // Generation 1: ids 1..1000. Keys that a later step replaces or deletes carry marker values.
  const gen1 = fresh(range(1, 1000)).map((row) => {
    const id = Number(row.id);
    if (id <= 100 || (id >= 500 && id <= 560)) return doomedRow(row.id, 'zombie');
    if ((id >= 101 && id <= 150) || (id >= 700 && id <= 720)) return doomedRow(row.id, 'ghost');
    return row;
  });
  await h.put(gen1);
  await h.flush();

  // Generation 2: ids 1001..2000; 1..100 upserted (1..20 again later, so zombies once more);
  // 101..150 deleted (their rows are in generation 1); a key put twice in one MemTable.
  const gen2 = fresh(range(1001, 2000)).map((row) => (Number(row.id) <= 1050 ? doomedRow(row.id, 'zombie') : row));
  await h.put(gen2);
  await h.put([...doomed(range(1, 20), 'zombie'), ...fresh(range(21, 100))]);
  await h.delete(range(101, 150));
  await h.put(doomed([1999n], 'zombie'));
  await h.put(fresh([1999n]));
  await h.flush();

  // Generation 3: ids 2001..3000; 1001..1050 and 1..20 upserted; 2001..2020 put and deleted
  // before the flush; 101..105 (deleted in generation 2) put again.
  await h.put(fresh(range(2001, 3000)).map((row) => (Number(row.id) <= 2020 ? doomedRow(row.id, 'ghost') : row)));
  await h.put(fresh(range(1001, 1050)));
  await h.put(fresh(range(1, 20)));
  await h.delete(range(2001, 2020));
  await h.put(fresh(range(101, 105)));
  await h.flush();

  // MemTable (never flushed): new ids 3001..3300; upserts of generation-1 keys 500..560 and
  // generation-3 keys 2500..2520; deletes of generation-1 keys 700..720, generation-3 keys
  // 2600..2605 and MemTable keys 3001..3010; 3011..3015 deleted then put again; an unknown key
  // deleted; 2999 deleted in memory after its flush.
  const mem = fresh(range(3001, 3300)).map((row) => {
    const id = Number(row.id);
    return id <= 3010 || (id >= 3011 && id <= 3015) ? doomedRow(row.id, id <= 3010 ? 'ghost' : 'zombie') : row;
  });
  await h.put(mem);
  await h.put(fresh(range(500, 560)));
  await h.put([...doomed(range(2500, 2510), 'zombie'), ...fresh(range(2511, 2520))]);
  await h.put(fresh(range(2500, 2510)));
  await h.delete([...range(700, 720), ...range(2600, 2605), ...range(3001, 3015), 99_999n, 2999n]);
  await h.put(fresh(range(3011, 3015)));
  return h.model;
}

/** Edge cases by hand: extreme integers, LIKE metacharacters, a quote, every NULL. */
function tinyRows(): Row[] {
  const day = (iso: string) => Date.UTC(+iso.slice(0, 4), +iso.slice(5, 7) - 1, +iso.slice(8, 10)) / 86_400_000;
  const ts = (iso: string, micros = 0) => BigInt(Date.parse(`${iso}Z`)) * 1000n + BigInt(micros);
  return [
    { id: 1n, name: 'a', category: 'x', price: 1.25, qty: 1, year: 2020, active: true, created: day('2020-02-29'), updated: ts('2020-02-29T23:59:59', 999_999) },
    { id: 2n, name: 'B', category: 'x', price: -1.75, qty: 0, year: 2021, active: false, created: day('2021-01-01'), updated: ts('2021-01-01T00:00:00') },
    { id: 3n, name: null, category: null, price: null, qty: null, year: null, active: null, created: null, updated: null },
    { id: 4n, name: '', category: 'y', price: 0, qty: 2_147_483_647, year: 32_767, active: true, created: day('1970-01-01'), updated: ts('1970-01-01T00:00:00', 1) },
    { id: 5n, name: '50%_off', category: 'y', price: 1e15, qty: -2_147_483_648, year: -32_768, active: false, created: day('1969-12-31'), updated: ts('1969-12-31T23:59:59', 500_000) },
    { id: 6n, name: "it's", category: 'x', price: 0.1, qty: 7, year: 2020, active: null, created: day('2024-12-31'), updated: ts('2024-06-15T12:30:45', 123_456) },
    { id: 7n, name: 'Ünïcødé 日本 🎉', category: null, price: -0.5, qty: -7, year: 2021, active: true, created: day('2000-01-01'), updated: ts('2000-01-01T00:00:00') },
    { id: 8n, name: 'a\\b', category: 'y', price: 2.675, qty: 3, year: 2022, active: false, created: day('2022-07-04'), updated: ts('2022-07-04T04:05:06', 10) },
  ];
}

async function buildTiny(db: Database | undefined): Promise<Map<bigint, Row>> {
  const h = new History(await db?.createTable('tiny', rowSchema, { primaryKey: 'id' }));
  const rows = tinyRows();
  await h.put([...rows.slice(0, 5), doomedRow(9n, 'ghost'), doomedRow(10n, 'ghost')]);
  await h.flush();
  await h.put(rows.slice(5));
  await h.delete([9n, 10n]);
  return h.model;
}

/** A table whose rows were all deleted: every source holds data, nothing is live. */
async function buildGone(db: Database | undefined): Promise<Map<bigint, Row>> {
  const r = mulberry32(SEED + 1);
  const h = new History(await db?.createTable('gone', rowSchema, { primaryKey: 'id' }));
  await h.put(range(1, 50).map((id) => doomedRow(id, 'ghost')));
  await h.flush();
  await h.put(range(51, 60).map((id) => randomRow(r, id)));
  await h.delete(range(1, 60));
  return h.model;
}

/**
 * Creates items, tiny, empty_t and gone in `db` and returns the live rows each must hold; without
 * a database, only computes that model (`--duckdb-only`).
 */
export async function buildFixture(db?: Database): Promise<FixtureModel> {
  const items = await buildItems(db);
  const tiny = await buildTiny(db);
  await db?.createTable('empty_t', rowSchema, { primaryKey: 'id' });
  const gone = await buildGone(db);
  return { items, tiny, empty_t: new Map(), gone };
}

// ---------------------------------------------------------------------------------------------
// DuckDB

function sqlLiteral(v: Row[keyof Row], col: (typeof COLUMNS)[number]): string {
  if (v === null) return 'NULL';
  switch (col) {
    case 'name':
    case 'category':
      return `'${String(v).replaceAll("'", "''")}'`;
    case 'created':
      return `DATE '${new Date(Number(v) * 86_400_000).toISOString().slice(0, 10)}'`;
    case 'updated': {
      const micros = v as bigint;
      const ms = micros / 1000n - (micros % 1000n < 0n ? 1n : 0n);
      const frac = ((micros % 1_000_000n) + 1_000_000n) % 1_000_000n;
      const iso = new Date(Number(ms)).toISOString().slice(0, 19).replace('T', ' ');
      return `TIMESTAMP '${iso}.${String(frac).padStart(6, '0')}'`;
    }
    case 'price':
      return `${(v as number).toString()}::DOUBLE`;
    default:
      return String(v);
  }
}

/** Creates the fixture tables in DuckDB and inserts the model's live rows. */
export async function loadDuckDb(conn: DuckDBConnection, model: FixtureModel): Promise<void> {
  for (const [name, rows] of Object.entries(model) as [string, Map<bigint, Row>][]) {
    await conn.run(`CREATE TABLE ${name} (${DUCKDB_COLUMNS})`);
    const all = [...rows.values()];
    for (let i = 0; i < all.length; i += 500) {
      const values = all.slice(i, i + 500).map((r) => `(${COLUMNS.map((c) => sqlLiteral(r[c], c)).join(', ')})`);
      await conn.run(`INSERT INTO ${name} VALUES ${values.join(',\n')}`);
    }
  }
}
