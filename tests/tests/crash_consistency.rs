//! A real RockLake process is SIGKILLed while a client commits two-table transactions; after
//! every restart: no transaction is partially visible, no acknowledged commit is lost, row
//! identities (ctid tuple numbers) never repeat.

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use rocklake_tests::{shared_dir, venv_python, Server};

const WRITER: &str = r#"
import sys, psycopg
dsn, start = sys.argv[1], int(sys.argv[2])
with psycopg.connect(dsn, autocommit=True) as c:
    c.execute("CREATE TABLE IF NOT EXISTS a (n BIGINT PRIMARY KEY)")
    c.execute("CREATE TABLE IF NOT EXISTS b (n BIGINT, payload VARCHAR)")
    print("READY", flush=True)
    n = start
    while True:
        with c.transaction():
            c.execute(f"INSERT INTO a VALUES ({n})")
            c.execute(f"INSERT INTO b VALUES ({n}, 'payload-{n}')")
        print("ACK", n, flush=True)
        n += 1
"#;

const CHECK: &str = r#"
import sys, json, psycopg
with psycopg.connect(sys.argv[1], autocommit=True) as c:
    a = [r[0] for r in c.execute("SELECT n FROM a ORDER BY n").fetchall()]
    b = [r[0] for r in c.execute("SELECT n FROM b ORDER BY n").fetchall()]
    ctids = [r[0] for r in c.execute("SELECT ctid::text FROM b").fetchall()]
print("STATE", json.dumps({"a": a, "b": b, "ctids": ctids}))
"#;

/// Deterministic pseudo-random delays (seeded), so a failing run can be repeated.
fn delays(seed: u64, n: usize) -> Vec<u64> {
    let mut x = seed;
    (0..n)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            50 + x % 700
        })
        .collect()
}

#[test]
fn sigkill_during_commits_loses_nothing_acknowledged_and_shows_nothing_partial() {
    let rounds: usize = std::env::var("ROCKLAKE_CRASH_ROUNDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(6);
    let seed: u64 = std::env::var("ROCKLAKE_CRASH_SEED")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(0x5eed_1234);
    let py = venv_python("155").expect("venv");
    let dir = tempfile::tempdir().expect("tempdir");
    let catalog = dir.path().join("catalog");
    let mut acked: Vec<i64> = Vec::new();
    let mut next: i64 = 1;
    let mut commits_checked = 0usize;
    for (round, delay_ms) in delays(seed, rounds).into_iter().enumerate() {
        let server = Server::start(&catalog, "rocklake", &[]).expect("start");
        let mut child = Command::new(&py)
            .arg("-c")
            .arg(WRITER)
            .arg(server.dsn())
            .arg(next.to_string())
            .env("PYTHONPATH", shared_dir().join("tools"))
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("writer");
        let stdout = child.stdout.take().expect("stdout");
        let (ready_tx, ready_rx) = std::sync::mpsc::channel();
        let reader = std::thread::spawn(move || {
            let mut acks = Vec::new();
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if line.starts_with("READY") {
                    let _ = ready_tx.send(());
                } else if let Some(n) = line.strip_prefix("ACK ") {
                    acks.push(n.trim().parse::<i64>().unwrap_or(-1));
                }
            }
            acks
        });
        // The kill lands a random moment after the writer is set up (Python's start-up takes
        // long on a loaded machine; timing it from the spawn made rounds without any commit).
        ready_rx
            .recv_timeout(Duration::from_secs(60))
            .expect("writer ready");
        let started = Instant::now();
        std::thread::sleep(Duration::from_millis(delay_ms));
        server.kill().expect("SIGKILL the server");
        let _ = child.wait();
        let round_acks = reader.join().expect("reader");
        assert!(
            !round_acks.is_empty() || started.elapsed() < Duration::from_millis(100),
            "round {round}: no commit acknowledged"
        );
        acked.extend(&round_acks);

        let server = Server::start(&catalog, "rocklake", &[]).expect("restart");
        let (ok, out) =
            rocklake_tests::duckdb_python_quiet("155", CHECK, &[&server.dsn()]).expect("check");
        assert!(ok, "check failed");
        let line = out
            .lines()
            .find(|l| l.starts_with("STATE "))
            .expect("state");
        let state: serde_json::Value = serde_json::from_str(&line[6..]).expect("json");
        let a: Vec<i64> = state["a"]
            .as_array()
            .expect("a")
            .iter()
            .filter_map(|v| v.as_i64())
            .collect();
        let b: Vec<i64> = state["b"]
            .as_array()
            .expect("b")
            .iter()
            .filter_map(|v| v.as_i64())
            .collect();
        let ctids: Vec<String> = state["ctids"]
            .as_array()
            .expect("ctids")
            .iter()
            .filter_map(|v| v.as_str().map(String::from))
            .collect();
        assert_eq!(a, b, "round {round}: a transaction is partially visible");
        for n in &acked {
            assert!(
                a.binary_search(n).is_ok(),
                "round {round}: acknowledged commit {n} lost"
            );
        }
        let mut uniq = ctids.clone();
        uniq.sort();
        uniq.dedup();
        assert_eq!(
            uniq.len(),
            ctids.len(),
            "round {round}: a tuple number was reused"
        );
        commits_checked = a.len();
        next = a.last().copied().unwrap_or(0) + 1;
        let unacked_but_present = a.iter().filter(|n| !acked.contains(n)).count();
        println!(
            "round {round}: killed {} ms after the writer was ready, {} acked this round, {} committed in total, {} committed without ack",
            delay_ms,
            round_acks.len(),
            a.len(),
            unacked_but_present
        );
        server.stop().expect("stop");
    }
    println!(
        "crash suite: runs={rounds} commits_checked={commits_checked} acked={} lost=0 partial=0",
        acked.len()
    );
}

