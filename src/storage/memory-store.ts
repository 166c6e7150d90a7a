/**
 * ObjectStore held in a Map: for unit tests and throwaway databases (`memory://`).
 * Stored bytes are copied in and out so callers cannot mutate them afterwards.
 */
import { AlreadyExistsError, NotFoundError } from '../errors.js';
import { type ByteRange, checkKey, type ObjectMeta, type ObjectStore } from './object-store.js';

export class MemoryObjectStore implements ObjectStore {
  readonly description = 'memory://';
  private readonly objects = new Map<string, Uint8Array>();

  async get(key: string, range?: ByteRange): Promise<Uint8Array> {
    checkKey(key);
    const data = this.objects.get(key);
    if (!data) throw new NotFoundError(`object ${key} not found in ${this.description}`);
    if (!range) return data.slice();
    const start = Math.min(range.offset, data.length);
    const end = range.length === undefined ? data.length : Math.min(data.length, start + range.length);
    return data.slice(start, end);
  }

  async put(key: string, data: Uint8Array): Promise<void> {
    checkKey(key);
    this.objects.set(key, data.slice());
  }

  async putIfAbsent(key: string, data: Uint8Array): Promise<void> {
    checkKey(key);
    if (this.objects.has(key)) throw new AlreadyExistsError(`object ${key} already exists in ${this.description}`);
    this.objects.set(key, data.slice());
  }

  async head(key: string): Promise<ObjectMeta | undefined> {
    checkKey(key);
    const data = this.objects.get(key);
    return data ? { key, size: data.length } : undefined;
  }

  async list(prefix: string): Promise<ObjectMeta[]> {
    const out: ObjectMeta[] = [];
    for (const [key, data] of this.objects) if (key.startsWith(prefix)) out.push({ key, size: data.length });
    return out.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  }

  async delete(key: string): Promise<void> {
    checkKey(key);
    this.objects.delete(key);
  }

  async close(): Promise<void> {}
}
