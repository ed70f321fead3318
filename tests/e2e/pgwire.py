"""A small raw-socket PostgreSQL v3 protocol client for differential replay.

Unlike a driver it sends exactly the messages it is told to (so a replay reproduces what
libpq sent for DuckDB) and hands back every backend message, decoded.  It is written for
non-blocking use: ``Session.begin_*`` sends a request, ``Session.feed()`` consumes whatever
the socket has and reports when the exchange is complete (ReadyForQuery, or EOF), so many
sessions can be driven from one thread while some of them are blocked on locks.

Supported: SSLRequest (answer recorded; TLS itself is not implemented), StartupMessage with
trust / cleartext / MD5 / SCRAM-SHA-256 authentication, simple Query (including COPY FROM
STDIN, which is answered with the data given to ``begin_query`` and COPY TO STDOUT),
Parse / Describe / Sync, Terminate, and any sequence of Parse / Bind / Execute / Close / Sync
built by the ``*_msg`` functions (``begin_raw``).
"""
from __future__ import annotations

import base64
import hashlib
import hmac
import os
import select
import socket
import struct
import time

COPY_SIGNATURE = b"PGCOPY\n\xff\r\n\x00"
AUTH_NAMES = {0: "Ok", 3: "CleartextPassword", 5: "MD5Password", 10: "SASL", 11: "SASLContinue", 12: "SASLFinal"}
ERR_FIELDS = {"S": "severity", "V": "severity_nl", "C": "sqlstate", "M": "message", "D": "detail", "H": "hint",
              "P": "position", "p": "internal_position", "q": "internal_query", "W": "where", "s": "schema",
              "t": "table", "c": "column", "d": "datatype", "n": "constraint", "F": "file", "L": "line",
              "R": "routine"}


class ProtocolError(Exception):
    pass


def msg(typ: bytes, body: bytes = b"") -> bytes:
    return typ + struct.pack("!i", len(body) + 4) + body


def parse_msg(name: str, sql: str, oids=()) -> bytes:
    return msg(b"P", cstr(name) + cstr(sql) + struct.pack("!h", len(oids)) + b"".join(struct.pack("!I", o) for o in oids))


def bind_msg(portal: str, stmt: str, params=(), formats=(), result_formats=()) -> bytes:
    """Bind; ``params`` are bytes (sent as they are) or None (NULL)."""
    body = cstr(portal) + cstr(stmt) + struct.pack("!h", len(formats)) + b"".join(struct.pack("!h", f) for f in formats)
    body += struct.pack("!h", len(params))
    for p in params:
        body += struct.pack("!i", -1) if p is None else struct.pack("!i", len(p)) + p
    body += struct.pack("!h", len(result_formats)) + b"".join(struct.pack("!h", f) for f in result_formats)
    return msg(b"B", body)


def execute_msg(portal: str, max_rows: int = 0) -> bytes:
    return msg(b"E", cstr(portal) + struct.pack("!i", max_rows))


def close_msg(kind: str, name: str) -> bytes:
    return msg(b"C", kind.encode() + cstr(name))


def sync_msg() -> bytes:
    return msg(b"S")


def cstr(s: str) -> bytes:
    return s.encode() + b"\0"


def _read_cstr(b: bytes, i: int) -> tuple[str, int]:
    j = b.index(b"\0", i)
    return b[i:j].decode("utf-8", "replace"), j + 1


# ---------------------------------------------------------------- binary COPY
def encode_binary_copy(rows: list[list[bytes | None]], flags: int = 0, trailer: bool = True) -> bytes:
    """The byte stream of a binary COPY: signature, flags, no extension, tuples, trailer."""
    out = bytearray(COPY_SIGNATURE + struct.pack("!ii", flags, 0))
    for r in rows:
        out += struct.pack("!h", len(r))
        for f in r:
            if f is None:
                out += struct.pack("!i", -1)
            else:
                out += struct.pack("!i", len(f)) + f
    if trailer:
        out += struct.pack("!h", -1)
    return bytes(out)


