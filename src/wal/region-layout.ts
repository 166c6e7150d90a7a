/**
 * Where a region's objects live, following Lance's MemWAL layout:
 *
 *   {table}/_mem_wal/{region_uuid}/manifest/{bit-reversed version}.binpb
 *   {table}/_mem_wal/{region_uuid}/manifest/version_hint.json
 *   {table}/_mem_wal/{region_uuid}/wal/{bit-reversed position}.arrow
 *   {table}/_mem_wal/{region_uuid}/{8 hex}_gen_{N}/
 *
 * It lives with the WAL, the lowest layer that names these objects (DESIGN.md's layers: a type
 * shared across layers sits in the lowest one that uses it).
 */
import { joinKey } from '../storage/object-store.js';
import { bitReversedName, parseBitReversedName } from '../util/bit-reversed-name.js';

export class RegionLayout {
  readonly base: string;

  constructor(tableKey: string, readonly regionId: string) {
    this.base = joinKey(tableKey, '_mem_wal', regionId);
  }

  get manifestDir(): string {
    return `${this.base}/manifest`;
  }
  get walDir(): string {
    return `${this.base}/wal`;
  }
  walEntryKey(position: number): string {
    return `${this.walDir}/${bitReversedName(position, 'arrow')}`;
  }
  /** Position of a WAL key, or undefined for anything else under wal/. */
  walPositionOf(key: string): number | undefined {
    return parseBitReversedName(key.slice(key.lastIndexOf('/') + 1), 'arrow');
  }
  generationKey(folder: string, file: string): string {
    return `${this.base}/${folder}/${file}`;
  }
}
