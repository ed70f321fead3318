#!/usr/bin/env python3
"""Run the shared DuckLake workload against a catalog server and compare the per-step
outcomes with a recorded expectation.

usage:
  run_workload.py --venv-python PY --dsn 'host=… port=… dbname=lake user=… password=…'
                  --outdir DIR --expect STEPS.json|none [--workload main|conflict]
                  [--inline-limit N] [--reference STEPS.json] [--allowed-failures STEPS.json]
                  [--compare-only RUN_STEPS.json] [--timeout S]

The workload (/work/shared/tools/workload.py or conflict_workload.py) runs with the
given interpreter and DL_PG_DSN=DSN and writes DIR/steps.json; this script then compares
it with --expect and prints a table of mismatching steps and a final line
``N passed, M failed``.  Exit status: 0 all passed, 1 some step failed, 2 the workload
could not be run / usage error.

Comparison modes
----------------
* ``--expect FILE`` (main workload): steps are matched by name.  A step passes when
  (a) both are ok or both are errors (ok-vs-error is always a failure),
  (b) for errors: the exception class and the first line of the message are equal after
      normalisation (later lines hold DuckDB's "Did you mean …" suggestions),
  (c) for ok steps: the result rows are equal after normalisation (see NORMALISATION).
  A step missing from either side fails.
* ``--expect none`` (clients without a recorded trace, e.g. DuckDB 1.4.4): outcome-only
  mode.  The outcome (ok/error) of every step must equal the one in --reference (default
  expected/steps-pg155default.json, the 1.5.5 run with the version-default inlining), except
  for steps whose outcome differs in --allowed-failures (default expected/steps-pg144.json,
  recorded with the same client against real PostgreSQL): there the run must have that
  file's outcome instead (these are things the old client itself cannot do).
* ``--workload conflict``: the conflict workload records no steps, only a summary; the check
  is "every row lands exactly once": every writer reports ok == N and no errors, the table
  holds exactly N rows per writer (rows_per_writer), exactly one writer created
  ``same_name`` and the others got DuckDB's "already exists" error (or DuckLake's commit-time
  "has been created by another transaction" conflict: which one is timing), and the snapshot count
  equals the one in --expect (1 + 1 + 3·N inserts + 1 create = deterministic). The one
  exception is DuckLake 0.3's own changes-list bug (``CLIENT_CONCAT_BUG``, timing-dependent,
  with any catalog): an INSERT it fails is reported as a note, must have left no row and no
  snapshot, and every acknowledged one must still land exactly once.

NORMALISATION (what is ignored, and why)
----------------------------------------
Generic, applied to every string in a step's results and error text:
  * data path of the run (``DATA_PATH '…'`` from the attach step) -> ``<DATA>``;
  * the catalog DSN inside ``ducklake:postgres:…`` -> ``<DSN>``;
  * UUIDs of version 7 (DuckLake's generated table/file ids, also inside file names)
    -> ``<UUID7>``; user data UUIDs (other versions) are kept;
  * ``datetime.datetime(…)`` values that fall inside the run's own wall-clock window
    (``started``-10min … ``finished``+10min, each file's own window) -> ``<NOW>``: they come
    from NOW()/now() (snapshot times, ``now()::TIMESTAMPTZ`` inserts); fixed literals such as
    2024-01-01 are kept;
  * floats with 9 or more fraction digits in (0,1) (or tiny e-notation values) ->
    ``<RANDOM>``: the workload inserts ``random()``; constants such as 1.5/2.25/nan/inf are
    kept.
Step-specific rules (STEP_RULES below), each for a value that legitimately varies:
  * show_databases: DuckDB-internal catalog OIDs of duckdb_schemas() depend on which
    client extensions are loaded -> masked;
  * table_info / list_files: Parquet file and footer sizes depend on how well random()/now()
    values compress and, for delete files, on the length of DATA_PATH (they store the data
    file's path) -> sizes masked; file counts, paths (normalised) and row counts compared;
  * table_changes: ``LIMIT 3`` without ORDER BY returns thread-scheduling-dependent rows ->
    only the (snapshot_id, change_type) of each row and the counts are compared;
  * expire_snapshots / snapshots_after_maint: ``older_than => now() - 1s`` expires a
    speed-dependent number of snapshots, and the lists are cut to 8 rows -> rows are aligned
    by snapshot id: equal where both have the id, at least one id in common, and (when not
    cut) the same newest snapshot; when one list is cut and they share no id (a faster run
    keeps more), each must be consecutive ids but for the ones expired by id (2, 3);
  * attach_at_snapshot / final_reattach_summary: a snapshot id/count derived from that
    speed-dependent number -> only "an integer" is compared;
  * select_at_snapshot: the tables at that snapshot (the middle of what expiry kept): a fast
    run's middle snapshot can precede the creation of ``s1.in_txn`` -> every other table must
    be there, nothing else, in order;
  * time_travel_timestamp: ``AT (TIMESTAMP => now() - INTERVAL 1 SECOND)`` sees whichever
    snapshot was current one second earlier (180001 or 200000 rows seen, depending on speed)
    -> only "one integer count" is compared; a run whose steps before it took less than one
    second in all may instead get DuckDB's "No snapshot found at timestamp" (the lake is
    younger than the cut-off), and one whose steps since ``create_table_events`` did, "Table
    with name events does not exist at timestamp" (the table is);
  * cleanup_old_files: the files old enough to delete follow from that speed-dependent expiry
    -> only "a non-empty list of DuckLake Parquet files under DATA" is compared;
  * concurrent_second_process: counts seen by the concurrent reader and durations depend
    on timing -> only that every main/reader/writer operation was ok (5 each) and stderr
    holds no error is compared.
Never compared: ``seconds`` (duration), ``sql`` (source text, contains object addresses),
``started``/``finished``, the client ``versions`` (printed as information only).
"""
from __future__ import annotations

