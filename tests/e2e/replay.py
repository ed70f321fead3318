#!/usr/bin/env python3
"""Differential replay of a recorded DuckDB↔PostgreSQL session against two servers.

usage:
  replay.py --trace /work/shared/traces/statements-<run>.jsonl.gz
            --a 'host=127.0.0.1 port=P dbname=lake user=postgres password=postgres'   (reference)
            --b 'host=127.0.0.1 port=Q dbname=lake user=U password=W'                 (under test)
            [--report OUT.json] [--min-match FRACTION] [--shapes shapes-<run>.json]
            [--sqlstate-only] [--block-timeout S] [--hang-timeout S] [--limit N]

Both servers must start from an empty ``lake`` database.  For every recorded connection the
replay opens one socket per server and sends, exchange by exchange, exactly the client
messages of the trace (SSLRequest, StartupMessage + SCRAM-SHA-256, simple Query, Parse+Sync,
Describe+Sync, COPY FROM STDIN data, Terminate) with ``pgwire.py``.

Ordering: the trace's ``order`` field is the file position, which is grouped by connection,
NOT a global time order; exchanges are therefore replayed sorted by their capture time ``t``
(ties by ``order``), which reproduces the interleaving of concurrent connections.  A
request that does not complete within --block-timeout (default 1 s) is left running (it is
waiting for a lock held by another connection, e.g. a duplicate ``ducklake_snapshot`` key
of an uncommitted transaction) and the replay continues with the other connections; the
next request on that connection first waits up to --hang-timeout for it.

COPY FROM STDIN: the trace keeps only the first 3 decoded rows of the client's COPY data
(hex fields).  When that is the whole stream (rows == sampled rows) it is re-encoded exactly
(and the re-encoded length is checked against the recorded byte count); otherwise the
recorded rows are sent and the exchange is counted under ``copy_in_partial`` in the report.
Both servers get identical data either way.

Comparison unit = statement: every statement of a simple query (the response is split at
CommandComplete / EmptyQueryResponse / ErrorResponse; statements skipped after an error must
be skipped on both sides), and one unit per SSL/startup/Parse/Describe/Terminate exchange.
Compared per unit: backend message types in order; RowDescription (column name, type OID,
typmod, format); number of DataRows and their values; CommandComplete tags; COPY response
formats; the decoded binary COPY tuples; ErrorResponse/NoticeResponse SQLSTATE and message
(SQLSTATE only with --sqlstate-only); ParameterStatus; ReadyForQuery status.

Normalised (NORMALISATION):
  * timestamps produced by the servers' NOW(): timestamp/timestamptz values (text results by
    RowDescription type, binary COPY fields by the inner SELECT's types from shapes-<run>.json,
    or any 8-byte field when the types are unknown) that fall inside the replay's own
    wall-clock window -> ``<NOW>``.  Timestamps copied from the trace's SQL are older than the
    window and are compared as they are;
  * OID-valued columns (types oid 26, regclass 2205 in text results, oid in COPY) -> renamed
    by a per-server first-seen bijection (``oid#1``, ``oid#2``…), so object identities must
    correspond but their numbers may differ;
  * ``version()`` text -> ``PostgreSQL <major>``; ParameterStatus ``server_version`` ->
    major version;
  * authentication: only that it ends in AuthenticationOk (the method may differ);
    BackendKeyData: only its presence; RowDescription table OID/attnum/typlen: not compared.
UUIDs, file paths and other client-generated values need no normalisation: they are
literals in the replayed SQL, so both servers receive the same ones.

Output: JSON report (--report) and the lines
  ``replay <run>: X/Y statements match (Z%)``  and  ``N passed, M failed``.
Exit status: 0 when every statement matched (or the match fraction >= --min-match),
1 otherwise, 2 on usage/connection errors.
"""
from __future__ import annotations

import argparse
import datetime as dt
import gzip
import json
import os
import re
import select
import struct
import sys
import time
import uuid

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pgwire import Session, decode_binary_copy, encode_binary_copy  # noqa: E402

