/**
 * Results stream: a DoGet pulls batches from the exec tree only as fast as the client reads them
 * (grpc-js write backpressure), so a slow reader holds the query instead of growing the server's
 * memory; a cancelled DoGet stops the query; every message stays under grpc-js's 4 MiB limit.
 *
 * The 1M-row test runs `quiver serve` as a separate process and reads its resident memory from
 * /proc while a client reads a ~520 MB result slowly.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import type { ClientReadableStream } from '@grpc/grpc-js';
import { connect, type Database } from '../../src/quiver.js';
import type { IncomingFlightData } from '../../src/flight/flight-data.js';
import { FlightDataReader } from '../../src/flight/framing.js';
import { FlightSqlServer } from '../../src/flight/server.js';
import { TestFlightClient } from './client.js';
import { startServe, vectorBatch } from './serve-process.js';

const MiB = 1024 * 1024;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface Probe {
  pulled: number;
  finished: boolean;
}

/** The database with its query stream instrumented: batches pulled from the exec tree, and whether it ended. */
function instrumented(db: Database, probe: Probe): Database {
  return new Proxy(db, {
    get(target, prop, receiver) {
      if (prop !== 'prepare') return Reflect.get(target, prop, receiver);
      return async (...args: Parameters<Database['prepare']>) => {
        const p = await target.prepare(...args);
        const exec = p.exec;
        const execute = (ctx: Parameters<typeof exec.execute>[0]) =>
          (async function* () {
            probe.pulled = 0;
            probe.finished = false;
            try {
              for await (const b of exec.execute(ctx)) {
                probe.pulled++;
                yield b;
              }
            } finally {
              probe.finished = true;
            }
          })();
        return { ...p, exec: { schema: exec.schema, execute } };
      };
    },
  });
}

