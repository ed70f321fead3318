#!/usr/bin/env python3
"""Concurrent DuckLake writers with invariants: several DuckDB processes run random transactions
on one lake at the same time, then the lake is compacted, and every committed change must be
there exactly once, every failed one not at all, and every snapshot must read the same later.

usage: lakeconc.py --dsn DSN --data DIR [--seed N] [--writers N] [--txns N]
                   [--maintenance LIST] [--after LIST] [--report OUT.json]

The shared workload's conflict test has three processes insert rows. Here each writer owns the
rows of its own id `w` in two shared tables and in tables of its own, and draws transactions
of several statements: inserts (inline-sized and Parquet-sized), UPDATE and DELETE of its own
rows by predicates, CREATE / DROP of its own tables, rollbacks. Writers conflict on the
catalog all the time (every commit takes the next snapshot id; DuckLake retries on 23505) and
sometimes on data (DuckLake refuses some concurrent deletes on the same table): a transaction
that fails leaves the writer's model as it was, one that commits applies to it. After the
writers and the checks below, inlined data is flushed, files are merged and rewritten and the
lake checkpointed, and every writer's rows are checked once more.

Maintenance runs beside the writers only when asked (`--maintenance flush,merge,rewrite,
checkpoint`): with DuckDB 1.5.5, a flush, merge or rewrite that commits while writers UPDATE and
DELETE leaves some updated rows twice, and after a compaction some earlier snapshots read rows
deleted at them (five writers, seeds 5 and 7: 5 to 74 violations, with PostgreSQL as the
catalog as with RockLake) — DuckLake's conflict detection and time travel, not the catalog.

Checked, per writer:
- after each commit, its own rows read back equal its model (read-your-writes), and the
  snapshot that commit made is recorded with the model's rows;
- at the end, through a fresh connection: its rows now equal its model, and its rows at every
  recorded snapshot (`AT (VERSION => s)`) equal what it recorded then — so no commit of another
  process, no compaction and no retry changed what a committed snapshot holds;
- its own tables are exactly the ones it created and did not drop;
- after the compaction, its rows still equal its model.

Prints a summary; exit status 1 on any violation.
"""
import argparse
import json
import os
import random
import subprocess
import sys
import time

here = os.path.dirname(os.path.abspath(__file__))
shared = os.environ.get("ROCKLAKE_SHARED") or os.path.join(here, "..", "..", "..", "shared")
sys.path.insert(0, os.path.join(shared, "tools"))
import dlconn  # noqa: E402

SHARED_TABLES = ["shared_a", "shared_b"]
MAINTENANCE = {
    "flush": "CALL ducklake_flush_inlined_data('lake')",
    "merge": "CALL ducklake_merge_adjacent_files('lake')",
    "rewrite": "CALL ducklake_rewrite_data_files('lake', delete_threshold => 0.0)",
    "checkpoint": "CHECKPOINT lake",
}


def connect(dsn, data):
    con = dlconn.connect(exts=("ducklake", "postgres"))
    con.execute(dlconn.attach_sql("postgres", data, meta=dsn))
    return con


def own_rows(con, table, w, at=None):
    tt = f" AT (VERSION => {at})" if at is not None else ""
    return [list(r) for r in con.execute(
        f"SELECT k, v, n FROM lake.main.{table}{tt} WHERE w = {w} ORDER BY k").fetchall()]