PG_EPOCH = dt.datetime(2000, 1, 1, tzinfo=dt.timezone.utc)
TS_OIDS = {1184, 1114}
OID_OIDS = {26, 2205}
TERMINATORS = {"CommandComplete", "EmptyQueryResponse", "ErrorResponse"}
TEXT_TS_RE = re.compile(r"^(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d(?:\.\d+)?)([+-]\d\d(?::?\d\d)?)?$")


def parse_dsn(dsn: str) -> dict:
    d = dict(kv.split("=", 1) for kv in dsn.split())
    return {"host": d.get("host", "127.0.0.1"), "port": int(d.get("port", 5432)), "user": d.get("user", "postgres"),
            "password": d.get("password", ""), "dbname": d.get("dbname", "lake")}


# ---------------------------------------------------------------- trace
CONFLICT_SQLSTATE_CLASSES = ("23", "40")  # integrity violation, transaction rollback (40001, 40P01)


def replay_time(rec: dict, next_t: float | None) -> float:
    """When to issue an exchange in the replay.

    Normally its capture time ``t``.  A COMMIT is placed at its end (``t`` + the server-logged
    duration), when it became visible to other sessions.  An exchange whose recorded answer is a conflict error
    (SQLSTATE class 23/40, e.g. 23505 on ducklake_snapshot_pkey) lost a race against a
    concurrent transaction that the server executed first although its request arrived
    later; it is issued just before the same connection's next request, the latest point
    consistent with the capture, so the replay reproduces that serialisation order.
    """
    errs = [m["fields"].get("sqlstate", "") for m in rec["back"] if m["type"] == "ErrorResponse"]
    if next_t is not None and any(e[:2] in CONFLICT_SQLSTATE_CLASSES for e in errs):
        return next_t - 1e-6
    stmts = rec.get("statements") or []
    if stmts and stmts[-1].strip().upper().startswith("COMMIT") and rec.get("log_duration_ms"):
        # a commit becomes visible to other sessions when it finishes, not when it is sent
        t = rec["t"] + rec["log_duration_ms"] / 1000.0
        return min(t, next_t - 1e-6) if next_t is not None else t
    return rec["t"]


def load_trace(path: str) -> list[dict]:
    """Exchanges in replay order (see replay_time); ``order`` is only the file position."""
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt") as f:
        recs = [json.loads(line) for line in f if line.strip()]
    by_conn: dict[int, list[dict]] = {}
    for r in sorted(recs, key=lambda r: (r["conn"], r["seq"])):
        by_conn.setdefault(r["conn"], []).append(r)
    for rs in by_conn.values():
        for r, nxt in zip(rs, rs[1:] + [None]):
            r["replay_t"] = replay_time(r, nxt["t"] if nxt else None)
    recs.sort(key=lambda r: (r["replay_t"], r["order"]))
    return recs


def load_shape_types(path: str | None) -> dict:
    """shape id -> list of type OIDs of a COPY (SELECT …) TO STDOUT's inner SELECT."""
    if not path or not os.path.exists(path):
        return {}
    with open(path) as f:
        shapes = json.load(f)
    return {s["id"]: [c["type_oid"] for c in s["inner_describe"]["fields"]]
            for s in shapes if s.get("inner_describe") and s["inner_describe"].get("fields")}


def copy_in_payload(rec: dict) -> tuple[bytes | None, str | None]:
    """(payload, note): the client's COPY data re-encoded from the trace."""
    cds = next((m for m in rec["front"] if m["type"] == "CopyDataStream"), None)
    if cds is None:
        return None, None
    d = cds["decoded"]
    if d.get("format") != "binary":
        return None, "copy_in_unrecorded_format"
    rows = [[bytes.fromhex(f) if f is not None else None for f in r] for r in d.get("sample_hex", [])]
    data = encode_binary_copy(rows, d.get("header_flags", 0), d.get("trailer", True))
    if len(rows) == d.get("rows"):
        if d.get("bytes") is not None and d["bytes"] != len(data):
            return data, f"copy_in_reencoded_length_mismatch({len(data)}!={d['bytes']})"
        return data, None
    return data, f"copy_in_partial({len(rows)}/{d.get('rows')} rows)"


