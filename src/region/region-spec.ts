/**
 * Region specs: which region a row belongs to. Every version of a key must land in the same
 * region (readers deduplicate only within a region), so every spec routes by primary-key columns:
 *
 * - `unsharded`: one region for the whole table;
 * - `bucket`: `abs(murmur3(key bytes)) % buckets` over one primary-key column (Lance's `bucket`
 *   transform; integers hash as 8-byte little-endian so Int32 5 and Int64 5 agree);
 * - `identity`: one region per distinct value of one primary-key column (e.g. a tenant id that
 *   leads a composite key). Its regions appear as values arrive and are registered under
 *   `{table}/_regions/`.
 *
 * Region ids are name-based UUIDs of (table id, spec, bucket or value), so every process derives
 * the same region for the same row without coordination.
 */
import { type RecordBatch } from 'apache-arrow';
import { InvalidError } from '../errors.js';
import { keyBytes } from '../index/pk-filter.js';
import { columnKeyReader, type KeyValue } from '../schema/primary-key.js';
import { murmur3 } from '../util/murmur3.js';
import { nameUUID } from '../util/uuid.js';

export type RegionSpec =
  | { kind: 'unsharded' }
  | { kind: 'bucket'; column: string; buckets: number }
  | { kind: 'identity'; column: string };

/** Spec ids stored in region manifests (0 is Lance's "manually managed"). */
export const REGION_SPEC_IDS: Record<RegionSpec['kind'], number> = { unsharded: 1, bucket: 2, identity: 3 };

export interface RegionRoute {
  regionId: string;
  /** The bucket number or identity value, for the region registry. */
  value: KeyValue;
  rows: Uint32Array;
}

export function validateRegionSpec(spec: RegionSpec | undefined, primaryKey: readonly string[]): RegionSpec {
  if (!spec) return { kind: 'unsharded' };
  switch (spec.kind) {
    case 'unsharded':
      return { kind: 'unsharded' };
    case 'bucket': {
      const column = spec.column ?? (primaryKey.length === 1 ? primaryKey[0] : undefined);
      if (!column || !primaryKey.includes(column)) throw new InvalidError(`bucket region spec: column must be a primary-key column, got ${String(spec.column)}`);
      if (!Number.isInteger(spec.buckets) || spec.buckets < 1 || spec.buckets > 1024) {
        throw new InvalidError(`bucket region spec: buckets must be an integer in 1..1024, got ${String(spec.buckets)}`);
      }
      return { kind: 'bucket', column, buckets: spec.buckets };
    }
    case 'identity':
      if (!spec.column || !primaryKey.includes(spec.column)) {
        throw new InvalidError(`identity region spec: column must be a primary-key column, got ${String(spec.column)}`);
      }
      return { kind: 'identity', column: spec.column };
    default:
      throw new InvalidError(`unknown region spec ${JSON.stringify(spec)}`);
  }
}

export function bucketOf(value: KeyValue, buckets: number): number {
  return Math.abs(murmur3(keyBytes(value))) % buckets;
}

export function regionIdFor(tableId: string, spec: RegionSpec, value: KeyValue): string {
  switch (spec.kind) {
    case 'unsharded':
      return nameUUID(`${tableId}/unsharded`);
    case 'bucket':
      return nameUUID(`${tableId}/bucket/${spec.buckets}/${String(value)}`);
    case 'identity':
      return nameUUID(`${tableId}/identity/${typeof value}/${String(value)}`);
  }
}

/** Regions known from the spec alone (identity regions are discovered from the registry). */
export function staticRegions(tableId: string, spec: RegionSpec): { regionId: string; value: KeyValue }[] {
  if (spec.kind === 'unsharded') return [{ regionId: regionIdFor(tableId, spec, 0), value: 0 }];
  if (spec.kind === 'bucket') return Array.from({ length: spec.buckets }, (_, b) => ({ regionId: regionIdFor(tableId, spec, b), value: b }));
  return [];
}

/** Splits a batch's rows by region. */
export function routeBatch(tableId: string, spec: RegionSpec, batch: RecordBatch, columnIndex: number): RegionRoute[] {
  if (spec.kind === 'unsharded') {
    return [{ regionId: regionIdFor(tableId, spec, 0), value: 0, rows: identityRows(batch.numRows) }];
  }
  const read = columnKeyReader(batch.data.children[columnIndex]);
  const groups = new Map<KeyValue, number[]>();
  for (let r = 0; r < batch.numRows; r++) {
    const v = read(r);
    const g = spec.kind === 'bucket' ? bucketOf(v, spec.buckets) : v;
    let rows = groups.get(g);
    if (!rows) groups.set(g, (rows = []));
    rows.push(r);
  }
  return [...groups].map(([value, rows]) => ({ regionId: regionIdFor(tableId, spec, value), value, rows: Uint32Array.from(rows) }));
}

function identityRows(n: number): Uint32Array {
  const rows = new Uint32Array(n);
  for (let i = 0; i < n; i++) rows[i] = i;
  return rows;
}