def decode_binary_copy(data: bytes) -> dict:
    """Split a binary COPY stream into tuples of raw field bytes (None = NULL)."""
    if not data.startswith(COPY_SIGNATURE):
        return {"format": "not-binary", "head": data[:80].hex()}
    i = len(COPY_SIGNATURE)
    flags, extlen = struct.unpack("!ii", data[i:i + 8])
    i += 8 + extlen
    rows, trailer = [], False
    while i + 2 <= len(data):
        (nf,) = struct.unpack("!h", data[i:i + 2])
        i += 2
        if nf == -1:
            trailer = True
            break
        fields = []
        for _ in range(nf):
            (fl,) = struct.unpack("!i", data[i:i + 4])
            i += 4
            if fl == -1:
                fields.append(None)
            else:
                fields.append(data[i:i + fl])
                i += fl
        rows.append(fields)
    return {"format": "binary", "flags": flags, "rows": rows, "trailer": trailer, "trailing_bytes": len(data) - i}


# ---------------------------------------------------------------- SCRAM-SHA-256
class Scram:
    """Client side of SCRAM-SHA-256 (RFC 5802/7677) as libpq does it (no channel binding)."""

    def __init__(self, password: str):
        self.password = password.encode()
        self.nonce = base64.b64encode(os.urandom(18)).decode()
        self.first_bare = f"n=,r={self.nonce}"
        self.server_signature = b""

    def initial(self) -> bytes:
        return ("n,," + self.first_bare).encode()

    def final(self, server_first: bytes) -> bytes:
        attrs = dict(kv.split("=", 1) for kv in server_first.decode().split(","))
        if not attrs["r"].startswith(self.nonce):
            raise ProtocolError("SCRAM: server nonce does not extend the client nonce")
        salted = hashlib.pbkdf2_hmac("sha256", self.password, base64.b64decode(attrs["s"]), int(attrs["i"]))
        client_key = hmac.new(salted, b"Client Key", hashlib.sha256).digest()
        stored_key = hashlib.sha256(client_key).digest()
        without_proof = f"c=biws,r={attrs['r']}"
        auth_msg = f"{self.first_bare},{server_first.decode()},{without_proof}".encode()
        sig = hmac.new(stored_key, auth_msg, hashlib.sha256).digest()
        proof = bytes(a ^ b for a, b in zip(client_key, sig))
        server_key = hmac.new(salted, b"Server Key", hashlib.sha256).digest()
        self.server_signature = hmac.new(server_key, auth_msg, hashlib.sha256).digest()
        return f"{without_proof},p={base64.b64encode(proof).decode()}".encode()

    def verify(self, server_final: bytes) -> None:
        attrs = dict(kv.split("=", 1) for kv in server_final.decode().split(","))
        if base64.b64decode(attrs.get("v", "")) != self.server_signature:
            raise ProtocolError("SCRAM: wrong server signature")


