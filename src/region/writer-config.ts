/**
 * Region writer settings. Defaults follow Lance's `RegionWriterConfig` (lance-memwal.md §3.2);
 * every knob here is live — upstream's first version carried several that did nothing
 * (pitfall 4), so nothing is listed that the writer does not read.
 */
import { InvalidError } from '../errors.js';

export interface RegionWriterConfig {
  /** Unflushed bytes in the active MemTable that trigger a WAL write at once. */
  maxWalBufferSize: number;
  /** Group-commit window: pending rows are written at most this long after they arrive. */
  maxWalFlushIntervalMs: number;
  /** A MemTable is frozen (and flushed to a generation) before it would pass any of these. */
  maxMemtableSize: number;
  maxMemtableRows: number;
  maxMemtableBatches: number;
  /** Backpressure: puts wait while active + frozen MemTable bytes are at or above this... */
  maxUnflushedMemtableBytes: number;
  /** ...and fail with a retryable UnavailableError after waiting this long. */
  backpressureTimeoutMs: number;
  /** WAL entries written concurrently (acks still follow position order). */
  maxWalWritesInFlight: number;
  /** Parallel HEAD probes per round when locating the latest manifest version. */
  manifestScanBatchSize: number;
  /**
   * When a row becomes visible to readers: 'durable' (default) once its WAL entry is on storage
   * and it is indexed; 'memory' as soon as it is in the MemTable (reads may then see rows whose
   * put later fails).
   */
  visibility: 'durable' | 'memory';
  /**
   * Reads served from this process's writer confirm that no other writer has claimed the region
   * (one HEAD on the next manifest version) at most this often. 0 (default): on every read, so a
   * read sees every write any process acknowledged before it began. N > 0: a read may miss
   * another process's writes acknowledged within the last N ms (saves the HEAD on S3).
   */
  ownershipCheckIntervalMs: number;
  /**
   * WAL entries of more rows than this are indexed in slices of this many rows with an
   * event-loop turn between them (reads, other puts and the WAL write's own steps go on
   * meanwhile); smaller entries are indexed in one step.
   */
  indexSliceRows: number;
}

const MiB = 1024 * 1024;

export const DEFAULT_WRITER_CONFIG: Readonly<RegionWriterConfig> = Object.freeze({
  maxWalBufferSize: 10 * MiB,
  maxWalFlushIntervalMs: 100,
  maxMemtableSize: 256 * MiB,
  maxMemtableRows: 100_000,
  maxMemtableBatches: 8_000,
  maxUnflushedMemtableBytes: 1024 * MiB,
  backpressureTimeoutMs: 30_000,
  maxWalWritesInFlight: 4,
  manifestScanBatchSize: 2,
  visibility: 'durable',
  ownershipCheckIntervalMs: 0,
  indexSliceRows: 512,
});

export function resolveWriterConfig(overrides: Partial<RegionWriterConfig> = {}): RegionWriterConfig {
  const config = { ...DEFAULT_WRITER_CONFIG, ...stripUndefined(overrides) };
  const positive: (keyof RegionWriterConfig)[] = [
    'maxWalBufferSize',
    'maxMemtableSize',
    'maxMemtableRows',
    'maxMemtableBatches',
    'maxUnflushedMemtableBytes',
    'maxWalWritesInFlight',
    'manifestScanBatchSize',
    'indexSliceRows',
  ];
  for (const k of positive) {
    const v = config[k];
    if (typeof v !== 'number' || !Number.isFinite(v) || v <= 0) throw new InvalidError(`writer setting ${k} must be a positive number, got ${String(v)}`);
  }
  for (const k of ['maxWalFlushIntervalMs', 'backpressureTimeoutMs', 'ownershipCheckIntervalMs'] as const) {
    const v = config[k];
    if (typeof v !== 'number' || !Number.isFinite(v) || v < 0) throw new InvalidError(`writer setting ${k} must be a number >= 0, got ${String(v)}`);
  }
  if (config.visibility !== 'durable' && config.visibility !== 'memory') {
    throw new InvalidError(`writer setting visibility must be 'durable' or 'memory', got ${String(config.visibility)}`);
  }
  return config;
}

function stripUndefined<T extends object>(o: T): Partial<T> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>;
}
