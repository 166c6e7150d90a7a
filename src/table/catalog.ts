/**
 * The catalog: which tables exist. One small object per table, `_catalog/{name}.json`, written
 * create-if-absent, so two processes creating the same table cannot both succeed. Listing
 * `_catalog/` lists the tables without walking their data.
 *
 * Creating a table: claim the catalog entry, clear leftovers of an interrupted drop under the
 * table's prefix, write metadata version 1. Dropping: remove the catalog entry first (the table
 * is gone for everyone at that instant), then delete its objects.
 */
import { AlreadyExistsError, InvalidError, isQuiverError, NotFoundError } from '../errors.js';
import { VersionedStore } from '../manifest/versioned-store.js';
import type { ObjectStore } from '../storage/object-store.js';
import { type TableMeta, tableMetaCodec } from './table-meta.js';

const NAME = /^[A-Za-z_][A-Za-z0-9_]{0,127}$/;
const CATALOG_DIR = '_catalog';

export function checkTableName(name: unknown): string {
  if (typeof name !== 'string' || !NAME.test(name)) {
    throw new InvalidError(`invalid table name ${JSON.stringify(name)}: use letters, digits and _, starting with a letter or _ (at most 128)`);
  }
  return name;
}

export class Catalog {
  constructor(private readonly store: ObjectStore) {}

  private entryKey(name: string): string {
    return `${CATALOG_DIR}/${name}.json`;
  }

  metaStore(name: string): VersionedStore<TableMeta> {
    return new VersionedStore(this.store, `${name}/_meta`, 'json', tableMetaCodec);
  }

  async names(): Promise<string[]> {
    const objects = await this.store.list(`${CATALOG_DIR}/`);
    return objects.map((o) => o.key.slice(CATALOG_DIR.length + 1).replace(/\.json$/, '')).filter((n) => NAME.test(n)).sort();
  }

  async exists(name: string): Promise<boolean> {
    return (await this.store.head(this.entryKey(checkTableName(name)))) !== undefined;
  }

  async create(meta: TableMeta): Promise<void> {
    const name = checkTableName(meta.name);
    const entry = new TextEncoder().encode(JSON.stringify({ name, table_id: meta.table_id, created_at: meta.created_at }));
    try {
      await this.store.putIfAbsent(this.entryKey(name), entry);
    } catch (e) {
      if (isQuiverError(e, 'already_exists')) throw new AlreadyExistsError(`table ${name} already exists`, { cause: e });
      throw e;
    }
    try {
      await this.deleteObjects(name);
      await this.metaStore(name).write(1, meta);
    } catch (e) {
      await this.store.delete(this.entryKey(name)).catch(() => {});
      throw e;
    }
  }

  async load(name: string): Promise<TableMeta> {
    checkTableName(name);
    if (!(await this.exists(name))) throw new NotFoundError(`table ${name} does not exist`);
    const latest = await this.metaStore(name).readLatest();
    if (!latest) throw new NotFoundError(`table ${name} has no metadata (being created or dropped)`);
    return latest.doc;
  }

  async drop(name: string): Promise<void> {
    checkTableName(name);
    if (!(await this.exists(name))) throw new NotFoundError(`table ${name} does not exist`);
    await this.store.delete(this.entryKey(name));
    await this.deleteObjects(name);
  }

  private async deleteObjects(name: string): Promise<void> {
    const objects = await this.store.list(`${name}/`);
    for (let i = 0; i < objects.length; i += 32) {
      await Promise.all(objects.slice(i, i + 32).map((o) => this.store.delete(o.key)));
    }
  }
}
