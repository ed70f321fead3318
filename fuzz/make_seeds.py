#!/usr/bin/env python3
"""Writes the seed corpus of the fuzz targets into fuzz/corpus/<target>/ (committed; rerun after
changing a format). Each seed is a small VALID input, so the fuzzer starts from the formats'
accepted paths: envelopes and keys as the core encodes them, SQL that DuckDB's DuckLake
extension sends, the binary COPY streams DuckDB 1.5.5 sends at its first ATTACH (from
/work/shared/traces/statements-pg155.jsonl.gz), and PostgreSQL client sessions."""

import os
import struct
import zlib

HERE = os.path.dirname(os.path.abspath(__file__))


def write(target, name, data):
    d = os.path.join(HERE, "corpus", target)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, name), "wb") as f:
        f.write(data.encode() if isinstance(data, str) else data)


# ---------------------------------------------------------------- protobuf (rocklake.proto)
def varint(n):
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def field(num, wire, payload):
    key = varint(num << 3 | wire)
    if wire == 0:
        return key + varint(payload)
    return key + varint(len(payload)) + payload


def zigzag(n):
    return (n << 1) ^ (n >> 63)


def datum_int(n):
    return field(2, 0, zigzag(n))


def datum_text(s):
    return field(4, 2, s.encode())


def envelope(kind, payload):
    head = b"RL" + bytes([1, kind])
    return head + struct.pack(">I", zlib.crc32(head + payload)) + payload


row = (
    field(1, 0, 7)
    + field(2, 2, datum_int(0))
    + field(2, 2, datum_text("main"))
    + field(2, 2, field(1, 0, 1))  # boolean true
    + field(2, 2, b"")  # NULL
    + field(2, 2, field(3, 1, struct.pack("<d", 2.5)))
    + field(2, 2, field(6, 2, field(1, 0, 1) + field(2, 0, 2) + field(3, 0, 3)))
    + field(2, 2, field(7, 2, b"12.50"))
    + field(2, 2, field(8, 2, field(1, 2, datum_text("a")) + field(1, 2, datum_text("b"))))
    + field(3, 0, 7)
)
write("envelope", "row", envelope(1, row))
write("envelope", "tombstone", envelope(2, b""))
column = field(1, 2, b"snapshot_id") + field(2, 2, b"int8") + field(3, 0, (1 << 64) - 1) + field(4, 0, 1)
table = (
    field(1, 0, 1)
    + field(2, 2, b"public")
    + field(3, 2, b"ducklake_snapshot")
    + field(4, 2, column)
    + field(5, 2, varint(0))
    + field(6, 0, 16384)
    + field(7, 2, b"ducklake_snapshot_pkey")
)
write("envelope", "table_def", envelope(3, table))
write("envelope", "schema_def", envelope(4, field(1, 2, b"main") + field(2, 0, 2200)))

# ---------------------------------------------------------------- keys (keys.rs)
# Input: byte 0 = number of fields (mod 4), one byte per field type (index into the target's
# TYPES), then the key bytes.
T = {"bool": 0, "int4": 2, "int8": 3, "float8": 5, "numeric": 6, "text": 7, "bytea": 12,
     "uuid": 13, "timestamptz": 14, "date": 16, "interval": 18, "tid": 21, "int2[]": 22,
     "text[]": 23}


def k_i64(n):
    return b"\x01" + struct.pack(">Q", (n & (2**64 - 1)) ^ (1 << 63))


def k_bytes(b):
    return b"\x01" + b.replace(b"\x00", b"\x00\xff") + b"\x00\x01"


def keys_seed(name, types, key):
    write("keys", name, bytes([len(types)] + [T[t] for t in types]) + key)


