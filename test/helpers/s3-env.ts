/**
 * Connection details of the test S3 server (`npm run s3:start`, test/s3/radosgw.sh) and
 * throwaway buckets on it.
 *
 * S3 tests fail rather than skip when the server is absent: a skipped durability test reads
 * like a passing one.
 */
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { DeleteBucketCommand, DeleteObjectCommand, ListObjectsV2Command } from '@aws-sdk/client-s3';
import { isQuiverError } from '../../src/errors.js';
import { S3ObjectStore } from '../../src/storage/s3-store.js';

export interface S3Env {
  endpoint: string;
  accessKeyId: string;
  secretAccessKey: string;
  region: string;
}

export const NOT_RUNNING = 'radosgw not running: run `npm run s3:start`';

/** The env file radosgw.sh writes: $QUIVER_S3_ENV, else <repo>/.s3/env. */
export function s3EnvPath(): string {
  return process.env.QUIVER_S3_ENV ?? fileURLToPath(new URL('../../.s3/env', import.meta.url));
}

export function loadS3Env(file: string = s3EnvPath()): S3Env {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (e) {
    throw new Error(`${NOT_RUNNING} (no ${file})`, { cause: e });
  }
  const vars = new Map<string, string>();
  for (const line of text.split('\n')) {
    const m = /^\s*(?:export\s+)?([A-Z0-9_]+)=(.*)$/.exec(line);
    if (m) vars.set(m[1]!, m[2]!.trim().replace(/^(['"])(.*)\1$/, '$2'));
  }
  const need = (name: string) => {
    const value = vars.get(name);
    if (!value) throw new Error(`${NOT_RUNNING} (${file} has no ${name})`);
    return value;
  };
  return {
    endpoint: need('QUIVER_S3_ENDPOINT'),
    accessKeyId: need('QUIVER_S3_ACCESS_KEY'),
    secretAccessKey: need('QUIVER_S3_SECRET_KEY'),
    region: vars.get('QUIVER_S3_REGION') || 'us-east-1',
  };
}

export interface TestBucket {
  store: S3ObjectStore;
  bucket: string;
  /** Deletes every object in the bucket (not only under the prefix), then the bucket. */
  cleanup(): Promise<void>;
}

/** A store on a fresh bucket `quiver-test-<random>`, optionally under a key prefix. */
export async function makeTestBucketStore(prefix?: string, env: S3Env = loadS3Env()): Promise<TestBucket> {
  const bucket = `quiver-test-${randomBytes(6).toString('hex')}`;
  const store = new S3ObjectStore({ bucket, prefix, ...env });
  try {
    await store.ensureBucket();
  } catch (e) {
    await store.close();
    if (isQuiverError(e, 'unavailable')) throw new Error(`${NOT_RUNNING} (${env.endpoint}: ${(e as Error).message})`, { cause: e });
    throw e;
  }
  return { store, bucket, cleanup: () => removeBucket(bucket, env) };
}

async function removeBucket(bucket: string, env: S3Env): Promise<void> {
  // A client of its own: the test may already have closed its store.
  const admin = new S3ObjectStore({ bucket, ...env });
  try {
    let token: string | undefined;
    do {
      const res = await admin.client.send(new ListObjectsV2Command({ Bucket: bucket, ContinuationToken: token }));
      await Promise.all((res.Contents ?? []).map((o) => admin.client.send(new DeleteObjectCommand({ Bucket: bucket, Key: o.Key }))));
      token = res.IsTruncated ? res.NextContinuationToken : undefined;
    } while (token);
    await admin.client.send(new DeleteBucketCommand({ Bucket: bucket }));
  } catch (e) {
    if ((e as { name?: string }).name !== 'NoSuchBucket') throw e;
  } finally {
    await admin.close();
  }
}