import argparse
import ast
import datetime as dt
import json
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
TOOLS = os.environ.get("ROCKLAKE_SHARED_TOOLS", "/work/shared/tools")
WORKLOADS = {"main": "workload.py", "conflict": "conflict_workload.py"}
NOW_SLACK = dt.timedelta(minutes=10)

# ---------------------------------------------------------------- generic normalisation
UUID_RE = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-([0-9a-f])[0-9a-f]{3}-[0-9a-f]{4}-[0-9a-f]{12}", re.I)
DATETIME_RE = re.compile(r"datetime\.datetime\((\d+), (\d+), (\d+)(?:, (\d+))?(?:, (\d+))?(?:, (\d+))?(?:, (\d+))?"
                         r"(?:, tzinfo=[^)]*\)?)?\)")
RANDOM_FLOAT_RE = re.compile(r"(?<![\w.'\"])(?:0\.\d{9,}|\d\.\d{6,}e-\d+)(?![\w'\"])")
DSN_RE = re.compile(r"ducklake:postgres:[^']*")
DATA_PATH_RE = re.compile(r"DATA_PATH '([^']*)'")


class Context:
    """Per-file facts used by the normaliser: data path and the run's wall-clock window."""

    def __init__(self, doc: dict):
        self.data_path = None
        for st in doc.get("steps", []):
            for r in st.get("results") or []:
                m = DATA_PATH_RE.search(r) if isinstance(r, str) else None
                if m:
                    self.data_path = m.group(1).rstrip("/")
                    break
            if self.data_path:
                break
        self.window = None
        if doc.get("started"):
            t0 = dt.datetime.fromisoformat(doc["started"])
            t1 = dt.datetime.fromisoformat(doc.get("finished") or doc["started"])
            self.window = (t0 - NOW_SLACK, t1 + NOW_SLACK)

    def _dt(self, m: re.Match) -> str:
        parts = [int(x) if x else 0 for x in m.groups()]
        try:
            v = dt.datetime(*parts[:6], parts[6])
        except ValueError:
            return m.group(0)
        if self.window and self.window[0] <= v <= self.window[1]:
            return "<NOW>"
        return m.group(0)

    def text(self, s: str) -> str:
        s = DSN_RE.sub("ducklake:postgres:<DSN>", s)
        if self.data_path:
            s = s.replace(self.data_path, "<DATA>")
        s = UUID_RE.sub(lambda m: "<UUID7>" if m.group(1) == "7" else m.group(0), s)
        s = DATETIME_RE.sub(self._dt, s)
        s = RANDOM_FLOAT_RE.sub("<RANDOM>", s)
        return s

    def value(self, v):
        if isinstance(v, str):
            return self.text(v)
        if isinstance(v, list):
            return [self.value(x) for x in v]
        if isinstance(v, dict):
            return {k: self.value(x) for k, x in v.items()}
        return v


