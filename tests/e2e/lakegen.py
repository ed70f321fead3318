#!/usr/bin/env python3
"""Generated differential test at DuckLake's level: a random sequence of DuckLake operations run
by DuckDB on two lakes, one whose catalog is a reference PostgreSQL and one whose catalog is
RockLake, compared operation by operation.

usage: lakegen.py --a DSN (reference) --b DSN (under test) --data DIR [--seed N] [--ops N]
                  [--report OUT.json] [--show N]

The workload (../shared/tools/workload.py) runs each DuckLake feature once on fixed tables; this
draws them in random orders over random schemas, so the catalog sees the statement shapes and
row contents those features produce in combination: tables of a dozen column types (nested
ones too) filled inline and as Parquet files, UPDATE / DELETE with predicates the file pruning
decides from the catalog's column stats, ALTER TABLE of every kind, renames, views, explicit
transactions that commit or roll back, partitioning, time travel to any earlier snapshot,
change feeds, inlined-data flushes, compaction, snapshot expiry and file cleanup, and
detach / re-attach (a cold read of the whole catalog).

Each operation's outcome (all rows, ordered; or the error's type and message with the lakes'
paths, ports and UUIDs masked) must be the same on both lakes. Every few operations, and at the
end, both lakes are probed: every table's contents, the snapshot list, and every DuckLake
catalog table read back through DuckDB's metadata catalog (minus the columns that hold file
paths, UUIDs and times). DuckDB runs single-threaded so that both lakes write the same files.

Prints a summary and the first --show differences; exit status 1 on any difference.
"""
import argparse
import json
import os
import random
import re
import sys

here = os.path.dirname(os.path.abspath(__file__))
shared = os.environ.get("ROCKLAKE_SHARED") or os.path.join(here, "..", "..", "..", "shared")
sys.path.insert(0, os.path.join(shared, "tools"))
import dlconn  # noqa: E402
import psycopg  # noqa: E402

import difflog  # noqa: E402  (beside this script)

