/**
 * `npm run bench:flight`: the Flight SQL server as clients see it, over loopback.
 *
 * The server runs as its own process (`quiver serve`, as users run it); the clients run here.
 * 1. DoPut ingest: ROWS rows (id BIGINT, emb FLOAT4[DIM]) in 8192-row batches through
 *    CommandStatementIngest, 16 batches per DoPut: rows/s and MB/s (Arrow body bytes).
 * 2. DoGet of the whole table (`SELECT id, emb FROM big`, ROWS rows) with a grpc-js client, next
 *    to plain in-process IPC serialization (RecordBatchStreamWriter) of the same batches in the
 *    same run: MB/s of each and the ratio. A pyarrow reader (separate process, Arrow C++) is
 *    timed too when .venv-flight exists (test/flight/python/setup-venv.sh).
 * 3. A small point query (`SELECT id, emb FROM big WHERE id = k`) from 16 concurrent clients,
 *    each on its own channel, GetFlightInfo + DoGet per query: queries/s.
 * benny measures 2 and 3; results go to bench/results/flight.json.
 * Env: ROWS (default 1 000 000), DIM (default 128).
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { add, complete, configure, cycle, suite } from 'benny';
import { type RecordBatch, RecordBatchStreamWriter } from 'apache-arrow';
import { TestFlightClient } from '../test/flight/client.js';
import { startServe, vectorBatch } from '../test/flight/serve-process.js';

const ROWS = Number(process.env.ROWS ?? 1_000_000);
const DIM = Number(process.env.DIM ?? 128);
const MB = 1e6;
const root = fileURLToPath(new URL('../', import.meta.url));

/** benny calls the function it is given once to probe it; the op itself runs on later calls. */
function op(fn: () => Promise<unknown>) {
  let probed = false;
  return () => () => {
    if (!probed) {
      probed = true;
      return Promise.resolve();
    }
    return fn();
  };
}