# ---------------------------------------------------------------- step-specific rules
def _mask_fields(row: str, idx: set[int]) -> str:
    """Mask the top-level fields ``idx`` of a tuple repr ``(a, b, …)``."""
    if not (row.startswith("(") and row.endswith(")")):
        return row
    fields = _split_top(row[1:-1])
    return "(" + ", ".join("<MASKED>" if i in idx else f for i, f in enumerate(fields)) + ")"


def _split_top(s: str) -> list[str]:
    out, depth, cur, q = [], 0, [], None
    for ch in s:
        if q:
            cur.append(ch)
            if ch == q:
                q = None
            continue
        if ch in "'\"":
            q = ch
        elif ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        elif ch == "," and depth == 0:
            out.append("".join(cur).strip())
            cur = []
            continue
        cur.append(ch)
    if cur:
        out.append("".join(cur).strip())
    return out


def rule_mask(result_idx: int, fields: set[int]):
    def f(results):
        r = list(results)
        if result_idx < len(r) and isinstance(r[result_idx], list):
            r[result_idx] = [_mask_fields(x, fields) if isinstance(x, str) and x != "..." else x
                             for x in r[result_idx]]
        return r
    return f


def rule_table_changes(results):
    """Keep (snapshot_id, change_type) of the LIMIT-3 rows and the counts."""
    out = []
    for r in results:
        if isinstance(r, str):
            head = re.findall(r"\((\d+), \d+, '(\w+)'", r)
            counts = re.findall(r"\[\((\d+),\)\]", r)
            out.append({"limit_rows": head, "counts": counts})
        else:
            out.append(r)
    return out


def rule_cleanup(results):
    """Which files are old enough to clean depends on the speed-dependent expire step: keep
    only that the result is a non-empty list of DuckLake Parquet files under the data path."""
    out = []
    for r in results:
        if isinstance(r, list):
            ok = bool(r) and all(re.fullmatch(r"\('<DATA>/[^']*ducklake-<UUID7>(-delete)?\.parquet',\)", x) for x in r)
            out.append("<PARQUET FILES UNDER DATA>" if ok else r)
        else:
            out.append(r)
    return out


def rule_int_only(results):
    return ["<INT>" if isinstance(r, str) and re.fullmatch(r"\[?\(?\d+,?\)?\]?", r) else r for r in results]


def rule_unordered(results):
    """DuckDB produces these rows itself, without ORDER BY, from its own parallel execution
    (``ducklake_flush_inlined_data`` walks the inlined tables in hash order): compare as sets."""
    return [sorted(r, key=str) if isinstance(r, list) else r for r in results]


def rule_single_count(results):
    """Each result set must still be exactly one ``(integer,)`` row."""
    return [[re.sub(r"^\(\d+,\)$", "(<INT>,)", x) for x in r] if isinstance(r, list) else r for r in results]


def rule_concurrent(results):
    out = []
    for r in results:
        try:
            d = ast.literal_eval(r)
        except Exception:  # noqa: BLE001
            out.append(r)
            continue
        summary = {"main": d.get("main")}
        for role in ("reader", "writer"):
            arr = None
            for line in reversed(str(d.get(role, "")).splitlines()):
                if line.startswith("["):
                    try:
                        arr = json.loads(line)
                    except ValueError:
                        pass
                    break
            summary[role] = None if arr is None else [bool(x.get("ok")) for x in arr]
            err = str(d.get(role + "_err", ""))
            summary[role + "_err_has_error"] = bool(re.search(r"Error|Traceback", err))
        out.append(summary)
    return out


