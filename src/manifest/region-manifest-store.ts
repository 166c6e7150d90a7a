/**
 * Region manifest versions: epoch claim, fence check and the commit loop.
 *
 * - `claimEpoch` writes a copy of the latest manifest with `version + 1`, `writer_epoch + 1` and
 *   the claiming writer's unique id (or the initial manifest). The id makes every claim's bytes
 *   unique: a claim whose create-if-absent failed transiently and then found the version taken
 *   can tell "my earlier attempt landed" (identical bytes, checked by the retry layer) from
 *   "another writer claimed it" — without the id the two are byte-identical and both writers
 *   would believe they hold the epoch. Losing the race fails at once with `fenced` instead of
 *   retrying, so two writers never bump epochs against each other forever (Lance's choice).
 * - `commit` re-reads the latest version, checks that it still belongs to this writer (same
 *   epoch and id; a newer epoch means fenced), lets the caller derive the next manifest from it,
 *   and writes it. The caller may answer "already covered" (`undefined`): a commit that landed
 *   while its response was lost is then done, not committed twice. Only a version collision is
 *   retried; the next round re-reads and either finds it was ours or reports the fence.
 */
import { FencedError, isQuiverError } from '../errors.js';
import type { ObjectStore } from '../storage/object-store.js';
import {
  decodeRegionManifest,
  encodeRegionManifest,
  initialRegionManifest,
  type RegionManifest,
} from './region-manifest.js';
import { VersionedStore } from './versioned-store.js';

const MAX_COMMIT_ATTEMPTS = 10;

/** Who a writer is: the epoch it claimed and its unique id. */
export interface WriterIdentity {
  epoch: number;
  id: string;
}

export class RegionManifestStore {
  private readonly versions: VersionedStore<RegionManifest>;

  constructor(
    store: ObjectStore,
    manifestDir: string,
    readonly regionId: string,
    probeBatch = 2,
  ) {
    this.versions = new VersionedStore(store, manifestDir, 'binpb', { encode: encodeRegionManifest, decode: decodeRegionManifest }, probeBatch);
  }

  async readLatest(): Promise<RegionManifest | undefined> {
    return (await this.versions.readLatest())?.doc;
  }

  /** Whether a version after `version` exists (one HEAD): the cheap "did anything change?". */
  async hasVersionAfter(version: number): Promise<boolean> {
    return this.versions.exists(version + 1);
  }

  async claimEpoch(regionSpecId: number, writerId: string): Promise<RegionManifest> {
    const latest = await this.readLatest();
    const next: RegionManifest = latest
      ? { ...latest, version: latest.version + 1, writerEpoch: latest.writerEpoch + 1, writerId }
      : initialRegionManifest(this.regionId, regionSpecId, writerId);
    try {
      await this.versions.write(next.version, next);
    } catch (e) {
      if (isQuiverError(e, 'already_exists')) {
        throw new FencedError(`region ${this.regionId}: another writer claimed the region concurrently (manifest version ${next.version})`, { cause: e });
      }
      throw e;
    }
    return next;
  }

  /** Throws FencedError unless `latest` was claimed by this writer (or an older epoch). */
  checkFenced(latest: RegionManifest, writer: WriterIdentity): void {
    if (latest.writerEpoch > writer.epoch) {
      throw new FencedError(`region ${this.regionId}: writer epoch ${writer.epoch} is fenced by epoch ${latest.writerEpoch}`);
    }
    if (latest.writerEpoch === writer.epoch && latest.writerId !== writer.id) {
      throw new FencedError(`region ${this.regionId}: epoch ${writer.epoch} belongs to writer ${latest.writerId || '(unnamed)'}, not ${writer.id}`);
    }
  }

  /**
   * Commits `update(latest)` as the next version. `update` returns undefined when `latest`
   * already holds the change (an earlier attempt landed); the latest manifest is then returned.
   */
  async commit(writer: WriterIdentity, update: (latest: RegionManifest) => RegionManifest | undefined): Promise<RegionManifest> {
    let lastError: unknown;
    for (let attempt = 0; attempt < MAX_COMMIT_ATTEMPTS; attempt++) {
      const latest = await this.readLatest();
      if (!latest) throw new FencedError(`region ${this.regionId}: manifest disappeared`);
      this.checkFenced(latest, writer);
      const changed = update(latest);
      if (!changed) return latest;
      const next = { ...changed, version: latest.version + 1, writerEpoch: writer.epoch, writerId: writer.id };
      try {
        await this.versions.write(next.version, next);
        return next;
      } catch (e) {
        if (!isQuiverError(e, 'already_exists')) throw e;
        lastError = e;
      }
    }
    throw new FencedError(`region ${this.regionId}: manifest commit kept colliding`, { cause: lastError });
  }
}