# Column types with a literal for a drawn value and an expression over `i` for generated rows.
TYPES = {
    "INTEGER": (lambda r: str(r.choice([r.randint(-1000, 1000), 0, 2147483647, -2147483648])),
                "((i * 7919) % 2001 - 1000)::INTEGER"),
    "BIGINT": (lambda r: str(r.choice([r.randint(-10**12, 10**12), 9223372036854775807, -1])),
               "(i * 1000003 - 500000)::BIGINT"),
    "SMALLINT": (lambda r: str(r.randint(-32768, 32767)), "(i % 300 - 150)::SMALLINT"),
    "VARCHAR": (lambda r: "'" + r.choice(["", "a", "b c", "it''s", "äöü", "zz", "A", "x" * 40]) + "'",
                "'v' || (i % 37)::VARCHAR"),
    "DOUBLE": (lambda r: r.choice(["1.5", "-0.25", "0.0", "1e300", "'nan'::DOUBLE", "'inf'::DOUBLE",
                                   str(r.randint(-99, 99) / 4)]),
               "(i / 7.0)::DOUBLE"),
    "DECIMAL(9,2)": (lambda r: f"{r.randint(-99999, 99999) / 100:.2f}", "((i % 10000) / 100)::DECIMAL(9,2)"),
    "DATE": (lambda r: r.choice(["DATE '2024-02-29'", "DATE '1970-01-01'", "DATE '2030-12-31'",
                                 f"DATE '2024-01-01' + {r.randint(0, 500)}"]),
             "(DATE '2024-01-01' + (i % 400)::INTEGER)"),
    "TIMESTAMP": (lambda r: r.choice(["TIMESTAMP '2024-01-01 00:00:00'", "TIMESTAMP '2025-06-30 12:34:56.789'",
                                      f"TIMESTAMP '2024-03-01' + INTERVAL {r.randint(0, 10000)} MINUTE"]),
                  "(TIMESTAMP '2024-01-01' + INTERVAL (i) MINUTE)"),
    "BOOLEAN": (lambda r: r.choice(["true", "false"]), "(i % 3 = 0)"),
    "BLOB": (lambda r: r.choice(["'\\xAA\\x00'::BLOB", "'abc'::BLOB", "''::BLOB"]), "('b' || i::VARCHAR)::BLOB"),
    "UUID": (lambda r: f"'00000000-0000-4000-8000-{r.randint(0, 999999):012d}'::UUID",
             "('00000000-0000-4000-8000-' || lpad(i::VARCHAR, 12, '0'))::UUID"),
    "INTEGER[]": (lambda r: r.choice(["[1, 2, NULL]", "[]", f"[{r.randint(0, 9)}]"]), "[i, i + 1]"),
    "STRUCT(a INTEGER, b VARCHAR)": (lambda r: f"{{'a': {r.randint(0, 9)}, 'b': 'k{r.randint(0, 9)}'}}",
                                     "{'a': i % 10, 'b': 'k' || (i % 5)::VARCHAR}"),
    # Values whose text and binary forms are easy to get wrong on the way through the catalog
    # (inlined rows, min/max stats, defaults).
    "FLOAT": (lambda r: r.choice(["0.1", "3.4028235e38", "-1.17549435e-38", "1e-45", "'nan'::FLOAT",
                                  "16777217", str(r.randint(-999, 999) / 8)]),
              "(i / 3.0)::FLOAT"),
    "TINYINT": (lambda r: str(r.choice([-128, 127, 0, r.randint(-128, 127)])), "(i % 256 - 128)::TINYINT"),
    "UBIGINT": (lambda r: str(r.choice([18446744073709551615, 9223372036854775808, 0, r.randint(0, 10**15)])),
                "(18446744073709551615 - i * 1000003)::UBIGINT"),
    "UINTEGER": (lambda r: str(r.choice([4294967295, 2147483648, r.randint(0, 10**6)])), "(i * 1000)::UINTEGER"),
    "DECIMAL(38,10)": (lambda r: r.choice(["1234567890123456789012345678.0123456789", "-0.0000000001",
                                           f"{r.randint(-10**9, 10**9)}.{r.randint(0, 99)}"]),
                       "(i * 12345.6789)::DECIMAL(38,10)"),
    "DECIMAL(18,6)": (lambda r: r.choice(["999999999999.999999", "-0.000001", f"{r.randint(-99999, 99999)}.5"]),
                      "(i / 8)::DECIMAL(18,6)"),
    "TIMESTAMPTZ": (lambda r: r.choice(["TIMESTAMPTZ '2024-03-31 01:30:00+02'", "TIMESTAMPTZ '1999-12-31 23:59:59.999999+00'",
                                        f"TIMESTAMPTZ '2020-01-01 00:00:00+00' + INTERVAL {r.randint(0, 99999)} SECOND"]),
                    "(TIMESTAMPTZ '2021-06-01 00:00:00+00' + INTERVAL (i) HOUR)"),
    "TIME": (lambda r: r.choice(["TIME '00:00:00'", "TIME '23:59:59.999999'", f"TIME '12:{r.randint(10, 59)}:01'"]),
             "(TIME '00:00:00' + INTERVAL (i) SECOND)"),
    "INTERVAL": (lambda r: r.choice(["INTERVAL 1 DAY", "INTERVAL '1 year 2 months 3 days 04:05:06.789'",
                                     "INTERVAL 7 MINUTE", f"INTERVAL {r.randint(1, 999)} HOUR"]),
                 "(INTERVAL (i) MINUTE)"),
    "VARCHAR ": (lambda r: "'" + r.choice(["back\\slash", "tab\there", "new\nline", "per%cent_", 'dq"uote',
                                            "emoji \U0001F986", "nul-free é", "it''s ok", "z" * 300,
                                            "E''x''", "\\x41"]) + "'",
                 "repeat(chr(65 + (i % 26)::INTEGER), (i % 7)::INTEGER) || '\\' || i::VARCHAR"),
    "DATE ": (lambda r: r.choice(["DATE '0001-01-01'", "DATE '9999-12-31'", "DATE '1582-10-10'", "DATE '2000-02-29'"]),
              "(DATE '1900-01-01' + (i * 97)::INTEGER)"),
    "MAP(VARCHAR, INTEGER)": (lambda r: r.choice(["MAP {'a': 1, 'b': NULL}", "MAP {}", f"MAP {{'k{r.randint(0, 9)}': 2}}"]),
                              "MAP {'k' || (i % 3)::VARCHAR: i}"),
    # Semi-structured values: DuckLake keeps per-path statistics of them
    # (ducklake_file_variant_stats).
    "VARIANT": (lambda r: r.choice(["42::VARIANT", "'x y'::VARIANT", "{'k': 1, 's': 'a'}::VARIANT",
                                    "[1, 2, NULL]::VARIANT", f"{r.randint(-99, 99) / 4}::VARIANT",
                                    "TIMESTAMP '2024-02-29 12:00:00'::VARIANT"]),
                "CASE WHEN i % 3 = 0 THEN i::VARIANT WHEN i % 3 = 1 THEN ('v' || i::VARCHAR)::VARIANT "
                "ELSE {'k': i % 7, 'n': i / 2}::VARIANT END"),
}
# Types whose values order and compare in predicates (min/max, <, BETWEEN).
ORDERED = ["INTEGER", "BIGINT", "SMALLINT", "VARCHAR", "DOUBLE", "DECIMAL(9,2)", "DATE", "TIMESTAMP",
           "FLOAT", "TINYINT", "UBIGINT", "UINTEGER", "DECIMAL(38,10)", "DECIMAL(18,6)", "TIMESTAMPTZ",
           "TIME", "INTERVAL", "VARCHAR ", "DATE "]
