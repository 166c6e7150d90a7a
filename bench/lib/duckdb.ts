/**
 * DuckDB as a peer (@duckdb/node-api from bench/peers), and the loaders that give it the same
 * generated rows as Quiver: data chunks filled from the generators' typed arrays through its
 * appender. The module is passed in, so the main package's copy (a devDependency: the SQL
 * conformance tests use DuckDB as an oracle) and the peer copy load the same way.
 */
import type { DuckDBConnection } from '@duckdb/node-api';
import { NOT_INSTALLED, peerInstalled, peerVersion, requirePeer } from './peers.js';
import type { NumericRows, VectorRows } from './data.js';

export type DuckDbModule = typeof import('@duckdb/node-api');

export function loadDuckDbPeer(): { duckdb: DuckDbModule; version: string } | string {
  if (!peerInstalled('@duckdb/node-api')) return NOT_INSTALLED;
  return { duckdb: requirePeer<DuckDbModule>('@duckdb/node-api'), version: peerVersion('@duckdb/node-api') };
}

const CHUNK = 2048;

/** `CREATE TABLE name` in DuckDB and the rows through the appender, 2048-row data chunks. */
export async function duckLoadNumeric(duck: DuckDbModule, conn: DuckDBConnection, name: string, r: NumericRows): Promise<void> {
  await conn.run(`CREATE TABLE ${name} (id BIGINT PRIMARY KEY, a INTEGER, b DOUBLE, c SMALLINT, g INTEGER)`);
  const appender = await conn.createAppender(name);
  const types = [duck.BIGINT, duck.INTEGER, duck.DOUBLE, duck.SMALLINT, duck.INTEGER];
  for (let s = 0; s < r.n; s += CHUNK) {
    const e = Math.min(r.n, s + CHUNK);
    const chunk = duck.DuckDBDataChunk.create(types, e - s);
    chunk.setColumns([Array.from(r.id.subarray(s, e)), Array.from(r.a.subarray(s, e)), Array.from(r.b.subarray(s, e)), Array.from(r.c.subarray(s, e)), Array.from(r.g.subarray(s, e))]);
    appender.appendDataChunk(chunk);
  }
  appender.closeSync();
}

export async function duckLoadVectors(duck: DuckDbModule, conn: DuckDBConnection, name: string, r: VectorRows): Promise<void> {
  await conn.run(`CREATE TABLE ${name} (id BIGINT PRIMARY KEY, cat INTEGER, emb FLOAT[${r.dim}])`);
  const appender = await conn.createAppender(name);
  const types = [duck.BIGINT, duck.INTEGER, duck.ARRAY(duck.FLOAT, r.dim)];
  for (let s = 0; s < r.n; s += CHUNK) {
    const e = Math.min(r.n, s + CHUNK);
    const chunk = duck.DuckDBDataChunk.create(types, e - s);
    const embs = [];
    for (let i = s; i < e; i++) embs.push(duck.arrayValue(Array.from(r.emb.subarray(i * r.dim, (i + 1) * r.dim))));
    chunk.setColumns([Array.from(r.id.subarray(s, e)), Array.from(r.cat.subarray(s, e)), embs]);
    appender.appendDataChunk(chunk);
  }
  appender.closeSync();
}