# ---------------------------------------------------------------- backend message decoding
def decode_backend(typ: str, body: bytes) -> dict:
    if typ == "R":
        (code,) = struct.unpack("!i", body[:4])
        m = {"type": "Authentication", "auth": AUTH_NAMES.get(code, str(code)), "data": body[4:]}
        if code == 10:
            mechs, i = [], 4
            while i < len(body) and body[i] != 0:
                s, i = _read_cstr(body, i)
                mechs.append(s)
            m["mechanisms"] = mechs
        return m
    if typ == "S":
        k, i = _read_cstr(body, 0)
        v, _ = _read_cstr(body, i)
        return {"type": "ParameterStatus", "name": k, "value": v}
    if typ == "K":
        pid, key = struct.unpack("!ii", body[:8])
        return {"type": "BackendKeyData", "pid": pid, "key": key}
    if typ == "Z":
        return {"type": "ReadyForQuery", "status": body.decode()}
    if typ == "T":
        (n,) = struct.unpack("!h", body[:2])
        i, fields = 2, []
        for _ in range(n):
            name, i = _read_cstr(body, i)
            toid, att, typoid, typlen, typmod, fmt = struct.unpack("!ihihih", body[i:i + 18])
            i += 18
            fields.append({"name": name, "table_oid": toid, "attnum": att, "type_oid": typoid, "typlen": typlen,
                           "typmod": typmod, "format": fmt})
        return {"type": "RowDescription", "fields": fields}
    if typ == "D":
        (n,) = struct.unpack("!h", body[:2])
        i, vals = 2, []
        for _ in range(n):
            (ln,) = struct.unpack("!i", body[i:i + 4])
            i += 4
            if ln == -1:
                vals.append(None)
            else:
                vals.append(body[i:i + ln])
                i += ln
        return {"type": "DataRow", "values": vals}
    if typ == "C":
        return {"type": "CommandComplete", "tag": _read_cstr(body, 0)[0]}
    if typ in ("E", "N"):
        fields, i = {}, 0
        while i < len(body) and body[i] != 0:
            code = chr(body[i])
            v, i = _read_cstr(body, i + 1)
            fields[ERR_FIELDS.get(code, code)] = v
        return {"type": "ErrorResponse" if typ == "E" else "NoticeResponse", "fields": fields}
    if typ in ("G", "H", "W"):
        fmt, n = struct.unpack("!bh", body[:3])
        cols = list(struct.unpack(f"!{n}h", body[3:3 + 2 * n]))
        name = {"G": "CopyInResponse", "H": "CopyOutResponse", "W": "CopyBothResponse"}[typ]
        return {"type": name, "overall_format": fmt, "column_formats": cols}
    if typ == "d":
        return {"type": "CopyData", "data": body}
    if typ == "t":
        (n,) = struct.unpack("!h", body[:2])
        return {"type": "ParameterDescription", "param_oids": list(struct.unpack(f"!{n}I", body[2:2 + 4 * n]))}
    simple = {"1": "ParseComplete", "2": "BindComplete", "3": "CloseComplete", "n": "NoData", "I": "EmptyQueryResponse",
              "c": "CopyDone", "s": "PortalSuspended"}
    if typ in simple:
        return {"type": simple[typ]}
    if typ == "A":
        pid = struct.unpack("!i", body[:4])[0]
        ch, i = _read_cstr(body, 4)
        return {"type": "NotificationResponse", "pid": pid, "channel": ch}
    if typ == "v":
        return {"type": "NegotiateProtocolVersion", "raw": body.hex()}
    return {"type": f"Unknown({typ})", "raw": body.hex()}