async function inProcess(rows: number, dim: number) {
  const dir = mkdtempSync(join(tmpdir(), 'quiver-flight-stream-'));
  const db = await connect(dir);
  const probe: Probe = { pulled: 0, finished: false };
  const schema = vectorBatch(0, 1, dim).schema;
  const table = await db.createTable('big', schema, { primaryKey: 'id' });
  for (let start = 0; start < rows; start += 8192) await table.put(vectorBatch(start, Math.min(8192, rows - start), dim));
  for await (const _ of db.query('SELECT id, emb FROM big')); // eslint-disable-line @typescript-eslint/no-unused-vars
  const server = new FlightSqlServer(instrumented(db, probe), { port: 0, log: () => {} });
  const { url } = await server.listen();
  const client = new TestFlightClient(url);
  return {
    probe,
    client,
    async cleanup() {
      client.close();
      await server.close(1000);
      await db.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

test.serial('a slow reader holds the query; a cancelled DoGet stops it', async (t) => {
  const env = await inProcess(131_072, 128); // 16 batches of 8192 rows, ~4.2 MB each
  try {
    const { ticket } = await env.client.getFlightInfo('CommandStatementQuery', { query: 'SELECT id, emb FROM big' });
    const call: ClientReadableStream<IncomingFlightData> = env.client.doGetRaw(ticket);
    let messages = 0;
    let maxBody = 0;
    call.on('data', (fd: IncomingFlightData) => {
      messages++;
      maxBody = Math.max(maxBody, fd.body?.length ?? 0);
      if (messages === 2) call.pause();
    });
    call.on('error', () => {});
    await sleep(1500);
    const pulledWhilePaused = env.probe.pulled;
    t.log(`reader paused after 2 messages: ${pulledWhilePaused} of 16 batches pulled from the exec tree`);
    t.true(pulledWhilePaused < 16, 'the query does not run ahead of a paused reader');
    t.false(env.probe.finished);
    call.cancel();
    await sleep(500);
    t.true(env.probe.finished, 'the query stopped after the client cancelled');
    t.is(env.probe.pulled, pulledWhilePaused, 'no batch pulled after the cancel');
    t.true(maxBody < 4 * MiB);
    // The server keeps serving.
    const again = await env.client.query('SELECT count(*) AS n FROM big');
    t.is(Number(again.getChild('n')!.get(0)), 131_072);
  } finally {
    await env.cleanup();
  }
});

test.serial('CancelFlightInfo stops a running DoGet', async (t) => {
  const env = await inProcess(65_536, 128);
  try {
    const { ticket, info } = await env.client.getFlightInfo('CommandStatementQuery', { query: 'SELECT id, emb FROM big' });
    const call = env.client.doGetRaw(ticket);
    let messages = 0;
    const ended = new Promise<Error | null>((resolve) => {
      call.on('error', (e: Error) => resolve(e));
      call.on('end', () => resolve(null));
    });
    call.on('data', () => {
      if (++messages === 1) call.pause();
    });
    await sleep(300);
    const { Flight } = await import('../../src/flight/protocol.js');
    const [result] = await env.client.action('CancelFlightInfo', Flight.CancelFlightInfoRequest.encode({ info }));
    t.is(Flight.CancelFlightInfoResult.decode(result).status, 1); // CANCEL_STATUS_CANCELLED
    call.resume();
    const err = await ended;
    t.regex(String(err?.message), /CANCELLED|cancelled/);
    await sleep(200);
    t.true(env.probe.finished);
  } finally {
    await env.cleanup();
  }
});

test.serial('1M rows x 128 dims stream from `quiver serve` with bounded server memory', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'quiver-flight-1m-'));
  const server = await startServe(['--port', '0', '--data', dir]);
  const client = new TestFlightClient(server.url); // grpc-js defaults: 4 MiB receive limit
  const rows = 1_000_000;
  const dim = 128;
  try {
    const ingestStart = performance.now();
    let ingested = 0;
    for (let start = 0; start < rows; start += 16 * 8192) {
      const batches = [];
      for (let s = start; s < Math.min(rows, start + 16 * 8192); s += 8192) batches.push(vectorBatch(s, Math.min(8192, rows - s), dim));
      ingested += await client.ingest('big', batches, { ifNotExist: 1, ifExists: 2 });
    }
    const ingestMs = performance.now() - ingestStart;
    t.is(ingested, rows);
    // Warm the table's read state (the first query builds per-region liveness), then measure.
    await client.query('SELECT count(*) AS n FROM big');
    const baseline = server.rss();
    const { ticket } = await client.getFlightInfo('CommandStatementQuery', { query: 'SELECT id, emb FROM big' });
    const call = client.doGetRaw(ticket);
    const reader = new FlightDataReader();
    let received = 0;
    let idSum = 0n;
    let bytes = 0;
    let maxBody = 0;
    let peak = baseline;
    const sampler = setInterval(() => (peak = Math.max(peak, server.rss())), 50);
    const start = performance.now();
    let pausedPeak = 0;
    await new Promise<void>((resolve, reject) => {
      let paused = false;
      call.on('data', (fd: IncomingFlightData) => {
        bytes += (fd.body?.length ?? 0) + (fd.header?.length ?? 0);
        maxBody = Math.max(maxBody, fd.body?.length ?? 0);
        const batch = reader.read(fd);
        if (batch) {
          received += batch.numRows;
          for (const id of batch.getChild('id')!) idSum += id as bigint;
        }
        if (!paused && received >= 100_000) {
          // A reader that stops for two seconds: the server must not buffer the rest of the result.
          paused = true;
          call.pause();
          setTimeout(() => {
            pausedPeak = peak;
            call.resume();
          }, 2000);
        }
      });
      call.on('end', resolve);
      call.on('error', reject);
    });
    const ms = performance.now() - start;
    clearInterval(sampler);
    t.is(received, rows);
    t.is(idSum, (BigInt(rows) * BigInt(rows - 1)) / 2n, 'every id once');
    t.true(maxBody < 4 * MiB, `largest message body ${maxBody}`);
    const growth = peak - baseline;
    t.log(
      `ingest ${rows} rows (${((rows * (8 + dim * 4)) / MiB).toFixed(0)} MiB) over DoPut in ${(ingestMs / 1000).toFixed(1)} s; ` +
        `DoGet ${(bytes / MiB).toFixed(0)} MiB in ${(ms / 1000).toFixed(1)} s incl. a 2 s pause; server RSS ${(baseline / MiB).toFixed(0)} MiB before, ` +
        `peak +${(growth / MiB).toFixed(0)} MiB during the stream (+${((pausedPeak - baseline) / MiB).toFixed(0)} MiB by the end of the pause); largest body ${(maxBody / MiB).toFixed(2)} MiB`,
    );
    t.true(growth < 200 * MiB, `server memory grew by ${(growth / MiB).toFixed(0)} MiB while streaming a ${(bytes / MiB).toFixed(0)} MiB result`);
  } finally {
    client.close();
    await server.stop('SIGTERM');
    rmSync(dir, { recursive: true, force: true });
  }
});