# Types whose drawn values are plain literals, which DuckLake takes as column defaults.
DEFAULTABLE = ["INTEGER", "BIGINT", "SMALLINT", "VARCHAR", "DOUBLE", "DECIMAL(9,2)", "TINYINT",
               "DECIMAL(18,6)", "VARCHAR "]
# Widenings DuckLake allows in ALTER COLUMN TYPE.
PROMOTE = {"SMALLINT": ["INTEGER", "BIGINT"], "INTEGER": ["BIGINT"]}

# Catalog columns whose values are not the same on two lakes: file paths and names (UUIDs),
# times, UUIDs, encryption keys.
VOLATILE = re.compile(r"(path|uuid|time|encryption_key|file_name|schedule_start)$")
# Values that depend on the order in which a catalog server returns the rows of a scan without
# ORDER BY. PostgreSQL returns heap order, which depends on which connection inserted a row and
# on space freed in earlier pages; RockLake returns rows in write order (docs/key-encoding.md).
# DuckDB scans a table's data files in the order it got them, so the files an UPDATE or a
# compaction writes hold the same rows in another order: compressed to other sizes, split into
# partitions in another order (so numbered and given row ids in another order). And it numbers
# the delete files of one DELETE in an order of its own (two runs against one PostgreSQL
# differ). A catalog table that differs is compared again without these columns, as a
# multiset: if that matches, the difference is counted as order-dependent, not failed.
ORDER_DEPENDENT = {
    "ducklake_data_file": {"data_file_id", "file_size_bytes", "footer_size", "row_id_start"},
    "ducklake_delete_file": {"delete_file_id", "data_file_id", "file_size_bytes", "footer_size"},
    "ducklake_file_column_stats": {"data_file_id", "column_size_bytes"},
    "ducklake_file_partition_value": {"data_file_id"},
    "ducklake_files_scheduled_for_deletion": {"data_file_id"},
    "ducklake_table_stats": {"file_size_bytes"},
}
# DuckDB's "Did you mean ...?" suggests the nearest name among every relation the metadata
# database lists, and PostgreSQL lists its own system catalogs (docs/decisions/0021).
SUGGESTION_RE = re.compile(r'\nDid you mean "[^"]*"\?')
# The lakes' own times (snapshot times): generated TIMESTAMPTZ values lie before 2026.
NOW_RE = re.compile(r"datetime\.datetime\(20(?:2[6-9]|[3-9]\d),[^()]*tzinfo=<[^>]*>\)")
# UUIDs the lakes make (file names, table UUIDs); generated UUID values start with zeros.
UUID_RE = re.compile(r"(?!00000000-0000-4000-8000-)[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")


def qi(name):
    """A quoted identifier."""
    return '"' + name.replace('"', '""') + '"'


def lit(text):
    """A string literal."""
    return "'" + text.replace("'", "''") + "'"


def ref(t):
    """The lake's table or view `schema.name`."""
    schema, name = t.split(".", 1)
    return f"lake.{qi(schema)}.{qi(name)}"


# Awkward texts for names, comments and commit messages: they reach the catalog inside SQL
# string literals and come back in its rows.
AWKWARD = ["", " Mixed Case", "-dash", 'quo"te', "it's", "ü", " back\\slash", "%_", "\U0001F986"]
NOTES = ["plain", "it's quoted", "back\\slash \\x41", "new\nline", "tab\tstop", "emoji \U0001F986",
         "E'not escape'", "$$dollar$$", "percent % and _", "x" * 500, ""]


