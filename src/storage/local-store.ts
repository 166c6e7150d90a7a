/**
 * ObjectStore over a local directory: the default backend.
 *
 * Durability: every write goes to a temporary file in the target directory, is fsynced, and
 * then published. `put` publishes with rename (atomic replace); `putIfAbsent` publishes with
 * link(2), which fails with EEXIST when the target exists, so two racing creators cannot both
 * win, even across processes. The directory is fsynced after publishing so the new name itself
 * survives a power loss, and so is the parent of every directory a write creates, all the way up
 * to the first one that already existed. A directory fsync error is an error, except the "not
 * supported" answers of file systems that cannot sync directories.
 *
 * Writes of up to OFF_THREAD_MAX_BYTES go, once it is running, to the file write worker
 * (file-write-worker.ts), which does the same steps synchronously on its own thread: the event
 * loop pays one message each way instead of a turn per step (`writeThread: false` keeps them
 * here). Directories are still created here, memoized. Larger writes are done here, through
 * reused staging buffers (staged-write.ts: the kernel reads fresh memory far slower).
 *
 * Temporary files are named `.<name>.tmp.<random hex>`; they are never listed, and keys whose
 * last part looks like one are refused. A crash can leave one behind: a partial write, or, between
 * putIfAbsent's link and its removal of the temp, a second hard link to a published object.
 * So the store sweeps them once, before its first operation (`LocalObjectStore.open` does it
 * eagerly): it walks the whole root and removes every temp file older than `tempGraceMs`, and
 * nothing else. Sweeping before the first operation means none of this store's own writes can be
 * in flight; the grace period spares the live temp files of another process writing the same
 * directory. Removing the temp name of a hard-linked pair leaves the object itself intact.
 */
import { randomBytes } from 'node:crypto';
import { constants as fsc, promises as fs, statSync } from 'node:fs';
import * as path from 'node:path';
import { AlreadyExistsError, InternalError, InvalidError, NotFoundError, QuiverError, StorageError, UnavailableError } from '../errors.js';
import { type FileWriteOutcome, NO_DIR_SYNC, writeOffThread } from './file-write-worker.js';
import { type ByteRange, checkKey, type ObjectMeta, type ObjectStore } from './object-store.js';
import { writeParts } from './staged-write.js';

export interface LocalStoreOptions {
  /** fsync files and directories before a write resolves (default true). */
  fsync?: boolean;
  /**
   * The sweep at open removes only temp files whose mtime is at least this old (default 60 000
   * ms), so a concurrent writer in another process keeps its in-flight temp files.
   */
  tempGraceMs?: number;
  /**
   * Do writes of up to OFF_THREAD_MAX_BYTES on the file write worker (default true; see
   * file-write-worker.ts); false keeps every step on the event loop, through `fsyncDir`.
   */
  writeThread?: boolean;
}

const TEMP_MARK = '.tmp.';
/** Exactly the names `writeTemp` makes: the sweep must not match anything a user could store. */
const TEMP_NAME = /^\..+\.tmp\.[0-9a-f]+$/;

export class LocalObjectStore implements ObjectStore {
  readonly description: string;
  private readonly root: string;
  private readonly fsync: boolean;
  private readonly tempGraceMs: number;
  private readonly writeThread: boolean;
  /** Per directory: settles once it exists and its entry is durable in its parent. */
  private readonly dirs = new Map<string, Promise<void>>();
  private swept: Promise<void> | undefined;

  constructor(root: string, options: LocalStoreOptions = {}) {
    this.root = path.resolve(root);
    this.description = `file://${this.root}`;
    this.fsync = options.fsync ?? true;
    this.tempGraceMs = options.tempGraceMs ?? 60_000;
    this.writeThread = options.writeThread ?? true;
  }

  /** A store whose sweep of crash leftovers has already run, so its errors surface here. */
  static async open(root: string, options: LocalStoreOptions = {}): Promise<LocalObjectStore> {
    const store = new LocalObjectStore(root, options);
    await store.ready();
    return store;
  }

  private pathOf(key: string): string {
    checkKey(key);
    if (TEMP_NAME.test(key.slice(key.lastIndexOf('/') + 1))) {
      throw new InvalidError(`invalid object key ${JSON.stringify(key)}: the local store reserves names like .<name>.tmp.<hex> for temp files`);
    }
    return path.join(this.root, ...key.split('/'));
  }

  /** The sweep, run once before the first operation; a failed sweep is tried again by the next. */
  private ready(): Promise<void> {
    this.swept ??= this.sweep().catch((e) => {
      this.swept = undefined;
      throw e;
    });
    return this.swept;
  }

