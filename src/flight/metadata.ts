/**
 * The Flight SQL metadata commands' result schemas and rows (flight-sql.md §3, §4).
 *
 * Schemas are exactly those of the C++ reference server (`SqlSchema::Get*Schema` in
 * cpp/src/arrow/flight/sql/server.cc), which the integration tests compare with
 * `check_metadata=true`: field order, names, types and nullability, `item` list children, the
 * standard map layout, key_sequence before key_name in GetPrimaryKeys.
 *
 * Quiver has one catalog and one schema: every table is `quiver.public.<name>`, of table type
 * `TABLE`. Foreign keys do not exist, so the key commands answer with empty results.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import {
  Binary,
  Bool,
  type DataType,
  DenseUnion,
  Field,
  Int32,
  Int64,
  List,
  makeData,
  Map_,
  RecordBatch,
  Schema,
  Struct,
  Type,
  Uint32,
  Uint8,
  Utf8,
  vectorFromArray,
  type Data,
} from 'apache-arrow';
import { encapsulatedSchema } from './framing.js';
import { quiverVersion } from '../util/package-version.js';

export const DEFAULT_CATALOG = 'quiver';
export const DEFAULT_SCHEMA = 'public';
export const TABLE_TYPE = 'TABLE';

const utf8 = (name: string, nullable = true) => new Field(name, new Utf8(), nullable);
const int32 = (name: string, nullable = true) => new Field(name, new Int32(), nullable);
const bool = (name: string, nullable = true) => new Field(name, new Bool(), nullable);

export const CATALOGS_SCHEMA = new Schema([utf8('catalog_name', false)]);
export const DB_SCHEMAS_SCHEMA = new Schema([utf8('catalog_name'), utf8('db_schema_name', false)]);
export const TABLES_SCHEMA = new Schema([utf8('catalog_name'), utf8('db_schema_name'), utf8('table_name', false), utf8('table_type', false)]);
export const TABLES_WITH_SCHEMA_SCHEMA = new Schema([...TABLES_SCHEMA.fields, new Field('table_schema', new Binary(), false)]);
export const TABLE_TYPES_SCHEMA = new Schema([utf8('table_type', false)]);
export const PRIMARY_KEYS_SCHEMA = new Schema([
  utf8('catalog_name'),
  utf8('db_schema_name'),
  utf8('table_name', false),
  utf8('column_name', false),
  int32('key_sequence', false),
  utf8('key_name'),
]);
export const KEYS_SCHEMA = new Schema([
  utf8('pk_catalog_name'),
  utf8('pk_db_schema_name'),
  utf8('pk_table_name', false),
  utf8('pk_column_name', false),
  utf8('fk_catalog_name'),
  utf8('fk_db_schema_name'),
  utf8('fk_table_name', false),
  utf8('fk_column_name', false),
  int32('key_sequence', false),
  utf8('fk_key_name'),
  utf8('pk_key_name'),
  new Field('update_rule', new Uint8(), false),
  new Field('delete_rule', new Uint8(), false),
]);
export const XDBC_TYPE_INFO_SCHEMA = new Schema([
  utf8('type_name', false),
  int32('data_type', false),
  int32('column_size'),
  utf8('literal_prefix'),
  utf8('literal_suffix'),
  new Field('create_params', new List(new Field('item', new Utf8(), false)), true),
  int32('nullable', false),
  bool('case_sensitive', false),
  int32('searchable', false),
  bool('unsigned_attribute'),
  bool('fixed_prec_scale', false),
  bool('auto_increment'),
  utf8('local_type_name'),
  int32('minimum_scale'),
  int32('maximum_scale'),
  int32('sql_data_type', false),
  int32('datetime_subcode'),
  int32('num_prec_radix'),
  int32('interval_precision'),
]);

const SQL_INFO_VALUE_FIELDS = [
  new Field('string_value', new Utf8(), false),
  new Field('bool_value', new Bool(), false),
  new Field('bigint_value', new Int64(), false),
  new Field('int32_bitmask', new Int32(), false),
  new Field('string_list', new List(new Field('item', new Utf8(), true)), false),
  new Field(
    'int32_to_int32_list_map',
    new Map_(
      new Field('entries', new Struct<{ key: Int32; value: List<Int32> }>([new Field('key', new Int32(), false), new Field('value', new List(new Field('item', new Int32(), true)), true)] as never), false),
      false,
    ),
    false,
  ),
];
export const SQL_INFO_SCHEMA = new Schema([
  new Field('info_name', new Uint32(), false),
  new Field('value', new DenseUnion([0, 1, 2, 3, 4, 5], SQL_INFO_VALUE_FIELDS), false),
]);

// ---------------------------------------------------------------------------------------------
// Building result batches.

/** A batch of `schema` from one array of JS values per field (built with each field's own type). */
export function batchOf(schema: Schema, columns: readonly (readonly unknown[])[]): RecordBatch {
  const length = columns[0]?.length ?? 0;
  const children = schema.fields.map((f, i) => dataOf(f.type, columns[i] ?? []));
  return new RecordBatch(schema, makeData({ type: new Struct(schema.fields), length, nullCount: 0, children }));
}

