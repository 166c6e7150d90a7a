import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import test from 'ava';
import { LocalObjectStore } from '../../src/storage/local-store.js';
import { objectStoreConformance } from './conformance.js';

const makeDir = () => fs.mkdtemp(path.join(os.tmpdir(), 'quiver-local-store-'));

objectStoreConformance('local', async () => {
  const dir = await makeDir();
  return { store: new LocalObjectStore(dir), cleanup: () => fs.rm(dir, { recursive: true, force: true }) };
});

// Temp files are written next to their target; a crash can leave them behind, and they must
// never show up as objects.
test('local: leftover temp files are not listed', async (t) => {
  const dir = await makeDir();
  t.teardown(() => fs.rm(dir, { recursive: true, force: true }));
  const store = new LocalObjectStore(dir);
  await store.put('a/b', Uint8Array.from([1]));
  await fs.writeFile(path.join(dir, 'a', '.c.tmp.123456'), 'partial');
  t.deepEqual(await store.list('a/'), [{ key: 'a/b', size: 1 }]);
});