class Lake:
    """One DuckDB instance with the lake attached."""

    def __init__(self, dsn, data, inline, settings=(), encrypted=False):
        self.dsn, self.data, self.settings = dsn, data.rstrip("/") + "/", settings
        self.encrypted = encrypted
        os.makedirs(self.data, exist_ok=True)
        self.open()
        self.con.execute(f"CALL lake.set_option('data_inlining_row_limit', {inline})")

    def open(self):
        # httpfs brings the crypto module DuckDB writes encrypted Parquet files with.
        self.con = dlconn.connect(exts=("ducklake", "postgres") + (("httpfs",) if self.encrypted else ()))
        self.con.execute("SET threads = 1")
        for name, value in self.settings:
            self.con.execute(f"SET {name} = {value}")
        self.attach()

    def reopen(self):
        """A fresh DuckDB instance, after an internal error invalidated the last one."""
        try:
            self.con.close()
        except Exception:  # an invalidated database may refuse even this
            pass
        self.open()

    def attach_sql(self):
        return dlconn.attach_sql("postgres", self.data, meta=self.dsn,
                                 extra_opts="ENCRYPTED" if self.encrypted else "")

    def attach(self):
        self.con.execute(self.attach_sql())

    def mask(self, text):
        text = text.replace(self.data, "DATA/").replace(self.data.rstrip("/"), "DATA")
        text = UUID_RE.sub("<uuid>", text)
        text = NOW_RE.sub("<timestamptz>", text)
        text = SUGGESTION_RE.sub("", text)
        return re.sub(r"port=\d+", "port=N", text)

    def run(self, sql):
        try:
            cur = self.con.execute(sql)
            rows = cur.fetchall() if cur.description else []
            return ["ok", [[self.mask(repr(v)) for v in row] for row in rows]]
        except Exception as e:  # every DuckDB error is an outcome to compare
            return ["err", type(e).__name__, self.mask(str(e))[:800]]


