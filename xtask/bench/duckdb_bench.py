#!/usr/bin/env python3
"""One run of the DuckLake catalog workload of `cargo xtask bench duckdb` against one catalog
server (RockLake or PostgreSQL), given its libpq DSN. Prints one JSON object on the last line.

usage: duckdb_bench.py --dsn "host=... port=... dbname=lake user=... password=..." --data-path DIR
                       [--snapshots 1000] [--inserts 100] [--tables 200]

Metrics (all on a fresh, empty catalog; DuckDB in this process, the server over TCP):
  attach_fresh_ms       ATTACH of the empty catalog (DuckLake creates its ~28 tables)
  insert_1row_ms        median of 100 single-row auto-commit INSERTs (each its own snapshot); _p90 too
  create_tables_s       200 x CREATE TABLE (auto-commit), total
  grow_s / grow_inserts single-row auto-commit INSERTs until the lake has 1000 snapshots
  insert_1row_late_ms   median of the last 100 of those
  list_snapshots_ms     median of 5 x SELECT * FROM ducklake_snapshots('lake') at 1000 snapshots
With --metrics URL (RockLake's /metrics), also the server's own statement time of the same phases
(the sum of rocklake_statement_seconds over every statement class), so that the wall time splits
into time inside statements and the rest (DuckDB's own work, round trips, and RockLake's protocol
handling outside statements: Parse/Describe/Bind, framing):
  attach_server_ms, insert_1row_server_ms (mean of the 100), create_tables_server_s
Always, the CPU time of this process (DuckDB's threads and Python) in the same phases: the
client's own work, which no catalog server can take away:
  attach_client_cpu_ms, insert_1row_client_cpu_ms (mean of the 100), create_tables_client_cpu_s

Needs dlconn.py (ROCKLAKE_SHARED/tools, or ../shared/tools beside the checkout) on the path.
"""
import argparse
import json
import os
import statistics
import sys
import time
import urllib.request

here = os.path.dirname(os.path.abspath(__file__))
shared = os.environ.get("ROCKLAKE_SHARED") or os.path.join(here, "..", "..", "..", "shared")
sys.path.insert(0, os.path.join(shared, "tools"))
import dlconn  # noqa: E402

ap = argparse.ArgumentParser()
ap.add_argument("--dsn", required=True)
ap.add_argument("--data-path", required=True)
ap.add_argument("--snapshots", type=int, default=1000)
ap.add_argument("--inserts", type=int, default=100)
ap.add_argument("--tables", type=int, default=200)
ap.add_argument("--metrics", help="RockLake's /metrics URL: also report server-side statement time")
args = ap.parse_args()

os.makedirs(args.data_path, exist_ok=True)
con = dlconn.connect(exts=("ducklake", "postgres"))
attach = dlconn.attach_sql("postgres", args.data_path.rstrip("/") + "/", meta=args.dsn)


def timed(sql, params=None):
    t0 = time.perf_counter()
    con.execute(sql, params) if params is not None else con.execute(sql)
    try:
        con.fetchall()
    except Exception:  # statements without a result set
        pass
    return time.perf_counter() - t0


def server_seconds():
    """Total statement time the server reports so far (None without --metrics)."""
    if not args.metrics:
        return None
    text = urllib.request.urlopen(args.metrics, timeout=10).read().decode()
    return sum(float(line.split()[-1]) for line in text.splitlines()
               if line.startswith("rocklake_statement_seconds_sum{"))


def server_delta(before, scale, digits=3):
    after = server_seconds()
    return None if before is None else round((after - before) * scale, digits)


def nsnap():
    return con.execute("SELECT count(*) FROM ducklake_snapshots('lake')").fetchone()[0]


r = {"ducklake": dlconn.versions(con)["extensions"].get("ducklake"), "duckdb": dlconn.versions(con)["duckdb"]}
s0 = server_seconds()
c0 = time.process_time()
r["attach_fresh_ms"] = round(timed(attach) * 1000, 3)
r["attach_client_cpu_ms"] = round((time.process_time() - c0) * 1000, 3)
r["attach_server_ms"] = server_delta(s0, 1000)
con.execute("CREATE TABLE lake.t (i INTEGER, s VARCHAR)")

s0 = server_seconds()
c0 = time.process_time()
lat = sorted(timed("INSERT INTO lake.t VALUES (?, 'x')", [i]) * 1000 for i in range(args.inserts))
r["insert_1row_client_cpu_ms"] = round((time.process_time() - c0) * 1000 / args.inserts, 3)
r["insert_1row_server_ms"] = server_delta(s0, 1000 / args.inserts)
r["insert_1row_mean_ms"] = round(statistics.mean(lat), 3)
r["insert_1row_ms"] = round(statistics.median(lat), 3)
r["insert_1row_p90_ms"] = round(lat[min(len(lat) - 1, int(len(lat) * 0.9) - 1)], 3)

s0 = server_seconds()
c0 = time.process_time()
t0 = time.perf_counter()
for i in range(args.tables):
    con.execute(f"CREATE TABLE lake.c_{i} (a INTEGER, b VARCHAR)")
r["create_tables_s"] = round(time.perf_counter() - t0, 3)
r["create_tables_client_cpu_s"] = round(time.process_time() - c0, 3)
r["create_tables_server_s"] = server_delta(s0, 1)

n = nsnap()
late = []
t0 = time.perf_counter()
i = 0
while n < args.snapshots:
    late.append(timed("INSERT INTO lake.t VALUES (?, 'y')", [100000 + i]))
    i += 1
    n += 1
r["grow_s"] = round(time.perf_counter() - t0, 3)
r["grow_inserts"] = i
r["snapshots"] = nsnap()
r["insert_1row_late_ms"] = round(statistics.median(late[-100:]) * 1000, 3) if late else None
lst = [timed("SELECT * FROM ducklake_snapshots('lake')") for _ in range(5)]
r["list_snapshots_ms"] = round(statistics.median(lst) * 1000, 3)
r["t_rows"] = con.execute("SELECT count(*) FROM lake.t").fetchone()[0]
con.execute("DETACH lake")
con.close()
print(json.dumps(r), flush=True)
