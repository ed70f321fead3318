#!/usr/bin/env python3
"""The DuckDB phases split at the wire in bench/RESULTS.md (session 26): fresh ATTACH, 100
single-row auto-commit INSERTs, 50 CREATE TABLEs, each phase's client and server time read
from a running `wire_split.py` proxy that the DSN points at.

usage: WIRE_SPLIT_STATS=stats.json wire_split_workload.py "host=127.0.0.1 port=PROXY ..." DATA_DIR

Prints one JSON object: per phase the wall time, this process's CPU, and the proxy's deltas.
The proxy counts the idle gap before a phase's first packet as client time: the driver waits
0.25 s before reading the proxy's totals, so subtract 250 ms from the INSERT and CREATE phases'
client time (ATTACH opens a new connection and has no such gap).
"""
import json
import os
import statistics
import sys
import time

here = os.path.dirname(os.path.abspath(__file__))
shared = os.environ.get("ROCKLAKE_SHARED") or os.path.join(here, "..", "..", "..", "shared")
sys.path.insert(0, os.path.join(shared, "tools"))
import dlconn  # noqa: E402

dsn, data = sys.argv[1], sys.argv[2]
stats_path = os.environ["WIRE_SPLIT_STATS"]


def proxy_totals():
    time.sleep(0.25)  # the proxy rewrites its totals every 50 ms
    with open(stats_path) as f:
        return json.load(f)


def delta(before, after):
    return {k: round((after[k] - before[k]) * 1000, 2) if isinstance(after[k], float)
            else after[k] - before[k] for k in after}


os.makedirs(data, exist_ok=True)
con = dlconn.connect(exts=("ducklake", "postgres"))
out = {}


def phase(name, body):
    p0, c0, t0 = proxy_totals(), time.process_time(), time.perf_counter()
    extra = body()
    out[name] = {"wall_ms": round((time.perf_counter() - t0) * 1000, 2),
                 "cpu_ms": round((time.process_time() - c0) * 1000, 2),
                 "proxy_ms": delta(p0, proxy_totals()), **(extra or {})}


phase("attach", lambda: con.execute(
    dlconn.attach_sql("postgres", data.rstrip("/") + "/", meta=dsn)) and None)
con.execute("CREATE TABLE lake.t (i INTEGER, s VARCHAR)")


def inserts():
    lat = []
    for i in range(100):
        t0 = time.perf_counter()
        con.execute("INSERT INTO lake.t VALUES (?, 'x')", [i])
        lat.append(time.perf_counter() - t0)
    return {"median_ms": round(statistics.median(lat) * 1000, 3)}


phase("insert_100", inserts)
phase("create_50", lambda: [con.execute(f"CREATE TABLE lake.c_{i} (a INTEGER, b VARCHAR)")
                            for i in range(50)] and None)
print(json.dumps(out))
