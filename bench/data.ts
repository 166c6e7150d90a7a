/**
 * Benchmark data: the rows of Lance's `mem_wal_write` bench (lance-memwal.md §9.1) —
 * `id Int64` (primary key), `vector FixedSizeList<Float32>[dim]` (deterministic sin values),
 * `text Utf8` (one of 8 fixed sentences + " (row N)").
 *
 * Everything is built zero-copy from typed arrays (toolchain.md §3.1): the Arrow builders
 * (`vectorFromArray(number[][], FixedSizeList)`) cost ~100 ms per 10k rows, which would dwarf
 * the write path being measured. Callers generate all batches before timing starts.
 */
import {
  Field,
  FixedSizeList,
  Float32,
  Int64,
  makeData,
  makeVector,
  RecordBatch,
  Schema,
  Struct,
  Utf8,
  vectorFromArray,
} from 'apache-arrow';

const SENTENCES = [
  'The quick brown fox jumps over the lazy dog',
  'A journey of a thousand miles begins with one step',
  'To be or not to be, that is the question here',
  'All that glitters is not gold, said the old man',
  'The early bird catches the worm every morning',
  'Actions speak louder than words in every story',
  'Knowledge is power, and power needs some care',
  'Time flies like an arrow; fruit flies like bananas',
];

/** Bytes a row is counted as, the way Lance's bench counts it: `8 + 4·dim + 70`. */
export function estimatedRowBytes(dim: number): number {
  return 8 + 4 * dim + 70;
}

export function benchSchema(dim: number): Schema {
  return new Schema([
    new Field('id', new Int64(), false),
    new Field('vector', new FixedSizeList(dim, new Field('item', new Float32(), true)), true),
    new Field('text', new Utf8(), true),
  ]);
}

/**
 * `numBatches` batches of `batchSize` rows with ids `firstId ..`. All batches share three
 * big backing buffers (ids, floats, strings are sliced per batch), as a client streaming from
 * one large Arrow table would; each batch still is an independent RecordBatch.
 */
export function makeBatches(schema: Schema, numBatches: number, batchSize: number, firstId = 0): RecordBatch[] {
  const vectorType = schema.fields[1].type as FixedSizeList;
  const dim = vectorType.listSize;
  const rows = numBatches * batchSize;
  const ids = new BigInt64Array(rows);
  const floats = new Float32Array(rows * dim);
  const texts: string[] = new Array(rows);
  for (let r = 0; r < rows; r++) {
    const id = firstId + r;
    ids[r] = BigInt(id);
    const base = r * dim;
    for (let d = 0; d < dim; d++) floats[base + d] = Math.sin(id * 0.001 + d * 0.01);
    texts[r] = `${SENTENCES[id % SENTENCES.length]} (row ${id})`;
  }
  const batches: RecordBatch[] = [];
  const struct = new Struct(schema.fields);
  for (let b = 0; b < numBatches; b++) {
    const start = b * batchSize;
    const end = start + batchSize;
    const idData = makeVector(ids.subarray(start, end)).data[0];
    const vectorData = makeData({
      type: vectorType,
      length: batchSize,
      nullCount: 0,
      child: makeData({ type: new Float32(), length: batchSize * dim, nullCount: 0, data: floats.subarray(start * dim, end * dim) }),
    });
    // One Utf8 column per batch: offsets must start at 0 for a zero-offset Data.
    const textData = vectorFromArray(texts.slice(start, end), new Utf8()).data[0];
    batches.push(new RecordBatch(schema, makeData({ type: struct, length: batchSize, nullCount: 0, children: [idData, vectorData, textData] })));
  }
  return batches;
}

/** Bytes of a batch list by Lance's estimate. */
export function estimatedBytes(batches: readonly RecordBatch[], dim: number): number {
  let rows = 0;
  for (const b of batches) rows += b.numRows;
  return rows * estimatedRowBytes(dim);
}
