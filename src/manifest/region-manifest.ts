/**
 * Region manifest: the authoritative state of one region, stored as protobuf with Lance's field
 * numbers so the two formats stay recognisable side by side:
 *
 *   message RegionManifest {
 *     uint64 version = 1;  uint64 writer_epoch = 2;
 *     uint64 replay_after_wal_entry_position = 3;  uint64 wal_entry_position_last_seen = 4;
 *     uint64 current_generation = 6;  repeated FlushedGeneration flushed_generations = 8;
 *     uint32 region_spec_id = 10;  UUID region_id = 11;
 *     string writer_id = 100;  uint64 replay_epoch_floor = 101;     (Quiver's own)
 *   }
 *   message FlushedGeneration { uint64 generation = 1; string path = 2; }
 *   message UUID { bytes uuid = 1; }
 */
import protobuf from 'protobufjs';
import { DataError } from '../errors.js';
import { bytesToUuid, uuidToBytes } from '../util/uuid.js';

export interface FlushedGeneration {
  generation: number;
  /** Folder name relative to the region directory, `{8 hex}_gen_{N}`. */
  path: string;
}

export interface RegionManifest {
  version: number;
  writerEpoch: number;
  /** Last WAL position whose rows are all in flushed generations; replay starts after it. */
  replayAfterWalEntryPosition: number;
  /** Highest WAL position a writer has recorded; a hint only. */
  walEntryPositionLastSeen: number;
  /** Generation number of the next MemTable to flush. */
  currentGeneration: number;
  flushedGenerations: FlushedGeneration[];
  regionSpecId: number;
  regionId: string;
  /**
   * The unique id of the writer that claimed `writerEpoch` (a random UUID per opened writer).
   * Two writers racing for one epoch write different bytes, so neither can mistake the other's
   * claim for its own retried write (create-if-absent alone cannot tell them apart).
   */
  writerId: string;
  /**
   * Replay and tailing start from `replayAfterWalEntryPosition` with this as the newest epoch
   * already seen: an entry after the cursor whose epoch is older was written by a fenced writer
   * after a newer writer's fence sentinel (a zombie write) and is skipped. Without it, moving the
   * cursor past the sentinel would forget the fence.
   */
  replayEpochFloor: number;
}

const root = protobuf.Root.fromJSON({
  nested: {
    quiver: {
      nested: {
        UUID: { fields: { uuid: { type: 'bytes', id: 1 } } },
        FlushedGeneration: {
          fields: { generation: { type: 'uint64', id: 1 }, path: { type: 'string', id: 2 } },
        },
        RegionManifest: {
          fields: {
            version: { type: 'uint64', id: 1 },
            writer_epoch: { type: 'uint64', id: 2 },
            replay_after_wal_entry_position: { type: 'uint64', id: 3 },
            wal_entry_position_last_seen: { type: 'uint64', id: 4 },
            current_generation: { type: 'uint64', id: 6 },
            flushed_generations: { rule: 'repeated', type: 'FlushedGeneration', id: 8 },
            region_spec_id: { type: 'uint32', id: 10 },
            region_id: { type: 'UUID', id: 11 },
            writer_id: { type: 'string', id: 100 },
            replay_epoch_floor: { type: 'uint64', id: 101 },
          },
        },
      },
    },
  },
});
const RegionManifestType = root.lookupType('quiver.RegionManifest');

export function initialRegionManifest(regionId: string, regionSpecId: number, writerId: string): RegionManifest {
  return {
    version: 1,
    writerEpoch: 1,
    replayAfterWalEntryPosition: 0,
    walEntryPositionLastSeen: 0,
    currentGeneration: 1,
    flushedGenerations: [],
    regionSpecId,
    regionId,
    writerId,
    replayEpochFloor: 0,
  };
}

export function encodeRegionManifest(m: RegionManifest): Uint8Array {
  const msg = RegionManifestType.fromObject({
    version: m.version,
    writer_epoch: m.writerEpoch,
    replay_after_wal_entry_position: m.replayAfterWalEntryPosition,
    wal_entry_position_last_seen: m.walEntryPositionLastSeen,
    current_generation: m.currentGeneration,
    flushed_generations: m.flushedGenerations.map((g) => ({ generation: g.generation, path: g.path })),
    region_spec_id: m.regionSpecId,
    region_id: { uuid: uuidToBytes(m.regionId) },
    writer_id: m.writerId,
    replay_epoch_floor: m.replayEpochFloor,
  });
  return RegionManifestType.encode(msg).finish();
}

export function decodeRegionManifest(bytes: Uint8Array, what: string): RegionManifest {
  let o: Record<string, unknown>;
  try {
    o = RegionManifestType.toObject(RegionManifestType.decode(bytes), { longs: Number, bytes: Array, defaults: true });
  } catch (e) {
    throw new DataError(`corrupt region manifest ${what}: ${(e as Error).message}`, { cause: e });
  }
  const gens = (o.flushed_generations as { generation: number; path: string }[]) ?? [];
  const rid = (o.region_id as { uuid?: number[] } | null)?.uuid;
  return {
    version: o.version as number,
    writerEpoch: o.writer_epoch as number,
    replayAfterWalEntryPosition: o.replay_after_wal_entry_position as number,
    walEntryPositionLastSeen: o.wal_entry_position_last_seen as number,
    currentGeneration: o.current_generation as number,
    flushedGenerations: gens.map((g) => ({ generation: g.generation, path: g.path })),
    regionSpecId: o.region_spec_id as number,
    regionId: rid && rid.length === 16 ? bytesToUuid(Uint8Array.from(rid)) : '',
    writerId: (o.writer_id as string) ?? '',
    replayEpochFloor: (o.replay_epoch_floor as number) ?? 0,
  };
}
