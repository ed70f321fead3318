#!/usr/bin/env python3
"""Start and stop throw-away PostgreSQL 15 clusters for the end-to-end tests.

A cluster lives in a fresh temporary directory, listens on 127.0.0.1 on a free port
(unix socket inside the same directory, so nothing under /var/run is needed), uses
SCRAM-SHA-256 for TCP connections (user ``postgres``, password ``postgres``) and has a
database ``lake``.  It is tuned for tests (fsync off) and pinned to ``TimeZone=Etc/UTC``
and ``lc_messages=C`` so that results and error texts do not depend on the host.
``--fsync`` (``fsync=True``) starts it durable instead, with PostgreSQL's default durability and
memory settings (``fsync``, ``synchronous_commit`` and ``full_page_writes`` on,
``shared_buffers = 128MB``): the reference for benchmarks.

initdb refuses to run as root, so when started by root the directory is handed to the
``postgres`` OS user and every server binary is run through ``runuser -u postgres``
(falling back to ``su``).

Library use::

    from pgctl import Cluster
    with Cluster.start() as pg:          # stopped and deleted on exit
        print(pg.port, pg.dsn)

CLI::

    pgctl.py start [--port P] [--dir PARENT] [--no-autovacuum] [--log-statements] [--fsync]
        -> prints one JSON object {"port", "pid", "base", "datadir", "dsn"} and leaves the
           cluster running (exit 0), or prints the failure and exits 1
    pgctl.py stop --pid PID [--keep]
        -> fast shutdown of that postmaster, waits for it, then deletes its directory
           (only if it carries this tool's marker file); exit 0 when stopped
    pgctl.py status --pid PID  -> exit 0 if that postmaster is alive
"""
from __future__ import annotations

import argparse
import json
import os
import pwd
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

PGBIN = os.environ.get("PGBIN", "/usr/lib/postgresql/15/bin")
USER = "postgres"
PASSWORD = "postgres"
DBNAME = "lake"
MARKER = ".rocklake-pgctl"  # presence marks a directory this tool may delete