async function main() {
  const dir = mkdtempSync(join(os.tmpdir(), 'quiver-bench-flight-'));
  const server = await startServe(['--port', '0', '--data', dir]);
  const client = new TestFlightClient(server.url);
  const results: Record<string, unknown> = { rows: ROWS, dim: DIM, machine: `${os.cpus().length} cores, load ${os.loadavg()[0].toFixed(1)}`, node: process.version };
  try {
    // 1. Ingest.
    const bytesPerRow = 8 + DIM * 4;
    let ingested = 0;
    const t0 = performance.now();
    for (let start = 0; start < ROWS; start += 16 * 8192) {
      const batches = [];
      for (let s = start; s < Math.min(ROWS, start + 16 * 8192); s += 8192) batches.push(vectorBatch(s, Math.min(8192, ROWS - s), DIM));
      ingested += await client.ingest('big', batches, { ifNotExist: 1, ifExists: 2 });
    }
    const ingestS = (performance.now() - t0) / 1000;
    const ingest = { rows: ingested, seconds: ingestS, rowsPerSec: ingested / ingestS, mbPerSec: (ingested * bytesPerRow) / MB / ingestS };
    results.ingest = ingest;
    console.log(`DoPut ingest: ${ingested} rows in ${ingestS.toFixed(1)} s = ${ingest.rowsPerSec.toFixed(0)} rows/s, ${ingest.mbPerSec.toFixed(1)} MB/s`);

    // The result batches as the client receives them (also warms the table's read state).
    const batches: RecordBatch[] = [];
    const { ticket: firstTicket } = await client.getFlightInfo('CommandStatementQuery', { query: 'SELECT id, emb FROM big' });
    for await (const b of client.doGet(firstTicket)) batches.push(b);
    let resultBytes = 0;
    for await (const fd of client.doGetRaw((await client.getFlightInfo('CommandStatementQuery', { query: 'SELECT id, emb FROM big' })).ticket)) {
      resultBytes += (fd.header?.length ?? 0) + (fd.body?.length ?? 0);
    }
    console.log(`result: ${batches.length} batches, ${(resultBytes / MB).toFixed(1)} MB of FlightData`);

    // 2. DoGet vs in-process IPC serialization.
    const doget = await suite(
      'flight-doget',
      configure({ minDisplayPrecision: 2 }),
      add(
        'in-process IPC serialization of the same batches (RecordBatchStreamWriter)',
        op(async () => {
          const writer = new RecordBatchStreamWriter();
          for (const b of batches) writer.write(b);
          writer.finish();
          return writer.toUint8Array(true).byteLength;
        }),
        { minSamples: 3, maxTime: 5 },
      ),
      add(
        `DoGet ${ROWS} rows over loopback (GetFlightInfo + DoGet, grpc-js client)`,
        op(async () => {
          const { ticket } = await client.getFlightInfo('CommandStatementQuery', { query: 'SELECT id, emb FROM big' });
          let n = 0;
          for await (const fd of client.doGetRaw(ticket)) n += fd.body?.length ?? 0;
          return n;
        }),
        { minSamples: 3, maxTime: 5 },
      ),
      cycle(),
      complete(),
    );
    const [ipc, flight] = doget.results;
    const ipcMbs = (ipc.ops * resultBytes) / MB;
    const flightMbs = (flight.ops * resultBytes) / MB;
    results.doget = { resultBytes, ipcMbPerSec: ipcMbs, flightMbPerSec: flightMbs, ratio: flightMbs / ipcMbs };
    console.log(`DoGet ${flightMbs.toFixed(0)} MB/s vs in-process IPC ${ipcMbs.toFixed(0)} MB/s: ratio ${(flightMbs / ipcMbs).toFixed(2)}`);

    const python = join(root, '.venv-flight/bin/python');
    if (existsSync(python)) {
      const script = `
import sys, time, pyarrow.flight as fl
sys.path.insert(0, ${JSON.stringify(join(root, 'test/flight/python'))})
from flightsql import FlightSqlClient, sql_pb
c = FlightSqlClient(${JSON.stringify(server.url)})
best = 0
for i in range(3):
    t0 = time.time(); t = c.query(sql_pb.CommandStatementQuery(query='SELECT id, emb FROM big')); dt = time.time() - t0
    best = max(best, t.nbytes / dt / 1e6)
print(best)
`;
      const r = spawnSync(python, ['-c', script], { encoding: 'utf8' });
      if (r.status === 0) {
        const mbs = Number(r.stdout.trim());
        results.dogetPyarrowMbPerSec = mbs;
        console.log(`DoGet with a pyarrow reader (best of 3): ${mbs.toFixed(0)} MB/s`);
      } else console.log(`pyarrow reader failed: ${r.stderr}`);
    }

    // 3. Point queries from 16 concurrent clients.
    const clients = Array.from({ length: 16 }, () => new TestFlightClient(server.url));
    let k = 0;
    const point = await suite(
      'flight-point-query',
      configure({ minDisplayPrecision: 2 }),
      add(
        '16 concurrent clients x 1 point query (GetFlightInfo + DoGet)',
        op(() =>
          Promise.all(
            clients.map(async (c) => {
              const id = (k++ * 7919) % ROWS;
              const table = await c.query(`SELECT id, emb FROM big WHERE id = ${id}`);
              if (table.numRows !== 1) throw new Error(`point query for ${id} returned ${table.numRows} rows`);
            }),
          ),
        ),
        { minSamples: 5, maxTime: 5 },
      ),
      cycle(),
      complete(),
    );
    const qps = point.results[0].ops * 16;
    results.pointQueriesPerSec = qps;
    console.log(`point query, 16 concurrent clients: ${qps.toFixed(0)} queries/s`);
    for (const c of clients) c.close();
  } finally {
    client.close();
    await server.stop('SIGTERM');
    rmSync(dir, { recursive: true, force: true });
  }
  writeFileSync(join(root, 'bench/results/flight.json'), JSON.stringify(results, null, 2) + '\n');
  console.log(JSON.stringify(results, null, 2));
}

await main();