def writer(args):
    w, rng = args.wid, random.Random(args.seed * 1000 + args.wid)
    con = connect(args.dsn, args.data)
    model = {t: {} for t in SHARED_TABLES}  # table -> {k: [v, n]}
    own_tables = set()
    history = []  # (snapshot, table, rows)
    out = {"wid": w, "committed": 0, "failed": 0, "violations": [], "errors": {}}
    next_k = 0
    start = float(os.environ["LAKECONC_START"])
    while time.time() < start:
        time.sleep(0.001)
    for i in range(args.txns):
        table = rng.choice(SHARED_TABLES)
        rows = model[table]
        staged = {t: dict(m) for t, m in model.items()}
        stmts, new_tables, dropped = [], set(), set()
        for _ in range(rng.randint(1, 3)):
            kind = rng.random()
            if kind < 0.45 or not rows:
                n = rng.choice([1, 3, 40, 1500])
                stmts.append(f"INSERT INTO lake.main.{table} SELECT {w}, {next_k} + i, 'w{w}-' || i::VARCHAR, i "
                             f"FROM range({n}) r(i)")
                for j in range(n):
                    staged[table][next_k + j] = [f"w{w}-{j}", j]
                next_k += n
            elif kind < 0.65:
                m = rng.randint(2, 7)
                stmts.append(f"UPDATE lake.main.{table} SET v = 'u{i}', n = n + 1 WHERE w = {w} AND k % {m} = 0")
                for k, val in staged[table].items():
                    if k % m == 0:
                        staged[table][k] = [f"u{i}", val[1] + 1]
            elif kind < 0.8:
                m = rng.randint(2, 9)
                stmts.append(f"DELETE FROM lake.main.{table} WHERE w = {w} AND k % {m} = 1")
                staged[table] = {k: v for k, v in staged[table].items() if k % m != 1}
            elif kind < 0.9 or not own_tables - dropped:
                name = f"own_{w}_{len(stmts)}_{i}"
                stmts.append(f"CREATE TABLE lake.main.{name} AS SELECT i AS x FROM range({rng.randint(1, 50)}) r(i)")
                new_tables.add(name)
            else:
                left = sorted(own_tables - dropped)
                if not left:
                    continue
                name = rng.choice(left)
                stmts.append(f"DROP TABLE lake.main.{name}")
                dropped.add(name)
        rollback = rng.random() < 0.1
        try:
            con.execute("BEGIN")
            for s in stmts:
                con.execute(s)
            if rollback:
                con.execute("ROLLBACK")
            else:
                con.execute("COMMIT")
        except Exception as e:
            out["failed"] += 1
            kind = " ".join(str(e).split())[:300]
            out["errors"][kind] = out["errors"].get(kind, 0) + 1
            try:
                con.execute("ROLLBACK")
            except Exception:
                pass
            continue
        if rollback:
            continue
        out["committed"] += 1
        model = staged
        own_tables = (own_tables | new_tables) - dropped
        # Read-your-writes, and the snapshot this commit made (the latest one this writer
        # sees may be a later one of another writer: its rows are the same then).
        snap = con.execute("SELECT max(snapshot_id) FROM ducklake_snapshots('lake')").fetchone()[0]
        for t in SHARED_TABLES:
            want = [[k, *v] for k, v in sorted(model[t].items())]
            got = own_rows(con, t, w)
            if got != want:
                out["violations"].append(f"after commit {i}: {t} has {len(got)} own rows, model {len(want)}")
            if rng.random() < 0.3:
                history.append((snap, t, want))
    # Everything again through a fresh connection, after every writer and the compactor.
    out["history"] = history
    out["model"] = {t: [[k, *v] for k, v in sorted(m.items())] for t, m in model.items()}
    out["own_tables"] = sorted(own_tables)
    print(json.dumps(out))