keys_seed("int8", ["int8"], k_i64(42))
keys_seed("text_int8", ["text", "int8"], k_bytes(b"main") + k_i64(-3))
keys_seed("uuid", ["uuid"], b"\x01" + bytes(range(16)))
keys_seed("bool_date", ["bool", "date"], b"\x01\x01" + k_i64(9000))
# numeric 12.5: class 3 (positive), exponent 2 ^ sign bit, digits+1, 0, scale 1
keys_seed("numeric", ["numeric"], b"\x01\x03" + struct.pack(">I", 2 ^ (1 << 31)) + bytes([2, 3, 6, 0]) + struct.pack(">H", 1))
# interval 1 mon 2 days 3 us: span (i128), months, days
span = (30 + 2) * 86_400_000_000 + 3
keys_seed("interval", ["interval"], b"\x01" + struct.pack(">QQ", *divmod((span ^ (1 << 127)) & (2**128 - 1), 2**64)) + k_i64(1)[1:] + k_i64(2)[1:])
keys_seed("text_array", ["text[]"], b"\x01" + b"\x02" + k_bytes(b"a") + b"\x02" + k_bytes(b"b") + b"\x01")
keys_seed("null", ["int8"], b"\x00")
# a whole versioned row key (tag, table id, field, !seq) for split_version
keys_seed("versioned", [], b"\x10" + struct.pack(">I", 5) + k_i64(1) + struct.pack(">Q", 2**64 - 1 - 9))

# ---------------------------------------------------------------- SQL (what DuckLake sends)
sql = {
    "select1": "SELECT 1",
    "begin_rr": "BEGIN TRANSACTION ISOLATION LEVEL REPEATABLE READ",
    "snapshot": 'SELECT snapshot_id, schema_version, next_catalog_id, next_file_id FROM "public".ducklake_snapshot WHERE snapshot_id = (SELECT MAX(snapshot_id) FROM "public".ducklake_snapshot);',
    "commit_snapshot": "BEGIN TRANSACTION ISOLATION LEVEL REPEATABLE READ; INSERT INTO \"public\".ducklake_snapshot VALUES (1, NOW(), 1, 2, 0);INSERT INTO \"public\".ducklake_snapshot_changes VALUES (1, 'created_table:\"main\".\"t\"', NULL, NULL, NULL); COMMIT",
    "update_ctid": "UPDATE \"public\".ducklake_schema SET end_snapshot = 1 WHERE ctid IN ('(0,1)') RETURNING schema_id",
    "delete_in": "DELETE FROM \"public\".ducklake_snapshot_changes WHERE snapshot_id IN (0, 1)",
    "metadata": "SELECT key, value, scope, scope_id FROM \"public\".ducklake_metadata",
    "pg_catalog": "SELECT pg_namespace.oid AS namespace_id, relname, attname, pg_type.typname type_name, atttypmod, attnum FROM pg_class JOIN pg_namespace ON relnamespace = pg_namespace.oid JOIN pg_attribute ON pg_class.oid = pg_attribute.attrelid JOIN pg_type ON atttypid = pg_type.oid WHERE attnum > 0 AND relkind IN ('r', 'v') ORDER BY namespace_id, relname, attnum",
    "to_regclass": "SELECT to_regclass('duckdb_secrets')",
    "with_values": "WITH new_values(tid, cid, v) AS (VALUES (4, 1, 'x'), (4, 2, NULL)) SELECT tid, cid, coalesce(v, 'none') FROM new_values LEFT JOIN \"public\".ducklake_column ON cid = column_id ORDER BY 1, 2",
    "copy_out": "COPY (SELECT snapshot_id, ctid FROM \"public\".ducklake_snapshot WHERE snapshot_id IN ('0')) TO STDOUT (FORMAT \"binary\");",
    "create_drop": "CREATE SCHEMA IF NOT EXISTS \"dlmeta\"; CREATE TABLE \"dlmeta\".x(\"a\" BIGINT, \"b\" VARCHAR); DROP TABLE IF EXISTS \"dlmeta\".x",
    "copy_in": "COPY \"public\".\"ducklake_schema\" FROM STDIN (FORMAT BINARY)",
    "set_show": "SET search_path TO public; SHOW search_path; DISCARD ALL",
    # pgjdbc's key query: records from _pg_expandarray, field access, bitwise operators
    "expandarray": "SELECT r.k, (r.keys).x & 1::smallint, ~(r.keys).n << 2, r.keys FROM (SELECT (information_schema._pg_expandarray(i.indkey)).n AS k, information_schema._pg_expandarray(i.indkey) AS keys FROM pg_catalog.pg_index i) r WHERE (r.keys).x IS NOT NULL AND r.keys IS NULL ORDER BY r.keys",
    # session 51: maintenance commands, CREATE TABLE AS / SELECT INTO, json's aggregates,
    # paths and set-returning functions
    "maintenance": "VACUUM (ANALYZE, PARALLEL 2, INDEX_CLEANUP auto) ducklake_snapshot (snapshot_id); ANALYZE VERBOSE pg_catalog.pg_class (relname), ducklake_schema; VACUUM FULL FREEZE ANALYSE",
    "ctas": "CREATE TABLE IF NOT EXISTS s AS SELECT snapshot_id::varchar(3) AS v, 1.5::numeric(5,2) FROM \"public\".ducklake_snapshot WITH NO DATA; SELECT * INTO TABLE s2 FROM s",
    "json_paths": "SELECT json_object_agg(k, v ORDER BY k), json_agg(e ORDER BY e) FILTER (WHERE e IS NOT NULL), j #> '{a,0}', j #>> '{a,-1}' FROM json_each('{\"a\":[1,2]}') AS t(k, v), json_array_elements_text('[1,2]') e, (VALUES ('{\"a\":[3]}'::json)) x(j) GROUP BY j",
}
for name, q in sql.items():
    write("sql", name, q)

