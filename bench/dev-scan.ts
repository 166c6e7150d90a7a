// Dev harness: table.scan({ columns: ['id', 'year'] }) — or, with SQL=1, `SELECT count(*) FROM t`
// — over the bench:search table at N rows (ten generations + 5 % upserts in the MemTable; built
// by bench/dev-bm25.ts into /tmp/qb), with the default generation cache (CACHE_MB to change it):
// wall ms a scan, REPS in a row after opening the table.
// N=1000000 node --max-old-space-size=16384 --import=tsx bench/dev-scan.ts
import { connect } from '../src/database.js';
import { HOLD_IN_MEMTABLE } from './lib/quiver.js';
const N = Number(process.env.N ?? 1_000_000);
const DIR = process.env.DIR ?? `/tmp/qb/t${N}`;
const CACHE_MB = process.env.CACHE_MB ? Number(process.env.CACHE_MB) : undefined;
const SQL = process.env.SQL === '1';
const db = await connect(DIR, { fsync: false, writer: HOLD_IN_MEMTABLE, ...(CACHE_MB ? { generationCacheBytes: CACHE_MB * 2 ** 20 } : {}) });
const table = await db.openTable('t');
for (let r = 0; r < Number(process.env.REPS ?? 5); r++) {
  const t0 = performance.now();
  let n = 0;
  if (SQL) n = Number((await db.sql('SELECT count(*) AS n FROM t')).toArray()[0].n);
  else for await (const b of table.scan({ columns: ['id', 'year'] })) n += b.numRows;
  console.log(`${SQL ? 'count(*)' : 'scan'} ${r}: ${n} rows, ${(performance.now() - t0).toFixed(1)} ms, rss ${(process.memoryUsage().rss / 2 ** 20).toFixed(0)} MB`);
}
await db.close();