// ---------------------------------------------------------------------------------------------
// Named crash points through the real server (issue 6, point 2) and an object-store outage
// while serving (point 4).

const DUCK_WRITER: &str = r#"
import sys, dlconn
attach, start = sys.argv[1], int(sys.argv[2])
c = dlconn.connect(exts=("ducklake", "postgres"))
c.execute(attach)
c.execute("CREATE TABLE IF NOT EXISTS lake.a (n BIGINT)")
c.execute("CREATE TABLE IF NOT EXISTS lake.b (n BIGINT, part INTEGER, payload VARCHAR)")
print("READY", flush=True)
n = start
while True:
    c.execute("BEGIN")
    c.execute(f"INSERT INTO lake.a VALUES ({n})")
    c.execute(f"INSERT INTO lake.b SELECT {n}, i, 'payload-{n}-' || i FROM range(2) r(i)")
    c.execute("COMMIT")
    print("ACK", n, flush=True)
    n += 1
"#;

const DUCK_CHECK: &str = r#"
import sys, json, dlconn
c = dlconn.connect(exts=("ducklake", "postgres"))
c.execute(sys.argv[1])
tables = {r[0] for r in c.execute("SELECT table_name FROM duckdb_tables() WHERE database_name = 'lake'").fetchall()}
a = [r[0] for r in c.execute("SELECT n FROM lake.a ORDER BY n").fetchall()] if "a" in tables else []
b = [[r[0], r[1]] for r in c.execute("SELECT n, count(*) FROM lake.b GROUP BY n ORDER BY n").fetchall()] if "b" in tables else []
print("STATE", json.dumps({"a": a, "b": b}))
"#;

/// Whether the process has exited on its own (a zombie its parent has not reaped yet).
fn exited(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|s| {
            s.rsplit_once(')')
                .and_then(|(_, rest)| rest.split_whitespace().next().map(|st| st == "Z"))
        })
        .unwrap_or(true)
}

