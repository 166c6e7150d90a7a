"""pyarrow.flight (Arrow C++ Flight client) against a running Quiver Flight SQL server.

Run by test/flight/pyarrow.test.ts, which starts the servers and reads the JSON this script
prints: {test name: {"ok": bool, "error": str}}. Usage:

  test_flight_sql.py --url grpc://127.0.0.1:P --auth-url grpc://127.0.0.1:Q [--only name,...]
  test_flight_sql.py --list

The auth server has users alice/alice-pw and bob/bob-pw and a token lifetime of TOKEN_TTL_S.

Tests named scenario_* port the steps of Arrow's official integration scenarios (flight_sql,
flight_sql:extension, flight_sql:ingestion; cpp/src/arrow/flight/integration_tests) to Quiver:
the same calls in the same order with the same arguments and the same schema checks
(check_metadata=True); where the mock server returns fixed values (update counts 10000/20000,
SqlInfo values, transactions), the test checks what Quiver answers instead.
"""
import argparse
import json
import sys
import threading
import time
import traceback

import numpy as np
import pyarrow as pa
import pyarrow.flight as flight

from flightsql import FlightSqlClient, flight_pb, pack, read_ipc_schema, sql_pb, unpack

TOKEN_TTL_S = 3.0
TESTS = []


def test(fn):
    TESTS.append(fn)
    return fn


# ---- the exact result schemas of FlightSql.proto (as the C++ reference server builds them)
U = pa.utf8()
CATALOGS = pa.schema([pa.field("catalog_name", U, False)])
DB_SCHEMAS = pa.schema([pa.field("catalog_name", U), pa.field("db_schema_name", U, False)])
TABLES = pa.schema([pa.field("catalog_name", U), pa.field("db_schema_name", U), pa.field("table_name", U, False), pa.field("table_type", U, False)])
TABLES_WITH_SCHEMA = pa.schema(list(TABLES) + [pa.field("table_schema", pa.binary(), False)])
TABLE_TYPES = pa.schema([pa.field("table_type", U, False)])
PRIMARY_KEYS = pa.schema(
    [
        pa.field("catalog_name", U),
        pa.field("db_schema_name", U),
        pa.field("table_name", U, False),
        pa.field("column_name", U, False),
        pa.field("key_sequence", pa.int32(), False),
        pa.field("key_name", U),
    ]
)
KEYS = pa.schema(
    [
        pa.field("pk_catalog_name", U),
        pa.field("pk_db_schema_name", U),
        pa.field("pk_table_name", U, False),
        pa.field("pk_column_name", U, False),
        pa.field("fk_catalog_name", U),
        pa.field("fk_db_schema_name", U),
        pa.field("fk_table_name", U, False),
        pa.field("fk_column_name", U, False),
        pa.field("key_sequence", pa.int32(), False),
        pa.field("fk_key_name", U),
        pa.field("pk_key_name", U),
        pa.field("update_rule", pa.uint8(), False),
        pa.field("delete_rule", pa.uint8(), False),
    ]
)
XDBC = pa.schema(
    [
        pa.field("type_name", U, False),
        pa.field("data_type", pa.int32(), False),
        pa.field("column_size", pa.int32()),
        pa.field("literal_prefix", U),
        pa.field("literal_suffix", U),
        pa.field("create_params", pa.list_(pa.field("item", U, False))),
        pa.field("nullable", pa.int32(), False),
        pa.field("case_sensitive", pa.bool_(), False),
        pa.field("searchable", pa.int32(), False),
        pa.field("unsigned_attribute", pa.bool_()),
        pa.field("fixed_prec_scale", pa.bool_(), False),
        pa.field("auto_increment", pa.bool_()),
        pa.field("local_type_name", U),
        pa.field("minimum_scale", pa.int32()),
        pa.field("maximum_scale", pa.int32()),
        pa.field("sql_data_type", pa.int32(), False),
        pa.field("datetime_subcode", pa.int32()),
        pa.field("num_prec_radix", pa.int32()),
        pa.field("interval_precision", pa.int32()),
    ]
)
SQL_INFO = pa.schema(
    [
        pa.field("info_name", pa.uint32(), False),
        pa.field(
            "value",
            pa.dense_union(
                [
                    pa.field("string_value", U, False),
                    pa.field("bool_value", pa.bool_(), False),
                    pa.field("bigint_value", pa.int64(), False),
                    pa.field("int32_bitmask", pa.int32(), False),
                    pa.field("string_list", pa.list_(U), False),
                    pa.field("int32_to_int32_list_map", pa.map_(pa.int32(), pa.list_(pa.int32())), False),
                ]
            ),
            False,
        ),
    ]
)

CODES = {
    "CANCELLED": (1, "cancel"),
    "INVALID_ARGUMENT": (3, "invalid argument"),
    "NOT_FOUND": (5, "not found"),
    "ALREADY_EXISTS": (6, "already exists"),
    "UNIMPLEMENTED": (12, "unimplemented"),
    "INTERNAL": (13, "internal"),
    "UNAVAILABLE": (14, "unavailable"),
    "UNAUTHENTICATED": (16, "unauthenticated"),
}