# ---------------------------------------------------------------- one server
class Side:
    """All sessions of one server, keyed by the trace's connection number."""

    def __init__(self, name: str, target: dict, block_timeout: float, hang_timeout: float):
        self.name, self.target = name, target
        self.block_timeout, self.hang_timeout = block_timeout, hang_timeout
        self.sessions: dict[int, Session] = {}
        self.current: dict[int, int] = {}  # conn -> index of its running exchange
        self.dead: dict[int, str] = {}  # conn -> why it was abandoned
        self.results: dict[int, list[dict]] = {}
        self.backlog: dict[int, list] = {}  # conn -> exchanges waiting for its running request
        self.blocked = 0
        self.unblock_grace = 0.2

    def _collect(self, conn: int) -> None:
        s = self.sessions.get(conn)
        if conn in self.current and s is not None and s.done:
            self.results[self.current.pop(conn)] = s.messages

    def pump(self, timeout: float, until=None) -> bool:
        """Feed every session with a running exchange until ``until()`` or timeout."""
        deadline = time.monotonic() + timeout
        while True:
            for c in list(self.current):
                s = self.sessions[c]
                if s.feed():
                    self._collect(c)
            if until is None or until():
                return True
            left = deadline - time.monotonic()
            if left <= 0:
                return False
            socks = [self.sessions[c] for c in self.current if not self.sessions[c].closed]
            if socks:
                select.select(socks, [], [], min(left, 0.2))
            else:
                time.sleep(min(left, 0.01))

    def submit(self, idx: int, rec: dict, copy_data: bytes | None) -> None:
        """Issue an exchange, or queue it behind its connection's still-running request.

        A connection is a sequential client: while its request is blocked (lock wait) its
        later exchanges wait in a backlog and the other connections go on, as in reality.
        """
        conn = rec["conn"]
        self.pump(0)
        self._drain()
        if conn in self.current or self.backlog.get(conn):
            self.backlog.setdefault(conn, []).append((idx, rec, copy_data))
            return
        self._run(idx, rec, copy_data)

    def _drain(self) -> None:
        """Issue queued exchanges of connections whose blocking request has finished."""
        progressed = True
        while progressed:
            progressed = False
            for conn in list(self.backlog):
                while self.backlog.get(conn) and conn not in self.current:
                    self._run(*self.backlog[conn].pop(0))
                    progressed = True
                if not self.backlog.get(conn):
                    self.backlog.pop(conn, None)

    def _run(self, idx: int, rec: dict, copy_data: bytes | None) -> None:
        conn = rec["conn"]
        if rec["kind"] == "ssl_request" or (rec["kind"] == "startup" and conn not in self.sessions):
            try:
                t = self.target
                self.sessions[conn] = Session(t["host"], t["port"], t["user"], t["password"], t["dbname"])
                self.dead.pop(conn, None)
            except OSError as e:
                self.dead[conn] = f"connect failed: {e}"
        s = self.sessions.get(conn)
        if conn in self.dead or s is None or s.closed:
            self.results[idx] = [{"type": "Abandoned", "why": self.dead.get(conn, "connection closed")}]
            return
        kind = rec["kind"]
        front = rec["front"]
        try:
            if kind == "ssl_request":
                s.begin_ssl_request()
            elif kind == "startup":
                s.begin_startup(next((m.get("params") for m in front if m["type"] == "StartupMessage"), {}))
            elif kind == "simple_query":
                s.begin_query(front[0]["query"], copy_data)
            elif kind == "parse":
                p = front[0]
                s.begin_parse(p["query"], p.get("statement", ""), p.get("param_oids", []))
            elif kind == "describe":
                d = front[0]
                s.begin_describe(d.get("kind", "S"), d.get("name", ""))
            elif kind == "terminate":
                s.terminate()
                self.results[idx] = []
                return
            else:
                self.results[idx] = [{"type": "Unsupported", "kind": kind}]
                return
        except OSError as e:
            self.results[idx] = [{"type": "SocketError", "error": str(e)}]
            s.close()
            return
        self.current[conn] = idx
        if not self.pump(self.block_timeout, until=lambda: conn not in self.current):
            self.blocked += 1
        elif any(c != conn for c in self.current) and self.results.get(idx, [{}])[-1].get("status") in ("I", "E"):
            # this request ended a transaction and may have released locks: let the
            # requests blocked on them finish before anything else is issued
            self.pump(self.unblock_grace, until=lambda: not any(c != conn for c in self.current))
        if kind == "ssl_request" and self.results.get(idx, [{}])[-1].get("answer") == "S":
            self.dead[conn] = "server wants TLS (not implemented by the replay client)"

    def finish(self) -> None:
        deadline = time.monotonic() + self.hang_timeout
        while (self.current or self.backlog) and time.monotonic() < deadline:
            before = set(self.current)
            self.pump(min(1.0, max(0.0, deadline - time.monotonic())), until=lambda: set(self.current) != before)
            self._drain()
        for c, items in self.backlog.items():
            for idx, _, _ in items:
                self.results[idx] = [{"type": "Abandoned", "why": "earlier request on this connection never finished"}]
        self.backlog.clear()
        for c, idx in list(self.current.items()):
            self.results[idx] = self.sessions[c].messages + [{"type": "Timeout"}]
        self.current.clear()
        for s in self.sessions.values():
            s.close()


