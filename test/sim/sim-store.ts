/**
 * A simulated object store: one shared, linearizable key space (the "server") and one client per
 * simulated process, whose every request completes at a random later time on the simulation
 * clock. That gives the failure modes the write path must survive:
 *
 * - latency and reordering: requests in flight complete in any order (a long tail makes some
 *   very late, like a stalled connection);
 * - a request that fails before it reaches storage (nothing written);
 * - a request that lands and then fails anyway (the response was lost: the caller sees an error
 *   for a write that happened);
 * - a crash: a killed client issues nothing more, but what it already sent may still land —
 *   the "zombie write" a takeover must fence.
 *
 * A request takes effect at its completion event, so the history is the order of those events.
 */
import { AlreadyExistsError, NotFoundError, UnavailableError } from '../../src/errors.js';
import { type ByteRange, checkKey, type ObjectMeta, type ObjectStore } from '../../src/storage/object-store.js';
import type { TimerHandle } from '../../src/util/runtime.js';
import type { SimRuntime } from './sim-runtime.js';

export interface FaultProfile {
  /** Probability that a request fails before reaching storage. */
  failBefore: number;
  /** Probability that a write lands but its response is lost (the caller sees a failure). */
  failAfter: number;
  /** Latency of most requests, uniform in [min, max] ms. */
  latencyMs: [number, number];
  /** Probability of a straggler, and its latency range. */
  stragglerRate: number;
  stragglerMs: [number, number];
}

export const NO_FAULTS: FaultProfile = { failBefore: 0, failAfter: 0, latencyMs: [1, 1], stragglerRate: 0, stragglerMs: [1, 1] };

export class SimStorage {
  readonly objects = new Map<string, Uint8Array>();
  faults: FaultProfile = NO_FAULTS;

  constructor(
    readonly runtime: SimRuntime,
    private readonly rng: () => number,
    /** Records a trace line; the store passes a function so lines are only formatted when read. */
    readonly trace: (line: () => string) => void,
  ) {}

  client(name: string): SimStoreClient {
    return new SimStoreClient(this, name, this.rng);
  }
}

type Op = 'get' | 'put' | 'putIfAbsent' | 'head' | 'list' | 'delete';
const MUTATIONS = new Set<Op>(['put', 'putIfAbsent', 'delete']);

export class SimStoreClient implements ObjectStore {
  readonly description: string;
  private alive = true;
  /** Requests sent and not yet completed: timer -> completion. */
  private readonly inFlight = new Map<TimerHandle, () => void>();

  constructor(
    private readonly storage: SimStorage,
    readonly name: string,
    private readonly rng: () => number,
  ) {
    this.description = `sim://${name}`;
  }

  /** Requests sent and not yet completed. */
  get requestsInFlight(): number {
    return this.inFlight.size;
  }

  /**
   * The process crashed: nothing more is sent; requests already in flight may still land, and
   * with `stall` they land late (stuck in a dying host's socket buffers), after a takeover.
   */
  kill(stall = false): void {
    this.alive = false;
    if (!stall) return;
    for (const [handle, complete] of this.inFlight) {
      this.storage.runtime.clearTimer(handle);
      this.storage.runtime.setTimer(complete, 10 + this.rng() * 200);
    }
    this.inFlight.clear();
  }

  get(key: string, range?: ByteRange): Promise<Uint8Array> {
    checkKey(key);
    return this.request('get', key, () => {
      const data = this.storage.objects.get(key);
      if (!data) throw new NotFoundError(`object ${key} not found in ${this.description}`);
      if (!range) return data.slice();
      const start = Math.min(range.offset, data.length);
      return data.slice(start, range.length === undefined ? data.length : Math.min(data.length, start + range.length));
    });
  }

  put(key: string, data: Uint8Array): Promise<void> {
    checkKey(key);
    const copy = data.slice();
    return this.request('put', key, () => {
      this.storage.objects.set(key, copy);
    });
  }

  putIfAbsent(key: string, data: Uint8Array): Promise<void> {
    checkKey(key);
    const copy = data.slice();
    return this.request('putIfAbsent', key, () => {
      if (this.storage.objects.has(key)) throw new AlreadyExistsError(`object ${key} already exists in ${this.description}`);
      this.storage.objects.set(key, copy);
    });
  }

  head(key: string): Promise<ObjectMeta | undefined> {
    checkKey(key);
    return this.request('head', key, () => {
      const data = this.storage.objects.get(key);
      return data ? { key, size: data.length } : undefined;
    });
  }

  list(prefix: string): Promise<ObjectMeta[]> {
    return this.request('list', prefix, () => {
      const out: ObjectMeta[] = [];
      for (const [key, data] of this.storage.objects) if (key.startsWith(prefix)) out.push({ key, size: data.length });
      return out.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
    });
  }

  delete(key: string): Promise<void> {
    checkKey(key);
    return this.request('delete', key, () => {
      this.storage.objects.delete(key);
    });
  }

  async close(): Promise<void> {}

  private request<T>(op: Op, key: string, perform: () => T): Promise<T> {
    // A dead process sends nothing: the request never completes.
    if (!this.alive) return new Promise<T>(() => {});
    const f = this.storage.faults;
    const [lo, hi] = this.rng() < f.stragglerRate ? f.stragglerMs : f.latencyMs;
    const latency = lo + this.rng() * (hi - lo);
    return new Promise<T>((resolve, reject) => {
      const complete = () => {
        this.inFlight.delete(handle);
        const what = () => `${this.name} ${op} ${shortKey(key)}`;
        if (this.rng() < f.failBefore) {
          this.storage.trace(() => `${what()} -> failed before storage`);
          reject(new UnavailableError(`sim: ${op} ${key} failed before reaching storage`));
          return;
        }
        let result: T;
        try {
          result = perform();
        } catch (e) {
          this.storage.trace(() => `${what()} -> ${(e as { kind?: string }).kind ?? 'error'}`);
          reject(e);
          return;
        }
        if (MUTATIONS.has(op) && this.rng() < f.failAfter) {
          this.storage.trace(() => `${what()} -> landed, response lost`);
          reject(new UnavailableError(`sim: ${op} ${key} response lost`));
          return;
        }
        if (MUTATIONS.has(op)) this.storage.trace(() => `${what()} -> ok`);
        resolve(result);
      };
      const handle = this.storage.runtime.setTimer(complete, latency);
      this.inFlight.set(handle, complete);
    });
  }
}

/** A region-relative name for traces: "wal/12", "manifest/3", "gen_2/data.arrow". */
export function shortKey(key: string): string {
  const m = /_mem_wal\/[^/]+\/(.*)$/.exec(key);
  const rest = m ? m[1] : key.replace(/^[^/]*\//, '');
  return rest.replace(/(wal|manifest)\/([01]{64})\.(\w+)$/, (_s, dir: string, bits: string) => `${dir}/${BigInt(`0b${bits.split('').reverse().join('')}`)}`).replace(/[0-9a-f]{8}_gen_/, 'gen_');
}
