/**
 * What a Table and its search share: the store, the table's metadata and schema, the generation
 * cache, writer settings, the indexing context and the runtime. A file of its own so that the
 * search code and the Table class can both use it without importing each other.
 */
import type { ObjectStore } from '../storage/object-store.js';
import type { TableMeta } from './table-meta.js';
import type { TableSchema } from '../schema/table-schema.js';
import type { GenerationCache } from '../region/generation-cache.js';
import type { RegionWriterConfig } from '../region/writer-config.js';
import type { IndexingContext } from '../index/indexing.js';
import type { VersionedStore } from '../manifest/versioned-store.js';
import type { Runtime } from '../util/runtime.js';

export interface TableContext {
  store: ObjectStore;
  /** Key prefix of the table's objects (its name). */
  tableKey: string;
  meta: TableMeta;
  schema: TableSchema;
  generations: GenerationCache;
  writerOverrides: Partial<RegionWriterConfig>;
  indexing: IndexingContext;
  /** The table's metadata versions (index definitions are committed there). */
  metaStore: VersionedStore<TableMeta>;
  runtime: Runtime;
}
