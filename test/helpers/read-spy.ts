/** An object store that records the key of every `get` and passes everything through. */
import type { ObjectStore } from '../../src/storage/object-store.js';

export function readSpy(store: ObjectStore): { store: ObjectStore; reads: string[] } {
  const reads: string[] = [];
  const spy: ObjectStore = new Proxy(store, {
    get(target, prop, receiver) {
      if (prop === 'get') return (key: string) => (reads.push(key), target.get(key));
      const v = Reflect.get(target, prop, receiver);
      return typeof v === 'function' ? v.bind(target) : v;
    },
  });
  return { store: spy, reads };
}