function dataOf(type: DataType, values: readonly unknown[]): Data {
  const vector = vectorFromArray(values as unknown[], type);
  if (vector.data.length === 1) return vector.data[0];
  return vectorFromArray([...vector] as unknown[], type).data[0];
}

/** SQL `LIKE` (`%`, `_`, backslash escapes) as a RegExp; absent pattern = match all. */
export function likePattern(pattern: string | undefined): RegExp | null {
  if (pattern === undefined) return null;
  let re = '';
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i];
    if (c === '\\' && i + 1 < pattern.length) re += escapeRegExp(pattern[++i]);
    else if (c === '%') re += '[\\s\\S]*';
    else if (c === '_') re += '[\\s\\S]';
    else re += escapeRegExp(c);
  }
  return new RegExp(`^${re}$`, 'u');
}

const escapeRegExp = (s: string) => s.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');

/** True when an optional catalog argument selects Quiver's catalog (absent = no filter; '' = objects without one). */
export function catalogMatches(catalog: string | undefined): boolean {
  return catalog === undefined || catalog === DEFAULT_CATALOG;
}

export function schemaMatches(schemaPattern: string | undefined, exact = false): boolean {
  if (schemaPattern === undefined) return true;
  if (exact) return schemaPattern === DEFAULT_SCHEMA;
  return likePattern(schemaPattern)!.test(DEFAULT_SCHEMA);
}