STEP_RULES = {
    "flush_inlined_data": rule_unordered,
    "show_databases": rule_mask(1, {0, 2}),
    "table_info": rule_mask(0, {5, 7}),
    "list_files": rule_mask(0, {1, 2, 5, 6}),
    "table_changes": rule_table_changes,
    "time_travel_timestamp": rule_single_count,
    "cleanup_old_files": rule_cleanup,
    "attach_at_snapshot": rule_int_only,
    "final_reattach_summary": rule_int_only,
    "concurrent_second_process": rule_concurrent,
}
# (step name, result index) whose snapshot row lists are compared with _window_ok
WINDOW_RESULTS = {("expire_snapshots", 1), ("snapshots_after_maint", 0)}
# (step name, result index) listing the tables at attach_at_snapshot's speed-dependent snapshot
# (the middle of what expiry kept), and the tables created late enough to be missing there: a
# faster run keeps more snapshots, so its middle one can precede them.
AT_SNAPSHOT_RESULTS = {("select_at_snapshot", 0): {"('in_txn',)"}}


def normalised_step(step: dict, ctx: Context) -> dict:
    out = {"ok": bool(step.get("ok"))}
    if out["ok"]:
        res = ctx.value(step.get("results") or [])
        rule = STEP_RULES.get(step["name"])
        out["results"] = rule(res) if rule else res
    else:
        err = ctx.text(step.get("error") or "")
        out["error"] = err.splitlines()[0] if err else ""
    return out


# Snapshots the workload expires by id (``ducklake_expire_snapshots(versions => [2, 3])``)
# before it expires by age: a run fast enough that nothing is older than the cut-off keeps
# every other snapshot, with this gap.
EXPIRED_BY_ID = {2, 3}
# How young the lake's first snapshot may be for ``AT (TIMESTAMP => now() - INTERVAL 1 SECOND)``
# to find no snapshot: the steps before it took less than this in all.
TIME_TRAVEL_WINDOW_S = 1.0


def _consecutive(ids) -> bool:
    """Consecutive snapshot ids, but for the ones expired by id."""
    lo, hi = min(ids), max(ids)
    present = set(ids) | (EXPIRED_BY_ID & set(range(lo, hi + 1)))
    return sorted(present) == list(range(lo, hi + 1)) and len(present) == len(set(ids)) + len(EXPIRED_BY_ID & set(range(lo, hi + 1)))


def _window_ok(a: list, b: list) -> bool:
    """Two lists of ``(snapshot_id, …)`` rows taken from the same history at different cut-offs.

    Rows are aligned by snapshot id: rows with the same id must be identical and at least
    one id must be common (unless both are empty); when neither list was truncated to 8 rows
    ("..."), both must end at the same newest snapshot. When one was truncated and they have
    no id in common (a faster run keeps a longer window), each must be consecutive ids.
    """
    truncated = "..." in a or "..." in b
    a = [x for x in a if x != "..."]
    b = [x for x in b if x != "..."]
    if not a or not b:
        return not a and not b

    def by_id(rows):
        out = {}
        for r in rows:
            m = re.match(r"\((\d+),", r) if isinstance(r, str) else None
            if not m:
                return None
            out[int(m.group(1))] = r
        return out

    ia, ib = by_id(a), by_id(b)
    if ia is None or ib is None:
        return a == b
    common = set(ia) & set(ib)
    if not common and truncated:
        # The runs kept different time windows (expiry by age keeps what is younger than the
        # cut-off, so a faster run keeps more), and a truncated list shows only its oldest
        # rows: the windows need not overlap, nor be as long. What still must hold: each is a
        # run of consecutive snapshot ids (expiry by age removes a prefix of the history).
        return all(_consecutive(i) for i in (ia, ib))
    if not common or any(ia[k] != ib[k] for k in common):
        return False
    return truncated or max(ia) == max(ib)