  async get(key: string, range?: ByteRange): Promise<Uint8Array> {
    const file = this.pathOf(key);
    await this.ready();
    try {
      if (!range) {
        // A view of the buffer readFile made (a copy of a generation file of 100+ MB held the event
        // loop for ~0.3 s here); small files may share Node's buffer pool, so those are copied.
        const b = await fs.readFile(file);
        return b.byteOffset === 0 && b.buffer.byteLength === b.byteLength ? new Uint8Array(b.buffer, 0, b.byteLength) : new Uint8Array(b);
      }
      const fh = await fs.open(file, 'r');
      try {
        const size = (await fh.stat()).size;
        const start = Math.min(range.offset, size);
        const end = range.length === undefined ? size : Math.min(size, start + range.length);
        const buf = new Uint8Array(end - start);
        let done = 0;
        while (done < buf.length) {
          const { bytesRead } = await fh.read(buf, done, buf.length - done, start + done);
          if (bytesRead === 0) break;
          done += bytesRead;
        }
        return buf.subarray(0, done);
      } finally {
        await fh.close();
      }
    } catch (e) {
      throw mapFsError(e, key, this.description);
    }
  }

  put(key: string, data: Uint8Array): Promise<void> {
    return this.putParts(key, [data]);
  }

  /**
   * On the loop the parts go to the file with vectored writes: no joined copy of a large object
   * (the file write worker takes only small ones, copied into one buffer).
   */
  async putParts(key: string, parts: readonly Uint8Array[]): Promise<void> {
    const target = this.pathOf(key);
    await this.ready();
    if (await this.writeElsewhere(key, target, parts, 'rename')) return;
    const { tmp, closed } = await this.writeTemp(target, parts, true);
    try {
      await fs.rename(tmp, target);
    } catch (e) {
      await closed;
      await removeTemp(tmp);
      throw mapFsError(e, key, this.description, 'write');
    }
    try {
      await this.syncDir(path.dirname(target));
    } finally {
      await closed;
    }
  }

  /**
   * On the loop, each step of a write waits for an event-loop turn, and on a busy loop (a writer indexing
   * the rows of the WAL entry it is writing, in slices) every turn can be a slice long; so the
   * steps that need not wait for each other do not: the temp file is closed while it is linked
   * (renamed, by `putParts`), and its name removed while the directory is synced (the removal is
   * best effort anyway, see `removeTemp`).
   */
  async putIfAbsent(key: string, data: Uint8Array): Promise<void> {
    const target = this.pathOf(key);
    await this.ready();
    if (await this.writeElsewhere(key, target, [data], 'link')) return;
    const { tmp, closed } = await this.writeTemp(target, data, true);
    let linked: unknown;
    try {
      await fs.link(tmp, target);
    } catch (e) {
      linked = e;
    }
    const removed = closed.then(() => removeTemp(tmp));
    if (linked !== undefined) {
      await removed;
      if ((linked as NodeJS.ErrnoException).code === 'EEXIST') {
        throw new AlreadyExistsError(`object ${key} already exists in ${this.description}`);
      }
      throw mapFsError(linked, key, this.description, 'write');
    }
    try {
      await this.syncDir(path.dirname(target));
    } finally {
      await removed;
    }
  }

  async head(key: string): Promise<ObjectMeta | undefined> {
    const file = this.pathOf(key);
    await this.ready();
    try {
      // Synchronous: every read of a table HEADs the manifest version after the writer's own (the
      // ownership check), and the file is almost always missing. A stat of a local path is a
      // metadata lookup of ~2 µs here; through the thread pool it took ~60 µs of wall time, and a
      // missing file ~110 µs, ~50 µs of it this thread building the ENOENT error's stack trace.
      const st = statSync(file, { throwIfNoEntry: false });
      return st?.isFile() ? { key, size: st.size } : undefined;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT' || (e as NodeJS.ErrnoException).code === 'ENOTDIR') return undefined;
      throw mapFsError(e, key, this.description);
    }
  }