/** The SQL type name of an Arrow type as Quiver's SQL spells it. */
export function sqlTypeName(type: DataType): string {
  switch (type.typeId) {
    case Type.Int: {
      const t = type as unknown as { bitWidth: number; isSigned: boolean };
      if (!t.isSigned) return String(type).toUpperCase();
      return t.bitWidth === 64 ? 'BIGINT' : t.bitWidth === 32 ? 'INTEGER' : 'SMALLINT';
    }
    case Type.Float: {
      const p = (type as unknown as { precision: number }).precision;
      return p === 2 ? 'DOUBLE PRECISION' : p === 1 ? 'REAL' : 'FLOAT2';
    }
    case Type.Utf8:
    case Type.LargeUtf8:
      return 'TEXT';
    case Type.Bool:
      return 'BOOLEAN';
    case Type.Date:
      return 'DATE';
    case Type.Timestamp:
      return 'TIMESTAMP';
    case Type.FixedSizeList: {
      const t = type as unknown as { listSize: number; children: Field[] };
      return `${sqlTypeName(t.children[0].type)}[${t.listSize}]`.replace(/^REAL\[/, 'FLOAT4[');
    }
    case Type.Dictionary:
      return sqlTypeName((type as unknown as { dictionary: DataType }).dictionary);
    default:
      return String(type).toUpperCase();
  }
}

const FLIGHT_SQL_META = 'ARROW:FLIGHT:SQL:';

/**
 * A field with the ARROW:FLIGHT:SQL:* column metadata (flight-sql.md §3): type name, and for a
 * table column its catalog, schema and table. `SCHEMA_NAME`, as C++ and Go emit it.
 */
export function describeField(field: Field, table?: string): Field {
  const meta = new Map(field.metadata);
  meta.set(`${FLIGHT_SQL_META}TYPE_NAME`, sqlTypeName(field.type));
  if (table !== undefined) {
    meta.set(`${FLIGHT_SQL_META}CATALOG_NAME`, DEFAULT_CATALOG);
    meta.set(`${FLIGHT_SQL_META}SCHEMA_NAME`, DEFAULT_SCHEMA);
    meta.set(`${FLIGHT_SQL_META}TABLE_NAME`, table);
  }
  const text = field.type.typeId === Type.Utf8 || field.type.typeId === Type.LargeUtf8;
  meta.set(`${FLIGHT_SQL_META}IS_AUTO_INCREMENT`, '0');
  meta.set(`${FLIGHT_SQL_META}IS_CASE_SENSITIVE`, text ? '1' : '0');
  meta.set(`${FLIGHT_SQL_META}IS_READ_ONLY`, table === undefined ? '1' : '0');
  meta.set(`${FLIGHT_SQL_META}IS_SEARCHABLE`, '1');
  return new Field(field.name, field.type, field.nullable, meta);
}

/** A query result schema as sent to clients: column metadata added to every field. */
export function describeResultSchema(schema: Schema): Schema {
  return new Schema(schema.fields.map((f) => describeField(f)), schema.metadata);
}

/** A table's schema as GetTables' `table_schema` carries it. */
export function describeTableSchema(schema: Schema, table: string): Schema {
  return new Schema(schema.fields.map((f) => describeField(f, table)), schema.metadata);
}

export interface TableEntry {
  readonly name: string;
  readonly schema?: Schema;
}

export function tablesBatch(tables: readonly TableEntry[], includeSchema: boolean): RecordBatch {
  const cols: unknown[][] = [tables.map(() => DEFAULT_CATALOG), tables.map(() => DEFAULT_SCHEMA), tables.map((t) => t.name), tables.map(() => TABLE_TYPE)];
  if (!includeSchema) return batchOf(TABLES_SCHEMA, cols);
  cols.push(tables.map((t) => new Uint8Array(encapsulatedSchema(describeTableSchema(t.schema!, t.name)))));
  return batchOf(TABLES_WITH_SCHEMA_SCHEMA, cols);
}

export function primaryKeysBatch(table: string | null, primaryKey: readonly string[]): RecordBatch {
  const keys = table === null ? [] : primaryKey;
  return batchOf(PRIMARY_KEYS_SCHEMA, [
    keys.map(() => DEFAULT_CATALOG),
    keys.map(() => DEFAULT_SCHEMA),
    keys.map(() => table),
    keys,
    keys.map((_, i) => i + 1),
    keys.map(() => null),
  ]);
}

/** XdbcDataType / XdbcDatetimeSubcode values (FlightSql.proto). */
const XDBC = { BIGINT: -5, INTEGER: 4, SMALLINT: 5, REAL: 7, DOUBLE: 8, VARCHAR: 12, BOOLEAN: 16, DATE: 91, TIMESTAMP: 93, DATETIME: 9, ARRAY: 2003 };

interface XdbcType {
  name: string;
  dataType: number;
  columnSize: number | null;
  prefix: string | null;
  suffix: string | null;
  caseSensitive: boolean;
  unsigned: boolean | null;
  radix: number | null;
  sqlDataType: number;
  subcode: number | null;
}

const XDBC_TYPES: XdbcType[] = [
  { name: 'BIGINT', dataType: XDBC.BIGINT, columnSize: 19, prefix: null, suffix: null, caseSensitive: false, unsigned: false, radix: 10, sqlDataType: XDBC.BIGINT, subcode: null },
  { name: 'BOOLEAN', dataType: XDBC.BOOLEAN, columnSize: 1, prefix: null, suffix: null, caseSensitive: false, unsigned: null, radix: null, sqlDataType: XDBC.BOOLEAN, subcode: null },
  { name: 'DATE', dataType: XDBC.DATE, columnSize: 10, prefix: "DATE '", suffix: "'", caseSensitive: false, unsigned: null, radix: null, sqlDataType: XDBC.DATETIME, subcode: 1 },
  { name: 'DOUBLE PRECISION', dataType: XDBC.DOUBLE, columnSize: 15, prefix: null, suffix: null, caseSensitive: false, unsigned: false, radix: 2, sqlDataType: XDBC.DOUBLE, subcode: null },
  { name: 'INTEGER', dataType: XDBC.INTEGER, columnSize: 10, prefix: null, suffix: null, caseSensitive: false, unsigned: false, radix: 10, sqlDataType: XDBC.INTEGER, subcode: null },
  { name: 'REAL', dataType: XDBC.REAL, columnSize: 7, prefix: null, suffix: null, caseSensitive: false, unsigned: false, radix: 2, sqlDataType: XDBC.REAL, subcode: null },
  { name: 'SMALLINT', dataType: XDBC.SMALLINT, columnSize: 5, prefix: null, suffix: null, caseSensitive: false, unsigned: false, radix: 10, sqlDataType: XDBC.SMALLINT, subcode: null },
  { name: 'TEXT', dataType: XDBC.VARCHAR, columnSize: null, prefix: "'", suffix: "'", caseSensitive: true, unsigned: null, radix: null, sqlDataType: XDBC.VARCHAR, subcode: null },
  { name: 'TIMESTAMP', dataType: XDBC.TIMESTAMP, columnSize: 26, prefix: "TIMESTAMP '", suffix: "'", caseSensitive: false, unsigned: null, radix: null, sqlDataType: XDBC.DATETIME, subcode: 3 },
];

/** GetXdbcTypeInfo: Quiver's column types, sorted by data_type then name; `dataType` filters. */
export function xdbcTypeInfoBatch(dataType: number | undefined): RecordBatch {
  const rows = XDBC_TYPES.filter((t) => dataType === undefined || t.dataType === dataType).sort((a, b) => a.dataType - b.dataType || a.name.localeCompare(b.name));
  return batchOf(XDBC_TYPE_INFO_SCHEMA, [
    rows.map((t) => t.name),
    rows.map((t) => t.dataType),
    rows.map((t) => t.columnSize),
    rows.map((t) => t.prefix),
    rows.map((t) => t.suffix),
    rows.map(() => null),
    rows.map(() => 1), // NULLABILITY_NULLABLE
    rows.map((t) => t.caseSensitive),
    rows.map(() => 3), // SEARCHABLE_FULL
    rows.map((t) => t.unsigned),
    rows.map(() => false),
    rows.map(() => false),
    rows.map((t) => t.name),
    rows.map(() => null),
    rows.map(() => null),
    rows.map((t) => t.sqlDataType),
    rows.map((t) => t.subcode),
    rows.map((t) => t.radix),
    rows.map(() => null),
  ]);
}

// ---------------------------------------------------------------------------------------------
// SqlInfo.

export type SqlInfoValue =
  | { kind: 'string'; value: string }
  | { kind: 'bool'; value: boolean }
  | { kind: 'bigint'; value: bigint }
  | { kind: 'int32'; value: number }
  | { kind: 'string_list'; value: string[] };

const str = (value: string): SqlInfoValue => ({ kind: 'string', value });
const flag = (value: boolean): SqlInfoValue => ({ kind: 'bool', value });
const i32 = (value: number): SqlInfoValue => ({ kind: 'int32', value });
const i64 = (value: number): SqlInfoValue => ({ kind: 'bigint', value: BigInt(value) });
const list = (value: string[]): SqlInfoValue => ({ kind: 'string_list', value });

const require = createRequire(import.meta.url);
function versionAt(packageJson: string): string {
  try {
    return String(JSON.parse(readFileSync(packageJson, 'utf8')).version);
  } catch {
    return 'unknown';
  }
}
// apache-arrow's exports map hides its package.json: read it next to the resolved entry point.
const ARROW_VERSION = versionAt(join(dirname(require.resolve('apache-arrow')), 'package.json'));
const QUIVER_VERSION = quiverVersion();

export const SERVER_NAME = 'Quiver';
export { QUIVER_VERSION };

const KEYWORDS = ['ANALYZE', 'EXPLAIN', 'FTS', 'INDEX', 'IVF_PQ', 'LIMIT', 'MATCH', 'OFFSET', 'RRF', 'USING'];
const NUMERIC_FUNCTIONS = ['abs', 'ceil', 'cosine_distance', 'dot_distance', 'floor', 'l2_distance', 'round', 'sqrt'];
const STRING_FUNCTIONS = ['length', 'lower', 'upper'];

/** The SqlInfo values Quiver answers (FlightSql.proto `SqlInfo`). */
export const SQL_INFO: ReadonlyMap<number, SqlInfoValue> = new Map<number, SqlInfoValue>([
  [0, str(SERVER_NAME)], // FLIGHT_SQL_SERVER_NAME
  [1, str(QUIVER_VERSION)], // FLIGHT_SQL_SERVER_VERSION
  [2, str(ARROW_VERSION)], // FLIGHT_SQL_SERVER_ARROW_VERSION
  [3, flag(false)], // FLIGHT_SQL_SERVER_READ_ONLY
  [4, flag(true)], // FLIGHT_SQL_SERVER_SQL
  [5, flag(false)], // FLIGHT_SQL_SERVER_SUBSTRAIT
  [8, i32(0)], // FLIGHT_SQL_SERVER_TRANSACTION: none
  [9, flag(true)], // FLIGHT_SQL_SERVER_CANCEL
  [10, flag(true)], // FLIGHT_SQL_SERVER_BULK_INGESTION
  [11, flag(false)], // FLIGHT_SQL_SERVER_INGEST_TRANSACTIONS_SUPPORTED
  [100, i32(0)], // FLIGHT_SQL_SERVER_STATEMENT_TIMEOUT: none
  [101, i32(0)], // FLIGHT_SQL_SERVER_TRANSACTION_TIMEOUT: none
  [500, flag(false)], // SQL_DDL_CATALOG
  [501, flag(false)], // SQL_DDL_SCHEMA
  [502, flag(true)], // SQL_DDL_TABLE
  [503, i32(3)], // SQL_IDENTIFIER_CASE: lowercase (unquoted names fold to lower case)
  [504, str('"')], // SQL_IDENTIFIER_QUOTE_CHAR
  [505, i32(0)], // SQL_QUOTED_IDENTIFIER_CASE: quoted names are kept as written (no enum value says so: UNKNOWN)
  [506, flag(true)], // SQL_ALL_TABLES_ARE_SELECTABLE
  [507, i32(0)], // SQL_NULL_ORDERING: NULLs sort high (last ascending, first descending)
  [508, list(KEYWORDS)], // SQL_KEYWORDS
  [509, list(NUMERIC_FUNCTIONS)], // SQL_NUMERIC_FUNCTIONS
  [510, list(STRING_FUNCTIONS)], // SQL_STRING_FUNCTIONS
  [511, list([])], // SQL_SYSTEM_FUNCTIONS
  [512, list(['extract'])], // SQL_DATETIME_FUNCTIONS
  [513, str('\\')], // SQL_SEARCH_STRING_ESCAPE
  [514, str('')], // SQL_EXTRA_NAME_CHARACTERS
  [515, flag(true)], // SQL_SUPPORTS_COLUMN_ALIASING
  [516, flag(true)], // SQL_NULL_PLUS_NULL_IS_NULL
  [518, flag(false)], // SQL_SUPPORTS_TABLE_CORRELATION_NAMES
  [519, flag(false)], // SQL_SUPPORTS_DIFFERENT_TABLE_CORRELATION_NAMES
  [520, flag(true)], // SQL_SUPPORTS_EXPRESSIONS_IN_ORDER_BY
  [521, flag(true)], // SQL_SUPPORTS_ORDER_BY_UNRELATED
  [522, i32(0)], // SQL_SUPPORTED_GROUP_BY: no bit claimed
  [523, flag(false)], // SQL_SUPPORTS_LIKE_ESCAPE_CLAUSE
  [524, flag(true)], // SQL_SUPPORTS_NON_NULLABLE_COLUMNS
  [525, i32(1 << 0)], // SQL_SUPPORTED_GRAMMAR: minimum grammar
  [526, i32(1 << 0)], // SQL_ANSI92_SUPPORTED_LEVEL: entry SQL
  [527, flag(false)], // SQL_SUPPORTS_INTEGRITY_ENHANCEMENT_FACILITY
  [528, i32(0)], // SQL_OUTER_JOINS_SUPPORT_LEVEL: unsupported
  [529, str('schema')], // SQL_SCHEMA_TERM
  [530, str('procedure')], // SQL_PROCEDURE_TERM
  [531, str('catalog')], // SQL_CATALOG_TERM
  [532, flag(true)], // SQL_CATALOG_AT_START
  [533, i32(0)], // SQL_SCHEMAS_SUPPORTED_ACTIONS
  [534, i32(0)], // SQL_CATALOGS_SUPPORTED_ACTIONS
  [535, i32(0)], // SQL_SUPPORTED_POSITIONED_COMMANDS
  [536, flag(false)], // SQL_SELECT_FOR_UPDATE_SUPPORTED
  [537, flag(false)], // SQL_STORED_PROCEDURES_SUPPORTED
  [538, i32(0)], // SQL_SUPPORTED_SUBQUERIES
  [539, flag(false)], // SQL_CORRELATED_SUBQUERIES_SUPPORTED
  [540, i32(0)], // SQL_SUPPORTED_UNIONS
  [541, i64(0)], // SQL_MAX_BINARY_LITERAL_LENGTH: no limit
  [542, i64(0)], // SQL_MAX_CHAR_LITERAL_LENGTH
  [543, i64(0)], // SQL_MAX_COLUMN_NAME_LENGTH
  [544, i64(0)], // SQL_MAX_COLUMNS_IN_GROUP_BY
  [545, i64(0)], // SQL_MAX_COLUMNS_IN_INDEX
  [546, i64(0)], // SQL_MAX_COLUMNS_IN_ORDER_BY
  [547, i64(0)], // SQL_MAX_COLUMNS_IN_SELECT
  [548, i64(0)], // SQL_MAX_COLUMNS_IN_TABLE
  [549, i64(0)], // SQL_MAX_CONNECTIONS
  [550, i64(0)], // SQL_MAX_CURSOR_NAME_LENGTH
  [551, i64(0)], // SQL_MAX_INDEX_LENGTH
  [552, i64(0)], // SQL_DB_SCHEMA_NAME_LENGTH
  [553, i64(0)], // SQL_MAX_PROCEDURE_NAME_LENGTH
  [554, i64(0)], // SQL_MAX_CATALOG_NAME_LENGTH
  [555, i64(0)], // SQL_MAX_ROW_SIZE
  [556, flag(true)], // SQL_MAX_ROW_SIZE_INCLUDES_BLOBS
  [557, i64(0)], // SQL_MAX_STATEMENT_LENGTH (the message size limit applies)
  [558, i64(0)], // SQL_MAX_STATEMENTS
  [559, i64(0)], // SQL_MAX_TABLE_NAME_LENGTH
  [560, i64(1)], // SQL_MAX_TABLES_IN_SELECT: no joins
  [561, i64(0)], // SQL_MAX_USERNAME_LENGTH
  [562, i32(0)], // SQL_DEFAULT_TRANSACTION_ISOLATION: none
  [563, flag(false)], // SQL_TRANSACTIONS_SUPPORTED
  [564, i32(0)], // SQL_SUPPORTED_TRANSACTIONS_ISOLATION_LEVELS
  [565, flag(false)], // SQL_DATA_DEFINITION_CAUSES_TRANSACTION_COMMIT
  [566, flag(false)], // SQL_DATA_DEFINITIONS_IN_TRANSACTIONS_IGNORED
  [567, i32(1 << 1)], // SQL_SUPPORTED_RESULT_SET_TYPES: forward only
  [572, flag(true)], // SQL_BATCH_UPDATES_SUPPORTED (multi-row parameter batches)
  [573, flag(false)], // SQL_SAVEPOINTS_SUPPORTED
  [574, flag(false)], // SQL_NAMED_PARAMETERS_SUPPORTED
  [575, flag(false)], // SQL_LOCATORS_UPDATE_COPY
  [576, flag(false)], // SQL_STORED_FUNCTIONS_USING_CALL_SYNTAX_SUPPORTED
]);

const KIND_TYPE_ID = { string: 0, bool: 1, bigint: 2, int32: 3, string_list: 4 } as const;

/** The GetSqlInfo result for `ids` (empty = every value Quiver has), in the order asked. Unknown ids are skipped. */
export function sqlInfoBatch(ids: readonly number[], info: ReadonlyMap<number, SqlInfoValue> = SQL_INFO): RecordBatch {
  const chosen = (ids.length ? ids : [...info.keys()]).filter((id) => info.has(id));
  const n = chosen.length;
  const typeIds = new Int8Array(n);
  const valueOffsets = new Int32Array(n);
  const strings: string[] = [];
  const bools: boolean[] = [];
  const bigints: bigint[] = [];
  const ints: number[] = [];
  const lists: string[][] = [];
  chosen.forEach((id, row) => {
    const v = info.get(id)!;
    typeIds[row] = KIND_TYPE_ID[v.kind];
    const target: unknown[] = v.kind === 'string' ? strings : v.kind === 'bool' ? bools : v.kind === 'bigint' ? bigints : v.kind === 'int32' ? ints : lists;
    valueOffsets[row] = target.length;
    target.push(v.value);
  });
  const [fString, fBool, fBigint, fInt, fList, fMap] = SQL_INFO_VALUE_FIELDS;
  const children = [
    dataOf(fString.type, strings),
    dataOf(fBool.type, bools),
    dataOf(fBigint.type, bigints),
    dataOf(fInt.type, ints),
    dataOf(fList.type, lists),
    emptyMap(fMap.type as Map_),
  ];
  const unionType = SQL_INFO_SCHEMA.fields[1].type as DenseUnion;
  const union = makeData({ type: unionType, length: n, nullCount: 0, typeIds, valueOffsets, children });
  const names = makeData({ type: new Uint32(), length: n, nullCount: 0, data: Uint32Array.from(chosen) });
  return new RecordBatch(SQL_INFO_SCHEMA, makeData({ type: new Struct(SQL_INFO_SCHEMA.fields), length: n, nullCount: 0, children: [names, union] }));
}

function emptyMap(type: Map_): Data {
  const entries = type.children[0].type as Struct;
  const [keyField, valueField] = entries.children;
  const key = makeData({ type: keyField.type as Int32, length: 0, nullCount: 0, data: new Int32Array(0) });
  const valueList = valueField.type as List<Int32>;
  const value = makeData({
    type: valueList,
    length: 0,
    nullCount: 0,
    valueOffsets: new Int32Array(1),
    child: makeData({ type: valueList.children[0].type, length: 0, nullCount: 0, data: new Int32Array(0) }),
  });
  const struct = makeData({ type: entries, length: 0, nullCount: 0, children: [key, value] });
  return makeData({ type, length: 0, nullCount: 0, valueOffsets: new Int32Array(1), child: struct });
}