def compare_step(name: str, got: dict, exp: dict) -> str | None:
    """None when equal, else a short description of the difference."""
    if got["ok"] != exp["ok"]:
        return (f"expected {'ok' if exp['ok'] else 'error'}, got "
                f"{'ok' if got['ok'] else 'error: ' + got.get('error', '')[:160]}")
    if not got["ok"]:
        return None if got["error"] == exp["error"] else f"error text: {got['error'][:120]!r} != {exp['error'][:120]!r}"
    gr, er = got["results"], exp["results"]
    if len(gr) != len(er):
        return f"{len(gr)} result sets, expected {len(er)}"
    for i, (g, e) in enumerate(zip(gr, er)):
        late = AT_SNAPSHOT_RESULTS.get((name, i))
        if late is not None and isinstance(g, list) and isinstance(e, list):
            if not (set(g) <= set(e) and set(e) - set(g) <= late and g == sorted(g)):
                return f"result {i}: tables at the snapshot: got {g} expected {e} (only {sorted(late)} may be missing)"
        elif (name, i) in WINDOW_RESULTS and isinstance(g, list) and isinstance(e, list):
            if not _window_ok(g, e):
                return f"result {i}: snapshot lists not consistent: {str(g)[:150]} vs {str(e)[:150]}"
        elif g != e:
            return f"result {i}: got {json.dumps(g, default=str)[:200]} expected {json.dumps(e, default=str)[:200]}"
    return None


# ---------------------------------------------------------------- comparisons
def _too_young_for_time_travel(run: dict, step: dict) -> bool:
    """True when the step failed only because what it reads is younger than one second: DuckDB
    finds no snapshot at ``now() - 1 s`` when every step before took less than that in all, and
    no table ``events`` there when the steps after ``create_table_events`` did. (The steps'
    own seconds leave out the gaps between them, so they add up to less than the real age:
    the error cannot have come from youth when they add up to a second or more.)"""
    if step.get("ok"):
        return False
    error = str(step.get("error", ""))
    if "No snapshot found at timestamp" in error:
        since = None
    elif "Table with name events does not exist at timestamp" in error:
        since = "create_table_events"
    else:
        return False
    before, counting = 0.0, since is None
    for s in run.get("steps", []):
        if s is step or s.get("name") == step.get("name"):
            break
        if counting:
            before += float(s.get("seconds") or 0.0)
        counting = counting or s.get("name") == since
    return counting and before < TIME_TRAVEL_WINDOW_S


def compare_main(run: dict, exp: dict) -> list[tuple[str, str | None]]:
    rc, ec = Context(run), Context(exp)
    rsteps = {s["name"]: s for s in run.get("steps", [])}
    esteps = {s["name"]: s for s in exp.get("steps", [])}
    rows = []
    for name in list(esteps) + [n for n in rsteps if n not in esteps]:
        if name not in rsteps:
            rows.append((name, "missing from this run"))
        elif name not in esteps:
            rows.append((name, "not in the expected file"))
        elif name == "time_travel_timestamp" and _too_young_for_time_travel(run, rsteps[name]):
            rows.append((name, None))
        else:
            rows.append((name, compare_step(name, normalised_step(rsteps[name], rc),
                                            normalised_step(esteps[name], ec))))
    return rows


def compare_outcomes(run: dict, ref: dict, allowed: dict | None) -> list[tuple[str, str | None]]:
    rsteps = {s["name"]: s for s in run.get("steps", [])}
    refs = {s["name"]: s for s in ref.get("steps", [])}
    alw = {s["name"]: s for s in (allowed or {}).get("steps", [])}
    rows = []
    for name in list(refs) + [n for n in rsteps if n not in refs]:
        r = rsteps.get(name)
        want = refs.get(name)
        if name in alw and (want is None or bool(alw[name]["ok"]) != bool(want["ok"])):
            want = alw[name]  # the old client's own limitation, recorded against PostgreSQL
        if r is None:
            rows.append((name, "missing from this run"))
        elif want is None:
            rows.append((name, "not in the reference file"))
        elif bool(r["ok"]) != bool(want["ok"]):
            rows.append((name, f"expected {'ok' if want['ok'] else 'error'}, got "
                               f"{'ok' if r['ok'] else 'error: ' + (r.get('error') or '')[:160]}"))
        else:
            rows.append((name, None))
    return rows


