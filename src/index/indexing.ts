/**
 * What a table tells its writers and readers about indexes: the current definitions and the
 * trained IVF-PQ models. The table owns it and updates it when an index is created or trained;
 * writers and generation loaders read it when they build a source's indexes.
 *
 * Models are kept by file name. An IVF-PQ index's *lineage* is its current model plus the models
 * it grew out of (`IndexDef.previousModels`): a generation whose sidecar names a model of the
 * lineage is searched with that model's codes (until it is re-encoded); a sidecar naming any
 * other model (another process's index of the same name) is rebuilt from rows.
 */
import type { TableSchema } from '../schema/table-schema.js';
import type { IndexDef } from './index-def.js';
import { type AsyncBuildOptions, SourceIndexes } from './source-indexes.js';
import type { IvfPqModel } from './vector/ivf-pq-model.js';
import type { RecordBatch } from 'apache-arrow';

/**
 * Which of a table's indexes a reader needs a source to have: `all` (searches), `scalar` (a scan
 * whose filter a scalar index may narrow: their sidecars are small and quick to read), `none`
 * (a plain scan: rows and keys). A generation is loaded with what its first reader needs and
 * gains the rest when a later reader asks (generation-cache.ts): a full-text sidecar is a
 * quarter of a generation's bytes and most of its load time, and a scan never reads it.
 */
export type IndexScope = 'all' | 'scalar' | 'none';

export class IndexingContext {
  private defsList: IndexDef[] = [];
  private readonly models = new Map<string, IvfPqModel>();
  private readonly files = new Map<IvfPqModel, string>();
  /** Reads a model file (set by the table); without it only models already set are known. */
  loadModel: ((file: string) => Promise<IvfPqModel>) | undefined;
  /**
   * Asks the table for newer index definitions (set by the table): a sidecar naming a model
   * outside the lineage may come from a model another process grew since this one opened.
   */
  refreshDefs: (() => Promise<void>) | undefined;

  constructor(readonly schema: TableSchema) {}

  get defs(): readonly IndexDef[] {
    return this.defsList;
  }

  setDefs(defs: readonly IndexDef[]): void {
    this.defsList = [...defs];
  }

  setModel(def: IndexDef, model: IvfPqModel): void {
    if (!def.model) throw new Error(`setModel: index ${def.name} names no model file`);
    this.models.set(def.model, model);
    this.files.set(model, def.model);
  }

  model = (def: IndexDef): IvfPqModel | undefined => (def.model ? this.models.get(def.model) : undefined);

  /** The file a known model was read from or written to. */
  modelFile(model: IvfPqModel): string | undefined {
    return this.files.get(model);
  }

  /** Whether `model` is the current model of `def` or one it grew out of (its codes are valid for `def`). */
  inLineage(def: IndexDef, model: IvfPqModel): boolean {
    const file = this.files.get(model);
    return file !== undefined && (file === def.model || (def.previousModels ?? []).includes(file));
  }

  /**
   * The model a sidecar of `def` was made with, when its codes can serve `def`: a model of the
   * current definition's lineage (loaded on first use), after asking the table once for newer
   * definitions when `file` is unknown. Undefined otherwise (rebuild from rows).
   */
  async lineageModel(def: IndexDef, file: string): Promise<IvfPqModel | undefined> {
    const known = (d: IndexDef) => file === d.model || (d.previousModels ?? []).includes(file);
    let current = this.defsList.find((d) => d.name === def.name) ?? def;
    if (!known(current) && this.refreshDefs) {
      await this.refreshDefs();
      current = this.defsList.find((d) => d.name === def.name) ?? def;
    }
    if (!known(current)) return undefined;
    const cached = this.models.get(file);
    if (cached || !this.loadModel) return cached;
    const model = await this.loadModel(file);
    if (!this.models.has(file)) {
      this.models.set(file, model);
      this.files.set(model, file);
    }
    return this.models.get(file);
  }

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

  /** The current definitions a reader of `scope` needs. */
  defsIn(scope: IndexScope): readonly IndexDef[] {
    return scope === 'all' ? this.defsList : scope === 'scalar' ? this.defsList.filter((d) => d.type === 'scalar') : [];
  }

  /** Whether `set` lacks an index (of `scope`) that can be built now. */
  lacksIndexes(set: SourceIndexes, scope: IndexScope = 'all'): boolean {
    return this.defsIn(scope).some((def) => !set.hasIndex(def.name) && this.canBuild(def));
  }

  /**
   * `complete` in slices that yield to the event loop (`SourceIndexes.addIndexAsync`): an index
   * missing from the set stays invisible until it covers every row; concurrent calls share the
   * builds. Resolves once every index of `scope` the set can have is built.
   */
  async completeAsync(set: SourceIndexes, rows: readonly RecordBatch[], options?: AsyncBuildOptions, scope: IndexScope = 'all'): Promise<void> {
    await Promise.all(this.defsIn(scope).map((def) => set.addIndexAsync(def, this.model, rows, options)));
  }

  /** Builds one index (defined or not yet) for `set` in slices: see `SourceIndexes.addIndexAsync`. */
  buildAsync(def: IndexDef, set: SourceIndexes, rows: readonly RecordBatch[], options?: AsyncBuildOptions): Promise<void> {
    return set.addIndexAsync(def, this.model, rows, options);
  }
}