def expect_error(code, fn, *args, contains=None):
    try:
        fn(*args)
    except Exception as e:  # noqa: BLE001
        text = str(e)
        number, phrase = CODES[code]
        if code == "UNAUTHENTICATED" and isinstance(e, flight.FlightUnauthenticatedError):
            pass
        elif code == "CANCELLED" and isinstance(e, flight.FlightCancelledError):
            pass
        elif phrase not in text.lower() and f"grpc_status:{number}" not in text:
            raise AssertionError(f"expected {code}, got {type(e).__name__}: {text}")
        if contains and contains not in text:
            raise AssertionError(f"expected {contains!r} in the message: {text}")
        if "Traceback" in text or "    at " in text:
            raise AssertionError(f"the error carries a stack trace: {text}")
        return text
    raise AssertionError(f"expected {code}, the call succeeded")


def eq(actual, expected, what=""):
    if actual != expected:
        raise AssertionError(f"{what}: expected {expected!r}, got {actual!r}")


def same_schema(actual: pa.Schema, expected: pa.Schema, what):
    if not actual.equals(expected, check_metadata=True):
        raise AssertionError(f"{what}: schema differs\nexpected:\n{expected}\nactual:\n{actual}")


def check_command(c, cmd, expected_schema, what):
    """GetFlightInfo -> one endpoint, no locations, the schema; DoGet schema; GetSchema."""
    info = c.info(cmd)
    eq(len(info.endpoints), 1, f"{what} endpoints")
    eq(list(info.endpoints[0].locations), [], f"{what} locations")
    same_schema(info.schema, expected_schema, f"{what} FlightInfo.schema")
    reader = c.client.do_get(info.endpoints[0].ticket, c.options())
    table = reader.read_all()
    same_schema(table.schema, expected_schema, f"{what} DoGet schema")
    same_schema(c.schema(cmd), expected_schema, f"{what} GetSchema")
    return table


class Ctx:
    def __init__(self, url, auth_url):
        self.url = url
        self.auth_url = auth_url
        self.c = FlightSqlClient(url)


# ================================================================ handshake and basics
@test
def handshake_without_auth_returns_token(ctx):
    # Some clients always handshake; with authentication off the server still answers a token.
    client = flight.FlightClient(ctx.url)
    header = client.authenticate_basic_token("anyone", "anything")
    eq(header[0], b"authorization", "header name")
    assert header[1].startswith(b"Bearer ") and len(header[1]) > 20, header
    # The token is accepted on later calls.
    FlightSqlClient(ctx.url, headers=[header]).execute("SELECT 1 AS one")


@test
def statement_query_and_get_schema(ctx):
    c = ctx.c
    eq(c.execute_update("CREATE TABLE q1 (id BIGINT PRIMARY KEY, v INT, s TEXT)"), 1, "create count")
    eq(c.execute_update("INSERT INTO q1 VALUES (1, 10, 'a'), (2, 20, NULL), (3, 30, 'c')"), 3, "insert count")
    cmd = sql_pb.CommandStatementQuery(query="SELECT id, v, s FROM q1 ORDER BY id")
    info = c.info(cmd)
    eq(len(info.endpoints), 1, "endpoints")
    eq(list(info.endpoints[0].locations), [], "locations")
    eq(info.total_records, -1, "total_records")
    assert len(info.schema) == 3
    table = c.fetch(info)
    eq(table.to_pylist(), [{"id": 1, "v": 10, "s": "a"}, {"id": 2, "v": 20, "s": None}, {"id": 3, "v": 30, "s": "c"}], "rows")
    eq([f.type for f in table.schema], [pa.int64(), pa.int32(), pa.utf8()], "types")
    same_schema(c.schema(cmd), info.schema, "GetSchema = FlightInfo.schema")
    same_schema(table.schema, info.schema, "DoGet schema = FlightInfo.schema")
    eq(table.schema.field("s").metadata[b"ARROW:FLIGHT:SQL:TYPE_NAME"], b"TEXT", "TYPE_NAME metadata")


@test
def update_ddl_and_dml_counts(ctx):
    c = ctx.c
    eq(c.execute_update("CREATE TABLE u1 (id BIGINT PRIMARY KEY, v INT)"), 1, "create")
    eq(c.execute_update("INSERT INTO u1 VALUES (1, 1), (2, 2), (3, 3), (4, 4)"), 4, "insert")
    eq(c.execute_update("DELETE FROM u1 WHERE id > 2"), 2, "delete")
    eq(c.execute("SELECT count(*) AS n FROM u1").to_pylist(), [{"n": 2}], "rows left")
    eq(c.execute_update("DROP TABLE u1"), 1, "drop")
    expect_error("NOT_FOUND", c.execute, "SELECT * FROM u1")


@test
def raw_sql_descriptor(ctx):
    # Some clients put the SQL text itself in FlightDescriptor.cmd.
    c = ctx.c
    c.execute_update("CREATE TABLE raw1 (id BIGINT PRIMARY KEY)")
    c.execute_update("INSERT INTO raw1 VALUES (7), (8)")
    table = c.query(b"SELECT id FROM raw1 ORDER BY id")
    eq(table.column("id").to_pylist(), [7, 8], "raw SQL rows")
    eq(c.client.get_schema(flight.FlightDescriptor.for_command(b"SELECT id FROM raw1"), c.options()).schema.names, ["id"], "raw GetSchema")


