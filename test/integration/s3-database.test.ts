/**
 * The embedded database on a real S3 server (the project's radosgw): the same guarantees as on
 * a local directory, with create-if-absent done by `If-None-Match: *`.
 */
import test from 'ava';
import { connect, isQuiverError } from '../../src/quiver.js';
import { docs, docsSchema, liveRows, range } from '../helpers/data.js';
import { loadS3Env, makeTestBucketStore } from '../helpers/s3-env.js';

async function s3db(bucket: string, prefix: string) {
  const env = loadS3Env();
  return connect(`s3://${bucket}/${prefix}`, {
    s3: { endpoint: env.endpoint, region: env.region, accessKeyId: env.accessKeyId, secretAccessKey: env.secretAccessKey, forcePathStyle: true },
    writer: { maxWalFlushIntervalMs: 10, maxMemtableRows: 100 },
  });
}

test.serial('S3: create, put, update, delete, flush to generations, reopen', async (t) => {
  const { bucket, cleanup } = await makeTestBucketStore();
  try {
    const db = await s3db(bucket, 'db1');
    const table = await db.createTable('docs', docsSchema, { primaryKey: 'id', regionSpec: { kind: 'bucket', column: 'id', buckets: 2 } });
    await Promise.all(range(0, 10).map((i) => table.put(docs(range(i * 30, i * 30 + 30), 1))));
    await table.put(docs(range(0, 50), 2));
    await table.delete(range(290, 300));
    const expected = await liveRows(table);
    t.is(expected.size, 290);
    await db.close();
    const db2 = await s3db(bucket, 'db1');
    t.deepEqual(await db2.tableNames(), ['docs']);
    const reopened = await db2.openTable('docs');
    t.deepEqual(await liveRows(reopened), expected);
    await db2.close();
  } finally {
    await cleanup();
  }
});

test.serial('S3: a newer writer fences the older one through conditional writes', async (t) => {
  const { bucket, store, cleanup } = await makeTestBucketStore();
  try {
    const dbA = await s3db(bucket, 'db2');
    const a = await dbA.createTable('docs', docsSchema, { primaryKey: 'id' });
    await a.put(docs(range(0, 10), 1));
    const dbB = await s3db(bucket, 'db2');
    const b = await dbB.openTable('docs');
    await b.put(docs(range(5, 15), 2));
    const err = await t.throwsAsync(a.put(docs([100], 1)));
    t.true(isQuiverError(err, 'fenced'), String(err));
    const rows = await liveRows(b);
    t.is(rows.size, 15);
    for (const [id, v] of rows) t.is(v, id < 5 ? 1 : 2);
    await dbB.close();
    await dbA.close().catch(() => {});
    const wal = (await store.list('db2/docs/_mem_wal/')).filter((o) => o.key.includes('/wal/'));
    t.true(wal.length >= 3);
  } finally {
    await cleanup();
  }
});
