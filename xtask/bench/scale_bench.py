#!/usr/bin/env python3
"""One run of `cargo xtask bench scale` against one catalog server (RockLake or PostgreSQL),
given its libpq DSN. Prints progress on stderr and one JSON object on the last stdout line.

usage: scale_bench.py --dsn DSN --data-path DIR --server-pid PID
                      [--tables 20000] [--files 30000] [--columns 200] [--repeat 7]

Build (every catalog row arrives through DuckLake's own statements or their exact shapes):
  * DuckDB attaches the empty catalog and creates `big` (--columns BIGINT columns) and inserts
    one row: DuckLake writes one Parquet file, its data-file row and its column stats.
  * --tables small tables are created by DuckDB itself, 1000 per transaction, with DuckLake's
    default settings (data inlining on: each also gets an inlined-data table).
  * --files - 1 more data files of `big` (all naming that one Parquet file, each claiming one
    row) with --columns stats rows each, inserted with DuckLake's multi-row
    `INSERT INTO ducklake_data_file VALUES (…), …` / `ducklake_file_column_stats` shapes; file k's
    stats give c0 the range [10k, 10k] so a filter on c0 prunes every file but the real one.
Measured (DuckDB numbers: medians of 3 fresh processes):
  attach_ms             ATTACH in a fresh DuckDB instance (attach_first_ms: the first of them)
  show_all_tables_ms    first SHOW ALL TABLES after that ATTACH (loads the whole catalog)
  filtered_query_first_ms / filtered_query_ms
                        SELECT c1 FROM lake.big WHERE c0 = <real value> (prunes to one file): the
                        first after ATTACH, then the median of --repeat (DuckLake re-reads the
                        snapshot, data files and stats in every query's transaction)
  filtered_query_after_commit_ms
  filtered_query_client_cpu_ms / filtered_query_after_commit_client_cpu_ms
                        CPU time of the DuckDB process during those queries (medians)
  filtered_query_catalog_ms / filtered_query_after_commit_catalog_ms
                        the rest of those queries' wall time (wall - DuckDB's CPU, median):
                        the catalog's overhead per query
                        the same query, each right after a one-row INSERT into a small table
                        (median of --repeat): RockLake's copy cache is empty then
  catalog_read_ms       the catalog statements DuckDB sends for that query, replayed with
                        psycopg on one connection (latest snapshot, c0's stats, the table's data
                        files and delete files), COPY results read in full
  catalog_read_after_commit_ms
                        the same, each right after another client's commit that rewrote a row
                        in every range they read (median): nothing kept is reused
  server_rss_mb         resident memory of the server (all its processes) after the run
  server_rss_idle_mb    the same after --idle-s seconds without statements (RockLake returns
                        heap freed in bulk at most every 30 s: decision record 0017)
  server_heap_mb, server_mirror_mb, server_core_memory_mb
                        RockLake only (with --metrics-url): its heap in use, the part of it the
                        store's mirror holds, and the core component's linear memory
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time

here = os.path.dirname(os.path.abspath(__file__))
shared = os.environ.get("ROCKLAKE_SHARED") or os.path.join(here, "..", "..", "..", "shared")
sys.path.insert(0, os.path.join(shared, "tools"))
import dlconn  # noqa: E402
import psycopg  # noqa: E402

ap = argparse.ArgumentParser()
ap.add_argument("--dsn", required=True)
ap.add_argument("--data-path", required=True)
ap.add_argument("--server-pid", type=int, required=True)
ap.add_argument("--metrics-url", help="RockLake's /metrics, for its memory gauges")
ap.add_argument("--tables", type=int, default=20000)
ap.add_argument("--files", type=int, default=30000)
ap.add_argument("--columns", type=int, default=200)
ap.add_argument("--repeat", type=int, default=7)
ap.add_argument("--idle-s", type=float, default=35.0)
args = ap.parse_args()
os.makedirs(args.data_path, exist_ok=True)
data_path = args.data_path.rstrip("/") + "/"
REAL = 12345  # c0 of the one real row


def log(msg):
    print(f"[scale {time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def attach(con):
    con.execute(dlconn.attach_sql("postgres", data_path, meta=args.dsn,
                                  extra_opts="DATA_INLINING_ROW_LIMIT 0"))


def rss_mb(pid):
    """Resident memory of a process and its children (PostgreSQL runs one per connection)."""
    total = 0
    todo = [pid]
    while todo:
        p = todo.pop()
        try:
            with open(f"/proc/{p}/status") as f:
                for line in f:
                    if line.startswith("VmRSS:"):
                        total += int(line.split()[1])
            with open(f"/proc/{p}/task/{p}/children") as f:
                todo.extend(int(c) for c in f.read().split())
        except OSError:
            pass
    return round(total / 1024, 1)


r = {}
t_build = time.perf_counter()
con = dlconn.connect(exts=("ducklake", "postgres"))
r["duckdb"] = dlconn.versions(con)["duckdb"]
attach(con)
cols = ", ".join(f"c{i} BIGINT" for i in range(args.columns))
con.execute(f"CREATE TABLE lake.big ({cols})")
vals = ", ".join(str(REAL if i == 0 else i) for i in range(args.columns))
con.execute(f"INSERT INTO lake.big VALUES ({vals})")
log("big table created with one Parquet file")
# The small tables with DuckLake's default settings: data inlining on, so each also gets its
# inlined-data table (`ducklake_inlined_data_<id>_<version>`), a relation DuckDB's ATTACH
# introspects in the catalog database.
con.execute("DETACH lake")
con.execute(dlconn.attach_sql("postgres", data_path, meta=args.dsn))
for start in range(0, args.tables, 1000):
    con.execute("BEGIN")
    for i in range(start, min(start + 1000, args.tables)):
        con.execute(f"CREATE TABLE lake.t{i} (id BIGINT, name VARCHAR, v DOUBLE)")
    con.execute("COMMIT")
    log(f"{min(start + 1000, args.tables)} small tables")
con.close()

meta = psycopg.connect(args.dsn, autocommit=True, prepare_threshold=None)
snap, next_file = meta.execute(
    "SELECT snapshot_id, next_file_id FROM ducklake_snapshot ORDER BY snapshot_id DESC LIMIT 1"
).fetchone()
table_id = meta.execute(
    "SELECT table_id FROM ducklake_table WHERE table_name = 'big' AND end_snapshot IS NULL"
).fetchone()[0]
df_cols = [c.name for c in meta.execute("SELECT * FROM ducklake_data_file LIMIT 0").description]
real_file = meta.execute(
    "SELECT * FROM ducklake_data_file WHERE table_id = %s", (table_id,)
).fetchone()
st_cols = [c.name for c in meta.execute("SELECT * FROM ducklake_file_column_stats LIMIT 0").description]
real_stats = meta.execute(
    "SELECT * FROM ducklake_file_column_stats WHERE table_id = %s ORDER BY column_id", (table_id,)
).fetchall()
c0_id = meta.execute(
    "SELECT column_id FROM ducklake_column WHERE table_id = %s AND column_name = 'c0'", (table_id,)
).fetchone()[0]


def lit(v):
    if v is None:
        return "NULL"
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int, float)):
        return str(v)
    return "'" + str(v).replace("'", "''") + "'"


def insert_rows(table, columns, rows):
    """DuckLake's commit shape: one multi-row INSERT per table, many per transaction."""
    with meta.transaction():
        for i in range(0, len(rows), 1000):
            chunk = rows[i:i + 1000]
            values = ", ".join("(" + ", ".join(lit(v) for v in row) + ")" for row in chunk)
            meta.execute(f"INSERT INTO {table} ({', '.join(columns)}) VALUES {values}")