@test
def json_ticket(ctx):
    # InfluxDB 3's ticket: DoGet with no GetFlightInfo; any database name is Quiver's catalog.
    c = ctx.c
    c.execute_update("CREATE TABLE js1 (id BIGINT PRIMARY KEY, name TEXT)")
    c.execute_update("INSERT INTO js1 VALUES (1, 'x'), (2, 'y')")
    ticket = json.dumps({"database": "whatever", "sql_query": "SELECT * FROM js1 ORDER BY id", "query_type": "sql"}).encode()
    table = c.client.do_get(flight.Ticket(ticket), c.options()).read_all()
    eq(table.to_pylist(), [{"id": 1, "name": "x"}, {"id": 2, "name": "y"}], "rows")
    named = json.dumps({"database": "db", "sql_query": "SELECT name FROM js1 WHERE id = $id", "query_type": "sql", "params": {"id": 2}}).encode()
    eq(c.client.do_get(flight.Ticket(named), c.options()).read_all().to_pylist(), [{"name": "y"}], "named params")
    expect_error("INVALID_ARGUMENT", lambda: c.client.do_get(flight.Ticket(b'{"database":"d","sql_query":"SELECT 1","query_type":"influxql"}'), c.options()).read_all())


@test
def list_actions(ctx):
    names = {a.type for a in ctx.c.client.list_actions(ctx.c.options())}
    for name in ["CreatePreparedStatement", "ClosePreparedStatement", "CancelFlightInfo"]:
        assert name in names, names


# ================================================================ metadata commands
@test
def metadata_commands_exact_schemas(ctx):
    c = ctx.c
    c.execute_update("CREATE TABLE meta_a (id BIGINT PRIMARY KEY, name TEXT, emb FLOAT4[3])")
    c.execute_update("CREATE TABLE meta_b (k1 TEXT, k2 INT, v DOUBLE, PRIMARY KEY (k1, k2))")
    eq(check_command(c, sql_pb.CommandGetCatalogs(), CATALOGS, "GetCatalogs").to_pylist(), [{"catalog_name": "quiver"}], "catalogs")
    eq(
        check_command(c, sql_pb.CommandGetDbSchemas(), DB_SCHEMAS, "GetDbSchemas").to_pylist(),
        [{"catalog_name": "quiver", "db_schema_name": "public"}],
        "schemas",
    )
    eq(check_command(c, sql_pb.CommandGetDbSchemas(catalog="other"), DB_SCHEMAS, "GetDbSchemas other").num_rows, 0, "other catalog")
    eq(check_command(c, sql_pb.CommandGetDbSchemas(db_schema_filter_pattern="pub%"), DB_SCHEMAS, "pattern").num_rows, 1, "pattern")
    tables = check_command(c, sql_pb.CommandGetTables(table_name_filter_pattern="meta\\_%"), TABLES, "GetTables")
    eq(tables.to_pylist(), [
        {"catalog_name": "quiver", "db_schema_name": "public", "table_name": "meta_a", "table_type": "TABLE"},
        {"catalog_name": "quiver", "db_schema_name": "public", "table_name": "meta_b", "table_type": "TABLE"},
    ], "tables")
    with_schema = check_command(c, sql_pb.CommandGetTables(table_name_filter_pattern="meta_a", include_schema=True), TABLES_WITH_SCHEMA, "GetTables include_schema")
    eq(with_schema.num_rows, 1, "one table")
    ts = read_ipc_schema(with_schema.column("table_schema")[0].as_py())
    eq(ts.names, ["id", "name", "emb"], "table_schema names")
    eq(ts.field("emb").type, pa.list_(pa.field("item", pa.float32(), True), 3), "vector type")
    md = ts.field("name").metadata
    eq(md[b"ARROW:FLIGHT:SQL:TABLE_NAME"], b"meta_a", "TABLE_NAME")
    eq(md[b"ARROW:FLIGHT:SQL:SCHEMA_NAME"], b"public", "SCHEMA_NAME")
    eq(md[b"ARROW:FLIGHT:SQL:CATALOG_NAME"], b"quiver", "CATALOG_NAME")
    eq(md[b"ARROW:FLIGHT:SQL:TYPE_NAME"], b"TEXT", "TYPE_NAME")
    eq(check_command(c, sql_pb.CommandGetTables(table_types=["VIEW"]), TABLES, "views").num_rows, 0, "no views")
    eq(check_command(c, sql_pb.CommandGetTableTypes(), TABLE_TYPES, "GetTableTypes").to_pylist(), [{"table_type": "TABLE"}], "types")
    pk = check_command(c, sql_pb.CommandGetPrimaryKeys(table="meta_b"), PRIMARY_KEYS, "GetPrimaryKeys")
    eq([(r["column_name"], r["key_sequence"]) for r in pk.to_pylist()], [("k1", 1), ("k2", 2)], "composite key")
    eq(check_command(c, sql_pb.CommandGetPrimaryKeys(table="nope"), PRIMARY_KEYS, "pk of missing table").num_rows, 0, "missing")
    eq(check_command(c, sql_pb.CommandGetExportedKeys(table="meta_a"), KEYS, "GetExportedKeys").num_rows, 0, "exported")
    eq(check_command(c, sql_pb.CommandGetImportedKeys(table="meta_a"), KEYS, "GetImportedKeys").num_rows, 0, "imported")
    eq(check_command(c, sql_pb.CommandGetCrossReference(pk_table="meta_a", fk_table="meta_b"), KEYS, "GetCrossReference").num_rows, 0, "xref")
    xdbc = check_command(c, sql_pb.CommandGetXdbcTypeInfo(), XDBC, "GetXdbcTypeInfo")
    assert "BIGINT" in xdbc.column("type_name").to_pylist()
    eq(check_command(c, sql_pb.CommandGetXdbcTypeInfo(data_type=-5), XDBC, "xdbc filter").column("type_name").to_pylist(), ["BIGINT"], "filter")


