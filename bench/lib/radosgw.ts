/**
 * The project's S3 test server (Debian's radosgw on 127.0.0.1, test/s3/radosgw.sh) as a write
 * target: found through its env file, started on request, and garbage-collected between runs.
 */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { loadS3Env, s3EnvPath } from '../../test/helpers/s3-env.js';

const ROOT = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..', '..');

/** Whether radosgw answers; with `start`, runs `radosgw.sh start` first when it does not. */
export function radosgwReady(start: boolean): boolean {
  const status = () => spawnSync('bash', [path.join(ROOT, 'test/s3/radosgw.sh'), 'status'], { stdio: 'ignore' }).status === 0;
  if (status()) return hasEnv();
  if (!start) return false;
  const r = spawnSync('bash', [path.join(ROOT, 'test/s3/radosgw.sh'), 'start'], { stdio: 'inherit', timeout: 180_000 });
  return r.status === 0 && hasEnv();
}

function hasEnv(): boolean {
  try {
    loadS3Env();
    return true;
  } catch {
    return false;
  }
}

/**
 * radosgw frees the tail stripes of deleted objects only in its garbage collector, two hours
 * later by default, and the test server keeps objects in 2 GiB of RAM: a few benchmark runs in a
 * row would fill it and stall every later write. When the test server's config is at hand
 * (test/s3/radosgw.sh), collect the garbage now. Best effort: a missing tool changes nothing.
 */
export function collectRadosgwGarbage(): void {
  const conf = path.join(path.dirname(s3EnvPath()), 'ceph.conf');
  if (!existsSync(conf)) return;
  const r = spawnSync('radosgw-admin', ['-c', conf, 'gc', 'process', '--include-all'], { timeout: 60_000, stdio: 'ignore' });
  if (r.error || r.status !== 0) console.warn(`note: radosgw-admin gc process did not run (${r.error?.message ?? `exit ${r.status}`}); deleted objects stay in the server's memory until its own GC`);
}
