/** Test data: a small docs table (id, version, text, 4-dim vector) built zero-copy. */
import { Field, FixedSizeList, Float32, Int64, makeData, makeVector, Schema, Table, Utf8, vectorFromArray } from 'apache-arrow';
import type { Table as QuiverTable } from '../../src/quiver.js';

export const DIM = 4;

export const docsSchema = new Schema([
  new Field('id', new Int64(), false),
  new Field('version', new Int64(), false),
  new Field('text', new Utf8(), true),
  new Field('vec', new FixedSizeList(DIM, new Field('item', new Float32(), false)), true),
]);

export function vectors(n: number, dim = DIM, seed = 1): ReturnType<typeof makeVector> {
  const values = new Float32Array(n * dim);
  for (let i = 0; i < values.length; i++) values[i] = Math.sin(seed * 7919 + i);
  return makeVector(makeData({ type: new FixedSizeList(dim, new Field('item', new Float32(), false)), length: n, nullCount: 0, child: makeData({ type: new Float32(), length: n * dim, data: values }) }));
}

export function docs(ids: number[], version: number, tag = 'v'): Table {
  return new Table({
    id: makeVector(BigInt64Array.from(ids.map(BigInt))),
    version: makeVector(BigInt64Array.from(ids.map(() => BigInt(version)))),
    text: vectorFromArray(ids.map((i) => `${tag} row ${i} version ${version}`), new Utf8()),
    vec: vectors(ids.length),
  });
}

/** id -> version of every live row; fails on duplicate keys. */
export async function liveRows(table: QuiverTable): Promise<Map<number, number>> {
  const out = new Map<number, number>();
  for await (const batch of table.scan()) {
    const ids = batch.getChild('id')!;
    const versions = batch.getChild('version')!;
    for (let i = 0; i < batch.numRows; i++) {
      const id = Number(ids.get(i));
      if (out.has(id)) throw new Error(`key ${id} returned twice`);
      out.set(id, Number(versions.get(i)));
    }
  }
  return out;
}

export function range(from: number, to: number): number[] {
  return Array.from({ length: to - from }, (_, i) => from + i);
}