@test
def sql_info_values(ctx):
    c = ctx.c
    table = check_command(c, sql_pb.CommandGetSqlInfo(info=[0, 1, 2, 3, 4, 8, 9, 10, 504, 508]), SQL_INFO, "GetSqlInfo")
    values = {row["info_name"]: row["value"] for row in table.to_pylist()}
    eq(values[0], "Quiver", "server name")
    assert isinstance(values[1], str) and values[1], values
    eq(values[2], pa.__version__ and values[2], "arrow version present")
    eq(values[3], False, "read only")
    eq(values[4], True, "sql")
    eq(values[8], 0, "transactions: none")
    eq(values[9], True, "cancel")
    eq(values[10], True, "bulk ingestion")
    eq(values[504], '"', "quote char")
    assert isinstance(values[508], list) and "MATCH" in values[508], values[508]
    everything = c.query(sql_pb.CommandGetSqlInfo())
    assert everything.num_rows > 50, everything.num_rows
    type_codes = everything.column("value").chunk(0).type_codes.to_pylist()
    assert set(type_codes) <= {0, 1, 2, 3, 4}, set(type_codes)


# ================================================================ prepared statements
@test
def prepared_statement_with_parameters(ctx):
    c = ctx.c
    c.execute_update("CREATE TABLE p1 (id BIGINT PRIMARY KEY, v INT, s TEXT)")
    c.execute_update("INSERT INTO p1 VALUES (1, 10, 'a'), (2, 20, 'b'), (3, 30, 'c')")
    prepared = c.prepare("SELECT id, s FROM p1 WHERE id = $1")
    eq(prepared.is_update, False, "is_update")
    eq(read_ipc_schema(prepared.dataset_schema).names, ["id", "s"], "dataset schema")
    eq(read_ipc_schema(prepared.parameter_schema).names, ["$1"], "parameter schema")
    handle = c.bind(prepared.prepared_statement_handle, pa.table({"p": pa.array([2], pa.int64())}))
    eq(c.prepared_query(handle).to_pylist(), [{"id": 2, "s": "b"}], "bound query")
    # Binding again with another value; the first bound handle keeps its value.
    handle3 = c.bind(prepared.prepared_statement_handle, pa.table({"p": pa.array([3], pa.int64())}))
    eq(c.prepared_query(handle3).to_pylist(), [{"id": 3, "s": "c"}], "rebound")
    eq(c.prepared_query(handle).to_pylist(), [{"id": 2, "s": "b"}], "first binding kept")
    # Several parameter sets: the results are concatenated.
    many = c.bind(prepared.prepared_statement_handle, pa.table({"p": pa.array([1, 3], pa.int64())}))
    eq(sorted(r["id"] for r in c.prepared_query(many).to_pylist()), [1, 3], "two parameter sets")
    c.close_prepared(prepared.prepared_statement_handle)
    expect_error("NOT_FOUND", c.prepared_query, prepared.prepared_statement_handle)
    expect_error("NOT_FOUND", c.prepared_query, handle)


@test
def every_query_as_prepared_statement(ctx):
    # Clients that prepare even ad-hoc SQL: Create -> GetFlightInfo(handle) -> DoGet -> Close, no bind.
    c = ctx.c
    c.execute_update("CREATE TABLE p2 (id BIGINT PRIMARY KEY)")
    c.execute_update("INSERT INTO p2 VALUES (1), (2)")
    prepared = c.prepare("SELECT count(*) AS n FROM p2")
    eq(c.prepared_query(prepared.prepared_statement_handle).to_pylist(), [{"n": 2}], "rows")
    c.close_prepared(prepared.prepared_statement_handle)
    c.close_prepared(prepared.prepared_statement_handle)  # closing twice is fine


@test
def prepared_update_with_parameter_batch(ctx):
    c = ctx.c
    c.execute_update("CREATE TABLE p3 (id BIGINT PRIMARY KEY, v INT, s TEXT)")
    prepared = c.prepare("INSERT INTO p3 VALUES ($1, $2, $3)")
    eq(prepared.is_update, True, "is_update")
    params = pa.table({"a": pa.array([1, 2, 3], pa.int64()), "b": pa.array([10, None, 30], pa.int32()), "c": pa.array(["x", "y", None])})
    eq(c.prepared_update(prepared.prepared_statement_handle, params), 3, "rows inserted")
    eq(c.execute("SELECT * FROM p3 ORDER BY id").to_pylist(), [
        {"id": 1, "v": 10, "s": "x"}, {"id": 2, "v": None, "s": "y"}, {"id": 3, "v": 30, "s": None},
    ], "rows")
    delete = c.prepare("DELETE FROM p3 WHERE id = $1")
    eq(c.prepared_update(delete.prepared_statement_handle, pa.table({"a": pa.array([1, 3], pa.int64())})), 2, "deleted")
    c.close_prepared(prepared.prepared_statement_handle)