def _writer_stats(summary: dict) -> list[dict]:
    out = []
    for w in summary.get("writers", []):
        line = next((ln for ln in reversed(w.get("stdout", "").splitlines()) if ln.startswith("{")), None)
        try:
            out.append(json.loads(line) if line else {"unparsable": w.get("stdout", "")[-300:]})
        except ValueError:
            out.append({"unparsable": line[-300:]})
    return out


# DuckLake 0.3 (DuckDB 1.4.x) joins the other transactions' changes for its commit-time conflict
# check with `STRING_AGG(changes_made, '')`: no separator. When a `created_table:"main"."x"`
# entry is followed by another snapshot's entry, its parser reads both as one value and the
# commit fails with this error, whatever the catalog database (fixed upstream in
# duckdb/ducklake cb30c0d4, "Correctly string_agg multiple changes made in
# GetSnapshotAndStatsAndChanges"). It needs a writer whose transaction began before another's
# CREATE TABLE and commits after a third commit: timing, not the catalog.
CLIENT_CONCAT_BUG = "Failed to parse catalog entry - trailing data after quoted value"


def compare_conflict(run: dict, exp: dict, n_per_writer: int) -> list[tuple[str, str | None]]:
    rs, es = run.get("summary", {}), exp.get("summary", {})
    ws = _writer_stats(rs)
    rows = []
    nw = len(es.get("writers", [])) or 3
    rows.append(("writers_reported", None if len(ws) == nw and all("unparsable" not in w for w in ws)
                 else f"{len(ws)} writer reports, unparsable: {[w for w in ws if 'unparsable' in w]}"))
    client_bug = 0
    # Only the DuckDB 1.4 client (DuckLake 0.3) has the bug; with 1.5 the message is a failure.
    old_client = str((run.get("versions") or {}).get("duckdb", "")).startswith("1.4.")
    for i, w in enumerate(ws):
        errors = w.get("errors") or []
        known = [e for e in errors if old_client and CLIENT_CONCAT_BUG in e]
        client_bug += len(known)
        bad = w.get("ok", 0) + len(known) != n_per_writer or len(known) != len(errors)
        rows.append((f"writer{i}_all_inserts_ok",
                     None if not bad else f"ok={w.get('ok')} errors={str(errors)[:200]}"))
    if client_bug:
        print(f"note: {client_bug} INSERT(s) failed with DuckLake 0.3's own changes-list bug "
              f"({CLIENT_CONCAT_BUG!r}); the rows acknowledged must still land exactly once")
    # Every acknowledged INSERT lands exactly once (and one that failed not at all).
    counts = {int(a): int(b) for a, b in rs.get("rows_per_writer", [])}
    want = {i: w.get("ok") for i, w in enumerate(ws) if w.get("ok")}
    rows.append(("every_row_lands_exactly_once", None if counts == want else f"rows per writer {counts} != {want}"))
    created = [w.get("create_same_name") for w in ws]
    n_ok = sum(1 for c in created if c == "ok")
    # A process that loses the race gets DuckDB's "already exists" when it saw the winner's
    # table before planning, or DuckLake's commit-time "Transaction conflict ... has been
    # created by another transaction already" when both planned first: which one is timing.
    n_exists = sum(1 for c in created if isinstance(c, str) and (
        "already exists" in c or "has been created by another transaction" in c
        or (old_client and CLIENT_CONCAT_BUG in c)))
    rows.append(("same_name_created_exactly_once",
                 None if n_ok == 1 and n_exists == len(created) - 1 else f"create_same_name outcomes: {created}"))
    # One snapshot per acknowledged INSERT: those the client bug failed made none.
    want_snapshots = (es.get("snapshots") or 0) - client_bug
    rows.append(("snapshot_count", None if rs.get("snapshots") == want_snapshots
                 else f"{rs.get('snapshots')} snapshots, expected {want_snapshots}"))
    return rows


# ---------------------------------------------------------------- driver
def infer_inline_limit(exp: dict | None) -> int:
    for s in (exp or {}).get("steps", []):
        if s["name"] == "set_option_inlining_limit":
            m = re.search(r"data_inlining_row_limit',\s*(\d+)", json.dumps(s.get("sql")))
            if m:
                return int(m.group(1))
    return 0