def free_port() -> int:
    """A currently unused loopback TCP port (the caller retries if it is taken meanwhile)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _as_pg_user(argv: list[str], **kw) -> subprocess.CompletedProcess:
    """Run a server binary, as the postgres OS user when we are root."""
    if os.geteuid() == 0:
        if shutil.which("runuser"):
            argv = ["runuser", "-u", USER, "--"] + argv
        else:
            argv = ["su", USER, "-s", "/bin/sh", "-c", " ".join(_shq(a) for a in argv)]
    return subprocess.run(argv, **kw)


def _shq(s: str) -> str:
    return "'" + s.replace("'", "'\"'\"'") + "'"


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    # a zombie child of ours counts as dead
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split(")")[-1].split()[0] != "Z"
    except OSError:
        return False


def _datadir_of(pid: int) -> str | None:
    """The -D argument of a running postmaster (from /proc), if readable."""
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            argv = f.read().split(b"\0")
    except OSError:
        return None
    for i, a in enumerate(argv):
        if a == b"-D" and i + 1 < len(argv):
            return argv[i + 1].decode()
    return None


class Cluster:
    """A running throw-away cluster.  Use ``Cluster.start()``; ``stop()`` is idempotent."""

    def __init__(self, base: str, datadir: str, port: int, pid: int):
        self.base, self.datadir, self.port, self.pid = base, datadir, port, pid
        self.host, self.user, self.password, self.dbname = "127.0.0.1", USER, PASSWORD, DBNAME

    @property
    def dsn(self) -> str:
        return f"host={self.host} port={self.port} dbname={self.dbname} user={self.user} password={self.password}"

    def as_dict(self) -> dict:
        return {"port": self.port, "pid": self.pid, "base": self.base, "datadir": self.datadir, "dsn": self.dsn}

    # ---------------------------------------------------------------- start
    @classmethod
    def start(cls, parent: str | None = None, port: int | None = None, autovacuum: bool = True,
              log_statements: bool = False, attempts: int = 5, fsync: bool = False) -> "Cluster":
        base = tempfile.mkdtemp(prefix="rocklake-pg-", dir=parent)
        open(os.path.join(base, MARKER), "w").close()
        try:
            return cls._start_in(base, port, autovacuum, log_statements, attempts, fsync)
        except BaseException:
            shutil.rmtree(base, ignore_errors=True)
            raise

    @classmethod
    def _start_in(cls, base, port, autovacuum, log_statements, attempts, fsync=False) -> "Cluster":
        datadir = os.path.join(base, "data")
        sockdir = os.path.join(base, "sock")
        os.makedirs(sockdir)
        pwfile = os.path.join(base, "pwfile")
        with open(pwfile, "w") as f:
            f.write(PASSWORD + "\n")
        if os.geteuid() == 0:
            pw = pwd.getpwnam(USER)
            os.chmod(base, 0o755)
            for p in (base, sockdir, pwfile):
                os.chown(p, pw.pw_uid, pw.pw_gid)
        r = _as_pg_user([f"{PGBIN}/initdb", "-D", datadir, "-U", USER, f"--pwfile={pwfile}",
                         "--auth-host=scram-sha-256", "--auth-local=trust", "-E", "UTF8", "--locale=C.UTF-8",
                         "--no-sync"], capture_output=True, text=True)
        os.unlink(pwfile)
        if r.returncode != 0:
            raise RuntimeError(f"initdb failed:\n{r.stdout}\n{r.stderr}")
        last_err = ""
        for attempt in range(attempts):
            p = port if (port and attempt == 0) else free_port()
            conf = [
                "listen_addresses = '127.0.0.1'", f"port = {p}", f"unix_socket_directories = '{sockdir}'",
                "ssl = off", "max_connections = 100", "shared_buffers = 32MB",
                "fsync = off", "synchronous_commit = off", "full_page_writes = off",
                "timezone = 'Etc/UTC'", "log_timezone = 'Etc/UTC'", "lc_messages = 'C'",
                "password_encryption = 'scram-sha-256'",
                f"autovacuum = {'on' if autovacuum else 'off'}",
                "logging_collector = off",
            ]
            if fsync:
                # Later lines win: PostgreSQL's defaults, durable like a production server.
                conf += ["fsync = on", "synchronous_commit = on", "full_page_writes = on",
                         "shared_buffers = 128MB"]
            if log_statements:
                conf += ["log_statement = 'all'", "log_connections = on", "log_disconnections = on"]
            with open(os.path.join(datadir, "postgresql.auto.conf"), "a") as f:
                f.write("\n# rocklake pgctl\n" + "\n".join(conf) + "\n")
            logfile = os.path.join(base, "server.log")
            r = _as_pg_user([f"{PGBIN}/pg_ctl", "-D", datadir, "-l", logfile, "-w", "-t", "60", "start"],
                            capture_output=True, text=True)
            if r.returncode == 0:
                with open(os.path.join(datadir, "postmaster.pid")) as f:
                    pid = int(f.readline())
                c = cls(base, datadir, p, pid)
                try:
                    c._createdb(sockdir)
                except BaseException:
                    c.stop()
                    raise
                return c
            try:
                with open(logfile) as f:
                    last_err = f.read()[-2000:]
            except OSError:
                last_err = r.stderr
            if port and attempt == 0 and "could not bind" not in last_err and "in use" not in last_err:
                break
        raise RuntimeError(f"postgres did not start: {last_err}")

    def _createdb(self, sockdir: str) -> None:
        r = _as_pg_user([f"{PGBIN}/psql", "-X", "-q", "-h", sockdir, "-p", str(self.port), "-U", USER, "-d",
                         "postgres", "-c", f"CREATE DATABASE {DBNAME}"], capture_output=True, text=True)
        if r.returncode != 0:
            raise RuntimeError(f"CREATE DATABASE failed: {r.stderr}")

    # ---------------------------------------------------------------- stop
    def stop(self, keep: bool = False) -> None:
        stop_pid(self.pid, base=None if keep else self.base)

    def __enter__(self) -> "Cluster":
        return self

    def __exit__(self, *exc) -> None:
        self.stop()


def stop_pid(pid: int, base: str | None = None, timeout: float = 60.0) -> bool:
    """Fast-shutdown the postmaster ``pid`` (SIGINT), wait for it, then remove ``base``.

    ``base`` defaults to the parent of the postmaster's data directory; it is only
    deleted when it carries this tool's marker file.  Returns True when the process is gone.
    """
    if base is None:
        dd = _datadir_of(pid)
        base = os.path.dirname(dd) if dd else None
    if _pid_alive(pid):
        try:
            os.kill(pid, signal.SIGINT)  # "fast" shutdown: abort sessions, clean checkpoint
        except ProcessLookupError:
            pass
        deadline = time.time() + timeout
        while _pid_alive(pid) and time.time() < deadline:
            time.sleep(0.05)
        if _pid_alive(pid):
            os.kill(pid, signal.SIGQUIT)  # "immediate" shutdown
            deadline = time.time() + 10
            while _pid_alive(pid) and time.time() < deadline:
                time.sleep(0.05)
    gone = not _pid_alive(pid)
    if gone and base and os.path.exists(os.path.join(base, MARKER)):
        shutil.rmtree(base, ignore_errors=True)
    return gone


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("start")
    s.add_argument("--port", type=int)
    s.add_argument("--dir", help="parent directory for the cluster's temp dir (default $TMPDIR)")
    s.add_argument("--no-autovacuum", action="store_true")
    s.add_argument("--log-statements", action="store_true")
    s.add_argument("--fsync", action="store_true",
                   help="durable (fsync, synchronous_commit, full_page_writes on; shared_buffers 128MB)")
    t = sub.add_parser("stop")
    t.add_argument("--pid", type=int, required=True)
    t.add_argument("--keep", action="store_true", help="do not delete the cluster directory")
    u = sub.add_parser("status")
    u.add_argument("--pid", type=int, required=True)
    a = ap.parse_args(argv)
    if a.cmd == "start":
        try:
            c = Cluster.start(parent=a.dir, port=a.port, autovacuum=not a.no_autovacuum,
                              log_statements=a.log_statements, fsync=a.fsync)
        except Exception as e:  # noqa: BLE001 - report any failure on the CLI
            print(f"pgctl: {e}", file=sys.stderr)
            return 1
        print(json.dumps(c.as_dict()), flush=True)
        return 0
    if a.cmd == "stop":
        if a.keep:
            ok = stop_pid(a.pid, base="")
        else:
            ok = stop_pid(a.pid)
        return 0 if ok else 1
    return 0 if _pid_alive(a.pid) else 1


if __name__ == "__main__":
    sys.exit(main())