@test
def vector_knn_with_vector_parameter(ctx):
    c = ctx.c
    rng = np.random.default_rng(7)
    n, dim = 500, 8
    vectors = rng.standard_normal((n, dim)).astype(np.float32)
    c.execute_update(f"CREATE TABLE vec1 (id BIGINT PRIMARY KEY, emb FLOAT4[{dim}])")
    emb = pa.FixedSizeListArray.from_arrays(pa.array(vectors.reshape(-1)), dim)
    eq(c.ingest("vec1", pa.table({"id": pa.array(np.arange(n), pa.int64()), "emb": emb}), if_not_exist=2, if_exists=2), n, "ingested")
    query = rng.standard_normal(dim).astype(np.float32)
    prepared = c.prepare("SELECT id, l2_distance(emb, $1) AS d FROM vec1 ORDER BY l2_distance(emb, $1) LIMIT 5")
    qvec = pa.FixedSizeListArray.from_arrays(pa.array(query), dim)
    handle = c.bind(prepared.prepared_statement_handle, pa.table({"q": qvec}))
    result = c.prepared_query(handle).to_pylist()
    expected = np.argsort(((vectors - query) ** 2).sum(axis=1))[:5].tolist()
    eq([r["id"] for r in result], expected, "nearest neighbours")
    d0 = float(((vectors[expected[0]] - query) ** 2).sum())
    assert abs(result[0]["d"] - d0) < 1e-3 * max(1, d0), (result[0]["d"], d0)


@test
def full_text_search(ctx):
    c = ctx.c
    c.execute_update("CREATE TABLE fts1 (id BIGINT PRIMARY KEY, body TEXT)")
    c.execute_update("INSERT INTO fts1 VALUES (1, 'the quick brown fox'), (2, 'lazy dog sleeps'), (3, 'fox and dog')")
    c.execute_update("CREATE INDEX ON fts1 USING fts (body)")
    rows = c.execute("SELECT id FROM fts1 WHERE match(body, 'fox') ORDER BY _score DESC LIMIT 10").to_pylist()
    eq(sorted(r["id"] for r in rows), [1, 3], "matches")


# ================================================================ ingest
@test
def ingest_create_append_replace(ctx):
    c = ctx.c
    batch = pa.table({"id": pa.array([1, 2, 3], pa.int64()), "name": pa.array(["a", "b", "c"]).dictionary_encode()})
    eq(c.ingest("ing1", batch, if_not_exist=1, if_exists=1), 3, "create")
    expect_error("ALREADY_EXISTS", c.ingest, "ing1", batch, 1, 1)
    more = pa.table({"id": pa.array([4, 5], pa.int64()), "name": pa.array(["d", "e"])})
    eq(c.ingest("ing1", more, if_not_exist=2, if_exists=2), 2, "append")
    out = c.execute("SELECT * FROM ing1 ORDER BY id")
    eq(out.column("name").to_pylist(), ["a", "b", "c", "d", "e"], "appended rows")
    eq(out.schema.field("name").type, pa.utf8(), "strings come back as plain Utf8")
    replaced = pa.table({"id": pa.array([9], pa.int64()), "x": pa.array([1.5])})
    eq(c.ingest("ing1", replaced, if_not_exist=2, if_exists=3), 1, "replace")
    eq(c.execute("SELECT * FROM ing1").to_pylist(), [{"id": 9, "x": 1.5}], "replaced table")
    expect_error("NOT_FOUND", c.ingest, "ing_missing", batch, 2, 2)
    expect_error("INVALID_ARGUMENT", c.ingest, "ing2", batch, 0, 2)
    expect_error("INVALID_ARGUMENT", c.ingest, "ing2", batch, 1, 0)
    # primary_key option
    two = pa.table({"a": pa.array([1, 1], pa.int64()), "b": pa.array([1, 2], pa.int64()), "v": pa.array(["p", "q"])})
    eq(c.ingest("ing3", two, if_not_exist=1, if_exists=1, options={"primary_key": "a,b"}), 2, "composite")
    pk = c.query(sql_pb.CommandGetPrimaryKeys(table="ing3")).column("column_name").to_pylist()
    eq(pk, ["a", "b"], "primary key from options")


@test
def ingest_many_batches_and_large_messages(ctx):
    c = ctx.c
    rng = np.random.default_rng(1)
    n, dim = 20000, 64
    vectors = rng.standard_normal((n, dim)).astype(np.float32)
    table = pa.table({"id": pa.array(np.arange(n), pa.int64()), "emb": pa.FixedSizeListArray.from_arrays(pa.array(vectors.reshape(-1)), dim)})
    # Several batches in one DoPut, one of them ~5 MB (over 4 MiB; the server accepts up to 64 MiB).
    eq(c.ingest("big1", table.combine_chunks(), if_not_exist=1, if_exists=1), n, "rows")
    out = c.execute("SELECT id, emb FROM big1 ORDER BY id")
    eq(out.num_rows, n, "rows back")
    got = np.asarray(out.column("emb").combine_chunks().flatten()).reshape(n, dim)
    assert np.array_equal(got, vectors), "vectors round-trip"


# ================================================================ errors
@test
def errors_have_the_right_codes(ctx):
    c = ctx.c
    msg = expect_error("INVALID_ARGUMENT", c.execute, "SELEC 1", contains="syntax error")
    assert "at " not in msg.split("syntax error")[0][-5:], msg
    expect_error("NOT_FOUND", c.execute, "SELECT * FROM no_such_table")
    expect_error("INVALID_ARGUMENT", c.execute, "SELECT no_col FROM q1")
    c.execute_update("CREATE TABLE err1 (id BIGINT PRIMARY KEY)")
    expect_error("ALREADY_EXISTS", c.execute_update, "CREATE TABLE err1 (id BIGINT PRIMARY KEY)")
    expect_error("UNIMPLEMENTED", c.action, "BeginTransaction", pack(sql_pb.ActionBeginTransactionRequest()))
    expect_error("UNIMPLEMENTED", c.action, "NoSuchAction", b"")
    expect_error("UNIMPLEMENTED", c.info, sql_pb.CommandStatementSubstraitPlan(plan=sql_pb.SubstraitPlan(plan=b"x", version="1")))
    expect_error("INVALID_ARGUMENT", lambda: c.client.do_get(flight.Ticket(b"garbage-ticket"), c.options()).read_all())
    expect_error("NOT_FOUND", lambda: c.client.do_get(flight.Ticket(pack(sql_pb.TicketStatementQuery(statement_handle=b"nope"))), c.options()).read_all())
    expect_error("INVALID_ARGUMENT", c.query, sql_pb.CommandStatementQuery(query="SELECT 1", transaction_id=b"t1"))
    # A bad write leaves the table unchanged.
    c.execute_update("INSERT INTO err1 VALUES (1)")
    expect_error("INVALID_ARGUMENT", c.execute_update, "INSERT INTO err1 VALUES ('not a number')")
    eq(c.execute("SELECT id FROM err1").to_pylist(), [{"id": 1}], "unchanged")


