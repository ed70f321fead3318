#!/usr/bin/env python3
"""Loopback TCP proxy that splits a client's wall time between the two ends of the wire.

usage: wire_split.py LISTEN_PORT SERVER_PORT STATS_JSON [TRACE_JSONL]

Every byte is forwarded unchanged between a client connecting to 127.0.0.1:LISTEN_PORT and the
server on 127.0.0.1:SERVER_PORT. Per connection, the time from the server's last bytes until
the client's next bytes counts as "client" (the client thinking: DuckDB's own work between
round trips), and the time from the client's last bytes until the server's next bytes as
"server" (the server working, its protocol handling included). Both include the proxy's own
forwarding (tens of microseconds per hop), alike for any server behind it. Totals, connection
and packet counts are rewritten to STATS_JSON every 50 ms; read them before and after a phase
(and leave the connection idle between, since an idle gap before the client's next packet
counts as client time).

With TRACE_JSONL, one JSON line per round trip is appended there: connection number, the
server's time (client's last bytes to server's first), the client's time before it, and the
start of the client's bytes, so the slow round trips of a phase can be found and named.

Used by hand for bench/RESULTS.md (session 26): a benchmark tool, not a test.
"""
import json
import selectors
import socket
import sys
import threading
import time

listen_port, server_port, stats_path = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
trace = open(sys.argv[4], "a") if len(sys.argv) > 4 else None
stats = {"client": 0.0, "server": 0.0, "conns": 0, "c2s": 0, "s2c": 0}
lock = threading.Lock()


def relay(client):
    server = socket.create_connection(("127.0.0.1", server_port))
    for s in (client, server):
        s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    sel = selectors.DefaultSelector()
    sel.register(client, selectors.EVENT_READ, server)
    sel.register(server, selectors.EVENT_READ, client)
    with lock:
        stats["conns"] += 1
        conn_no = stats["conns"]
    last_dir, last_t = None, time.perf_counter()
    request, client_s = b"", 0.0
    while True:
        for key, _ in sel.select():
            src, dst = key.fileobj, key.data
            data = src.recv(1 << 20)
            now = time.perf_counter()
            if not data:
                client.close()
                server.close()
                return
            d = "c2s" if src is client else "s2c"
            with lock:
                stats[d] += 1
                if last_dir is not None and d != last_dir:
                    stats["client" if d == "c2s" else "server"] += now - last_t
                if trace and d == "c2s" and last_dir != "c2s":
                    request, client_s = data[:160], (now - last_t if last_dir else 0.0)
                elif trace and d == "c2s":
                    request += data[: max(0, 160 - len(request))]
                if trace and d == "s2c" and last_dir == "c2s":
                    trace.write(json.dumps({"conn": conn_no, "server_ms": round((now - last_t) * 1000, 3),
                                            "client_ms": round(client_s * 1000, 3),
                                            "req": request.decode("latin-1")}) + "\n")
                    trace.flush()
            last_dir, last_t = d, now
            dst.sendall(data)


def dump():
    while True:
        time.sleep(0.05)
        with lock:
            text = json.dumps(stats)
        with open(stats_path, "w") as f:
            f.write(text)


threading.Thread(target=dump, daemon=True).start()
ls = socket.socket()
ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
ls.bind(("127.0.0.1", listen_port))
ls.listen(64)
while True:
    conn, _ = ls.accept()
    threading.Thread(target=relay, args=(conn,), daemon=True).start()
