//! Extended-protocol portals message by message against PostgreSQL 15 (a raw client,
//! tests/e2e/pgwire.py, sending exactly the messages given): a portal read in parts, then its
//! name bound again after the transaction ended by a simple-query COMMIT or an Execute'd one;
//! an Execute of a finished or suspended portal in a failed block (25P02); a finished portal
//! executed again (`SELECT 0`, 55000), an empty query's portal twice; binary parameters too
//! short (08P01) or too long (22P03), invalid UTF-8 and unreadable text parameters with
//! PostgreSQL's `unnamed portal parameter $1` context.

use rocklake_tests::{repo_root, same_outcomes_as_postgres};

const SCRIPT: &str = r#"
import sys, json
sys.path.insert(0, sys.argv[2])
from pgwire import Session, parse_msg, bind_msg, execute_msg, close_msg, sync_msg, msg, cstr
import urllib.parse
kv = dict(p.split("=", 1) for p in sys.argv[1].split())
s = Session(kv["host"], int(kv["port"]), kv["user"], kv["password"], kv["dbname"])
s.begin_startup(); assert s.wait(10)
out = []

def exchange(label, data):
    s.begin_raw(data)
    assert s.wait(10), label
    got = []
    for m in s.messages:
        t = m["type"]
        if t in ("ParameterStatus", "NoticeResponse"):
            continue
        if t == "ErrorResponse":
            f = m.get("fields", m)
            got.append([t, f.get("sqlstate"), f.get("message"), f.get("where")])
        elif t == "CommandComplete":
            got.append([t, m.get("tag")])
        elif t == "DataRow":
            got.append([t, [None if v is None else bytes(v).hex() for v in m.get("values", [])]])
        elif t == "ReadyForQuery":
            got.append([t, m.get("status")])
        else:
            got.append([t])
    out.append([label, got])

q = lambda sql: msg(b"Q", cstr(sql))
series = "SELECT g FROM generate_series(1, 3) g"
exchange("begin", q("BEGIN"))
exchange("read in parts", parse_msg("s1", series) + bind_msg("c1", "s1") + execute_msg("c1", 2) + sync_msg())
exchange("commit by query", q("COMMIT"))
exchange("the name again", bind_msg("c1", "s1") + execute_msg("c1", 0) + sync_msg())
exchange("begin 2", q("BEGIN"))
exchange("suspended", bind_msg("c2", "s1") + execute_msg("c2", 1) + sync_msg())
exchange("fail the block", q("SELECT 1/0"))
exchange("suspended in a failed block", execute_msg("c2", 1) + sync_msg())
exchange("rollback", q("ROLLBACK"))
exchange("begin 3", q("BEGIN"))
exchange("finished twice", bind_msg("c3", "s1") + execute_msg("c3", 0) + execute_msg("c3", 0) + sync_msg())
exchange("empty query twice", parse_msg("", "") + bind_msg("e", "") + execute_msg("e", 0) + execute_msg("e", 0) + sync_msg())
exchange("command twice", parse_msg("u", "SET application_name = 'x'") + bind_msg("c4", "u") + execute_msg("c4", 0) + execute_msg("c4", 0) + sync_msg())
exchange("commit by execute", parse_msg("", "COMMIT") + bind_msg("", "") + execute_msg("", 0) + sync_msg())
exchange("the names again", bind_msg("c3", "s1") + execute_msg("c3", 0) + bind_msg("c4", "s1") + close_msg("P", "c4") + sync_msg())
exchange("int4 parameter", parse_msg("p", "SELECT $1::int4 + 1", [23]) + sync_msg())
exchange("binary too short", bind_msg("", "p", [b"\x00\x01"], [1]) + execute_msg("", 0) + sync_msg())
exchange("binary too long", bind_msg("", "p", [b"\x00\x00\x00\x00\x01"], [1]) + execute_msg("", 0) + sync_msg())
exchange("binary right", bind_msg("", "p", [b"\x00\x00\x00\x29"], [1]) + execute_msg("", 0) + sync_msg())
exchange("text unreadable", bind_msg("", "p", [b"abc"]) + execute_msg("", 0) + sync_msg())
exchange("text empty", bind_msg("", "p", [b""]) + execute_msg("", 0) + sync_msg())
exchange("text not utf-8", parse_msg("t", "SELECT $1::text", [25]) + bind_msg("", "t", [b"\xff\xfe"]) + execute_msg("", 0) + sync_msg())
exchange("named portal unreadable", bind_msg("np", "p", [b"x1"]) + execute_msg("np", 0) + sync_msg())
print("RESULT", json.dumps(out))
"#;

#[test]
fn portal_lifetimes_and_parameter_errors_match_postgres() {
    let tools = repo_root().join("tests/e2e");
    let script = SCRIPT.replace("sys.argv[2]", &format!("{:?}", tools.display().to_string()));
    let got = same_outcomes_as_postgres(&script);
    let text = serde_json::to_string(&got).expect("json");
    // What the exchanges test was reached.
    assert!(text.contains("PortalSuspended"), "{text}");
    assert!(text.contains("25P02"), "{text}");
    assert!(text.contains("55000"), "{text}");
    assert!(text.contains("08P01"), "{text}");
    assert!(
        text.contains("unnamed portal parameter $1 = '...'"),
        "{text}"
    );
    assert!(text.contains("SELECT 0"), "{text}");
}