@test
def cancel_flight_info(ctx):
    c = ctx.c
    c.execute_update("CREATE TABLE can1 (id BIGINT PRIMARY KEY)")
    c.execute_update("INSERT INTO can1 VALUES (1), (2)")
    info = c.info(sql_pb.CommandStatementQuery(query="SELECT * FROM can1"))
    req = flight_pb.CancelFlightInfoRequest(info=flight_pb.FlightInfo.FromString(info.serialize()))
    results = c.action("CancelFlightInfo", req.SerializeToString())
    eq(flight_pb.CancelFlightInfoResult.FromString(results[0].body.to_pybytes()).status, flight_pb.CANCEL_STATUS_CANCELLED, "status")
    expect_error("CANCELLED", c.fetch, info)
    # The deprecated CancelQuery action answers too.
    info2 = c.info(sql_pb.CommandStatementQuery(query="SELECT * FROM can1"))
    res = c.action("CancelQuery", pack(sql_pb.ActionCancelQueryRequest(info=info2.serialize())))
    eq(unpack(res[0].body.to_pybytes(), sql_pb.ActionCancelQueryResult).result, sql_pb.ActionCancelQueryResult.CANCEL_RESULT_CANCELLED, "cancel query")


@test
def renew_flight_endpoint(ctx):
    c = ctx.c
    info = c.info(sql_pb.CommandStatementQuery(query="SELECT 1 AS x"))
    ep = flight_pb.FlightInfo.FromString(info.serialize()).endpoint[0]
    res = c.action("RenewFlightEndpoint", flight_pb.RenewFlightEndpointRequest(endpoint=ep).SerializeToString())
    renewed = flight_pb.FlightEndpoint.FromString(res[0].body.to_pybytes())
    assert renewed.expiration_time.seconds > time.time(), renewed


# ================================================================ authentication (the auth server)
def auth_client(ctx, user, password):
    return FlightSqlClient(ctx.auth_url, user=user, password=password)


@test
def auth_handshake_bearer_and_basic(ctx):
    alice = auth_client(ctx, "alice", "alice-pw")
    eq(alice.headers[0][0], b"authorization", "bearer header")
    alice.execute_update("CREATE TABLE auth1 (id BIGINT PRIMARY KEY, v INT)")
    alice.execute_update("INSERT INTO auth1 VALUES (1, 1), (2, 2)")
    eq(alice.execute("SELECT count(*) AS n FROM auth1").to_pylist(), [{"n": 2}], "alice reads")
    # Basic credentials on every call, no handshake.
    import base64

    basic = [(b"authorization", b"Basic " + base64.b64encode(b"bob:bob-pw"))]
    bob = FlightSqlClient(ctx.auth_url, headers=basic)
    eq(bob.execute("SELECT count(*) AS n FROM auth1").to_pylist(), [{"n": 2}], "basic on every call")


@test
def auth_rejections(ctx):
    alice = auth_client(ctx, "alice", "alice-pw")
    alice.execute_update("CREATE TABLE auth2 (id BIGINT PRIMARY KEY)")
    alice.execute_update("INSERT INTO auth2 VALUES (1)")
    expect_error("UNAUTHENTICATED", lambda: flight.FlightClient(ctx.auth_url).authenticate_basic_token("alice", "wrong"))
    expect_error("UNAUTHENTICATED", lambda: flight.FlightClient(ctx.auth_url).authenticate_basic_token("mallory", "x"))
    anonymous = FlightSqlClient(ctx.auth_url)
    expect_error("UNAUTHENTICATED", anonymous.execute, "SELECT * FROM auth2")
    expect_error("UNAUTHENTICATED", anonymous.execute_update, "DELETE FROM auth2")
    expect_error("UNAUTHENTICATED", anonymous.ingest, "auth2", pa.table({"id": pa.array([5], pa.int64())}), 2, 2)
    expect_error("UNAUTHENTICATED", lambda: list(anonymous.client.list_actions(anonymous.options())))
    wrong = FlightSqlClient(ctx.auth_url, headers=[(b"authorization", b"Bearer not-a-token")])
    expect_error("UNAUTHENTICATED", wrong.execute, "SELECT * FROM auth2")
    expect_error("UNAUTHENTICATED", wrong.execute_update, "DROP TABLE auth2")
    # A ticket is not a capability: redeeming it needs credentials, and the same user's.
    info = alice.info(sql_pb.CommandStatementQuery(query="SELECT * FROM auth2"))
    expect_error("UNAUTHENTICATED", lambda: anonymous.client.do_get(info.endpoints[0].ticket, anonymous.options()).read_all())
    bob = auth_client(ctx, "bob", "bob-pw")
    expect_error("UNAUTHENTICATED", lambda: bob.client.do_get(info.endpoints[0].ticket, bob.options()).read_all(), contains="another user")
    prepared = alice.prepare("SELECT * FROM auth2")
    expect_error("UNAUTHENTICATED", bob.prepared_query, prepared.prepared_statement_handle)
    eq(alice.fetch(info).to_pylist(), [{"id": 1}], "the owner redeems it")
    # Data unchanged by every rejected call.
    eq(alice.execute("SELECT * FROM auth2").to_pylist(), [{"id": 1}], "unchanged")
    eq("auth2" in alice.query(sql_pb.CommandGetTables()).column("table_name").to_pylist(), True, "table still there")


