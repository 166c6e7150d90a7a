/** Quiver's embedded API. */
export { connect, Database, openStore } from './database.js';
export type { ConnectOptions, CreateTableOptions, S3ConnectOptions } from './database.js';
export { Table } from './table/table.js';
export type { ScanOptions } from './table/table.js';
export type { RegionSpec } from './region/region-spec.js';
export { DEFAULT_WRITER_CONFIG } from './region/writer-config.js';
export type { RegionWriterConfig } from './region/writer-config.js';
export type { RegionWriterState, RegionWriterStats } from './region/region-writer.js';
export { systemRuntime } from './util/runtime.js';
export type { Runtime, TimerHandle } from './util/runtime.js';
export * from './errors.js';
export type { ObjectStore, ObjectMeta, ByteRange } from './storage/object-store.js';
export { LocalObjectStore } from './storage/local-store.js';
export { MemoryObjectStore } from './storage/memory-store.js';
export { S3ObjectStore } from './storage/s3-store.js';
export { RetryingObjectStore } from './storage/retrying-store.js';
export { FaultInjectingObjectStore } from './storage/fault-store.js';
export type { FaultRule } from './storage/fault-store.js';
