/**
 * A sequence of immutable, numbered versions of one document (a region manifest, a table's
 * metadata), each written create-if-absent, so exactly one writer can produce version N+1.
 *
 * Finding the latest version follows Lance: read `version_hint.json` (best effort, may be stale
 * or missing), confirm the hinted version exists, then probe `probeBatch` versions ahead in
 * parallel with HEAD requests until a round finds nothing. A listing is the fallback when the hint
 * points past the end (e.g. versions were garbage collected).
 */
import { isQuiverError } from '../errors.js';
import type { ObjectStore } from '../storage/object-store.js';
import { bitReversedName, parseBitReversedName } from '../util/bit-reversed-name.js';

export interface VersionCodec<T> {
  encode(doc: T): Uint8Array;
  decode(bytes: Uint8Array, what: string): T;
}

export class VersionedStore<T> {
  constructor(
    private readonly store: ObjectStore,
    readonly dir: string,
    private readonly ext: string,
    private readonly codec: VersionCodec<T>,
    private readonly probeBatch = 2,
  ) {}

  keyOf(version: number): string {
    return `${this.dir}/${bitReversedName(version, this.ext)}`;
  }

  private get hintKey(): string {
    return `${this.dir}/version_hint.json`;
  }

  /** The highest existing version number, 0 when there is none. */
  async latestVersion(): Promise<number> {
    let start = 0;
    const hint = await this.readHint();
    if (hint > 0 && (await this.exists(hint))) start = hint;
    else if (await this.exists(1)) start = 1;
    else if (hint > 1) start = await this.latestByListing();
    if (start === 0) return 0;
    let latest = start;
    for (;;) {
      const probes = Array.from({ length: this.probeBatch }, (_, i) => latest + 1 + i);
      const found = await Promise.all(probes.map((v) => this.exists(v)));
      const highest = probes.filter((_, i) => found[i]).pop();
      if (highest === undefined) return latest;
      latest = highest;
    }
  }

  async read(version: number): Promise<T> {
    const key = this.keyOf(version);
    return this.codec.decode(await this.store.get(key), key);
  }

  /** The latest version and its document, or undefined when none exists. */
  async readLatest(): Promise<{ version: number; doc: T } | undefined> {
    for (;;) {
      const version = await this.latestVersion();
      if (version === 0) return undefined;
      try {
        return { version, doc: await this.read(version) };
      } catch (e) {
        // Deleted between probe and read (garbage collection): look again.
        if (!isQuiverError(e, 'not_found')) throw e;
      }
    }
  }

  /**
   * Writes `version` create-if-absent; throws AlreadyExistsError when another writer got there
   * first. Then updates the hint, ignoring failures (readers never trust it blindly).
   */
  async write(version: number, doc: T): Promise<void> {
    await this.store.putIfAbsent(this.keyOf(version), this.codec.encode(doc));
    try {
      await this.store.put(this.hintKey, new TextEncoder().encode(JSON.stringify({ version })));
    } catch {
      // Best effort by design.
    }
  }

  async listVersions(): Promise<number[]> {
    const out: number[] = [];
    for (const obj of await this.store.list(`${this.dir}/`)) {
      const v = parseBitReversedName(obj.key.slice(obj.key.lastIndexOf('/') + 1), this.ext);
      if (v !== undefined) out.push(v);
    }
    return out.sort((a, b) => a - b);
  }

  private async latestByListing(): Promise<number> {
    const versions = await this.listVersions();
    return versions.length ? versions[versions.length - 1] : 0;
  }

  async exists(version: number): Promise<boolean> {
    return (await this.store.head(this.keyOf(version))) !== undefined;
  }

  private async readHint(): Promise<number> {
    try {
      const v = JSON.parse(new TextDecoder().decode(await this.store.get(this.hintKey))).version;
      return Number.isSafeInteger(v) && v > 0 ? v : 0;
    } catch {
      return 0;
    }
  }
}