# ---------------------------------------------------------------- binary COPY
SIG = b"PGCOPY\n\xff\r\n\x00" + struct.pack(">II", 0, 0)
TRAILER = struct.pack(">h", -1)


def copy_stream(rows):
    out = bytearray(SIG)
    for r in rows:
        out += struct.pack(">h", len(r))
        for f in r:
            if f is None:
                out += struct.pack(">i", -1)
            else:
                out += struct.pack(">i", len(f)) + f
    return bytes(out + TRAILER)


def hexrows(rows):
    return [[None if f is None else bytes.fromhex(f) for f in r] for r in rows]


# The streams DuckDB 1.5.5 sends at the first ATTACH (decoded rows of the trace, re-encoded).
duckdb_streams = {
    1: ("ducklake_schema", [["0000000000000000", "e5886472258249e9903a4d58b709c117", "0000000000000000", None, "6d61696e", "6d61696e2f", "01"]]),
    2: ("ducklake_snapshot", [["0000000000000000", "0002ef6b0e0e1c40", "0000000000000000", "0000000000000001", "0000000000000000"]]),
    3: ("ducklake_snapshot_changes", [["0000000000000000", "637265617465645f736368656d613a226d61696e22", None, None, None]]),
    4: ("ducklake_metadata", [["76657273696f6e", "312e30", None, None]]),
}
trace = "/work/shared/traces/statements-pg155.jsonl.gz"
if os.path.exists(trace):  # take the exact rows from the trace when it is there
    import gzip
    import json

    with gzip.open(trace, "rt") as f:
        for line in f:
            d = json.loads(line)
            fr = d["front"]
            if len(fr) >= 2 and fr[0]["type"] == "Query" and fr[1]["type"] == "CopyDataStream":
                dec = fr[1]["decoded"]
                for i, (table, _) in duckdb_streams.items():
                    if fr[0]["query"] == f'COPY "public"."{table}" FROM STDIN (FORMAT BINARY)' and dec["rows"] == len(dec["sample_hex"]):
                        duckdb_streams[i] = (table, dec["sample_hex"])
for i, (table, rows) in duckdb_streams.items():
    write("copy_binary", table, bytes([i]) + copy_stream(hexrows(rows)))


def numeric_12_5():
    return struct.pack(">hhhhhh", 2, 0, 0, 1, 12, 5000)


def text_array(items):
    out = struct.pack(">iiiii", 1, 0, 25, len(items), 1)
    for it in items:
        out += struct.pack(">i", len(it)) + it
    return out