# ---------------------------------------------------------------- normalisation
class Normaliser:
    """Per-server normalisation state (OID bijection) and the replay's time window."""

    def __init__(self, t_start: float):
        self.t_start = t_start
        self.oids: dict[str, str] = {}
        self.t_end = None

    def in_window(self, ts: dt.datetime) -> bool:
        lo = dt.datetime.fromtimestamp(self.t_start - 5, dt.timezone.utc)
        hi = dt.datetime.fromtimestamp((self.t_end or time.time()) + 5, dt.timezone.utc)
        return lo <= ts <= hi

    def oid(self, v) -> str:
        if v is None:
            return None
        key = str(v)
        if key not in self.oids:
            self.oids[key] = f"oid#{len(self.oids) + 1}"
        return self.oids[key]

    def text_value(self, v: bytes | None, type_oid: int):
        if v is None:
            return None
        s = v.decode("utf-8", "replace")
        if type_oid in OID_OIDS:
            return self.oid(s)
        if type_oid in TS_OIDS:
            m = TEXT_TS_RE.match(s)
            if m:
                try:
                    ts = dt.datetime.fromisoformat(m.group(1) + (_tz(m.group(2)) if m.group(2) else "+00:00"))
                    if self.in_window(ts):
                        return "<NOW>"
                except ValueError:
                    pass
        if type_oid == 25 and s.startswith("PostgreSQL "):
            return "PostgreSQL " + s.split()[1].split(".")[0]
        return s

    def binary_value(self, v: bytes | None, type_oid: int | None):
        if v is None:
            return None
        try:
            if type_oid is None:
                if len(v) == 8 and self._ts_in_window(v):
                    return "<NOW>"
                return v.hex()
            if type_oid in TS_OIDS:
                return "<NOW>" if self._ts_in_window(v) else _decode_binary(v, type_oid)
            if type_oid in OID_OIDS:
                return self.oid(struct.unpack("!I", v)[0])
            return _decode_binary(v, type_oid)
        except (struct.error, ValueError, OverflowError):
            return v.hex()

    def _ts_in_window(self, v: bytes) -> bool:
        (us,) = struct.unpack("!q", v)
        try:
            return self.in_window(PG_EPOCH + dt.timedelta(microseconds=us))
        except OverflowError:
            return False


def _tz(s: str) -> str:
    s = s.replace(":", "")
    return f"{s[:3]}:{s[3:5] or '00'}"


def _decode_binary(v: bytes, t: int):
    """Readable form of a binary field (for reports); unknown types stay hex."""
    if t == 20:
        return struct.unpack("!q", v)[0]
    if t == 23:
        return struct.unpack("!i", v)[0]
    if t == 21:
        return struct.unpack("!h", v)[0]
    if t == 16:
        return v != b"\0"
    if t in (25, 1043, 19, 18, 1042):
        return v.decode("utf-8", "replace")
    if t == 2950:
        return str(uuid.UUID(bytes=v))
    if t in TS_OIDS:
        (us,) = struct.unpack("!q", v)
        return (PG_EPOCH + dt.timedelta(microseconds=us)).isoformat()
    if t == 27:
        b, o = struct.unpack("!IH", v)
        return f"({b},{o})"
    if t == 701:
        return repr(struct.unpack("!d", v)[0])
    if t == 700:
        return repr(struct.unpack("!f", v)[0])
    return "\\x" + v.hex()


