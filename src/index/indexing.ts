/**
 * What a table tells its writers and readers about indexes: the current definitions and the
 * trained IVF-PQ models. The table owns it and updates it when an index is created or trained;
 * writers and generation loaders read it when they build a source's indexes.
 */
import type { TableSchema } from '../schema/table-schema.js';
import type { IndexDef } from './index-def.js';
import { type AsyncBuildOptions, SourceIndexes } from './source-indexes.js';
import type { IvfPqModel } from './vector/ivf-pq-model.js';
import type { RecordBatch } from 'apache-arrow';

export class IndexingContext {
  private defsList: IndexDef[] = [];
  private readonly models = new Map<string, IvfPqModel>();

  constructor(readonly schema: TableSchema) {}

  get defs(): readonly IndexDef[] {
    return this.defsList;
  }

  setDefs(defs: readonly IndexDef[]): void {
    this.defsList = [...defs];
  }

  setModel(def: IndexDef, model: IvfPqModel): void {
    this.models.set(def.name, model);
  }

  model = (def: IndexDef): IvfPqModel | undefined => (def.model ? this.models.get(def.name) : undefined);

  /** Whether an index of `def` can be built now (an IVF-PQ index needs its trained model). */
  canBuild(def: IndexDef): boolean {
    return def.type !== 'ivf_pq' || this.model(def) !== undefined;
  }

  /** Index sets for a new source over `rows` (position order), with every current index. */
  build(rows: readonly RecordBatch[]): SourceIndexes {
    const set = new SourceIndexes(this.schema);
    set.insert(rows);
    for (const def of this.defsList) set.addIndex(def, this.model, rows);
    return set;
  }

  /** Adds any index the set lacks, over the rows it already holds. */
  complete(set: SourceIndexes, rows: readonly RecordBatch[]): void {
    for (const def of this.defsList) set.addIndex(def, this.model, rows);
  }

  /** Whether `set` lacks an index that can be built now. */
  lacksIndexes(set: SourceIndexes): boolean {
    return this.defsList.some((def) => !set.hasIndex(def.name) && this.canBuild(def));
  }

  /**
   * `complete` in slices that yield to the event loop (`SourceIndexes.addIndexAsync`): an index
   * missing from the set stays invisible until it covers every row; concurrent calls share the
   * builds. Resolves once every index the set can have is built.
   */
  async completeAsync(set: SourceIndexes, rows: readonly RecordBatch[], options?: AsyncBuildOptions): Promise<void> {
    await Promise.all(this.defsList.map((def) => set.addIndexAsync(def, this.model, rows, options)));
  }

  /** Builds one index (defined or not yet) for `set` in slices: see `SourceIndexes.addIndexAsync`. */
  buildAsync(def: IndexDef, set: SourceIndexes, rows: readonly RecordBatch[], options?: AsyncBuildOptions): Promise<void> {
    return set.addIndexAsync(def, this.model, rows, options);
  }
}