def run_workload(py: str, dsn: str, outdir: str, workload: str, inline_limit: int, timeout: float) -> int:
    env = dict(os.environ, DL_PG_DSN=dsn, DL_INLINE_LIMIT=str(inline_limit))
    env.pop("DL_TRACE_MARKERS", None)
    cmd = [py, os.path.join(TOOLS, WORKLOADS[workload]), outdir, "--kind", "postgres"]
    print(f"running: DL_INLINE_LIMIT={inline_limit} DL_PG_DSN='{dsn}' {' '.join(cmd)}", flush=True)
    log = outdir.rstrip("/") + ".log"
    with open(log, "w") as f:
        try:
            p = subprocess.run(cmd, stdout=f, stderr=subprocess.STDOUT, env=env, timeout=timeout)
        except subprocess.TimeoutExpired:
            print(f"workload timed out after {timeout}s (log: {log})")
            return 124
    print(f"workload exit status {p.returncode} (log: {log})")
    if p.returncode != 0:
        # The log goes with the test's temporary directory: show its end here, so a crash of
        # the client (a signal, an uncaught exception) can be read from the test's output.
        with open(log, errors="replace") as f:
            tail = f.readlines()[-40:]
        print("---- end of the workload's log ----")
        print("".join(tail), end="")
        print("----")
    return p.returncode


def load(path):
    with open(path) as f:
        return json.load(f)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--venv-python")
    ap.add_argument("--dsn")
    ap.add_argument("--outdir", required=True)
    ap.add_argument("--expect", required=True, help="expected steps JSON, or 'none' (outcome-only mode)")
    ap.add_argument("--workload", choices=list(WORKLOADS), default="main")
    ap.add_argument("--inline-limit", type=int, help="DL_INLINE_LIMIT (default: as in the expected/reference file)")
    ap.add_argument("--reference", default=os.path.join(HERE, "expected", "steps-pg155default.json"))
    ap.add_argument("--allowed-failures", default=os.path.join(HERE, "expected", "steps-pg144.json"))
    ap.add_argument("--writer-rows", type=int, default=30, help="conflict workload: inserts per writer (--n)")
    ap.add_argument("--compare-only", help="skip running; compare this existing steps.json")
    ap.add_argument("--timeout", type=float, default=1800)
    a = ap.parse_args(argv)

    exp = None if a.expect == "none" else load(a.expect)
    ref = load(a.reference) if a.expect == "none" and a.workload == "main" else None
    inline = a.inline_limit if a.inline_limit is not None else infer_inline_limit(exp or ref)

    if a.compare_only:
        steps_path = a.compare_only
    else:
        if not (a.venv_python and a.dsn):
            ap.error("--venv-python and --dsn are required unless --compare-only")
        rc = run_workload(a.venv_python, a.dsn, os.path.abspath(a.outdir), a.workload, inline, a.timeout)
        steps_path = os.path.join(a.outdir, "steps.json")
        if not os.path.exists(steps_path):
            print(f"no {steps_path} (workload exit {rc})")
            print("0 passed, 1 failed")
            return 2
    run = load(steps_path)
    print(f"client: {json.dumps(run.get('versions'))}")
    if exp is not None:
        print(f"expected from: {a.expect} (client {exp.get('versions', {}).get('duckdb')})")

    if a.workload == "conflict":
        if exp is None:
            ap.error("the conflict workload needs --expect (steps-pg155conflict.json)")
        rows = compare_conflict(run, exp, a.writer_rows)
    elif exp is None:
        allowed = load(a.allowed_failures) if a.allowed_failures and os.path.exists(a.allowed_failures) else None
        print(f"outcome-only mode: reference {a.reference}, allowed client limitations "
              f"{a.allowed_failures if allowed else '(none)'}")
        rows = compare_outcomes(run, ref, allowed)
    else:
        rows = compare_main(run, exp)

    failed = [(n, d) for n, d in rows if d]
    if failed:
        w = max(len(n) for n, _ in failed)
        print(f"{'step'.ljust(w)}  difference")
        for n, d in failed:
            print(f"{n.ljust(w)}  {d}")
    print(f"{len(rows) - len(failed)} passed, {len(failed)} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