# ---------------------------------------------------------------- session
class Session:
    """One TCP connection to one server, driven exchange by exchange.

    After ``begin_*`` call ``feed()`` whenever the socket is readable (or ``wait()``); the
    exchange is complete when ``done`` is True, its decoded backend messages are in
    ``messages``.  Consecutive CopyData messages are merged into one
    ``{"type": "CopyDataStream", "data": bytes}``.
    """

    def __init__(self, host: str, port: int, user: str, password: str, dbname: str, connect_timeout: float = 10):
        self.user, self.password, self.dbname = user, password, dbname
        self.sock = socket.create_connection((host, port), timeout=connect_timeout)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.sock.setblocking(False)
        self.buf = bytearray()
        self.closed = False
        self.done = True
        self.messages: list[dict] = []
        self._mode = None
        self._copy_in: bytes | None = None
        self._scram: Scram | None = None

    def fileno(self) -> int:
        return self.sock.fileno()

    # -- sending
    def _send(self, data: bytes) -> None:
        self.sock.setblocking(True)
        try:
            self.sock.sendall(data)
        finally:
            self.sock.setblocking(False)

    def _start(self, mode: str) -> None:
        if not self.done:
            raise ProtocolError("previous exchange still running")
        self.done, self.messages, self._mode = False, [], mode

    def begin_ssl_request(self) -> None:
        self._start("ssl")
        self._send(struct.pack("!ii", 8, 80877103))

    def begin_startup(self, params: dict[str, str] | None = None) -> None:
        self._start("startup")
        p = {"user": self.user, "database": self.dbname}
        p.update({k: v for k, v in (params or {}).items() if k not in ("user", "database")})
        body = struct.pack("!i", 196608) + b"".join(cstr(k) + cstr(v) for k, v in p.items()) + b"\0"
        self._send(struct.pack("!i", len(body) + 4) + body)

    def begin_query(self, sql: str, copy_in: bytes | None = None) -> None:
        """Simple Query; ``copy_in`` is the COPY FROM STDIN payload sent after CopyInResponse
        (without it a CopyInResponse is answered with CopyFail)."""
        self._start("query")
        self._copy_in = copy_in
        self._send(msg(b"Q", cstr(sql)))

    def begin_parse(self, sql: str, name: str = "", param_oids=()) -> None:
        self._start("query")
        body = cstr(name) + cstr(sql) + struct.pack("!h", len(param_oids)) + b"".join(
            struct.pack("!I", o) for o in param_oids)
        self._send(msg(b"P", body) + msg(b"S"))

    def begin_raw(self, data: bytes) -> None:
        """Frontend messages as given (built with the ``*_msg`` functions), the last a Sync or
        a Query: the exchange ends at its ReadyForQuery."""
        self._start("query")
        self._send(data)

    def begin_describe(self, kind: str = "S", name: str = "") -> None:
        self._start("query")
        self._send(msg(b"D", kind.encode() + cstr(name)) + msg(b"S"))

    def terminate(self) -> None:
        self._start("terminate")
        try:
            self._send(msg(b"X"))
        except OSError:
            pass
        self.close()
        self.done = True

    def close(self) -> None:
        if not self.closed:
            self.closed = True
            try:
                self.sock.close()
            except OSError:
                pass

    # -- receiving
    def feed(self) -> bool:
        """Consume available bytes; True when the current exchange is complete."""
        if self.done:
            return True
        try:
            while True:
                chunk = self.sock.recv(1 << 16)
                if not chunk:
                    self._eof()
                    return True
                self.buf += chunk
                if len(chunk) < (1 << 16):
                    break
        except BlockingIOError:
            pass
        except OSError as e:
            self.messages.append({"type": "SocketError", "error": str(e)})
            self._eof()
            return True
        self._process()
        return self.done

    def wait(self, timeout: float) -> bool:
        deadline = time.monotonic() + timeout
        while not self.feed():
            left = deadline - time.monotonic()
            if left <= 0:
                return False
            select.select([self.sock], [], [], min(left, 0.5))
        return True

    def _eof(self) -> None:
        self.messages.append({"type": "EOF"})
        self.done = True
        self.close()

    def _process(self) -> None:
        if self._mode == "ssl":
            if self.buf:
                self.messages.append({"type": "SSLResponse", "answer": chr(self.buf[0])})
                del self.buf[:1]
                self.done = True
            return
        while len(self.buf) >= 5 and not self.done:
            (ln,) = struct.unpack("!i", self.buf[1:5])
            if len(self.buf) < 1 + ln:
                return
            typ = chr(self.buf[0])
            body = bytes(self.buf[5:1 + ln])
            del self.buf[:1 + ln]
            self._on_message(typ, body)

    def _on_message(self, typ: str, body: bytes) -> None:
        m = decode_backend(typ, body)
        if m["type"] == "CopyData":
            if self.messages and self.messages[-1]["type"] == "CopyDataStream":
                self.messages[-1]["data"] += body
            else:
                self.messages.append({"type": "CopyDataStream", "data": bytearray(body)})
            return
        self.messages.append(m)
        if m["type"] == "Authentication":
            self._auth(m)
        elif m["type"] == "CopyInResponse":
            if self._copy_in is None:
                self._send(msg(b"f", cstr("no COPY data recorded")))
            else:
                data = self._copy_in
                for i in range(0, len(data), 1 << 16):
                    self._send(msg(b"d", data[i:i + (1 << 16)]))
                self._send(msg(b"c"))
        elif m["type"] == "ReadyForQuery":
            self.done = True

    def _auth(self, m: dict) -> None:
        a = m["auth"]
        if a == "CleartextPassword":
            self._send(msg(b"p", cstr(self.password)))
        elif a == "MD5Password":
            inner = hashlib.md5((self.password + self.user).encode()).hexdigest()
            outer = hashlib.md5(inner.encode() + m["data"][:4]).hexdigest()
            self._send(msg(b"p", cstr("md5" + outer)))
        elif a == "SASL":
            if "SCRAM-SHA-256" not in m["mechanisms"]:
                raise ProtocolError(f"no supported SASL mechanism in {m['mechanisms']}")
            self._scram = Scram(self.password)
            first = self._scram.initial()
            self._send(msg(b"p", cstr("SCRAM-SHA-256") + struct.pack("!i", len(first)) + first))
        elif a == "SASLContinue":
            self._send(msg(b"p", self._scram.final(m["data"])))
        elif a == "SASLFinal":
            self._scram.verify(m["data"])
        elif a != "Ok":
            raise ProtocolError(f"unsupported authentication request {a}")
