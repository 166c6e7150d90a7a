/**
 * ObjectStore over a local directory: the default backend.
 *
 * Durability: every write goes to a temporary file in the target directory, is fsynced, and
 * then published. `put` publishes with rename (atomic replace); `putIfAbsent` publishes with
 * link(2), which fails with EEXIST when the target exists, so two racing creators cannot both
 * win, even across processes. The directory is fsynced after publishing so the new name itself
 * survives a power loss. Temporary files are named `.<name>.tmp.<random>` and never listed.
 */
import { randomBytes } from 'node:crypto';
import { constants as fsc, promises as fs } from 'node:fs';
import * as path from 'node:path';
import { AlreadyExistsError, InternalError, NotFoundError, UnavailableError } from '../errors.js';
import { type ByteRange, checkKey, type ObjectMeta, type ObjectStore } from './object-store.js';

export interface LocalStoreOptions {
  /** fsync files and directories before a write resolves (default true). */
  fsync?: boolean;
}

const TEMP_MARK = '.tmp.';

export class LocalObjectStore implements ObjectStore {
  readonly description: string;
  private readonly root: string;
  private readonly fsync: boolean;
  private readonly knownDirs = new Set<string>();

  constructor(root: string, options: LocalStoreOptions = {}) {
    this.root = path.resolve(root);
    this.description = `file://${this.root}`;
    this.fsync = options.fsync ?? true;
  }

  private pathOf(key: string): string {
    checkKey(key);
    return path.join(this.root, ...key.split('/'));
  }

  async get(key: string, range?: ByteRange): Promise<Uint8Array> {
    const file = this.pathOf(key);
    try {
      if (!range) return new Uint8Array(await fs.readFile(file));
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

  async put(key: string, data: Uint8Array): Promise<void> {
    const target = this.pathOf(key);
    const tmp = await this.writeTemp(target, data);
    try {
      await fs.rename(tmp, target);
    } catch (e) {
      await fs.rm(tmp, { force: true });
      throw mapFsError(e, key, this.description);
    }
    await this.syncDir(path.dirname(target));
  }

  async putIfAbsent(key: string, data: Uint8Array): Promise<void> {
    const target = this.pathOf(key);
    const tmp = await this.writeTemp(target, data);
    try {
      await fs.link(tmp, target);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'EEXIST') {
        throw new AlreadyExistsError(`object ${key} already exists in ${this.description}`);
      }
      throw mapFsError(e, key, this.description);
    } finally {
      await fs.rm(tmp, { force: true });
    }
    await this.syncDir(path.dirname(target));
  }

  async head(key: string): Promise<ObjectMeta | undefined> {
    try {
      const st = await fs.stat(this.pathOf(key));
      return st.isFile() ? { key, size: st.size } : undefined;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT' || (e as NodeJS.ErrnoException).code === 'ENOTDIR') return undefined;
      throw mapFsError(e, key, this.description);
    }
  }

  async list(prefix: string): Promise<ObjectMeta[]> {
    // Walk only the directory that contains the prefix, then filter by the full prefix.
    const slash = prefix.lastIndexOf('/');
    const dirKey = slash >= 0 ? prefix.slice(0, slash) : '';
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
          } else if (ent.isFile() && key.startsWith(prefix) && !ent.name.includes(TEMP_MARK)) {
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
    try {
      await fs.rm(this.pathOf(key), { force: true });
    } catch (e) {
      throw mapFsError(e, key, this.description);
    }
  }

  async close(): Promise<void> {}

  private async writeTemp(target: string, data: Uint8Array): Promise<string> {
    const dir = path.dirname(target);
    await this.ensureDir(dir);
    const tmp = path.join(dir, `.${path.basename(target)}${TEMP_MARK}${randomBytes(6).toString('hex')}`);
    let fh;
    try {
      fh = await fs.open(tmp, fsc.O_WRONLY | fsc.O_CREAT | fsc.O_EXCL, 0o644);
      let done = 0;
      while (done < data.length) {
        const { bytesWritten } = await fh.write(data, done, data.length - done);
        done += bytesWritten;
      }
      if (this.fsync) await fh.sync();
    } catch (e) {
      await fh?.close().catch(() => {});
      await fs.rm(tmp, { force: true });
      throw mapFsError(e, path.relative(this.root, target), this.description);
    }
    await fh.close();
    return tmp;
  }

  private async ensureDir(dir: string): Promise<void> {
    if (this.knownDirs.has(dir)) return;
    await fs.mkdir(dir, { recursive: true });
    // A new directory's own entry must be durable in its parent too.
    await this.syncDir(path.dirname(dir));
    this.knownDirs.add(dir);
  }

  private async syncDir(dir: string): Promise<void> {
    if (!this.fsync) return;
    let fh;
    try {
      fh = await fs.open(dir, 'r');
      await fh.sync();
    } catch {
      // Some file systems refuse fsync on directories; the data itself is already synced.
    } finally {
      await fh?.close().catch(() => {});
    }
  }
}

function mapFsError(e: unknown, key: string, where: string): Error {
  const code = (e as NodeJS.ErrnoException).code;
  if (code === 'ENOENT' || code === 'ENOTDIR') return new NotFoundError(`object ${key} not found in ${where}`, { cause: e });
  if (code === 'EAGAIN' || code === 'EMFILE' || code === 'ENFILE' || code === 'EBUSY' || code === 'EINTR' || code === 'ENOSPC') {
    return new UnavailableError(`transient storage error on ${key} in ${where}: ${(e as Error).message}`, { cause: e });
  }
  return new InternalError(`storage error on ${key} in ${where}: ${(e as Error).message}`, { cause: e });
}