def normalise_messages(msgs: list[dict], norm: Normaliser, copy_types: list[int] | None) -> list[dict]:
    """Backend messages -> comparable dicts (DataRows collapsed, COPY data decoded)."""
    out, types = [], []
    for m in msgs:
        t = m["type"]
        if t == "Authentication":
            if m["auth"] == "Ok":
                out.append({"Auth": "Ok"})
            continue
        if t == "BackendKeyData":
            out.append({"BackendKeyData": True})
        elif t == "ParameterStatus":
            v = m["value"]
            if m["name"] == "server_version":
                v = v.split(".")[0].split()[0]
            out.append({"ParameterStatus": [m["name"], v]})
        elif t == "RowDescription":
            types = [f["type_oid"] for f in m["fields"]]
            out.append({"RowDescription": [[f["name"], f["type_oid"], f["typmod"], f["format"]] for f in m["fields"]]})
        elif t == "DataRow":
            row = [norm.text_value(v, types[i] if i < len(types) else 25) for i, v in enumerate(m["values"])]
            if out and "DataRows" in out[-1]:
                out[-1]["DataRows"].append(row)
            else:
                out.append({"DataRows": [row]})
        elif t == "CopyDataStream":
            d = decode_binary_copy(bytes(m["data"]))
            if d["format"] != "binary":
                out.append({"CopyData": d})
                continue
            rows = []
            for r in d["rows"]:
                ct = copy_types if copy_types and len(copy_types) == len(r) else [None] * len(r)
                rows.append([norm.binary_value(f, ct[i]) for i, f in enumerate(r)])
            out.append({"CopyData": {"flags": d["flags"], "trailer": d["trailer"], "rows": rows}})
        elif t in ("ErrorResponse", "NoticeResponse"):
            f = m["fields"]
            out.append({t: {"sqlstate": f.get("sqlstate"), "severity": f.get("severity_nl") or f.get("severity"),
                            "message": f.get("message")}})
        elif t == "CommandComplete":
            out.append({"CommandComplete": m["tag"]})
        elif t in ("CopyInResponse", "CopyOutResponse", "CopyBothResponse"):
            out.append({t: [m["overall_format"], m["column_formats"]]})
        elif t == "ParameterDescription":
            out.append({t: m["param_oids"]})
        elif t == "ReadyForQuery":
            out.append({t: m["status"]})
        elif t == "SSLResponse":
            out.append({t: m["answer"]})
        else:
            out.append({t: {k: v for k, v in m.items() if k not in ("type", "data")}} if len(m) > 1 else {t: True})
    return out


def split_units(norm_msgs: list[dict], kind: str, n_statements: int) -> tuple[list[list[dict]], list[dict]]:
    """(per-statement segments, trailing messages such as ReadyForQuery)."""
    if kind != "simple_query":
        return [norm_msgs], []
    segs, cur = [], []
    for m in norm_msgs:
        if "ReadyForQuery" in m:
            break
        cur.append(m)
        if next(iter(m)) in TERMINATORS:
            segs.append(cur)
            cur = []
    tail = norm_msgs[sum(len(s) for s in segs) + len(cur):]
    if cur:
        segs.append(cur)
    while len(segs) < n_statements:
        segs.append([{"NotExecuted": True}])
    return segs, tail


def first_difference(a, b, path="") -> str | None:
    if type(a) is not type(b):
        return f"{path or '/'}: {json.dumps(a, default=str)[:300]} != {json.dumps(b, default=str)[:300]}"
    if isinstance(a, dict):
        for k in list(a) + [k for k in b if k not in a]:
            if k not in a or k not in b:
                return f"{path}/{k}: present only in {'A' if k in a else 'B'}"
            d = first_difference(a[k], b[k], f"{path}/{k}")
            if d:
                return d
        return None
    if isinstance(a, list):
        for i, (x, y) in enumerate(zip(a, b)):
            d = first_difference(x, y, f"{path}[{i}]")
            if d:
                return d
        if len(a) != len(b):
            return f"{path}: length {len(a)} != {len(b)}"
        return None
    return None if a == b else f"{path or '/'}: {json.dumps(a, default=str)[:300]} != {json.dumps(b, default=str)[:300]}"


