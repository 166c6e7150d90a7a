import type { ObjectStore } from '../../src/storage/object-store.js';

/** Every object's key and bytes (hex), for "nothing changed" assertions. */
export async function storeContents(store: ObjectStore): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  for (const o of await store.list('')) out.set(o.key, Buffer.from(await store.get(o.key)).toString('hex'));
  return out;
}

/** WAL positions present for every region of a table. */
export async function walPositions(store: ObjectStore, table: string): Promise<number[]> {
  const out: number[] = [];
  for (const o of await store.list(`${table}/_mem_wal/`)) {
    const m = /\/wal\/([01]{64})\.arrow$/.exec(o.key);
    if (m) out.push(Number(BigInt(`0b${m[1].split('').reverse().join('')}`)));
  }
  return out.sort((a, b) => a - b);
}
