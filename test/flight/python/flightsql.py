"""A small Flight SQL client over pyarrow.flight, for Quiver's tests.

pyarrow ships the Flight client (Arrow C++) but not the Flight SQL command messages; these are
compiled here from the server's own copy of FlightSql.proto / Flight.proto (src/flight/proto) with
grpcio-tools, once, into .venv-flight/gen. Commands are packed into google.protobuf.Any by hand,
as flight-sql.md section 10 describes.
"""
import importlib
import os
import subprocess
import sys

import pyarrow as pa
import pyarrow.flight as flight

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
PROTO_DIR = os.path.join(ROOT, "src", "flight", "proto")
GEN_DIR = os.path.join(ROOT, ".venv-flight", "gen")


def _generate():
    protos = ["Flight.proto", "FlightSql.proto"]
    newest = max(os.path.getmtime(os.path.join(PROTO_DIR, p)) for p in protos)
    done = os.path.join(GEN_DIR, "FlightSql_pb2.py")
    if os.path.exists(done) and os.path.getmtime(done) >= newest:
        return
    os.makedirs(GEN_DIR, exist_ok=True)
    import grpc_tools

    include = os.path.join(os.path.dirname(grpc_tools.__file__), "_proto")
    subprocess.run(
        [sys.executable, "-m", "grpc_tools.protoc", f"-I{PROTO_DIR}", f"-I{include}", f"--python_out={GEN_DIR}", *protos],
        check=True,
    )


_generate()
sys.path.insert(0, GEN_DIR)
sql_pb = importlib.import_module("FlightSql_pb2")
flight_pb = importlib.import_module("Flight_pb2")
from google.protobuf import any_pb2  # noqa: E402


def pack(msg) -> bytes:
    a = any_pb2.Any()
    a.Pack(msg)
    return a.SerializeToString()


def unpack(data: bytes, cls):
    a = any_pb2.Any()
    a.ParseFromString(data)
    out = cls()
    if not a.Unpack(out):
        raise AssertionError(f"expected {cls.DESCRIPTOR.full_name}, got {a.type_url}")
    return out


def read_ipc_schema(data: bytes) -> pa.Schema:
    return pa.ipc.read_schema(pa.py_buffer(data))


class FlightSqlClient:
    def __init__(self, url, user=None, password=None, headers=None, handshake=True, **client_args):
        self.client = flight.FlightClient(url, **client_args)
        self.headers = list(headers or [])
        if user is not None and handshake:
            self.headers.append(self.client.authenticate_basic_token(user, password))

    def options(self, timeout=None):
        return flight.FlightCallOptions(headers=self.headers, timeout=timeout)

    # ---- commands through GetFlightInfo / GetSchema / DoGet
    def descriptor(self, cmd):
        return flight.FlightDescriptor.for_command(pack(cmd) if not isinstance(cmd, (bytes, str)) else cmd)

    def info(self, cmd):
        return self.client.get_flight_info(self.descriptor(cmd), self.options())

    def schema(self, cmd) -> pa.Schema:
        return self.client.get_schema(self.descriptor(cmd), self.options()).schema

    def fetch(self, info) -> pa.Table:
        assert len(info.endpoints) == 1, f"expected one endpoint, got {len(info.endpoints)}"
        return self.client.do_get(info.endpoints[0].ticket, self.options()).read_all()

    def query(self, cmd) -> pa.Table:
        return self.fetch(self.info(cmd))

    def execute(self, sql: str) -> pa.Table:
        return self.query(sql_pb.CommandStatementQuery(query=sql))

    # ---- DoPut
    def _put(self, cmd, table=None, schema=None):
        schema = schema if schema is not None else (table.schema if table is not None else pa.schema([]))
        writer, reader = self.client.do_put(self.descriptor(cmd), schema, self.options())
        if table is not None:
            writer.write_table(table)
        writer.done_writing()
        buf = reader.read()
        writer.close()
        return None if buf is None else buf.to_pybytes()

    def execute_update(self, sql: str) -> int:
        out = self._put(sql_pb.CommandStatementUpdate(query=sql))
        return sql_pb.DoPutUpdateResult.FromString(out).record_count

    def ingest(self, table_name, table, if_not_exist=1, if_exists=2, options=None, **fields) -> int:
        opts = sql_pb.CommandStatementIngest.TableDefinitionOptions(if_not_exist=if_not_exist, if_exists=if_exists)
        cmd = sql_pb.CommandStatementIngest(table_definition_options=opts, table=table_name, options=options or {}, **fields)
        out = self._put(cmd, table)
        return sql_pb.DoPutUpdateResult.FromString(out).record_count

    # ---- prepared statements
    def action(self, type_, body: bytes):
        return list(self.client.do_action(flight.Action(type_, body), self.options()))

    def prepare(self, sql: str):
        results = self.action("CreatePreparedStatement", pack(sql_pb.ActionCreatePreparedStatementRequest(query=sql)))
        assert len(results) == 1
        return unpack(results[0].body.to_pybytes(), sql_pb.ActionCreatePreparedStatementResult)

    def bind(self, handle: bytes, params: pa.Table) -> bytes:
        out = self._put(sql_pb.CommandPreparedStatementQuery(prepared_statement_handle=handle), params)
        if out is None:
            return handle
        result = sql_pb.DoPutPreparedStatementResult.FromString(out)
        return result.prepared_statement_handle if result.HasField("prepared_statement_handle") else handle

    def prepared_query(self, handle: bytes) -> pa.Table:
        return self.query(sql_pb.CommandPreparedStatementQuery(prepared_statement_handle=handle))

    def prepared_update(self, handle: bytes, params: pa.Table = None) -> int:
        out = self._put(sql_pb.CommandPreparedStatementUpdate(prepared_statement_handle=handle), params)
        return sql_pb.DoPutUpdateResult.FromString(out).record_count

    def close_prepared(self, handle: bytes):
        self.action("ClosePreparedStatement", pack(sql_pb.ActionClosePreparedStatementRequest(prepared_statement_handle=handle)))