def maintenance(args):
    con = connect(args.dsn, args.data)
    start = float(os.environ["LAKECONC_START"])
    while time.time() < start:
        time.sleep(0.001)
    done = {"ok": 0, "failed": 0}
    stop = os.path.join(args.data, "writers-done")
    calls = [MAINTENANCE[m] for m in args.maintenance.split(",") if m]
    i = 0
    while calls and not os.path.exists(stop):
        try:
            con.execute(calls[i % len(calls)]).fetchall()
            done["ok"] += 1
        except Exception:  # a conflict with a writer's commit: the next call goes on
            done["failed"] += 1
        i += 1
        time.sleep(0.05)
    print(json.dumps(done))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--dsn", required=True)
    ap.add_argument("--data", required=True)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--writers", type=int, default=3)
    ap.add_argument("--txns", type=int, default=40)
    ap.add_argument("--maintenance", default="",
                    help="what the maintenance process calls in turn beside the writers "
                         "(comma-separated of flush, merge, rewrite, checkpoint; empty: nothing)")
    ap.add_argument("--after", default="flush,merge,rewrite,checkpoint",
                    help="what is called once after the writers, before the final checks")
    ap.add_argument("--report")
    ap.add_argument("--role", default="main")
    ap.add_argument("--wid", type=int, default=0)
    args = ap.parse_args()
    args.data = os.path.abspath(args.data).rstrip("/") + "/"
    if args.role == "writer":
        return writer(args)
    if args.role == "maintenance":
        return maintenance(args)

    os.makedirs(args.data, exist_ok=True)
    con = connect(args.dsn, args.data)
    con.execute(f"CALL lake.set_option('data_inlining_row_limit', {random.Random(args.seed).choice([0, 10])})")
    for t in SHARED_TABLES:
        con.execute(f"CREATE TABLE lake.main.{t} (w INTEGER, k BIGINT, v VARCHAR, n BIGINT)")
    con.close()

    env = dict(os.environ, LAKECONC_START=str(time.time() + 3.0))
    base = [sys.executable, os.path.abspath(__file__), "--dsn", args.dsn, "--data", args.data,
            "--seed", str(args.seed), "--txns", str(args.txns), "--maintenance", args.maintenance]
    procs = [subprocess.Popen(base + ["--role", "writer", "--wid", str(w)], env=env,
                              stdout=subprocess.PIPE, text=True) for w in range(args.writers)]
    # A maintenance process beside the writers only when it has something to call.
    maint = subprocess.Popen(base + ["--role", "maintenance"], env=env, stdout=subprocess.PIPE,
                             text=True) if args.maintenance else None
    results = []
    for p in procs:
        stdout, _ = p.communicate()
        results.append(json.loads(stdout.strip().splitlines()[-1]) if p.returncode == 0 and stdout.strip()
                       else {"violations": [f"writer exited with {p.returncode}"], "committed": 0})
    open(os.path.join(args.data, "writers-done"), "w").close()
    maint_res, violations = {}, []
    if maint is not None:
        mout, _ = maint.communicate()
        if maint.returncode != 0 or not mout.strip():
            violations.append(f"maintenance exited with {maint.returncode}")
        else:
            maint_res = json.loads(mout.strip().splitlines()[-1])

    con = connect(args.dsn, args.data)
    tables = {r[0] for r in con.execute(
        "SELECT table_name FROM duckdb_tables() WHERE database_name = 'lake'").fetchall()}
    checked_snapshots = 0

    def check_current(when):
        for r in results:
            w = r.get("wid")
            for t, want in r.get("model", {}).items():
                got = own_rows(con, t, w)
                if got != want:
                    violations.append(f"writer {w}: {t} {when} {len(got)} own rows, committed {len(want)}")

    check_current("ends with")
    for r in results:
        violations += [f"writer {r.get('wid')}: {v}" for v in r.get("violations", [])]
        w = r.get("wid")
        if w is None:
            continue
        for snap, t, want in r["history"]:
            checked_snapshots += 1
            got = own_rows(con, t, w, at=snap)
            if got != want:
                violations.append(f"writer {w}: {t} at snapshot {snap} holds {len(got)} own rows, "
                                  f"{len(want)} when committed")
        own = sorted(x for x in tables if x.startswith(f"own_{w}_"))
        if own != r["own_tables"]:
            violations.append(f"writer {w}: own tables {own}, committed {r['own_tables']}")
    # Compaction must not change what the lake holds now. (Time travel to before it is not
    # checked after it: with DuckDB 1.5.5 some earlier snapshots then read rows deleted at
    # them, with PostgreSQL as the catalog too.)
    for m in (m for m in args.after.split(",") if m):
        con.execute(MAINTENANCE[m]).fetchall()
    check_current("after compaction holds")
    summary = {
        "seed": args.seed,
        "maintenance_beside": args.maintenance,
        "after": args.after,
        "writers": args.writers,
        "committed": sum(r.get("committed", 0) for r in results),
        "failed": sum(r.get("failed", 0) for r in results),
        "snapshots_rechecked": checked_snapshots,
        "maintenance": maint_res,
        "snapshots": con.execute("SELECT count(*) FROM ducklake_snapshots('lake')").fetchone()[0],
        "violations": len(violations),
    }
    errors = {}
    for r in results:
        for k, n in r.get("errors", {}).items():
            errors[k] = errors.get(k, 0) + n
    print(json.dumps(summary))
    print("failed transactions by error:", json.dumps(errors, indent=0))
    for v in violations[:20]:
        print("VIOLATION", v)
    if args.report:
        with open(args.report, "w") as f:
            json.dump({"summary": summary, "violations": violations, "errors": errors}, f, indent=1)
    print("RESULT", json.dumps(summary))
    return 1 if violations else 0


if __name__ == "__main__":
    sys.exit(main())