@test
def auth_expired_token(ctx):
    alice = auth_client(ctx, "alice", "alice-pw")
    alice.execute("SELECT 1 AS x")
    time.sleep(TOKEN_TTL_S + 0.5)
    expect_error("UNAUTHENTICATED", alice.execute, "SELECT 1 AS x", contains="expired")
    # A new handshake gives a fresh token.
    auth_client(ctx, "alice", "alice-pw").execute("SELECT 1 AS x")


# ================================================================ official integration scenarios, ported
@test
def scenario_flight_sql(ctx):
    """flight_sql: metadata with the scenario's argument values, statement, update, prepared (SQL)."""
    c = ctx.c
    check_command(c, sql_pb.CommandGetCatalogs(), CATALOGS, "GetCatalogs")
    check_command(c, sql_pb.CommandGetDbSchemas(catalog="catalog", db_schema_filter_pattern="db_schema_filter_pattern"), DB_SCHEMAS, "GetDbSchemas")
    check_command(
        c,
        sql_pb.CommandGetTables(catalog="catalog", db_schema_filter_pattern="db_schema_filter_pattern", table_name_filter_pattern="table_filter_pattern", table_types=["table", "view"], include_schema=True),
        TABLES_WITH_SCHEMA,
        "GetTables include_schema",
    )
    same_schema(c.schema(sql_pb.CommandGetTables(catalog="catalog", include_schema=False)), TABLES, "GetSchema GetTables without schema")
    check_command(c, sql_pb.CommandGetTableTypes(), TABLE_TYPES, "GetTableTypes")
    check_command(c, sql_pb.CommandGetPrimaryKeys(catalog="catalog", db_schema="db_schema", table="table"), PRIMARY_KEYS, "GetPrimaryKeys")
    check_command(c, sql_pb.CommandGetExportedKeys(catalog="catalog", db_schema="db_schema", table="table"), KEYS, "GetExportedKeys")
    check_command(c, sql_pb.CommandGetImportedKeys(catalog="catalog", db_schema="db_schema", table="table"), KEYS, "GetImportedKeys")
    check_command(
        c,
        sql_pb.CommandGetCrossReference(pk_catalog="pk_catalog", pk_db_schema="pk_db_schema", pk_table="pk_table", fk_catalog="fk_catalog", fk_db_schema="fk_db_schema", fk_table="fk_table"),
        KEYS,
        "GetCrossReference",
    )
    check_command(c, sql_pb.CommandGetXdbcTypeInfo(), XDBC, "GetXdbcTypeInfo")
    info = check_command(c, sql_pb.CommandGetSqlInfo(info=[0, 3]), SQL_INFO, "GetSqlInfo").to_pylist()
    eq([r["info_name"] for r in info], [0, 3], "requested ids in order")
    # Statements: the scenario's query schema is one nullable int64 `id`.
    c.execute_update("CREATE TABLE scenario (id BIGINT PRIMARY KEY)")
    eq(c.execute_update("INSERT INTO scenario VALUES (1), (2), (3)"), 3, "ExecuteUpdate count")
    stmt = sql_pb.CommandStatementQuery(query="SELECT id FROM scenario")
    info = c.info(stmt)
    table = c.fetch(info)
    same_schema(table.schema, info.schema, "Execute schema")
    same_schema(c.schema(stmt), info.schema, "GetExecuteSchema")
    eq(table.schema.field("id").type, pa.int64(), "id type")
    # Prepared: Prepare, bind a 1-row batch [1] of the query schema, execute, GetSchema, Close.
    prepared = c.prepare("SELECT id FROM scenario WHERE id = $1")
    handle = c.bind(prepared.prepared_statement_handle, pa.table({"id": pa.array([1], pa.int64())}))
    pinfo = c.info(sql_pb.CommandPreparedStatementQuery(prepared_statement_handle=handle))
    eq(c.fetch(pinfo).to_pylist(), [{"id": 1}], "prepared rows")
    same_schema(c.schema(sql_pb.CommandPreparedStatementQuery(prepared_statement_handle=handle)), pinfo.schema, "prepared GetSchema")
    c.close_prepared(prepared.prepared_statement_handle)
    update = c.prepare("DELETE FROM scenario WHERE id > $1")
    eq(c.prepared_update(update.prepared_statement_handle, pa.table({"id": pa.array([1], pa.int64())})), 2, "prepared ExecuteUpdate")
    c.close_prepared(update.prepared_statement_handle)


