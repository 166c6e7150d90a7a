"""pyarrow as a second Flight SQL client for bench/flight.bench.ts (Arrow C++, its own process).

A long-lived worker, so a suite can interleave its operations with others: one command a line on
stdin, one JSON line on stdout when it is done.
  doget <sql>                  DoGet of the statement's result: {"bytes": Arrow bytes, "rows": n}
  ingest <table> <rows> <dim>  CommandStatementIngest of rows (id BIGINT, emb FLOAT4[dim]),
                               the data built before the call and cached by size: {"rows": n}
Run with the interpreter of .venv-flight (test/flight/python/setup-venv.sh), which has the
Flight SQL messages compiled; argv[1] is the server's grpc:// URL.
"""
import json
import os
import sys

import numpy as np
import pyarrow as pa

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "test", "flight", "python"))
from flightsql import FlightSqlClient, sql_pb  # noqa: E402

client = FlightSqlClient(sys.argv[1])
cache = {}


def data(rows: int, dim: int) -> pa.Table:
    if (rows, dim) not in cache:
        rng = np.random.default_rng(rows)
        values = pa.array(rng.random(rows * dim, dtype=np.float32))
        emb = pa.FixedSizeListArray.from_arrays(values, dim)
        table = pa.table({"id": pa.array(np.arange(rows, dtype=np.int64)), "emb": emb})
        # 8192-row record batches, as the grpc-js client sends: one message per batch, each far
        # below the server's 64 MiB limit on an incoming message.
        cache[(rows, dim)] = pa.Table.from_batches(table.to_batches(max_chunksize=8192))
    return cache[(rows, dim)]


for line in sys.stdin:
    cmd, _, rest = line.strip().partition(" ")
    if cmd == "doget":
        t = client.query(sql_pb.CommandStatementQuery(query=rest))
        out = {"bytes": t.nbytes, "rows": t.num_rows}
    elif cmd == "prepare":
        name, rows, dim = rest.split(" ")
        data(int(rows), int(dim))
        out = {"ok": True}
    elif cmd == "ingest":
        name, rows, dim = rest.split(" ")
        out = {"rows": client.ingest(name, data(int(rows), int(dim)))}
    else:
        out = {"error": f"unknown command {cmd}"}
    print(json.dumps(out), flush=True)
