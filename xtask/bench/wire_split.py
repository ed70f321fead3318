#!/usr/bin/env python3
"""Loopback TCP proxy that splits a client's wall time between the two ends of the wire.

usage: wire_split.py LISTEN_PORT SERVER_PORT STATS_JSON

Every byte is forwarded unchanged between a client connecting to 127.0.0.1:LISTEN_PORT and the
server on 127.0.0.1:SERVER_PORT. Per connection, the time from the server's last bytes until
the client's next bytes counts as "client" (the client thinking: DuckDB's own work between
round trips), and the time from the client's last bytes until the server's next bytes as
"server" (the server working, its protocol handling included). Both include the proxy's own
forwarding (tens of microseconds per hop), alike for any server behind it. Totals, connection
and packet counts are rewritten to STATS_JSON every 50 ms; read them before and after a phase
(and leave the connection idle between, since an idle gap before the client's next packet
counts as client time).

Used by hand for bench/RESULTS.md (session 26): a benchmark tool, not a test.
"""
import json
import selectors
import socket
import sys
import threading
import time

listen_port, server_port, stats_path = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
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
    last_dir, last_t = None, time.perf_counter()
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