  async list(prefix: string): Promise<ObjectMeta[]> {
    // Walk only the directory that contains the prefix, then filter by the full prefix.
    const slash = prefix.lastIndexOf('/');
    const dirKey = slash >= 0 ? prefix.slice(0, slash) : '';
    await this.ready();
    const out: ObjectMeta[] = [];
    const walk = async (dirPath: string, keyBase: string): Promise<void> => {
      let entries;
      try {
        entries = await fs.readdir(dirPath, { withFileTypes: true });
      } catch (e) {
        const code = (e as NodeJS.ErrnoException).code;
        if (code === 'ENOENT' || code === 'ENOTDIR') return;
        throw mapFsError(e, keyBase, this.description);
      }
      await Promise.all(
        entries.map(async (ent) => {
          const key = keyBase ? `${keyBase}/${ent.name}` : ent.name;
          if (ent.isDirectory()) {
            if (key.startsWith(prefix) || prefix.startsWith(key + '/')) await walk(path.join(dirPath, ent.name), key);
          } else if (ent.isFile() && key.startsWith(prefix) && !TEMP_NAME.test(ent.name)) {
            try {
              const st = await fs.stat(path.join(dirPath, ent.name));
              out.push({ key, size: st.size });
            } catch {
              // Deleted while listing: not part of the listing.
            }
          }
        }),
      );
    };
    await walk(dirKey ? path.join(this.root, ...dirKey.split('/')) : this.root, dirKey);
    out.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
    return out;
  }

  async delete(key: string): Promise<void> {
    const file = this.pathOf(key);
    await this.ready();
    try {
      await fs.rm(file, { force: true });
    } catch (e) {
      // A key under an object ("a/b" when "a" is an object) or naming a directory is no object.
      const code = (e as NodeJS.ErrnoException).code;
      if (code === 'ENOTDIR' || code === 'ERR_FS_EISDIR') return;
      throw mapFsError(e, key, this.description, 'write');
    }
  }

  async close(): Promise<void> {}

  /** Removes the temp files a crash left behind (see the header). */
  private async sweep(): Promise<void> {
    const cutoff = Date.now() - this.tempGraceMs;
    const walk = async (dir: string): Promise<void> => {
      let entries;
      try {
        entries = await fs.readdir(dir, { withFileTypes: true });
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code === 'ENOENT') return; // a new store: nothing yet
        throw mapFsError(e, path.relative(this.root, dir) || '.', this.description, 'sweep');
      }
      await Promise.all(
        entries.map(async (ent) => {
          const file = path.join(dir, ent.name);
          if (ent.isDirectory()) return walk(file);
          if (!ent.isFile() || !TEMP_NAME.test(ent.name)) return;
          try {
            if ((await fs.lstat(file)).mtimeMs <= cutoff) await fs.rm(file, { force: true });
          } catch (e) {
            if ((e as NodeJS.ErrnoException).code === 'ENOENT') return; // its writer removed it
            throw mapFsError(e, path.relative(this.root, file), this.description, 'sweep');
          }
        }),
      );
    };
    await walk(this.root);
  }

  /**
   * The whole write on the file write worker, when it takes it: true once done there (throwing
   * what it came to), false when the caller must write it itself.
   */
  private async writeElsewhere(key: string, target: string, parts: readonly Uint8Array[], publish: 'link' | 'rename'): Promise<boolean> {
    if (!this.writeThread) return false;
    const dir = path.dirname(target);
    try {
      await this.ensureDir(dir);
    } catch (e) {
      throw mapFsError(e, key, this.description, 'write');
    }
    const tmp = this.tempName(target);
    const pending = writeOffThread({ tmp, target, publish, fsync: this.fsync, parts });
    if (!pending) return false;
    let outcome: FileWriteOutcome;
    try {
      outcome = await pending;
    } catch (e) {
      throw new UnavailableError(`write of ${key} to ${this.description}: its outcome is unknown, the file write worker stopped (${(e as Error).message})`, { cause: e });
    }
    if (outcome.ok) return true;
    const e = Object.assign(new Error(outcome.message), { code: outcome.code });
    if (outcome.step === 'publish' && publish === 'link' && outcome.code === 'EEXIST') {
      throw new AlreadyExistsError(`object ${key} already exists in ${this.description}`);
    }
    if (outcome.step === 'sync-dir') throw mapFsError(e, path.relative(this.root, dir) || '.', this.description, 'write');
    throw mapFsError(e, key, this.description, 'write');
  }

  private tempName(target: string): string {
    return path.join(path.dirname(target), `.${path.basename(target)}${TEMP_MARK}${randomBytes(6).toString('hex')}`);
  }

  /**
   * Writes `data` to a new synced temp file next to `target` and returns its name. With
   * `closeLater` it resolves before the file is closed (a published name does not need the
   * descriptor closed first); `closed` settles once it is, never rejecting (the data is synced;
   * a failed close loses nothing).
   */
  private async writeTemp(target: string, data: Uint8Array | readonly Uint8Array[], closeLater = false): Promise<{ tmp: string; closed: Promise<void> }> {
    const dir = path.dirname(target);
    const key = path.relative(this.root, target);
    try {
      await this.ensureDir(dir);
    } catch (e) {
      throw mapFsError(e, key, this.description, 'write');
    }
    const tmp = this.tempName(target);
    let fh;
    try {
      fh = await fs.open(tmp, fsc.O_WRONLY | fsc.O_CREAT | fsc.O_EXCL, 0o644);
      await writeParts(fh, data instanceof Uint8Array ? [data] : data);
      if (this.fsync) await fh.sync();
    } catch (e) {
      await fh?.close().catch(() => {});
      await removeTemp(tmp);
      throw mapFsError(e, key, this.description, 'write');
    }
    const closed = fh.close();
    if (!closeLater) await closed;
    return { tmp, closed: closed.catch(() => {}) };
  }

  /**
   * Creates `dir` and makes its entry, and those of every directory created on the way, durable.
   * Directories are done top-down and memoized, so a write never resolves while an ancestor it
   * relies on, created by a concurrent write, is still unsynced.
   */
  private ensureDir(dir: string): Promise<void> {
    let done = this.dirs.get(dir);
    if (!done) {
      done = this.makeDir(dir);
      this.dirs.set(dir, done);
      done.catch(() => this.dirs.delete(dir));
    }
    return done;
  }

  private async makeDir(dir: string): Promise<void> {
    if (dir !== this.root) {
      await this.ensureDir(path.dirname(dir));
      await fs.mkdir(dir, { recursive: true }); // recursive: no EEXIST when it is already there
      await this.syncDir(path.dirname(dir));
      return;
    }
    // The root may be new, several levels deep: sync the parent of each directory mkdir made
    // (it returns the first one), and nothing above, where this store has no business.
    const first = await fs.mkdir(dir, { recursive: true });
    if (first === undefined) return;
    for (let d = dir; ; d = path.dirname(d)) {
      await this.syncDir(path.dirname(d));
      if (d === first) break;
    }
  }

  private async syncDir(dir: string): Promise<void> {
    if (!this.fsync) return;
    try {
      await this.fsyncDir(dir);
    } catch (e) {
      // Some file systems cannot fsync a directory at all; there, the synced data is the best
      // there is. Any other failure means the entry may not be durable.
      if (NO_DIR_SYNC.has((e as NodeJS.ErrnoException).code ?? '')) return;
      throw mapFsError(e, path.relative(this.root, dir) || '.', this.description, 'write');
    }
  }

  /** fsyncs one directory; the only place that does, so tests can observe or fail it. */
  protected async fsyncDir(dir: string): Promise<void> {
    const fh = await fs.open(dir, 'r');
    try {
      await fh.sync();
    } finally {
      // Not waited for: the sync is what the caller needs, and one turn less on a busy loop.
      fh.close().catch(() => {});
    }
  }
}

