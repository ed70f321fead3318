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
        let reader = std::thread::spawn(move || {
            let mut acks = Vec::new();
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if let Some(n) = line.strip_prefix("ACK ") {
                    acks.push(n.trim().parse::<i64>().unwrap_or(-1));
                }
            }
            acks
        });
        let started = Instant::now();
        std::thread::sleep(Duration::from_millis(300 + delay_ms));
        server.kill().expect("SIGKILL the server");
        let _ = child.wait();
        let round_acks = reader.join().expect("reader");
        assert!(
            !round_acks.is_empty() || started.elapsed() < Duration::from_millis(400),
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
            "round {round}: killed after {} ms, {} acked this round, {} committed in total, {} committed without ack",
            300 + delay_ms,
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