def strip_messages(unit: list[dict]) -> list[dict]:
    """--sqlstate-only: drop message texts of errors/notices."""
    out = []
    for m in unit:
        k = next(iter(m))
        if k in ("ErrorResponse", "NoticeResponse"):
            out.append({k: {"sqlstate": m[k]["sqlstate"], "severity": m[k]["severity"]}})
        else:
            out.append(m)
    return out


def trace_signature(back: list[dict]) -> list:
    """Coarse shape of a recorded response (for the trace-fidelity check of side A)."""
    sig = []
    for m in back:
        t = m["type"]
        if t in ("ParameterStatus", "Authentication", "BackendKeyData", "CopyDataStream", "ParseComplete",
                 "ParameterDescription", "RowDescription", "CopyDone", "CopyInResponse", "CopyOutResponse",
                 "NoticeResponse"):
            continue
        if t == "DataRows":
            sig.append(("rows", m["count"]))
        elif t == "CommandComplete":
            sig.append(("tag", m["tag"]))
        elif t == "ErrorResponse":
            sig.append(("error", m["fields"].get("sqlstate")))
        elif t == "ReadyForQuery":
            sig.append(("rfq", m["status"]))
        else:
            sig.append((t,))
    return sig


def live_signature(msgs: list[dict]) -> list:
    sig, rows = [], 0
    for m in msgs:
        t = m["type"]
        if t == "DataRow":
            rows += 1
            continue
        if rows:
            sig.append(("rows", rows))
            rows = 0
        if t == "CommandComplete":
            sig.append(("tag", m["tag"]))
        elif t == "ErrorResponse":
            sig.append(("error", m["fields"].get("sqlstate")))
        elif t == "ReadyForQuery":
            sig.append(("rfq", m["status"]))
        elif t in ("ParameterStatus", "Authentication", "BackendKeyData", "CopyDataStream", "ParseComplete",
                   "ParameterDescription", "RowDescription", "CopyDone", "CopyInResponse", "CopyOutResponse",
                   "NoticeResponse"):
            continue
        else:
            sig.append((t,))
    return sig


