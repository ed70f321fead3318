#!/usr/bin/env python3
"""One run of `cargo xtask bench replica`: how long after the writer acknowledges a COMMIT a
read replica (`rocklake serve --read-only` on the same catalog) answers with the new row.
Prints one JSON object on the last line.

usage: replica_bench.py --writer DSN --replica DSN [--commits 40] [--rows 100000]

The writer gets a table `filler` of --rows rows first (a replica reloads its whole copy of the
catalog when the writer's commit sequence moves, so the lag grows with the catalog), then a
table `t`. Each round commits one row into `t` on the writer (auto-commit) and polls the
replica every 2 ms with `SELECT max(x) FROM t` until it returns that row.

  lag_ms_p50 / lag_ms_p90 / lag_ms_max   over the rounds
  commit_ms_p50                          the writer's own INSERT (acknowledged commit)
"""
import argparse
import io
import json
import statistics
import time

import psycopg

ap = argparse.ArgumentParser()
ap.add_argument("--writer", required=True)
ap.add_argument("--replica", required=True)
ap.add_argument("--commits", type=int, default=40)
ap.add_argument("--rows", type=int, default=100_000)
args = ap.parse_args()

w = psycopg.connect(args.writer, autocommit=True)
w.execute("CREATE TABLE filler (id BIGINT PRIMARY KEY, path TEXT, n BIGINT)")
with w.cursor().copy("COPY filler (id, path, n) FROM STDIN") as cp:
    buf = io.StringIO()
    for i in range(args.rows):
        buf.write(f"{i}\tdata/file-{i:08d}.parquet\t{i * 7}\n")
    cp.write(buf.getvalue())
w.execute("CREATE TABLE t (x BIGINT)")

r = psycopg.connect(args.replica, autocommit=True)


def replica_max():
    try:
        return r.execute("SELECT max(x) FROM t").fetchone()[0]
    except psycopg.errors.UndefinedTable:
        return None


# The replica first catches up with the filler and the new table.
deadline = time.monotonic() + 120
while replica_max() is None and time.monotonic() < deadline:
    time.sleep(0.05)
assert r.execute("SELECT count(*) FROM filler").fetchone()[0] == args.rows, "replica misses rows"

lags, commits = [], []
for i in range(1, args.commits + 1):
    t0 = time.monotonic()
    w.execute("INSERT INTO t VALUES (%s)", (i,))
    acked = time.monotonic()
    commits.append((acked - t0) * 1000)
    while True:
        got = replica_max()
        if got == i:
            break
        assert got is None or got < i, f"replica answered {got} before {i} was committed"
        if time.monotonic() - acked > 60:
            raise SystemExit(f"replica did not show commit {i} within 60 s")
        time.sleep(0.002)
    lags.append((time.monotonic() - acked) * 1000)
    # Spread the commits over the poll interval, so the rounds do not all land in one phase.
    time.sleep(0.037)

lags.sort()
out = {
    "rows": args.rows,
    "commits": args.commits,
    "lag_ms_p50": round(statistics.median(lags), 1),
    "lag_ms_p90": round(lags[int(len(lags) * 0.9) - 1], 1),
    "lag_ms_max": round(lags[-1], 1),
    "commit_ms_p50": round(statistics.median(commits), 2),
}
print(json.dumps(out), flush=True)
