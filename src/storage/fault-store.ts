/**
 * A fault-injecting ObjectStore wrapper for tests.
 *
 * A rule matches calls by operation and (optionally) key, counts the matching calls, and acts on
 * the Nth one (or every one from the Nth on, or every one):
 * - `fail`:             throw before touching the store (nothing written);
 * - `delay`:            wait `delayMs`, then perform the call;
 * - `fail-after-write`: perform the call, then throw anyway — the caller sees a failure for a
 *                       write that did land, the case that breaks naive retry logic.
 * The thrown error is `UnavailableError` (transient) unless the rule gives its own.
 */
import { UnavailableError } from '../errors.js';
import { type ByteRange, type ObjectMeta, type ObjectStore, putParts } from './object-store.js';

export type StoreOp = 'get' | 'put' | 'putIfAbsent' | 'head' | 'list' | 'delete';

export interface FaultRule {
  ops: StoreOp[];
  /** Only calls whose key (or list prefix) matches. */
  key?: RegExp;
  action: 'fail' | 'delay' | 'fail-after-write';
  /** 1-based index among matching calls at which the rule fires (default 1). */
  nth?: number;
  /** Keep firing on every matching call from the nth on (default false: fire once). */
  repeat?: boolean;
  delayMs?: number;
  error?: () => Error;
}

interface ArmedRule extends FaultRule {
  seen: number;
  fired: number;
}

export class FaultInjectingObjectStore implements ObjectStore {
  readonly description: string;
  private rules: ArmedRule[] = [];
  /** Every call that reached the wrapper, in order, for assertions. */
  readonly calls: { op: StoreOp; key: string }[] = [];

  constructor(readonly inner: ObjectStore) {
    this.description = `fault(${inner.description})`;
  }

  addRule(rule: FaultRule): this {
    this.rules.push({ ...rule, seen: 0, fired: 0 });
    return this;
  }

  clearRules(): void {
    this.rules = [];
  }

  /** How many times rules have fired. */
  get faultsFired(): number {
    return this.rules.reduce((n, r) => n + r.fired, 0);
  }

  private async run<T>(op: StoreOp, key: string, call: () => Promise<T>): Promise<T> {
    this.calls.push({ op, key });
    const firing: ArmedRule[] = [];
    for (const rule of this.rules) {
      if (!rule.ops.includes(op) || (rule.key && !rule.key.test(key))) continue;
      rule.seen++;
      const nth = rule.nth ?? 1;
      if (rule.seen === nth || (rule.repeat && rule.seen > nth)) {
        rule.fired++;
        firing.push(rule);
      }
    }
    const makeError = (rule: ArmedRule) => rule.error?.() ?? new UnavailableError(`injected ${op} failure on ${key}`);
    for (const rule of firing) {
      if (rule.action === 'delay') await new Promise((r) => setTimeout(r, rule.delayMs ?? 0));
      if (rule.action === 'fail') throw makeError(rule);
    }
    const result = await call();
    const after = firing.find((r) => r.action === 'fail-after-write');
    if (after) throw makeError(after);
    return result;
  }

  get(key: string, range?: ByteRange): Promise<Uint8Array> {
    return this.run('get', key, () => this.inner.get(key, range));
  }
  put(key: string, data: Uint8Array): Promise<void> {
    return this.run('put', key, () => this.inner.put(key, data));
  }
  /** A `put` to the rules (same op name), so a rule on `put` covers both. */
  putParts(key: string, parts: readonly Uint8Array[]): Promise<void> {
    return this.run('put', key, () => putParts(this.inner, key, parts));
  }
  putIfAbsent(key: string, data: Uint8Array): Promise<void> {
    return this.run('putIfAbsent', key, () => this.inner.putIfAbsent(key, data));
  }
  head(key: string): Promise<ObjectMeta | undefined> {
    return this.run('head', key, () => this.inner.head(key));
  }
  list(prefix: string): Promise<ObjectMeta[]> {
    return this.run('list', prefix, () => this.inner.list(prefix));
  }
  delete(key: string): Promise<void> {
    return this.run('delete', key, () => this.inner.delete(key));
  }
  close(): Promise<void> {
    return this.inner.close();
  }
}