class Gen:
    """Draws operations from a model of the lake's schemas, tables (with their columns' types)
    and views."""

    def __init__(self, rng):
        self.r = rng
        self.schemas = ["main"]
        self.tables = {}  # "schema.name" -> [(column, type)]
        self.views = []
        self.macros = []  # ("schema.name", "scalar" | "table")
        self.next_id = 0

    def sync(self, con):
        """The model from the lake's catalog, after a statement that changed it failed."""
        by_name = {t.strip(): t for t in TYPES}
        by_name.update({"TIMESTAMP WITH TIME ZONE": "TIMESTAMPTZ", "BLOB": "BLOB"})
        self.schemas = [r[0] for r in con.execute(
            "SELECT schema_name FROM duckdb_schemas() WHERE database_name = 'lake' "
            "ORDER BY schema_name").fetchall()]
        views = {f"{s}.{v}" for s, v in con.execute(
            "SELECT schema_name, view_name FROM duckdb_views() WHERE database_name = 'lake'").fetchall()}
        self.views = [v for v in self.views if v in views]
        macros = {(f"{s}.{m}", "table" if kind == "table_macro" else "scalar") for s, m, kind in con.execute(
            "SELECT schema_name, function_name, function_type FROM duckdb_functions() "
            "WHERE database_name = 'lake' AND function_type IN ('macro', 'table_macro')").fetchall()}
        self.macros = [m for m in self.macros if m in macros]
        tables = {}
        for schema, table, col, ty in con.execute(
                "SELECT schema_name, table_name, column_name, data_type FROM duckdb_columns() "
                "WHERE database_name = 'lake' AND table_name NOT IN "
                "(SELECT view_name FROM duckdb_views() WHERE database_name = 'lake') "
                "ORDER BY schema_name, table_name, column_index").fetchall():
            cols = tables.setdefault(f"{schema}.{table}", [])
            if ty in by_name:  # a column of another type gets its default in INSERTs
                cols.append((col, by_name[ty]))
        self.tables = tables

    def fresh(self, prefix):
        self.next_id += 1
        return f"{prefix}{self.next_id}"

    def fresh_name(self, prefix):
        """A new name, one in four with awkward characters (never a dot)."""
        tail = self.r.choice(AWKWARD) if self.r.random() < 0.25 else ""
        return self.fresh(prefix) + tail

    def comment(self, t):
        text = lit(self.r.choice(NOTES))
        c = self.col(t)
        if c is not None and self.r.random() < 0.5:
            return f"COMMENT ON COLUMN {ref(t)}.{qi(c[0])} IS {text}"
        return f"COMMENT ON TABLE {ref(t)} IS {text}"

    def table(self):
        return self.r.choice(sorted(self.tables)) if self.tables else None

    def col(self, t, types=None):
        cols = [c for c in self.tables[t] if types is None or c[1] in types]
        return self.r.choice(cols) if cols else None

    def pred(self, t):
        c = self.col(t, ORDERED + ["BOOLEAN"])
        if c is None or self.r.random() < 0.1:
            return "true" if self.r.random() < 0.5 else "false"
        name, ty = c
        name = qi(name)
        if ty == "BOOLEAN":
            return f"{name}" if self.r.random() < 0.5 else f"NOT {name}"
        if self.r.random() < 0.15:
            return f"{name} IS {'NOT ' if self.r.random() < 0.5 else ''}NULL"
        lit = TYPES[ty][0](self.r)
        if "nan" in lit or "inf" in lit:
            lit = "1.5"
        op = self.r.choice(["=", "<", "<=", ">", ">=", "<>"])
        p = f"{name} {op} {lit}"
        if self.r.random() < 0.25:
            p = f"({p}) {self.r.choice(['AND', 'OR'])} ({self.pred(t)})"
        return p

    # --- operations --------------------------------------------------------------------------
    def create_table(self):
        schema = self.r.choice(self.schemas)
        name = f"{schema}.{self.fresh_name('t')}"
        n = self.r.randint(1, 6)
        cols = [(self.fresh_name("c"), self.r.choice(list(TYPES))) for k in range(n)]
        if not any(ty in ORDERED for _, ty in cols):
            cols.append((self.fresh_name("c"), "INTEGER"))
        self.tables[name] = cols
        body = ", ".join(f"{qi(c)} {ty}" for c, ty in cols)
        return f"CREATE TABLE {ref(name)} ({body})"

    def insert_values(self, t):
        cols = self.tables[t]
        rows = []
        for _ in range(self.r.randint(1, 6)):
            vals = ["NULL" if self.r.random() < 0.15 else TYPES[ty][0](self.r) for _, ty in cols]
            rows.append("(" + ", ".join(vals) + ")")
        names = ", ".join(qi(c) for c, _ in cols)
        return f"INSERT INTO {ref(t)} ({names}) VALUES " + ", ".join(rows)

    def insert_range(self, t):
        cols = self.tables[t]
        lo = self.r.randint(0, 5000)
        n = self.r.choice([3, 20, 200, 3000])
        exprs = ", ".join(f"CASE WHEN i % 11 = {k} THEN NULL ELSE {TYPES[ty][1]} END"
                          for k, (_, ty) in enumerate(cols))
        names = ", ".join(qi(c) for c, _ in cols)
        return f"INSERT INTO {ref(t)} ({names}) SELECT {exprs} FROM range({lo}, {lo + n}) r(i)"

    def update(self, t):
        c = self.col(t)
        if c is None:
            return self.select(t)
        name, ty = c
        val = "NULL" if self.r.random() < 0.2 else TYPES[ty][0](self.r)
        return f"UPDATE {ref(t)} SET {qi(name)} = {val} WHERE {self.pred(t)}"

    def delete(self, t):
        return f"DELETE FROM {ref(t)} WHERE {self.pred(t)}"

    def select(self, t, at=None):
        where = self.pred(t)
        tt = f" AT (VERSION => {at})" if at is not None else ""
        c = self.col(t, ORDERED)
        if c is not None and self.r.random() < 0.4:
            name = qi(c[0])
            return (f"SELECT count(*), count({name}), min({name}), max({name}) "
                    f"FROM {ref(t)}{tt} WHERE {where}")
        return f"SELECT * FROM {ref(t)}{tt} WHERE {where} ORDER BY ALL LIMIT 40"

    def alter(self, t):
        cols = self.tables[t]
        k = self.r.random()
        if k < 0.3:
            name = self.fresh_name("c")
            ty = self.r.choice(list(TYPES))
            cols.append((name, ty))
            default = f" DEFAULT {TYPES[ty][0](self.r)}" if self.r.random() < 0.4 and ty in DEFAULTABLE else ""
            return f"ALTER TABLE {ref(t)} ADD COLUMN {qi(name)} {ty}{default}"
        if k < 0.5 and len(cols) > 1:
            c = self.r.choice(cols)
            cols.remove(c)
            return f"ALTER TABLE {ref(t)} DROP COLUMN {qi(c[0])}"
        if k < 0.7:
            i = self.r.randrange(len(cols))
            new = self.fresh_name("c")
            old = cols[i][0]
            cols[i] = (new, cols[i][1])
            return f"ALTER TABLE {ref(t)} RENAME COLUMN {qi(old)} TO {qi(new)}"
        if k < 0.8:
            promotable = [c for c in cols if c[1] in PROMOTE]
            if promotable:
                c = self.r.choice(promotable)
                ty = self.r.choice(PROMOTE[c[1]])
                cols[cols.index(c)] = (c[0], ty)
                return f"ALTER TABLE {ref(t)} ALTER COLUMN {qi(c[0])} TYPE {ty}"
        schema = t.split(".")[0]
        new = f"{schema}.{self.fresh_name('t')}"
        self.tables[new] = self.tables.pop(t)
        return f"ALTER TABLE {ref(t)} RENAME TO {qi(new.split('.')[1])}"

    def partition_key(self, t):
        """A partition key over one of the table's columns: the column itself or a transform
        (year / month / day / hour of a date or time stamp, a hash bucket)."""
        c = self.col(t, ["INTEGER", "BIGINT", "SMALLINT", "VARCHAR", "DATE", "BOOLEAN", "TIMESTAMP",
                         "TIMESTAMPTZ", "UUID"])
        if c is None:
            return None
        name, ty = c
        name = qi(name)
        if ty in ("DATE", "TIMESTAMP", "TIMESTAMPTZ") and self.r.random() < 0.7:
            units = ["year", "month", "day"] + (["hour"] if ty != "DATE" else [])
            return f"{self.r.choice(units)}({name})"
        if ty in ("INTEGER", "BIGINT", "VARCHAR", "UUID") and self.r.random() < 0.4:
            return f"bucket({self.r.choice([2, 5, 16])}, {name})"
        if ty in ("TIMESTAMPTZ", "UUID"):
            return None
        return name

    def partition(self, t):
        keys = [k for k in (self.partition_key(t) for _ in range(self.r.choice([1, 1, 2]))) if k]
        if not keys or self.r.random() < 0.25:
            return f"ALTER TABLE {ref(t)} RESET PARTITIONED BY"
        return f"ALTER TABLE {ref(t)} SET PARTITIONED BY ({', '.join(dict.fromkeys(keys))})"

    def sorted_by(self, t):
        cols = [c for c in self.tables[t] if c[1] in ORDERED]
        if not cols or self.r.random() < 0.25:
            return f"ALTER TABLE {ref(t)} RESET SORTED BY"
        keys = [f"{qi(c)} {self.r.choice(['ASC', 'DESC'])}"
                + self.r.choice(["", " NULLS FIRST", " NULLS LAST"])
                for c, _ in self.r.sample(cols, min(len(cols), self.r.randint(1, 2)))]
        return f"ALTER TABLE {ref(t)} SET SORTED BY ({', '.join(keys)})"

    def macro(self, t):
        """Create, call or drop a scalar or table macro in a schema of the lake."""
        if self.macros and self.r.random() < 0.5:
            name, kind = self.r.choice(self.macros)
            if self.r.random() < 0.3:
                self.macros.remove((name, kind))
                return f"DROP MACRO {'TABLE ' if kind == 'table' else ''}{ref(name)}"
            if kind == "table":
                return f"SELECT * FROM {ref(name)}({self.r.randint(0, 5)}) ORDER BY ALL"
            return f"SELECT {ref(name)}({self.r.randint(-9, 9)}), {ref(name)}(NULL)"
        name = f"{self.r.choice(self.schemas)}.{self.fresh_name('m')}"
        if self.r.random() < 0.5:
            self.macros.append((name, "scalar"))
            body = self.r.choice(["x + 1", "CASE WHEN x > 0 THEN 'pos' ELSE 'it''s ' || x END",
                                  "coalesce(x, -1) * 2"])
            return f"CREATE MACRO {ref(name)}(x) AS {body}"
        self.macros.append((name, "table"))
        return f"CREATE MACRO {ref(name)}(n) AS TABLE SELECT * FROM {ref(t)} ORDER BY ALL LIMIT n"

    def table_option(self, t):
        schema, name = t.split(".", 1)
        option, value = self.r.choice([("parquet_compression", self.r.choice(["zstd", "snappy", "uncompressed"])),
                                       ("parquet_row_group_size", str(self.r.choice([7, 100, 122880]))),
                                       ("data_inlining_row_limit", str(self.r.choice([0, 5, 50])))])
        return (f"CALL lake.set_option({lit(option)}, {lit(value)}, schema => {lit(schema)}, "
                f"table_name => {lit(name)})")

    def add_files(self, t):
        """Parquet written outside the lake, then registered in it ({DATA}: each lake's own
        data directory)."""
        schema, name = t.split(".", 1)
        path = "{DATA}" + self.fresh("added") + ".parquet"
        n = self.r.choice([0, 3, 50])
        return [f"COPY (SELECT * FROM {ref(t)} ORDER BY ALL LIMIT {n}) TO {lit(path)}",
                f"CALL ducklake_add_data_files('lake', {lit(name)}, {lit(path)}, schema => {lit(schema)})"]

    def feature(self, t):
        """The DuckLake features of the 1.0 catalog the rest rarely reaches."""
        k = self.r.random()
        if k < 0.25:
            return [self.sorted_by(t)]
        if k < 0.5:
            return [self.macro(t)]
        if k < 0.65:
            return [self.table_option(t)]
        if k < 0.85:
            return self.add_files(t)
        return [self.partition(t)]

    def view(self, t):
        name = f"{t.split('.')[0]}.{self.fresh_name('v')}"
        self.views.append(name)
        return f"CREATE VIEW {ref(name)} AS SELECT * FROM {ref(t)} WHERE {self.pred(t)}"

    def drop_table(self, t):
        del self.tables[t]
        # Views over it stay in the catalog; querying them is an error on both lakes alike.
        return f"DROP TABLE {ref(t)}"

    def maintenance(self):
        return self.r.choice([
            "CALL ducklake_flush_inlined_data('lake')",
            "CALL ducklake_merge_adjacent_files('lake')",
            "CALL ducklake_rewrite_data_files('lake', delete_threshold => 0.0)",
            "CALL ducklake_expire_snapshots('lake', versions => [{v}])",
            "CALL ducklake_cleanup_old_files('lake', cleanup_all => true)",
            "CHECKPOINT lake",
        ])

    def op(self, last_snapshot):
        """One operation: a list of statements, run in order on both lakes."""
        r = self.r.random()
        t = self.table()
        if t is None or r < 0.08:
            if self.r.random() < 0.15:
                s = self.fresh_name("s")
                self.schemas.append(s)
                return [f"CREATE SCHEMA lake.{qi(s)}"]
            return [self.create_table()]
        if self.r.random() < 0.08:
            return self.feature(t)
        if r < 0.30:
            return [self.insert_values(t) if self.r.random() < 0.5 else self.insert_range(t)]
        if r < 0.38:
            return [self.update(t)]
        if r < 0.46:
            return [self.delete(t)]
        if r < 0.60:
            return [self.select(t)]
        if r < 0.66:
            return [self.select(t, at=self.r.randint(0, last_snapshot))]
        if r < 0.69:
            lo = self.r.randint(0, last_snapshot)
            schema, name = t.split(".")
            return [f"SELECT * FROM ducklake_table_changes('lake', {lit(schema)}, {lit(name)}, {lo}, {last_snapshot}) "
                    "ORDER BY ALL LIMIT 60"]
        if r < 0.75:
            return [self.alter(t)]
        if r < 0.78:
            return [self.partition(t)]
        if r < 0.79:
            return [self.view(t)]
        if r < 0.81:
            return [self.comment(t)]
        if r < 0.82 and self.views:
            return [f"SELECT * FROM {ref(self.r.choice(self.views))} ORDER BY ALL LIMIT 20"]
        if r < 0.84:
            return [self.drop_table(t)]
        if r < 0.91:
            # An explicit transaction; a rolled-back one must leave the generator's model as
            # it was, so only writes that do not change the model go into one.
            body = [self.r.choice([self.insert_values, self.insert_range, self.update, self.delete])(t)
                    for _ in range(self.r.randint(1, 4))]
            if self.r.random() < 0.4:
                body.append(f"CALL ducklake_set_commit_message('lake', {lit(self.r.choice(NOTES))}, "
                            f"{lit(self.r.choice(NOTES))}, extra_info => {lit(self.r.choice(NOTES))})")
            end = "COMMIT" if self.r.random() < 0.7 else "ROLLBACK"
            return ["BEGIN"] + body + [self.select(t), end]
        if r < 0.97:
            return [self.maintenance().replace("{v}", str(self.r.randint(1, max(1, last_snapshot))))]
        return ["DETACH lake", "ATTACH"]


