/**
 * The indexes of one source — a MemTable or a flushed generation — keyed by index name, plus a
 * `VectorSource` per vector column for exact distances (brute force and IVF-PQ refinement).
 *
 * A MemTable's set grows as batches are written (`insert`, called alongside the WAL write, so a
 * row is indexed before it becomes visible). A generation's set is built once, from its sidecar
 * files when they exist or from its rows when they do not (a generation flushed before the index
 * was created). Row positions are the source's own: MemTable row positions, or row indexes in
 * the generation's data file.
 */
import { type Data, FixedSizeList, type RecordBatch, type Utf8 } from 'apache-arrow';
import type { TableSchema } from '../schema/table-schema.js';
import type { IndexDef } from './index-def.js';
import { InvertedIndex } from './fts/inverted-index.js';
import { ScalarIndex } from './scalar/scalar-index.js';
import { IvfPqIndex } from './vector/ivf-pq-index.js';
import type { IvfPqModel } from './vector/ivf-pq-model.js';
import { VectorSource } from './vector/vector-source.js';

export type SourceIndex = IvfPqIndex | InvertedIndex | ScalarIndex;

/** What an index needs beyond its definition: the trained IVF-PQ model, when there is one. */
export type ModelLookup = (def: IndexDef) => IvfPqModel | undefined;

export class SourceIndexes {
  private readonly vectors = new Map<number, VectorSource>();
  private readonly indexes = new Map<string, { def: IndexDef; index: SourceIndex }>();
  private rows = 0;

  constructor(private readonly schema: TableSchema) {
    schema.stored.fields.forEach((f, i) => {
      if (f.type instanceof FixedSizeList) this.vectors.set(i, new VectorSource(f.type.listSize));
    });
  }

  get rowCount(): number {
    return this.rows;
  }

  /** Exact vectors of a column (every row inserted so far; callers pass a visibility cutoff). */
  vectorSource(column: string): VectorSource | undefined {
    return this.vectors.get(this.columnIndex(column));
  }

  index<T extends SourceIndex>(name: string): T | undefined {
    return this.indexes.get(name)?.index as T | undefined;
  }

  hasIndex(name: string): boolean {
    return this.indexes.has(name);
  }

  /** Adds rows at positions [rowCount, rowCount + rows) to every vector source and index. */
  insert(batches: readonly RecordBatch[]): void {
    for (const batch of batches) {
      const first = this.rows;
      for (const [col, source] of this.vectors) {
        for (const c of VectorSource.fromArrow([batch], col, first).chunks) source.append(c);
      }
      for (const { def, index } of this.indexes.values()) addTo(index, batch, this.columnIndex(def.column), first);
      this.rows += batch.numRows;
    }
  }

  /**
   * Starts maintaining an index, indexing the rows already present (`existing`, in position
   * order). An IVF-PQ definition without a trained model is skipped: searches stay exact.
   */
  addIndex(def: IndexDef, models: ModelLookup, existing: readonly RecordBatch[], prebuilt?: SourceIndex): void {
    if (this.indexes.has(def.name)) return;
    let index = prebuilt;
    if (!index) {
      index = createIndex(def, models, this.schema);
      if (!index) return;
      const col = this.columnIndex(def.column);
      let first = 0;
      for (const batch of existing) {
        addTo(index, batch, col, first);
        first += batch.numRows;
      }
    }
    this.indexes.set(def.name, { def, index });
  }

  entries(): { def: IndexDef; index: SourceIndex }[] {
    return [...this.indexes.values()];
  }

  private columnIndex(column: string): number {
    return this.schema.stored.fields.findIndex((f) => f.name === column);
  }
}

function createIndex(def: IndexDef, models: ModelLookup, schema: TableSchema): SourceIndex | undefined {
  switch (def.type) {
    case 'ivf_pq': {
      const model = models(def);
      return model ? new IvfPqIndex(model) : undefined;
    }
    case 'fts':
      return new InvertedIndex({ stem: def.stem, stopWords: def.stopWords });
    case 'scalar':
      return new ScalarIndex(schema.stored.fields.find((f) => f.name === def.column)!.type);
  }
}

function addTo(index: SourceIndex, batch: RecordBatch, col: number, first: number): void {
  const data = batch.data.children[col];
  if (index instanceof IvfPqIndex) {
    for (const c of VectorSource.fromArrow([batch], col, first).chunks) index.add(c);
  } else if (index instanceof InvertedIndex) {
    index.add(first, data as Data<Utf8>);
  } else {
    index.add(first, data);
  }
}
