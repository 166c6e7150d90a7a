/**
 * Region manifest versions: epoch claim, fence check and the commit loop.
 *
 * - `claimEpoch` writes a copy of the latest manifest with `version + 1` and `writer_epoch + 1`
 *   (or the initial manifest). Losing that race fails at once instead of retrying, to avoid two
 *   writers bumping epochs against each other forever (Lance's choice).
 * - `commit` re-reads the latest version, checks that no newer epoch has claimed the region,
 *   lets the caller derive the next manifest from the latest one, and writes it; only a version
 *   collision is retried (another commit by the same epoch is impossible, so a collision means
 *   a new writer claimed the region and the next round reports the fence).
 */
import { AlreadyExistsError, FencedError, isQuiverError } from '../errors.js';
import type { ObjectStore } from '../storage/object-store.js';
import {
  decodeRegionManifest,
  encodeRegionManifest,
  initialRegionManifest,
  type RegionManifest,
} from './region-manifest.js';
import { VersionedStore } from './versioned-store.js';

const MAX_COMMIT_ATTEMPTS = 10;

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

  async claimEpoch(regionSpecId: number): Promise<RegionManifest> {
    const latest = await this.readLatest();
    const next: RegionManifest = latest
      ? { ...latest, version: latest.version + 1, writerEpoch: latest.writerEpoch + 1 }
      : initialRegionManifest(this.regionId, regionSpecId);
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

  /** Throws FencedError when a writer with a newer epoch has claimed the region. */
  checkFenced(latest: RegionManifest, localEpoch: number): void {
    if (latest.writerEpoch > localEpoch) {
      throw new FencedError(`region ${this.regionId}: writer epoch ${localEpoch} is fenced by epoch ${latest.writerEpoch}`);
    }
  }

  async commit(localEpoch: number, update: (latest: RegionManifest) => RegionManifest): Promise<RegionManifest> {
    let lastError: unknown;
    for (let attempt = 0; attempt < MAX_COMMIT_ATTEMPTS; attempt++) {
      const latest = await this.readLatest();
      if (!latest) throw new FencedError(`region ${this.regionId}: manifest disappeared`);
      this.checkFenced(latest, localEpoch);
      const next = { ...update(latest), version: latest.version + 1, writerEpoch: localEpoch };
      try {
        await this.versions.write(next.version, next);
        return next;
      } catch (e) {
        if (!(e instanceof AlreadyExistsError)) throw e;
        lastError = e;
      }
    }
    throw new FencedError(`region ${this.regionId}: manifest commit kept colliding`, { cause: lastError });
  }
}
