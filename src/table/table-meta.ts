/**
 * Table metadata: everything needed to open a table, versioned and written create-if-absent
 * (like region manifests, through VersionedStore) at `{table}/_meta/{bit-reversed version}.json`.
 *
 * JSON, so it is readable by eye. The schema is stored twice: `schema_ipc` (base64 of an Arrow
 * IPC stream holding only the schema message) is authoritative and exact for every Arrow type;
 * `fields` is a human-readable summary. Index definitions and trained models join this document
 * in later versions.
 */
import { RecordBatchReader, RecordBatchStreamWriter, type Schema } from 'apache-arrow';
import { DataError } from '../errors.js';
import type { RegionSpec } from '../region/region-spec.js';
import type { RegionWriterConfig } from '../region/writer-config.js';
import type { IndexDef } from '../index/index-def.js';

export const TABLE_FORMAT_VERSION = 1;

export interface TableMeta {
  format_version: number;
  name: string;
  table_id: string;
  created_at: string;
  fields: { name: string; type: string; nullable: boolean }[];
  schema_ipc: string;
  primary_key: string[];
  region_spec: RegionSpec;
  region_spec_id: number;
  /** Writer settings chosen at creation (overridable per connection). */
  writer: Partial<RegionWriterConfig>;
  /** Index definitions (absent in metadata written before indexes existed). */
  indexes?: IndexDef[];
}

export function encodeSchema(schema: Schema): string {
  const writer = new RecordBatchStreamWriter();
  writer.reset(undefined, schema);
  writer.finish();
  return Buffer.from(writer.toUint8Array(true)).toString('base64');
}

export function decodeSchema(base64: string, what: string): Schema {
  try {
    const reader = RecordBatchReader.from(Buffer.from(base64, 'base64')).open();
    if (!reader.schema) throw new Error('no schema message');
    return reader.schema;
  } catch (e) {
    throw new DataError(`corrupt schema in ${what}: ${(e as Error).message}`, { cause: e });
  }
}

export const tableMetaCodec = {
  encode(meta: TableMeta): Uint8Array {
    return new TextEncoder().encode(JSON.stringify(meta, null, 2));
  },
  decode(bytes: Uint8Array, what: string): TableMeta {
    let meta: TableMeta;
    try {
      meta = JSON.parse(new TextDecoder().decode(bytes));
    } catch (e) {
      throw new DataError(`corrupt table metadata ${what}: ${(e as Error).message}`, { cause: e });
    }
    if (meta.format_version !== TABLE_FORMAT_VERSION) {
      throw new DataError(`table metadata ${what} has format version ${meta.format_version}; this Quiver reads version ${TABLE_FORMAT_VERSION}`);
    }
    return meta;
  },
};