@test
def scenario_flight_sql_extension(ctx):
    """flight_sql:extension: SqlInfo 4,5,6,7,8,9,100,101; Substrait; transactions; CancelQuery."""
    c = ctx.c
    table = check_command(c, sql_pb.CommandGetSqlInfo(info=[4, 5, 6, 7, 8, 9, 100, 101]), SQL_INFO, "GetSqlInfo")
    union = table.column("value").chunk(0)
    codes = union.type_codes.to_pylist()
    assert set(codes) <= {0, 1, 2, 3}, codes
    values = {r["info_name"]: r["value"] for r in table.to_pylist()}
    # Quiver: SQL yes, Substrait no (so no Substrait versions), no transactions, cancel yes, no timeouts.
    eq(values, {4: True, 5: False, 8: 0, 9: True, 100: 0, 101: 0}, "extension SqlInfo")
    eq(len(set(table.column("info_name").to_pylist())), table.num_rows, "no duplicate ids")
    plan = sql_pb.SubstraitPlan(plan=b"plan", version="version")
    expect_error("UNIMPLEMENTED", c.info, sql_pb.CommandStatementSubstraitPlan(plan=plan))
    expect_error("UNIMPLEMENTED", c.schema, sql_pb.CommandStatementSubstraitPlan(plan=plan))
    expect_error("UNIMPLEMENTED", c.action, "CreatePreparedSubstraitPlan", pack(sql_pb.ActionCreatePreparedSubstraitPlanRequest(plan=plan)))
    expect_error("UNIMPLEMENTED", c.action, "BeginTransaction", pack(sql_pb.ActionBeginTransactionRequest()))
    expect_error("UNIMPLEMENTED", c.action, "BeginSavepoint", pack(sql_pb.ActionBeginSavepointRequest(transaction_id=b"transaction_id", name="savepoint_name")))
    expect_error("UNIMPLEMENTED", c.action, "EndTransaction", pack(sql_pb.ActionEndTransactionRequest(transaction_id=b"transaction_id", action=1)))
    expect_error("UNIMPLEMENTED", c.action, "EndSavepoint", pack(sql_pb.ActionEndSavepointRequest(savepoint_id=b"savepoint_id", action=1)))
    # Execute, then cancel: one endpoint whose ticket is a TicketStatementQuery; CancelQuery answers CANCELLED.
    info = c.info(sql_pb.CommandStatementQuery(query="SELECT 1 AS x"))
    eq(len(info.endpoints), 1, "one endpoint")
    unpack(info.endpoints[0].ticket.ticket, sql_pb.TicketStatementQuery)
    res = c.action("CancelQuery", pack(sql_pb.ActionCancelQueryRequest(info=info.serialize())))
    eq(unpack(res[0].body.to_pybytes(), sql_pb.ActionCancelQueryResult).result, sql_pb.ActionCancelQueryResult.CANCEL_RESULT_CANCELLED, "CancelQuery")


@test
def scenario_flight_sql_ingestion(ctx):
    """flight_sql:ingestion: SqlInfo 10/11, then ExecuteIngest of one batch holding 3 rows."""
    c = ctx.c
    values = {r["info_name"]: r["value"] for r in c.query(sql_pb.CommandGetSqlInfo(info=[10, 11])).to_pylist()}
    eq(values, {10: True, 11: False}, "bulk ingestion supported, not in transactions")
    schema = pa.schema([pa.field("id", pa.int64(), False), pa.field("test_field", pa.int64(), True)])
    batch = pa.table({"id": pa.array([1, 2, 3], pa.int64()), "test_field": pa.array([None, None, None], pa.int64())}, schema=schema)
    count = c.ingest("test_table", batch, if_not_exist=1, if_exists=3, options={"key1": "val1", "key2": "val2"}, catalog="quiver", schema="public")
    eq(count, 3, "ingested rows")
    eq(c.execute("SELECT test_field FROM test_table").column("test_field").null_count, 3, "three nulls")
    # What Quiver refuses from the scenario's command: transactions, temporary tables, unknown catalogs.
    expect_error("INVALID_ARGUMENT", lambda: c.ingest("test_table", batch, 1, 3, transaction_id=b"123"))
    expect_error("INVALID_ARGUMENT", lambda: c.ingest("test_table", batch, 1, 3, temporary=True))
    expect_error("NOT_FOUND", lambda: c.ingest("test_table", batch, 1, 3, catalog="test_catalog"))
    eq(c.execute("SELECT count(*) AS n FROM test_table").to_pylist(), [{"n": 3}], "refused ingests wrote nothing")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--url")
    parser.add_argument("--auth-url")
    parser.add_argument("--only")
    parser.add_argument("--list", action="store_true")
    args = parser.parse_args()
    if args.list:
        print(json.dumps([t.__name__ for t in TESTS]))
        return
    only = set(args.only.split(",")) if args.only else None
    ctx = Ctx(args.url, args.auth_url)
    results = {}
    lock = threading.Lock()

    def run(fn):
        start = time.time()
        try:
            fn(ctx)
            res = {"ok": True}
        except Exception:  # noqa: BLE001
            res = {"ok": False, "error": traceback.format_exc()}
        res["seconds"] = round(time.time() - start, 3)
        with lock:
            results[fn.__name__] = res

    chosen = [t for t in TESTS if only is None or t.__name__ in only]
    # The token-expiry test sleeps; run it beside the others.
    slow = [t for t in chosen if t.__name__ == "auth_expired_token"]
    threads = [threading.Thread(target=run, args=(t,)) for t in slow]
    for th in threads:
        th.start()
    for t in chosen:
        if t not in slow:
            run(t)
    for th in threads:
        th.join()
    sys.stdout.write(json.dumps(results) + "\n")


if __name__ == "__main__":
    main()
