/**
 * Flight suite (`npm run bench:flight [-- --quick]`, issue 11): the Flight SQL server as clients
 * see it over loopback, against what the same bytes cost without a network.
 *
 * The server runs as its own process (`quiver serve`, as users run it); clients run here and, as
 * a second client of another implementation, in a pyarrow worker process (Arrow C++;
 * bench/lib/pyarrow_client.py, when .venv-flight exists: test/flight/python/setup-venv.sh).
 * 1. DoGet of a ROWS-row result (`SELECT id, emb FROM big`; id BIGINT, emb FLOAT4[128]) with the
 *    grpc-js client and with pyarrow, interleaved with in-process IPC serialization of the same
 *    batches (RecordBatchStreamWriter), the reference: MB/s of each (FlightData bytes / p50).
 * 2. Ingest (DoPut CommandStatementIngest) of INGEST_ROWS rows into a new table, grpc-js client
 *    (8192-row batches, 16 a DoPut) and pyarrow (one DoPut), interleaved: rows/s.
 * 3. A point query from 16 concurrent clients, GetFlightInfo + DoGet each: queries/s.
 */
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type RecordBatch, RecordBatchStreamWriter } from 'apache-arrow';
import { TestFlightClient } from '../test/flight/client.js';
import { startServe, vectorBatch } from '../test/flight/serve-process.js';
import { LineWorker } from './lib/line-worker.js';
import { log } from './lib/machine.js';
import { byMode } from './lib/mode.js';
import { newReport, writeReport } from './lib/report.js';
import { runInterleaved, type Contender } from './lib/rounds.js';

const ROWS = byMode(100_000, 500_000);
const INGEST_ROWS = byMode(32_768, 262_144);
const DIM = 128;
const ROUNDS = byMode(1, 3);
const MAX_TIME = byMode(0.5, 2);
const MB = 1e6;
const root = fileURLToPath(new URL('../', import.meta.url));
const IPC = 'in-process IPC serialization (RecordBatchStreamWriter)';
const DOGET_JS = 'DoGet, grpc-js client';
const DOGET_PY = 'DoGet, pyarrow client';
const QUERY = 'SELECT id, emb FROM big';

const report = newReport('flight', `Flight SQL over loopback (${ROWS.toLocaleString('en-US')} rows × FLOAT4[${DIM}])`, { rows: ROWS, ingestRows: INGEST_ROWS, dim: DIM, rounds: ROUNDS, maxTimePerRound: MAX_TIME });
report.ratioBy = 'throughput';

const dir = mkdtempSync(join(process.env.BENCH_DIR ?? os.tmpdir(), 'quiver-bench-flight-'));
const server = await startServe(['--port', '0', '--data', dir]);
const client = new TestFlightClient(server.url);
const python = join(root, '.venv-flight/bin/python');
const py = existsSync(python) ? new LineWorker(python, [join(root, 'bench/lib/pyarrow_client.py'), server.url]) : undefined;
if (!py) report.skipped.push('pyarrow client: .venv-flight is missing (bash test/flight/python/setup-venv.sh)');

const batchesOf = (start: number, rows: number) => {
  const out: RecordBatch[] = [];
  for (let s = start; s < start + rows; s += 8192) out.push(vectorBatch(s, Math.min(8192, start + rows - s), DIM));
  return out;
};

/** DoPut ingest, 16 batches a call, as the grpc-js client streams a large table. */
async function ingestJs(table: string, batches: RecordBatch[]): Promise<number> {
  let n = 0;
  for (let i = 0; i < batches.length; i += 16) n += await client.ingest(table, batches.slice(i, i + 16), { ifNotExist: 1, ifExists: 2 });
  return n;
}