/**
 * Best effort: a failure here must not hide the write's own outcome, and a temp file left behind
 * is swept at the next open.
 */
async function removeTemp(tmp: string): Promise<void> {
  await fs.rm(tmp, { force: true }).catch(() => {});
}


/** The storage refused: a retry will not help until someone fixes it. */
const REFUSED = new Set(['EACCES', 'EPERM', 'EROFS', 'EIO', 'ENAMETOOLONG']);
/** Transient: out of descriptors, busy, interrupted, out of space (someone may free some). */
const TRANSIENT = new Set(['EAGAIN', 'EMFILE', 'ENFILE', 'EBUSY', 'EINTR', 'ENOSPC', 'EDQUOT']);
/**
 * A path in the way: on a read, the object is not there; on a write, the file tree cannot hold
 * the key (an object where a directory must be, or the reverse), which no retry fixes; on the
 * sweep, the root itself is not a directory.
 */
const PATH_CODES = new Set(['ENOENT', 'ENOTDIR', 'EISDIR', 'EEXIST']);

/** `op` matters for the path codes: only on a read do they mean "no such object". */
function mapFsError(e: unknown, key: string, where: string, op: 'read' | 'write' | 'sweep' = 'read'): Error {
  if (e instanceof QuiverError) return e; // mapped already, deeper down
  const code = (e as NodeJS.ErrnoException).code ?? '';
  const message = (e as Error).message;
  if (PATH_CODES.has(code) && op === 'read') return new NotFoundError(`object ${key} not found in ${where}`, { cause: e });
  if (TRANSIENT.has(code)) return new UnavailableError(`transient storage error on ${key} in ${where}: ${message}`, { cause: e });
  if (REFUSED.has(code) || PATH_CODES.has(code)) return new StorageError(`storage refused ${op} of ${key} in ${where}: ${message}`, { cause: e });
  return new InternalError(`storage error on ${key} in ${where}: ${message}`, { cause: e });
}