def probe(lake, tables):
    """What both lakes must agree on as a whole."""
    out = {}
    for t in sorted(tables):
        out[t] = lake.run(f"SELECT * FROM {ref(t)} ORDER BY ALL")
    out["comments"] = lake.run(
        "SELECT schema_name, table_name, comment, NULL FROM duckdb_tables() WHERE database_name = 'lake' "
        "UNION ALL SELECT schema_name, table_name, column_name, comment FROM duckdb_columns() "
        "WHERE database_name = 'lake' AND comment IS NOT NULL ORDER BY ALL")
    out["snapshots"] = lake.run(
        "SELECT snapshot_id, schema_version, changes::VARCHAR, author, commit_message "
        "FROM ducklake_snapshots('lake') ORDER BY snapshot_id")
    # DuckLake's catalog tables as the catalog server lists them (the inlined-data tables come
    # and go), read through DuckDB's own attachment of the metadata database.
    with psycopg.connect(lake.dsn, autocommit=True) as c:
        cat = c.execute(
            "SELECT table_name, array_agg(column_name::text ORDER BY ordinal_position) "
            "FROM information_schema.columns WHERE table_schema = 'public' "
            "AND table_name LIKE 'ducklake%' GROUP BY table_name ORDER BY table_name").fetchall()
    out["catalog tables"] = ["ok", [[t] for t, _ in cat]]
    for table, cols in cat:
        keep = [c for c in cols if not VOLATILE.search(c)]
        if keep:
            out[f"catalog.{table}"] = lake.run(
                f"SELECT {', '.join(keep)} FROM __ducklake_metadata_lake.public.{table} ORDER BY ALL")
        stable = [c for c in keep if c not in ORDER_DEPENDENT.get(table, ())]
        if stable != keep:
            out[f"order-independent catalog.{table}"] = lake.run(
                f"SELECT {', '.join(stable)} FROM __ducklake_metadata_lake.public.{table} ORDER BY ALL")
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--a", required=True)
    ap.add_argument("--b", required=True)
    ap.add_argument("--data", required=True, help="directory for the two lakes' data files")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--ops", type=int, default=300)
    ap.add_argument("--probe-every", type=int, default=25)
    ap.add_argument("--report")
    ap.add_argument("--show", type=int, default=10)
    ap.add_argument("--trace", action="store_true", help="print every operation and its snapshot")
    ap.add_argument("--setting", action="append", default=[], metavar="NAME=VALUE",
                    help="a DuckDB setting for both instances before ATTACH (e.g. pg_use_binary_copy=false)")
    args = ap.parse_args()
    settings = [tuple(s.split("=", 1)) for s in args.setting]

    rng = random.Random(args.seed)
    inline = rng.choice([0, 10])
    encrypted = rng.random() < 0.3
    lakes = [Lake(args.a, os.path.join(args.data, "a"), inline, settings, encrypted),
             Lake(args.b, os.path.join(args.data, "b"), inline, settings, encrypted)]
    gen = Gen(rng)
    diffs, counts = [], {"ops": 0, "statements": 0, "errors": 0, "rows": 0, "probes": 0,
                           "order_dependent": 0, "internal_errors": 0}
    error_kinds = {}

    def compare(what, a, b):
        if a != b:
            diffs.append({"op": counts["ops"], "what": what, "postgres": a, "rocklake": b})

    def compare_probes():
        counts["probes"] += 1
        pa, pb = (probe(lk, gen.tables) for lk in lakes)
        for k in sorted(set(pa) | set(pb)):
            if k.startswith("order-independent "):
                continue
            a, b = pa.get(k), pb.get(k)
            looser = "order-independent " + k
            if a != b and looser in pa and pa.get(looser) == pb.get(looser):
                counts["order_dependent"] += 1
            else:
                compare(f"probe {k}", a, b)
        return pa

    last = 0
    for _ in range(args.ops):
        stmts = gen.op(last)
        counts["ops"] += 1
        errs = []
        if args.trace:
            print(f"op {counts['ops']}: {' ; '.join(stmts)}", flush=True)
        for s in stmts:
            outs = [lk.run(lk.attach_sql() if s == "ATTACH" else s.replace("{DATA}", lk.data)) for lk in lakes]
            counts["statements"] += 1
            if outs[0][0] == "err":
                counts["errors"] += 1
                kind = re.sub(r"\d+|'[^']*'|\"[^\"]*\"", "_", outs[0][2].split("\n")[0])[:90]
                error_kinds[kind] = error_kinds.get(kind, 0) + 1
                errs.append(outs[0][2][:400].replace("\n", " "))
            else:
                counts["rows"] += len(outs[0][1])
            compare(s, *outs)
            if any(o[0] == "err" and o[2].startswith("INTERNAL Error") for o in outs):
                # DuckDB invalidates a database after an internal error (a DuckDB bug, on
                # PostgreSQL alike): go on with fresh instances.
                counts["internal_errors"] += 1
                for lk in lakes:
                    lk.reopen()
                break
        if stmts[0] == "BEGIN" or errs:
            # A failed statement leaves the transaction aborted and its COMMIT may fail too, and
            # some failures leave even an auto-commit statement's transaction aborted: make
            # sure neither lake is still inside one.
            for lk in lakes:
                lk.run("ROLLBACK")
        if errs:
            # What failed did not change the lake as the generator assumed: take the tables
            # and columns as they are.
            gen.sync(lakes[0].con)
        snap = [lk.run("SELECT max(snapshot_id) FROM ducklake_snapshots('lake')") for lk in lakes]
        compare("max(snapshot_id)", *snap)
        if snap[0][0] == "ok":
            last = int(snap[0][1][0][0])
        if args.trace:
            print("".join(f"    error: {e}\n" for e in errs) + f"    -> snapshot {last}", flush=True)
        if counts["ops"] % args.probe_every == 0:
            compare_probes()
    pa = compare_probes()
    counts["catalog_tables_compared"] = sum(1 for k in pa if k.startswith("catalog."))
    counts["tables"] = len(gen.tables)
    counts["last_snapshot"] = last

    summary = {"seed": args.seed, "inline": inline, "encrypted": encrypted, "settings": args.setting, **counts, "differences": len(diffs)}
    print("errors by kind:", json.dumps(sorted(error_kinds.items(), key=lambda kv: -kv[1])[:12], indent=0))
    return difflog.finish(summary, diffs, args.show, args.report, lambda d: f"op {d['op']}: {d['what']}")


if __name__ == "__main__":
    sys.exit(main())