wide = [
    struct.pack(">q", 1),
    b"name",
    b"\x01",
    struct.pack(">q", 800_000_000_000_000),
    bytes(range(16)),
    struct.pack(">d", 2.5),
    numeric_12_5(),
    struct.pack(">i", -7),
    struct.pack(">h", 3),
    b"\x00\xff",
    struct.pack(">i", 9000),
    struct.pack(">q", 3_600_000_000),
    struct.pack(">qii", 3, 2, 1),
    struct.pack(">q", 800_000_000_000_000),
    struct.pack(">f", 1.5),
    text_array([b"a", b"b"]),
    struct.pack(">I", 2200),
    b'{"k": [1, "\\u00e9"]}',
    struct.pack(">iiiiiii", 1, 1, 23, 2, 1, 4, 7) + struct.pack(">i", -1),
]
nulls = [struct.pack(">q", 2)] + [None] * 18
write("copy_binary", "wide", bytes([0]) + copy_stream([wide, nulls]))
write("copy_binary", "wide_empty", bytes([0]) + copy_stream([]))

# ---------------------------------------------------------------- PostgreSQL sessions
# Byte 0: 0 trust, 1 cleartext password, 2 MD5, 3 SCRAM (user rocklake, password pw).


def msg(ty, body=b""):
    return ty + struct.pack(">i", len(body) + 4) + body


def cstr(s):
    return s.encode() + b"\x00"


def startup(**params):
    body = struct.pack(">i", 196608) + b"".join(cstr(k) + cstr(v) for k, v in params.items()) + b"\x00"
    return struct.pack(">i", len(body) + 4) + body


START = startup(user="rocklake", database="lake", application_name="fuzz")
SSL = struct.pack(">ii", 8, 80877103)
TERM = msg(b"X")
write("pg_message", "simple_query", b"\x00" + START + msg(b"Q", cstr("SELECT 1; SELECT version()")) + TERM)
write("pg_message", "ssl_then_startup", b"\x00" + SSL + START + msg(b"Q", cstr("SHOW server_version")) + TERM)
extended = (
    msg(b"P", cstr("") + cstr("SELECT snapshot_id FROM ducklake_snapshot WHERE snapshot_id = $1") + struct.pack(">h", 1) + struct.pack(">I", 20))
    + msg(b"B", cstr("") + cstr("") + struct.pack(">hh", 1, 0) + struct.pack(">h", 1) + struct.pack(">i", 1) + b"0" + struct.pack(">hh", 1, 0))
    + msg(b"D", b"P" + cstr(""))
    + msg(b"E", cstr("") + struct.pack(">i", 0))
    + msg(b"S")
)
write("pg_message", "extended", b"\x00" + START + extended + TERM)
copy = copy_stream(hexrows(duckdb_streams[4][1]))
write("pg_message", "copy_in", b"\x00" + START + msg(b"Q", cstr('BEGIN; COPY "public"."ducklake_metadata" FROM STDIN (FORMAT BINARY); COMMIT')) + msg(b"d", copy) + msg(b"c") + TERM)
write("pg_message", "copy_fail", b"\x00" + START + msg(b"Q", cstr('COPY "public"."ducklake_metadata" FROM STDIN (FORMAT BINARY)')) + msg(b"d", copy[:10]) + msg(b"f", cstr("client gave up")) + msg(b"Q", cstr("SELECT 1")) + TERM)
write("pg_message", "password", b"\x01" + START + msg(b"p", cstr("pw")) + msg(b"Q", cstr("SELECT 1")) + TERM)
write("pg_message", "scram_first", b"\x03" + START + msg(b"p", cstr("SCRAM-SHA-256") + struct.pack(">i", 32) + b"n,,n=,r=rOprNGfwEbeRWgbNEkqO%hvY"))
write("pg_message", "cancel", b"\x00" + struct.pack(">iiii", 16, 80877102, 1234, 5678))
write("pg_message", "close_describe", b"\x00" + START + msg(b"P", cstr("s1") + cstr("SELECT 1") + struct.pack(">h", 0)) + msg(b"D", b"S" + cstr("s1")) + msg(b"C", b"S" + cstr("s1")) + msg(b"H") + msg(b"S") + TERM)