fid_at = df_cols.index("data_file_id")
row_at = df_cols.index("row_id_start")
file_at = st_cols.index("data_file_id")
col_at = st_cols.index("column_id")
min_at, max_at = st_cols.index("min_value"), st_cols.index("max_value")
per_txn = max(1, 40000 // max(1, args.columns))  # files per transaction
first = next_file
for start in range(0, args.files - 1, per_txn):
    files, stats = [], []
    for k in range(start, min(start + per_txn, args.files - 1)):
        fid = first + k
        row = list(real_file)
        row[fid_at] = fid
        row[row_at] = 1 + k
        files.append(row)
        for s in real_stats:
            srow = list(s)
            srow[file_at] = fid
            if srow[col_at] == c0_id:
                srow[min_at] = srow[max_at] = str(10 * k)
            stats.append(srow)
    insert_rows("ducklake_data_file", df_cols, files)
    insert_rows("ducklake_file_column_stats", st_cols, stats)
    if (start // per_txn) % 10 == 0:
        log(f"{start + len(files)} extra data files")
meta.execute(
    "UPDATE ducklake_snapshot SET next_file_id = %s WHERE snapshot_id = %s",
    (first + args.files, snap),
)
meta.execute(
    "UPDATE ducklake_table_stats SET record_count = %s, next_row_id = %s WHERE table_id = %s",
    (args.files, args.files, table_id),
)
n_stats = meta.execute("SELECT count(*) FROM ducklake_file_column_stats").fetchone()[0]
n_tables = meta.execute("SELECT count(*) FROM ducklake_table").fetchone()[0]
r["build_s"] = round(time.perf_counter() - t_build, 1)
r["stats_rows"] = n_stats
r["tables"] = n_tables
log(f"built in {r['build_s']} s: {n_tables} tables, {n_stats} stats rows")


def median_ms(fn, n):
    xs = []
    for _ in range(n):
        t0 = time.perf_counter()
        fn()
        xs.append((time.perf_counter() - t0) * 1000)
    return round(statistics.median(xs), 2), round(max(xs), 2)


meta.close()
# ATTACH, the first SHOW ALL TABLES and the filtered query, each round in a fresh process (a
# fresh DuckDB, as a new client would be; psycopg's libpq stays out of DuckDB's process).
MEASURE = r"""
import json, statistics, sys, time
sys.path.insert(0, sys.argv[1])
import dlconn
dsn, data_path, real, tables, repeat = sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5]), int(sys.argv[6])
c = dlconn.connect(exts=("ducklake", "postgres"))
t0 = time.perf_counter()
c.execute(dlconn.attach_sql("postgres", data_path, meta=dsn, extra_opts="DATA_INLINING_ROW_LIMIT 0"))
attach = (time.perf_counter() - t0) * 1000
t0 = time.perf_counter()
shown = len(c.execute("SHOW ALL TABLES").fetchall())
show = (time.perf_counter() - t0) * 1000
if shown == 0:
    sys.exit(3)  # DuckDB sometimes lists nothing on the first call after ATTACH (PostgreSQL too)
assert shown == tables, f"SHOW ALL TABLES listed {shown} tables, expected {tables}"
# Not count(*): DuckLake answers that from file statistics without pruning by the filter.
q = f"SELECT c1 FROM lake.big WHERE c0 = {real}"
t0 = time.perf_counter()
got = c.execute(q).fetchall()
first = (time.perf_counter() - t0) * 1000
assert got == [(1,)], f"filtered query returned {got}"
xs, xc, xo = [], [], []
for _ in range(repeat):
    t0, c0 = time.perf_counter(), time.process_time()
    c.execute(q).fetchall()
    xs.append((time.perf_counter() - t0) * 1000)
    xc.append((time.process_time() - c0) * 1000)
    xo.append(xs[-1] - xc[-1])
# The same query right after a commit (a one-row insert into a small table): RockLake drops
# the kept results the commit wrote into (the latest snapshot's; not the big table's files).
ys, yc, yo = [], [], []
for i in range(repeat):
    c.execute(f"INSERT INTO lake.t0 VALUES ({i}, 'bump', 0.5)")
    t0, c0 = time.perf_counter(), time.process_time()
    c.execute(q).fetchall()
    ys.append((time.perf_counter() - t0) * 1000)
    yc.append((time.process_time() - c0) * 1000)
    yo.append(ys[-1] - yc[-1])
print(json.dumps({"attach": attach, "show": show, "first": first, "warm": statistics.median(xs),
                  "after_commit": statistics.median(ys), "warm_cpu": statistics.median(xc),
                  "after_commit_cpu": statistics.median(yc), "warm_outside": statistics.median(xo),
                  "after_commit_outside": statistics.median(yo)}))
"""
rounds = []
empty_listings = 0
while len(rounds) < 3:
    out = subprocess.run(
        [sys.executable, "-c", MEASURE, os.path.join(shared, "tools"), args.dsn, data_path,
         str(REAL), str(args.tables + 1), str(args.repeat)],
        capture_output=True, text=True,
    )
    if out.returncode == 3 and empty_listings < 10:
        empty_listings += 1
        continue
    if out.returncode != 0:
        sys.exit(f"DuckDB measurement failed:\n{out.stdout}\n{out.stderr}")
    rounds.append(json.loads(out.stdout.strip().splitlines()[-1]))
med = lambda k: round(statistics.median(x[k] for x in rounds), 1)  # noqa: E731
r["attach_ms"] = med("attach")
# The first round's ATTACH is the first introspection of the built catalog (RockLake keeps
# catalog query results until the registry changes; the later rounds reuse them).
r["attach_first_ms"] = round(rounds[0]["attach"], 1)
r["show_all_tables_ms"] = med("show")
r["filtered_query_first_ms"] = med("first")
r["filtered_query_ms"] = med("warm")
r["filtered_query_after_commit_ms"] = med("after_commit")
# DuckDB's own CPU (its process) in those queries: work no catalog server can take away.
r["filtered_query_client_cpu_ms"] = med("warm_cpu")
r["filtered_query_after_commit_client_cpu_ms"] = med("after_commit_cpu")
# The rest of each query's wall time (median of wall - DuckDB's CPU, query by query): the
# catalog server's answers and the wire, what the catalog adds to a query.
r["filtered_query_catalog_ms"] = med("warm_outside")
r["filtered_query_after_commit_catalog_ms"] = med("after_commit_outside")
r["empty_first_listings"] = empty_listings
log(f"DuckDB: {rounds}")

# The catalog statements behind that query (DuckDB 1.5 / DuckLake 1.0 shapes, traces pg155).
stmts = [
    ("copy", 'COPY (SELECT "snapshot_id","schema_version","next_catalog_id","next_file_id" FROM ('
             "SELECT snapshot_id, schema_version, next_catalog_id, next_file_id FROM \"public\".ducklake_snapshot "
             "WHERE snapshot_id = ( SELECT MAX(snapshot_id) FROM \"public\".ducklake_snapshot )"
             ") AS __unnamed_subquery ) TO STDOUT (FORMAT \"binary\")"),
    ("copy", 'COPY (SELECT "data_file_id","value_count","max_value","min_value" FROM ('
             f"SELECT data_file_id, value_count, max_value, min_value FROM \"public\".ducklake_file_column_stats "
             f"WHERE column_id = {c0_id} AND table_id = {table_id}"
             ") AS __unnamed_subquery ) TO STDOUT (FORMAT \"binary\")"),
    ("copy", 'COPY (SELECT "data_file_id","table_id","begin_snapshot","end_snapshot","path","path_is_relative",'
             '"file_size_bytes","footer_size","row_id_start","partial_max","mapping_id" FROM "public"."ducklake_data_file" '
             f"WHERE \"table_id\" = '{table_id}' AND \"begin_snapshot\" <= '{snap}') TO STDOUT (FORMAT \"binary\")"),
    ("copy", 'COPY (SELECT "table_id","begin_snapshot","end_snapshot","data_file_id","path","path_is_relative",'
             '"format","file_size_bytes","footer_size" FROM "public"."ducklake_delete_file" '
             f"WHERE \"table_id\" = '{table_id}' AND \"begin_snapshot\" <= '{snap}') TO STDOUT (FORMAT \"binary\")"),
]
# prepare_threshold=None: the simple/unnamed extended protocol on both servers, as DuckDB uses.
replay = psycopg.connect(args.dsn, autocommit=True, prepare_threshold=None)


def catalog_read():
    nbytes = 0
    with replay.transaction():
        replay.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ")
        cur = replay.cursor()
        for _, sql in stmts:
            with cur.copy(sql) as cp:
                for chunk in cp:
                    nbytes += len(chunk)
    return nbytes


r["catalog_read_bytes"] = catalog_read()
r["catalog_read_ms"], r["catalog_read_max_ms"] = median_ms(catalog_read, args.repeat)


def catalog_read_after_commit():
    # Another client's commit first, rewriting (unchanged) a row in each range these reads
    # cover, the same on both servers: RockLake drops kept results and scanned ranges that a
    # commit wrote into (and only those), so the reads run against the store again.
    with replay.transaction():
        replay.execute("UPDATE ducklake_snapshot SET schema_version = schema_version "
                       "WHERE snapshot_id = (SELECT MAX(snapshot_id) FROM ducklake_snapshot)")
        replay.execute("UPDATE ducklake_data_file SET footer_size = footer_size "
                       "WHERE table_id = %s AND data_file_id = %s", (table_id, real_file[fid_at]))
        replay.execute("UPDATE ducklake_file_column_stats SET value_count = value_count "
                       "WHERE table_id = %s AND column_id = %s AND data_file_id = %s",
                       (table_id, c0_id, real_file[fid_at]))
    t0, c0 = time.perf_counter(), time.process_time()
    catalog_read()
    return (time.perf_counter() - t0) * 1000, (time.process_time() - c0) * 1000


xs = [catalog_read_after_commit() for _ in range(args.repeat)]
r["catalog_read_after_commit_ms"] = round(statistics.median(w for w, _ in xs), 2)
# psycopg's own CPU in them (Python's cost per COPY row, the same on both servers).
r["catalog_read_after_commit_client_cpu_ms"] = round(statistics.median(c for _, c in xs), 2)
r["server_rss_mb"] = rss_mb(args.server_pid)
if args.metrics_url:
    # RockLake's memory gauges, sampled by the scrape (docs/configuration.md, /metrics).
    import urllib.request
    text = urllib.request.urlopen(args.metrics_url, timeout=10).read().decode()
    for key, series in [("server_heap_mb", "rocklake_heap_bytes"),
                        ("server_mirror_mb", "rocklake_mirror_bytes"),
                        ("server_core_memory_mb", "rocklake_core_memory_bytes")]:
        for line in text.splitlines():
            if line.startswith(series + " "):
                r[key] = float(line.split()[1]) / 1e6
time.sleep(args.idle_s)
r["server_rss_idle_mb"] = rss_mb(args.server_pid)
print(json.dumps(r), flush=True)