fn env_usize(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn duck_state(server: &Server) -> (Vec<i64>, Vec<(i64, i64)>) {
    let (ok, out) =
        rocklake_tests::duckdb_python_quiet("155", DUCK_CHECK, &[&server.attach]).expect("check");
    assert!(ok, "DuckDB could not re-attach: {out}");
    let line = out
        .lines()
        .find_map(|l| l.strip_prefix("STATE "))
        .unwrap_or_else(|| panic!("no STATE in {out}"));
    let v: serde_json::Value = serde_json::from_str(line).expect("json");
    let a = v["a"]
        .as_array()
        .expect("a")
        .iter()
        .filter_map(|x| x.as_i64())
        .collect();
    let b = v["b"]
        .as_array()
        .expect("b")
        .iter()
        .filter_map(|p| Some((p[0].as_i64()?, p[1].as_i64()?)))
        .collect();
    (a, b)
}

#[test]
fn named_crash_points_in_the_server_keep_duckdb_commits_whole() {
    let runs = env_usize("ROCKLAKE_E2E_CRASH_RUNS", 3);
    let seed: u64 = std::env::var("ROCKLAKE_CRASH_SEED")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(0x5eed_0006);
    let py = venv_python("155").expect("venv");
    let dir = tempfile::tempdir().expect("tempdir");
    let catalog = dir.path().join("catalog");
    let catalog_url = catalog.display().to_string();
    let data = dir.path().join("files");
    let mut acked: Vec<i64> = Vec::new();
    let mut next: i64 = 1;
    let started = Instant::now();
    // WAL points with the local commit journal off (every commit waits for its WAL upload),
    // journal points with it on (the default).
    let points = [
        "before_put",
        "during_put",
        "after_put",
        "journal_before_sync",
        "journal_after_sync",
        "journal_torn",
    ];
    let mut x = seed | 1;
    for run in 0..runs * points.len() {
        let point = points[run % points.len()];
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        // WAL uploads of the server: #1 its epoch claim, then DuckDB's first ATTACH
        // (initialising the catalog) and CREATE TABLEs, then one per COMMIT. Journal appends:
        // the same without the epoch claim.
        let nth = 3 + x % 8;
        let spec = format!("seed={x},crash={point}:{nth}");
        let journal = point.starts_with("journal_");
        let server = Server::start_url(
            &catalog_url,
            &data,
            &[
                ("ROCKLAKE_FAULTS".to_string(), spec.clone()),
                ("ROCKLAKE_COMMIT_JOURNAL".to_string(), journal.to_string()),
            ],
            &[],
        )
        .expect("start with faults");
        let pid = server.pid();
        let mut writer = Command::new(&py)
            .arg("-c")
            .arg(DUCK_WRITER)
            .arg(&server.attach)
            .arg(next.to_string())
            .env("PYTHONPATH", shared_dir().join("tools"))
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("writer");
        let stdout = writer.stdout.take().expect("stdout");
        let reader = std::thread::spawn(move || {
            BufReader::new(stdout)
                .lines()
                .map_while(Result::ok)
                .filter_map(|l| l.strip_prefix("ACK ").and_then(|n| n.trim().parse().ok()))
                .collect::<Vec<i64>>()
        });
        let deadline = Instant::now() + Duration::from_secs(90);
        while !exited(pid) {
            assert!(
                Instant::now() < deadline,
                "run {run}: ROCKLAKE_FAULTS={spec}: the server did not reach its crash point"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = writer.wait();
        let round_acks = reader.join().expect("reader");
        server.kill().expect("reap the server");
        acked.extend(&round_acks);

        let server = Server::start_url(&catalog_url, &data, &[], &[]).expect("restart");
        let (a, b) = duck_state(&server);
        for n in &a {
            assert!(
                b.contains(&(*n, 2)),
                "run {run} ({spec}): commit {n} partially visible: b has {:?}",
                b.iter().find(|(m, _)| m == n)
            );
        }
        assert_eq!(
            b.len(),
            a.len(),
            "run {run} ({spec}): b holds commits a does not"
        );
        for n in &acked {
            assert!(
                a.binary_search(n).is_ok(),
                "run {run} ({spec}): acknowledged commit {n} lost"
            );
        }
        let (code, report) = rocklake_tests::verify_catalog(&catalog_url, &[]).expect("verify");
        assert_eq!(code, 0, "run {run} ({spec}): verify: {report}");
        println!(
            "run {run}: ROCKLAKE_FAULTS={spec}: {} acked this run, {} commits present ({} without ack), verify clean",
            round_acks.len(),
            a.len(),
            a.iter().filter(|n| !acked.contains(n)).count()
        );
        next = a.last().copied().unwrap_or(0) + 1;
        server.stop().expect("stop");
    }
    println!(
        "server crash points: runs={} points={} acked={} lost=0 partial=0 in {:?}",
        runs * points.len(),
        points.len(),
        acked.len(),
        started.elapsed()
    );
}

const OUTAGE_CLIENT: &str = r#"
import sys, os, time, json, psycopg, dlconn
dsn, attach, flag = sys.argv[1:4]
out = {"acked": [], "outage": []}

def attempt(c, sql):
    t0 = time.time()
    try:
        c.execute(sql)
        res = "ok"
    except psycopg.Error as e:
        res = f"{e.sqlstate} {str(e).splitlines()[0][:300]} HINT {e.diag.message_hint}"
    return res, round(time.time() - t0, 3)

with psycopg.connect(dsn, autocommit=True) as c:
    c.execute("CREATE TABLE t (id BIGINT PRIMARY KEY, v VARCHAR)")
    for i in range(5):
        c.execute(f"INSERT INTO t VALUES ({i}, 'v{i}')")
        out["acked"].append(i)
    duck = dlconn.connect(exts=("ducklake", "postgres"))
    duck.execute(attach)
    duck.execute("CREATE TABLE lake.d (n BIGINT)")
    duck.execute("INSERT INTO lake.d VALUES (1)")

    open(flag, "w").close()  # the store goes down
    for i in range(100, 104):
        res, took = attempt(c, f"INSERT INTO t VALUES ({i}, 'v{i}')")
        out["outage"].append([i, res, took])
    out["read_during"] = c.execute("SELECT count(*) FROM t").fetchone()[0]
    t0 = time.time()
    try:
        duck.execute("INSERT INTO lake.d VALUES (2)")
        out["duck_during"] = "ok"
    except Exception as e:
        out["duck_during"] = str(e)[:400]
    out["duck_during_s"] = round(time.time() - t0, 3)

    os.remove(flag)  # the store is back
    t0 = time.time()
    failures = 0
    while True:
        res, _ = attempt(c, "INSERT INTO t VALUES (7, 'v7')")
        if res == "ok":
            break
        failures += 1
        if time.time() - t0 > 30:
            raise SystemExit(f"no commit 30 s after the store came back: {res}")
        time.sleep(0.2)
    out["acked"].append(7)
    out["back_after_s"] = round(time.time() - t0, 3)
    out["failures_after_back"] = failures
    for i in range(8, 11):
        c.execute(f"INSERT INTO t VALUES ({i}, 'v{i}')")
        out["acked"].append(i)
    try:
        duck.execute("INSERT INTO lake.d VALUES (3)")
        out["duck_after"] = "ok"
    except Exception as e:
        out["duck_after"] = str(e)[:400]
    out["ids"] = [r[0] for r in c.execute("SELECT id FROM t ORDER BY id").fetchall()]
    out["d"] = [r[0] for r in duck.execute("SELECT n FROM lake.d ORDER BY n").fetchall()]
print("RESULT", json.dumps(out))
"#;

#[test]
fn store_outage_gives_clear_errors_and_the_same_server_recovers() {
    let dir = tempfile::tempdir().expect("tempdir");
    let catalog = dir.path().join("catalog").display().to_string();
    let data = dir.path().join("files");
    let flag = dir.path().join("store-down");
    let spec = format!("outage_file={}", flag.display());
    // The outage hits the object store; the local commit journal would keep commits off it.
    let server = Server::start_url(
        &catalog,
        &data,
        &[
            ("ROCKLAKE_FAULTS".into(), spec),
            ("ROCKLAKE_COMMIT_JOURNAL".into(), "false".into()),
        ],
        &[],
    )
    .expect("start");
    let pid = server.pid();
    let (ok, out) = rocklake_tests::duckdb_python(
        "155",
        OUTAGE_CLIENT,
        &[&server.dsn(), &server.attach, &flag.display().to_string()],
    )
    .expect("client");
    assert!(ok, "client failed");
    let r = rocklake_tests::result_json(&out);
    for o in r["outage"].as_array().expect("outage") {
        let res = o[1].as_str().expect("result");
        let took = o[2].as_f64().expect("seconds");
        assert!(res.starts_with("58030"), "commit during the outage: {res}");
        assert!(took < 15.0, "a commit during the outage took {took} s");
    }
    assert_eq!(r["read_during"], 5, "reads during the outage");
    let duck = r["duck_during"].as_str().expect("duck");
    assert!(
        duck.contains("58030") || duck.contains("storage"),
        "DuckDB's error during the outage: {duck}"
    );
    assert!(r["duck_during_s"].as_f64().expect("s") < 30.0);
    assert!(!exited(pid), "the server died");
    assert_eq!(r["duck_after"], "ok", "DuckDB after the outage");
    let ids: Vec<i64> = r["ids"]
        .as_array()
        .expect("ids")
        .iter()
        .filter_map(|v| v.as_i64())
        .collect();
    for a in r["acked"].as_array().expect("acked") {
        let a = a.as_i64().expect("id");
        assert!(ids.contains(&a), "acknowledged {a} missing: {ids:?}");
    }
    for o in r["outage"].as_array().expect("outage") {
        let (id, res) = (o[0].as_i64().expect("id"), o[1].as_str().unwrap_or(""));
        if res.contains("retry the transaction") {
            assert!(
                !ids.contains(&id),
                "{id} reported not committed, yet present"
            );
        }
    }
    println!(
        "outage: commits failed with 58030 in {:?} s, DuckDB: {duck:?}; back after {} s ({} failures), \
         same server process",
        r["outage"]
            .as_array()
            .map(|a| a.iter().map(|o| o[2].clone()).collect::<Vec<_>>()),
        r["back_after_s"],
        r["failures_after_back"]
    );
    server.stop().expect("stop");
    let (code, report) = rocklake_tests::verify_catalog(&catalog, &[]).expect("verify");
    assert_eq!(code, 0, "verify: {report}");
    let server = Server::start_url(&catalog, &data, &[], &[]).expect("restart");
    let after = rocklake_tests::sql_line(&server, "SELECT count(*) FROM t");
    assert_eq!(after, format!("OK [({},)]", ids.len()), "after a restart");
    server.stop().expect("stop");
}

/// What a server that committed two rows and then met a stalled store said and did as it
/// stopped (see the two tests below).
struct StalledStop {
    status: std::process::ExitStatus,
    took: Duration,
    log: String,
}

/// Starts a server with `faults` (which name `stall`), commits rows 1 and 2 (the second after
/// `stall_now` created the stall file, if it does), stops it, then checks that a restarted
/// server on the unstalled store has both rows and that `rocklake verify` is clean.
fn stop_on_a_stalled_store(faults: &str, stall_now: bool) -> StalledStop {
    let dir = tempfile::tempdir().expect("tempdir");
    let catalog = dir.path().join("catalog").display().to_string();
    let data = dir.path().join("files");
    let stall = dir.path().join("store-stalled");
    let log = dir.path().join("server.log");
    let env = vec![(
        "ROCKLAKE_FAULTS".to_string(),
        format!("stall_file={},{faults}", stall.display()),
    )];
    let server = Server::start_logged(&catalog, &data, &env, &log).expect("start");
    let sql = rocklake_tests::sql_line;
    assert!(sql(&server, "CREATE TABLE t (id BIGINT PRIMARY KEY)").starts_with("OK"));
    assert!(sql(&server, "INSERT INTO t VALUES (1)").starts_with("OK"));
    if stall_now {
        std::fs::write(&stall, b"").expect("stall the store");
    }
    // The commit journal acknowledges a commit without the object store (stalled or not).
    let during = sql(&server, "INSERT INTO t VALUES (2)");
    assert!(during.starts_with("OK"), "commit before the stop: {during}");
    let (status, took) = server.terminate().expect("terminate");
    let text = std::fs::read_to_string(&log).expect("log");

    let _ = std::fs::remove_file(&stall);
    let server = Server::start_url(&catalog, &data, &[], &[]).expect("restart");
    assert_eq!(
        sql(&server, "SELECT id FROM t ORDER BY id"),
        "OK [(1,), (2,)]",
        "acknowledged commits after the stop"
    );
    server.stop().expect("stop");
    let (code, report) = rocklake_tests::verify_catalog(&catalog, &[]).expect("verify");
    assert_eq!(code, 0, "verify: {report}");
    StalledStop {
        status,
        took,
        log: text,
    }
}

/// A store that stops answering while the server stops: closing it is cut off after its bound
/// (15 s), the server exits with a failure status and a log line naming the step it was in,
/// and nothing acknowledged is lost: the next open replays the commit journal.
#[test]
fn a_store_that_stops_answering_cannot_keep_a_stopped_server_alive() {
    let s = stop_on_a_stalled_store("", true);
    let line = s
        .log
        .lines()
        .find(|l| l.contains("closing the catalog store did not finish within 15 s"))
        .unwrap_or_else(|| panic!("no line about the cut-off close in:\n{}", s.log));
    assert!(line.contains("(it was "), "the step is not named: {line}");
    assert!(
        !s.status.success(),
        "exit status {} after a cut-off close",
        s.status
    );
    assert!(
        s.took >= Duration::from_secs(14) && s.took < Duration::from_secs(30),
        "stopped in {:?}",
        s.took
    );
    println!(
        "stalled store: the server stopped in {:?} with {}: {line}",
        s.took, s.status
    );
}

/// SlateDB's own close that does not finish (CI saw a background task of it not stop after a
/// journal takeover): everything acknowledged is durable before it starts, so after 5 s the
/// store counts as closed and the server exits 0, saying so.
#[test]
fn a_slatedb_that_does_not_close_does_not_keep_a_stopped_server_alive() {
    let s = stop_on_a_stalled_store("stall_on_close=1", false);
    let line = s
        .log
        .lines()
        .find(|l| l.contains("SlateDB did not close within 5 s"))
        .unwrap_or_else(|| panic!("no line about SlateDB's close in:\n{}", s.log));
    assert!(s.status.success(), "exit status {}: {}", s.status, s.log);
    assert!(
        s.took >= Duration::from_millis(4500) && s.took < Duration::from_secs(14),
        "stopped in {:?}",
        s.took
    );
    println!(
        "SlateDB stalled at close: the server stopped in {:?} with {}: {line}",
        s.took, s.status
    );
}
