/**
 * A generation's index sidecars: an index written out as an Arrow table, and read back.
 *
 * IVF-PQ codes only mean something under the model that made them, so an IVF-PQ sidecar names its
 * model file (`quiver.ivf_pq.model`). Two processes that create the same index each train their
 * own model and the table metadata keeps the last; a process still flushing with the other model
 * writes codes that the table's model would decode wrongly, losing recall without a sound. A
 * sidecar whose model is not the definition's is therefore ignored, and the index is rebuilt
 * from the generation's rows with the right model.
 */
import { RecordBatch, Schema, type Table, Table as ArrowTable } from 'apache-arrow';
import type { IndexDef } from './index-def.js';
import { InvertedIndex } from './fts/inverted-index.js';
import type { IndexingContext } from './indexing.js';
import { ScalarIndex } from './scalar/scalar-index.js';
import type { SourceIndex } from './source-indexes.js';
import { IvfPqIndex } from './vector/ivf-pq-index.js';
import { nextTurn, runSteps, runStepsPausing } from '../util/steps.js';

/** Schema metadata key of an IVF-PQ sidecar: the model file its codes were made with. */
export const SIDECAR_MODEL_KEY = 'quiver.ivf_pq.model';
/**
 * Schema metadata key of a full-text sidecar: the tokenizer options its postings were made with
 * (JSON). An index dropped and created again under the same name with other options must not
 * read the old postings; sidecars written before the key existed carry none and are trusted.
 */
export const SIDECAR_FTS_OPTIONS_KEY = 'quiver.fts.options';

function ftsOptions(def: IndexDef): string {
  return JSON.stringify({ stem: def.stem ?? true, stopWords: def.stopWords ?? false });
}

/**
 * The sidecar table of `index`, labelled with what it needs to be read back safely. An IVF-PQ
 * sidecar names the model of the codes it holds (`modelFile`; by default the definition's).
 */
export function sidecarOf(def: IndexDef, index: SourceIndex, modelFile?: string): Table {
  return runSteps(sidecarSteps(def, index, modelFile, Infinity));
}

/**
 * `sidecarOf` in steps (a full-text index, the largest, pauses about every `sliceWork` postings;
 * its largest arrays come from `take` when given, see `InvertedIndex.toArrowSteps`; a scalar
 * index pauses after each merge of its runs).
 */
export function* sidecarSteps(def: IndexDef, index: SourceIndex, modelFile?: string, sliceWork?: number, take?: (entries: number) => Uint32Array): Generator<void, Table, void> {
  const table = index instanceof InvertedIndex ? yield* index.toArrowSteps(sliceWork, take) : index instanceof ScalarIndex ? yield* index.toArrowSteps() : index.toArrow();
  if (def.type === 'scalar') return table;
  const metadata = new Map(table.schema.metadata);
  if (def.type === 'ivf_pq') metadata.set(SIDECAR_MODEL_KEY, modelFile ?? def.model ?? '');
  else metadata.set(SIDECAR_FTS_OPTIONS_KEY, ftsOptions(def));
  const schema = new Schema(table.schema.fields, metadata);
  return new ArrowTable(schema, table.batches.map((b) => new RecordBatch(schema, b.data)));
}

/** The index a sidecar holds, or undefined when it cannot serve `def` (then rebuild from rows). */
export async function indexFromSidecar(def: IndexDef, indexing: IndexingContext, table: Table): Promise<SourceIndex | undefined> {
  switch (def.type) {
    case 'ivf_pq': {
      const file = table.schema.metadata.get(SIDECAR_MODEL_KEY);
      if (!indexing.model(def) || !file) return undefined;
      const model = file === def.model ? indexing.model(def) : await indexing.lineageModel(def, file);
      if (!model || model.partitions !== Number(table.schema.metadata.get('quiver.ivf_pq.partitions') ?? model.partitions)) return undefined;
      return runStepsPausing(IvfPqIndex.fromArrowSteps(model, table), nextTurn);
    }
    case 'fts': {
      const made = table.schema.metadata.get(SIDECAR_FTS_OPTIONS_KEY);
      if (made !== undefined && made !== ftsOptions(def)) return undefined;
      // In steps with event-loop turns between them: a large generation's index takes a while.
      return runStepsPausing(InvertedIndex.fromArrowSteps(table, { stem: def.stem, stopWords: def.stopWords }), nextTurn);
    }
    case 'scalar':
      return ScalarIndex.fromArrow(indexing.schema.stored.fields.find((f) => f.name === def.column)!.type, table);
  }
}