# ---------------------------------------------------------------- main
def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--trace", required=True)
    ap.add_argument("--a", required=True, help="reference server DSN (PostgreSQL)")
    ap.add_argument("--b", required=True, help="server under test DSN")
    ap.add_argument("--shapes", help="shapes-<run>.json (default: next to the trace)")
    ap.add_argument("--report")
    ap.add_argument("--min-match", type=float)
    ap.add_argument("--sqlstate-only", action="store_true")
    ap.add_argument("--block-timeout", type=float, default=1.0)
    ap.add_argument("--hang-timeout", type=float, default=60.0)
    ap.add_argument("--limit", type=int, help="replay only the first N exchanges (debugging)")
    ap.add_argument("--show", type=int, default=25, help="mismatches to print")
    a = ap.parse_args(argv)

    run = re.sub(r"^statements-|\.jsonl(\.gz)?$", "", os.path.basename(a.trace))
    shapes_path = a.shapes or os.path.join(os.path.dirname(a.trace), f"shapes-{run}.json")
    shape_types = load_shape_types(shapes_path)
    recs = load_trace(a.trace)
    if a.limit:
        recs = recs[:a.limit]
    sides = [Side("A", parse_dsn(a.a), a.block_timeout, a.hang_timeout),
             Side("B", parse_dsn(a.b), a.block_timeout, a.hang_timeout)]
    notes: dict[str, int] = {}
    copy_notes = {}
    t_start = time.time()
    for i, rec in enumerate(recs):
        data, note = copy_in_payload(rec) if rec["kind"] == "simple_query" else (None, None)
        if note:
            key = note.split("(")[0]
            notes[key] = notes.get(key, 0) + 1
            copy_notes[i] = note
        for s in sides:
            s.submit(i, rec, data)
    for s in sides:
        s.finish()
    t_end = time.time()

    norms = [Normaliser(t_start), Normaliser(t_start)]
    for n in norms:
        n.t_end = t_end
    total = matched = 0
    exchanges_ok = 0
    mismatches, fidelity = [], []
    for i, rec in enumerate(recs):
        stmts = rec.get("statements") or [rec["kind"]]
        copy_types = None
        if rec.get("shape_ids") and len(stmts) == 1:
            copy_types = shape_types.get(rec["shape_ids"][0])
        raw = [s.results.get(i, [{"type": "Missing"}]) for s in sides]
        na, nb = (normalise_messages(r, n, copy_types) for r, n in zip(raw, norms))
        ua, ta = split_units(na, rec["kind"], len(stmts))
        ub, tb = split_units(nb, rec["kind"], len(stmts))
        n_units = max(len(ua), len(ub), len(stmts) if rec["kind"] == "simple_query" else 1)
        ex_ok = True
        for k in range(n_units):
            x = ua[k] if k < len(ua) else [{"Missing": True}]
            y = ub[k] if k < len(ub) else [{"Missing": True}]
            if k == n_units - 1:
                x, y = x + ta, y + tb
            if a.sqlstate_only:
                x, y = strip_messages(x), strip_messages(y)
            diff = first_difference(x, y)
            total += 1
            if diff is None:
                matched += 1
            else:
                ex_ok = False
                mismatches.append({"index": i, "order": rec["order"], "conn": rec["conn"], "seq": rec["seq"],
                                   "step": rec.get("step"), "kind": rec["kind"], "statement_no": k,
                                   "statement": (stmts[k] if k < len(stmts) else "")[:300], "diff": diff,
                                   "a": json.dumps(x, default=str)[:1500], "b": json.dumps(y, default=str)[:1500]})
        exchanges_ok += ex_ok
        if rec["kind"] in ("simple_query", "parse", "describe"):
            if live_signature(raw[0]) != trace_signature(rec["back"]):
                fidelity.append({"order": rec["order"], "conn": rec["conn"], "step": rec.get("step"),
                                 "statement": stmts[0][:200], "trace": trace_signature(rec["back"]),
                                 "replay_A": live_signature(raw[0]),
                                 "copy_note": copy_notes.get(i)})

    frac = matched / total if total else 1.0
    trace_errors = sum(1 for r in recs for m in r["back"] if m["type"] == "ErrorResponse")
    a_errors = sum(1 for i in range(len(recs)) for m in sides[0].results.get(i, []) if m["type"] == "ErrorResponse")
    report = {
        "run": run, "trace": a.trace, "a": {k: v for k, v in parse_dsn(a.a).items() if k != "password"},
        "b": {k: v for k, v in parse_dsn(a.b).items() if k != "password"},
        "exchanges": len(recs), "exchanges_matched": exchanges_ok, "statements": total, "statements_matched": matched,
        "match_fraction": frac, "seconds": round(t_end - t_start, 2),
        "notes": notes, "copy_in_notes": {str(recs[i]["order"]): n for i, n in copy_notes.items()},
        "blocked_requests": {s.name: s.blocked for s in sides},
        "deferred_conflict_exchanges": [r["order"] for r in recs if r["replay_t"] != r["t"]],
        "abandoned_connections": {s.name: s.dead for s in sides},
        "error_responses": {"trace": trace_errors, "A": a_errors},
        "trace_fidelity_of_A": {"differing_exchanges": len(fidelity), "examples": fidelity[:50]},
        "mismatches": mismatches,
    }
    if a.report:
        with open(a.report, "w") as f:
            json.dump(report, f, indent=1, default=str)
    for m in mismatches[:a.show]:
        print(f"MISMATCH order={m['order']} conn={m['conn']} step={m['step']} stmt#{m['statement_no']}: "
              f"{m['statement'][:100]!r}\n    {m['diff']}")
    print(f"exchanges: {exchanges_ok}/{len(recs)} match; blocked requests A={sides[0].blocked} "
          f"B={sides[1].blocked}; notes: {notes or 'none'}; ErrorResponses trace={trace_errors} A={a_errors}; "
          f"A differs from the trace in {len(fidelity)} exchanges; {t_end - t_start:.1f}s")
    print(f"replay {run}: {matched}/{total} statements match ({100 * frac:.2f}%)")
    print(f"{matched} passed, {total - matched} failed")
    if matched == total:
        return 0
    return 0 if a.min_match is not None and frac >= a.min_match else 1


if __name__ == "__main__":
    sys.exit(main())
