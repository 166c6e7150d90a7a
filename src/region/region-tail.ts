/**
 * A read-only view of a region this process does not write: the latest manifest, its flushed
 * generations, and the WAL entries after the replay cursor, tailed into a MemTable that nobody
 * writes to. Reading never claims an epoch, so it never fences the region's writer elsewhere.
 *
 * The tail is incremental: while the manifest's replay cursor stays put, the next read fetches
 * only the entries appended since the last one. When the cursor moves (the writer flushed a
 * generation covering tailed rows) the tail is rebuilt from the new cursor, starting from the
 * manifest's epoch floor, so a fenced writer's late entry past the cursor stays skipped.
 */
import { RegionManifestStore } from '../manifest/region-manifest-store.js';
import type { RegionManifest } from '../manifest/region-manifest.js';
import { MemTable } from '../memtable/memtable.js';
import type { ObjectStore } from '../storage/object-store.js';
import type { IndexingContext } from '../index/indexing.js';
import { tailWal } from '../wal/wal-replay.js';
import type { RegionLayout } from '../wal/region-layout.js';
import type { RegionReadState } from './region-writer.js';

interface TailState {
  replayAfter: number;
  memtable: MemTable;
  nextPosition: number;
  maxEpoch: number;
}

export class RegionTail {
  private readonly manifests: RegionManifestStore;
  private state: TailState | undefined;
  private chain: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly store: ObjectStore,
    private readonly layout: RegionLayout,
    private readonly indexing: IndexingContext,
  ) {
    this.manifests = new RegionManifestStore(store, layout.manifestDir, layout.regionId);
  }

  /** The region now, or undefined when it has never been written. */
  readState(): Promise<RegionReadState | undefined> {
    const next = this.chain.then(() => this.refresh());
    this.chain = next.catch(() => undefined);
    return next;
  }

  private async refresh(): Promise<RegionReadState | undefined> {
    const manifest: RegionManifest | undefined = await this.manifests.readLatest();
    if (!manifest) return undefined;
    let state = this.state;
    if (!state || state.replayAfter !== manifest.replayAfterWalEntryPosition) {
      state = {
        replayAfter: manifest.replayAfterWalEntryPosition,
        memtable: new MemTable(manifest.currentGeneration, manifest.replayAfterWalEntryPosition, this.indexing.build([])),
        nextPosition: manifest.replayAfterWalEntryPosition + 1,
        maxEpoch: manifest.replayEpochFloor,
      };
    }
    const mt = state.memtable;
    const result = await tailWal(this.store, this.layout, this.indexing.schema.stored, state.nextPosition, state.maxEpoch, (_position, batches) => {
      const { end } = mt.append(batches);
      mt.markDurable(end);
      mt.markVisible(end);
    });
    state.nextPosition = result.nextPosition;
    state.maxEpoch = result.maxEpoch;
    this.state = state;
    return { manifest, memtables: [mt.snapshot()] };
  }
}