try {
  await ingestJs('big', batchesOf(0, ROWS));
  // The result as the client receives it, and its size on the wire.
  const batches: RecordBatch[] = [];
  const first = await client.getFlightInfo('CommandStatementQuery', { query: QUERY });
  for await (const b of client.doGet(first.ticket)) batches.push(b);
  let resultBytes = 0;
  for await (const fd of client.doGetRaw((await client.getFlightInfo('CommandStatementQuery', { query: QUERY })).ticket)) resultBytes += (fd.header?.length ?? 0) + (fd.body?.length ?? 0);
  log(`result: ${batches.length} batches, ${(resultBytes / MB).toFixed(1)} MB of FlightData`);

  // 1. DoGet vs in-process IPC serialization.
  const doget: Contender[] = [
    {
      name: IPC,
      op: async () => {
        const writer = new RecordBatchStreamWriter();
        for (const b of batches) writer.write(b);
        writer.finish();
        return writer.toUint8Array(true).byteLength;
      },
    },
    {
      name: DOGET_JS,
      op: async () => {
        const { ticket } = await client.getFlightInfo('CommandStatementQuery', { query: QUERY });
        let n = 0;
        for await (const fd of client.doGetRaw(ticket)) n += fd.body?.length ?? 0;
        return n;
      },
    },
    ...(py ? [{ name: DOGET_PY, op: () => py.call(`doget ${QUERY}`) }] : []),
  ];
  const group1 = `DoGet of ${ROWS.toLocaleString('en-US')} rows (${(resultBytes / MB).toFixed(0)} MB)`;
  log(group1);
  for (const t of await runInterleaved(group1, doget, { rounds: ROUNDS, warmup: 1, maxTime: MAX_TIME, minSamples: 3 })) {
    report.measurements.push({ group: group1, contender: t.name, peer: t.name === IPC ? undefined : IPC, latency: t.latency, throughput: { value: resultBytes / MB / (t.latency.p50 / 1000), unit: 'MB/s' } });
  }

  // 2. Ingest through both clients, each op into a new table.
  const ingestBatches = batchesOf(0, INGEST_ROWS);
  if (py) await py.call(`prepare x ${INGEST_ROWS} ${DIM}`);
  const ingest: Contender[] = [
    { name: 'ingest, grpc-js client', op: (i) => ingestJs(`ingest_js_${i}`, ingestBatches) },
    ...(py ? [{ name: 'ingest, pyarrow client', op: (i: number) => py.call(`ingest ingest_py_${i} ${INGEST_ROWS} ${DIM}`) }] : []),
  ];
  const group2 = `DoPut ingest of ${INGEST_ROWS.toLocaleString('en-US')} rows`;
  log(group2);
  for (const t of await runInterleaved(group2, ingest, { rounds: ROUNDS, warmup: 1, fixedOps: 1 })) {
    report.measurements.push({ group: group2, contender: t.name, latency: t.latency, throughput: { value: INGEST_ROWS / (t.latency.p50 / 1000), unit: 'rows/s' }, extra: { 'MB/s': (INGEST_ROWS * (8 + 4 * DIM)) / MB / (t.latency.p50 / 1000) } });
  }

  // 3. Point queries from 16 concurrent clients.
  const clients = Array.from({ length: 16 }, () => new TestFlightClient(server.url));
  let k = 0;
  const group3 = 'point query, 16 concurrent clients';
  log(group3);
  const [point] = await runInterleaved(group3, [
    {
      name: '16 × (GetFlightInfo + DoGet of WHERE id = k)',
      op: () =>
        Promise.all(
          clients.map(async (c) => {
            const id = (k++ * 7919) % ROWS;
            const table = await c.query(`SELECT id, emb FROM big WHERE id = ${id}`);
            if (table.numRows !== 1) throw new Error(`point query for ${id} returned ${table.numRows} rows`);
          }),
        ),
    },
  ], { rounds: 1, warmup: 1, maxTime: MAX_TIME, minSamples: 5 });
  report.measurements.push({ group: group3, contender: point.name, latency: point.latency, throughput: { value: (16 * 1000) / point.latency.p50, unit: 'queries/s' } });
  for (const c of clients) c.close();

  // Target: DoGet ≥ 50 % of in-process IPC serialization.
  const mbs = (name: string) => report.measurements.find((m) => m.contender === name)?.throughput?.value ?? NaN;
  for (const reader of [DOGET_JS, ...(py ? [DOGET_PY] : [])]) {
    const ratio = mbs(reader) / mbs(IPC);
    report.targets.push({ target: `${reader}: ≥ 50 % of in-process IPC serialization`, measured: `${mbs(reader).toFixed(0)} vs ${mbs(IPC).toFixed(0)} MB/s = ${(ratio * 100).toFixed(0)} %`, ratio, met: ratio >= 0.5 });
  }
  report.notes.push('MB/s = FlightData bytes of the result / p50 of one whole DoGet (GetFlightInfo included) or one serialization. Speedup = throughput over in-process IPC serialization (1.0 = as fast as not using a network at all).');
} finally {
  py?.close();
  client.close();
  await server.stop('SIGTERM');
  rmSync(dir, { recursive: true, force: true });
}
await writeReport(report, [{ kind: 'bars', metric: 'throughput', title: report.title, measurements: report.measurements }]);
