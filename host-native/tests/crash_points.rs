//! Crash consistency at the named points of the commit sequence (issue 6, points 1–2).
//!
//! A child process (this test binary again, running [`crash_child`]) opens a catalog through
//! the catalog service — core, group commit, SlateDB store — with `ROCKLAKE_FAULTS` arming one
//! crash point (`before_put`, `during_put` or `after_put` of its Nth WAL upload, with the local
//! commit journal off; `journal_before_sync`, `journal_after_sync` or `journal_torn` of its Nth
//! journal append, with the journal on), and commits
//! DuckLake-shaped transactions from 1–3 concurrent sessions: each writes a `ducklake_snapshot`
//! row, its `ducklake_snapshot_changes` row, a `ducklake_data_file` row and two
//! `ducklake_file_column_stats` rows, and the child prints `ACK <snapshot id>` once COMMIT
//! returned. The process kills itself (SIGKILL) at the armed point. The parent then reads the
//! catalog and checks:
//! - every acknowledged transaction is present (lost = 0),
//! - every present transaction has all five rows and nothing else exists (partial = 0),
//! - each session's transactions present form a prefix of what it committed,
//! - `verify` reports no violation (keys, commit sequence, tuple counters, DuckLake's invariants).
//!
//! Runs are chained per crash point on one catalog (the next child recovers what the previous
//! one left), and each chain ends with a writer reopen through the service.
//!
//! `ROCKLAKE_CRASH_RUNS` (default 100 per point; 1000 for the long mode), `ROCKLAKE_CRASH_SEED`
//! and `ROCKLAKE_CRASH_POINTS` (comma-separated names) tune it. Every run prints its fault spec;
//! a failure prints the command that replays its chain. The seed fixes every fault decision,
//! the crash point and count, and the workload; with several sessions the interleaving of their
//! commits is up to the scheduler.

use std::collections::{BTreeMap, BTreeSet};
use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::sync::Arc;
use std::time::{Duration, Instant};

use rocklake::service::{CatalogService, ServiceConfig};
use rocklake::store::{CrashPoint, Faults, FAULTS_ENV};
use rocklake_core::api::{Output, Reply};
use rocklake_core::writer;
use rocklake_core::Engine;

/// Where the child commits; set only for the child.
const CHILD_DIR_ENV: &str = "ROCKLAKE_CRASH_CHILD_DIR";
const CHILD_SESSIONS_ENV: &str = "ROCKLAKE_CRASH_CHILD_SESSIONS";
/// The DuckLake table id every data file belongs to.
const TABLE_ID: u64 = 1;
/// A child that reaches no crash point stops after this many commits per session.
const MAX_COMMITS_PER_SESSION: u64 = 60;

mod seeded;
use seeded::Rng;

fn env_u64(name: &str) -> Option<u64> {
    std::env::var(name).ok().and_then(|v| {
        let v = v.trim();
        match v.strip_prefix("0x") {
            Some(hex) => u64::from_str_radix(hex, 16).ok(),
            None => v.parse().ok(),
        }
    })
}

// ---------------------------------------------------------------------------------------------
// The child.

fn rows(reply: &Reply) -> Vec<Vec<Option<String>>> {
    rocklake_core::api::last_text_rows(&reply.outputs)
}

fn committed(reply: &Reply) -> bool {
    reply.error.is_none()
        && reply
            .outputs
            .iter()
            .any(|o| matches!(o, Output::Command { tag } if tag == "COMMIT"))
}

/// One DuckLake-shaped commit adding data file `snap - 2` to the table as snapshot `snap`;
/// the file's path has a length that varies with `snap`, so WAL objects vary in size.
fn commit_sql(snap: u64) -> String {
    let file = snap - 2;
    let filler = "x".repeat((snap as usize * 37) % 900);
    let t = TABLE_ID;
    format!(
        "{begin};\
         INSERT INTO \"public\".ducklake_snapshot VALUES ({snap}, NOW(), 1, 2, {next_file});\
         INSERT INTO \"public\".ducklake_snapshot_changes VALUES ({snap}, 'inserted_into_table:{t}', NULL, NULL, NULL);\
         INSERT INTO \"public\".ducklake_data_file VALUES ({file}, {t}, {snap}, NULL, NULL, 'f-{file}-{filler}.parquet', true, 'parquet', 100, 4096, 512, {row}, NULL, NULL, NULL, NULL);\
         INSERT INTO \"public\".ducklake_file_column_stats VALUES ({file}, {t}, 1, 800, 100, 0, '{row}', '{last}', NULL, NULL), ({file}, {t}, 2, 900, 100, 3, 'a', 'z', NULL, NULL);\
         COMMIT",
        begin = writer::BEGIN_SQL,
        next_file = file + 1,
        row = file * 100,
        last = file * 100 + 99,
    )
}

/// Initialises an empty catalog as DuckDB's first ATTACH does, then creates the table as
/// snapshot 1 (as `rocklake bench` does).
fn setup_sql() -> [String; 2] {
    let mut init = vec![writer::BEGIN_SQL.to_string()];
    init.extend(writer::init_statements(
        "/tmp/rocklake-crash-points/",
        "rocklake crash test",
        "00000000-0000-4000-8000-000000000001",
    ));
    init.push("COMMIT".into());
    let t = TABLE_ID;
    let table = [
        writer::BEGIN_SQL.to_string(),
        "INSERT INTO \"public\".ducklake_snapshot VALUES (1, NOW(), 1, 2, 0)".into(),
        format!(
            "INSERT INTO \"public\".ducklake_table VALUES ({t}, '00000000-0000-4000-8000-000000000002', 1, NULL, 0, 'crash', 'crash/', true)"
        ),
        format!(
            "INSERT INTO \"public\".ducklake_column VALUES \
             (1, 1, NULL, {t}, 1, 'id', 'int64', NULL, 'NULL', true, NULL, 'literal', 'duckdb'), \
             (2, 1, NULL, {t}, 2, 'name', 'varchar', NULL, 'NULL', true, NULL, 'literal', 'duckdb')"
        ),
        format!("INSERT INTO \"public\".ducklake_schema_versions VALUES (1, 1, {t})"),
        "INSERT INTO \"public\".ducklake_snapshot_changes VALUES (1, 'created_table:\"main\".\"crash\"', NULL, NULL, NULL)".into(),
        "COMMIT".into(),
    ];
    [init.join(";"), table.join(";")]
}

/// Not a test of its own: the body of the child process, which the parent starts as
/// `<this binary> crash_child --exact` with `ROCKLAKE_CRASH_CHILD_DIR` set.
#[test]
fn crash_child() {
    let Ok(dir) = std::env::var(CHILD_DIR_ENV) else {
        return;
    };
    let sessions = env_u64(CHILD_SESSIONS_ENV).unwrap_or(1).max(1);
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    rt.block_on(child_main(dir, sessions));
}

async fn child_main(dir: String, sessions: u64) {
    let say = |line: String| {
        let mut out = std::io::stdout().lock();
        let _ = writeln!(out, "\n@@ {line}");
        let _ = out.flush();
    };
    // Faults come from ROCKLAKE_FAULTS, as for `rocklake serve`. A journal crash point needs
    // the commit journal; a WAL one needs every commit to wait for its WAL upload.
    let mut config = ServiceConfig::new(dir.clone());
    config.commit_journal = Faults::from_env()
        .expect("child: faults")
        .and_then(|f| f.crash)
        .is_some_and(|c| c.point.is_journal());
    let service = CatalogService::open(&config).await.expect("child: open");
    let sid = service.open_session("crash", "lake");
    let first = |r: &Reply| rows(r).first().and_then(|r| r.first()).cloned().flatten();
    // A previous life may have died between the two setup commits.
    let [init, table] = setup_sql();
    let r = service.query(sid, writer::IS_INITIALISED_SQL).await;
    if first(&r).is_none() {
        let r = service.query(sid, &init).await;
        assert!(committed(&r), "child: init: {:?}", r.error);
    }
    let r = service
        .query(
            sid,
            &format!("SELECT count(*) FROM \"public\".ducklake_table WHERE table_id = {TABLE_ID}"),
        )
        .await;
    if first(&r).as_deref() != Some("1") {
        let r = service.query(sid, &table).await;
        assert!(committed(&r), "child: create table: {:?}", r.error);
    }
    let r = service
        .query(
            sid,
            "SELECT max(snapshot_id) FROM \"public\".ducklake_snapshot",
        )
        .await;
    let latest: u64 = rows(&r)
        .first()
        .and_then(|r| r.first())
        .cloned()
        .flatten()
        .and_then(|s| s.parse().ok())
        .expect("child: latest snapshot");
    service.close_session(sid).await;
    say(format!("READY {latest}"));
    let mut tasks = Vec::new();
    for s in 0..sessions {
        let service: Arc<CatalogService> = service.clone();
        tasks.push(tokio::spawn(async move {
            let sid = service.open_session("crash", "lake");
            for k in 0..MAX_COMMITS_PER_SESSION {
                let snap = latest + 1 + s + k * sessions;
                let r = service.query(sid, &commit_sql(snap)).await;
                let mut out = std::io::stdout().lock();
                if committed(&r) {
                    let _ = writeln!(out, "\n@@ ACK {snap}");
                } else {
                    let (code, retry) = r.error.as_ref().map_or(("none".into(), false), |e| {
                        (
                            e.code.clone(),
                            e.hint.as_deref().is_some_and(|h| h.contains("retry")),
                        )
                    });
                    let _ = writeln!(
                        out,
                        "\n@@ ERR {snap} {code} {}",
                        if retry { "retry" } else { "unknown" }
                    );
                    let _ = out.flush();
                    return;
                }
                let _ = out.flush();
            }
        }));
    }
    for t in tasks {
        let _ = t.await;
    }
    say("DONE".into());
    // Exit without closing: as abrupt as the crash, minus the crash.
    std::process::exit(0);
}

// ---------------------------------------------------------------------------------------------
// The parent.

/// What one child life printed.
#[derive(Debug, Default)]
struct Life {
    latest_at_start: Option<u64>,
    acked: BTreeSet<u64>,
    /// Failed with a retryable error: must be absent.
    not_committed: BTreeSet<u64>,
    /// Failed with unknown outcome: may be either.
    unknown: BTreeSet<u64>,
    done: bool,
    killed: bool,
}

fn run_child(dir: &str, spec: &str, sessions: u64, timeout: Duration) -> Result<Life, String> {
    let exe = std::env::current_exe().map_err(|e| e.to_string())?;
    let mut child = Command::new(exe)
        .args(["crash_child", "--exact", "--nocapture", "--test-threads=1"])
        .env(CHILD_DIR_ENV, dir)
        .env(CHILD_SESSIONS_ENV, sessions.to_string())
        .env(FAULTS_ENV, spec)
        .env("RUST_LOG", "off")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("spawn child: {e}"))?;
    let stdout = child.stdout.take().ok_or("no child stdout")?;
    let stderr = child.stderr.take().ok_or("no child stderr")?;
    let (tx, rx) = mpsc::channel();
    let pump = std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    let err_pump = std::thread::spawn(move || {
        let mut text = String::new();
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            text.push_str(&line);
            text.push('\n');
        }
        text
    });
    let deadline = Instant::now() + timeout;
    let mut life = Life::default();
    let status = loop {
        match child.try_wait().map_err(|e| e.to_string())? {
            Some(status) => break status,
            None if Instant::now() > deadline => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(format!("child hung for {timeout:?}"));
            }
            None => std::thread::sleep(Duration::from_millis(5)),
        }
    };
    let _ = pump.join();
    let stderr = err_pump.join().unwrap_or_default();
    // Our lines start with "@@ " (libtest prints its own around them).
    for line in rx.try_iter() {
        let Some(ours) = line.find("@@ ").map(|i| &line[i + 3..]) else {
            continue;
        };
        let mut words = ours.split_whitespace();
        let num = |w: Option<&str>| w.and_then(|s| s.parse::<u64>().ok());
        match words.next() {
            Some("READY") => life.latest_at_start = num(words.next()),
            Some("ACK") => {
                life.acked.insert(num(words.next()).ok_or("bad ACK")?);
            }
            Some("ERR") => {
                let snap = num(words.next()).ok_or("bad ERR")?;
                let code = words.next().unwrap_or("");
                if code != "58030" {
                    return Err(format!("commit {snap} failed with {code}: {line}"));
                }
                if words.next() == Some("retry") {
                    life.not_committed.insert(snap);
                } else {
                    life.unknown.insert(snap);
                }
            }
            Some("DONE") => life.done = true,
            // libtest's own lines
            _ => {}
        }
    }
    #[cfg(unix)]
    {
        use std::os::unix::process::ExitStatusExt;
        life.killed = status.signal() == Some(9);
    }
    let finished = status.success() && life.done;
    if !life.killed && !finished {
        return Err(format!("child failed ({status}):\n{stderr}"));
    }
    if life.killed && !stderr.contains("crash point") {
        return Err(format!("child killed, but not at a crash point:\n{stderr}"));
    }
    Ok(life)
}

/// The catalog's DuckLake rows, per snapshot id: how many of the five rows of its commit exist.
struct Catalog {
    /// snapshot id (>= 2) → rows present out of 5.
    commits: BTreeMap<u64, usize>,
    keys: usize,
}

fn sql(engine: &mut Engine, kv: &dyn rocklake_core::api::KvRead, q: &str) -> Vec<u64> {
    let sid = engine.open_session("check", "lake");
    let r = engine.query(kv, sid, q, 0);
    engine.close_session(sid);
    assert!(r.error.is_none(), "{q}: {:?}", r.error);
    rows(&r)
        .into_iter()
        .filter_map(|r| r.first().cloned().flatten())
        .map(|s| s.parse().expect("number"))
        .collect()
}

/// Reads the catalog without claiming it (a SlateDB reader) and runs verify.
async fn read_catalog(dir: &str) -> Result<Catalog, String> {
    let kv = match rocklake::store::read_snapshot(dir).await {
        Ok(kv) => kv,
        // The first life died before SlateDB wrote anything.
        Err(rocklake::store::StoreError::NotFound { .. }) => {
            return Ok(Catalog {
                commits: BTreeMap::new(),
                keys: 0,
            })
        }
        Err(e) => return Err(format!("read: {e}")),
    };
    let mut engine = Engine::open(&kv).map_err(|e| format!("load: {e}"))?;
    let report = rocklake_core::verify::verify(&mut engine, &kv).map_err(|e| e.to_string())?;
    if !report.violations.is_empty() {
        return Err(format!("verify: {:?}", report.violations));
    }
    let sid = engine.open_session("check", "lake");
    let initialised = engine.query(&kv, sid, writer::IS_INITIALISED_SQL, 0);
    engine.close_session(sid);
    // `to_regclass` is NULL until DuckLake's tables exist (their name after).
    if rows(&initialised)
        .first()
        .is_none_or(|r| r.first().cloned().flatten().is_none())
    {
        return Ok(Catalog {
            commits: BTreeMap::new(),
            keys: 0,
        });
    }
    let mut commits: BTreeMap<u64, usize> = BTreeMap::new();
    let mut add = |ids: Vec<u64>| {
        for id in ids.into_iter().filter(|id| *id >= 2) {
            *commits.entry(id).or_default() += 1;
        }
    };
    let p = "\"public\"";
    add(sql(
        &mut engine,
        &kv,
        &format!("SELECT snapshot_id FROM {p}.ducklake_snapshot"),
    ));
    add(sql(
        &mut engine,
        &kv,
        &format!("SELECT snapshot_id FROM {p}.ducklake_snapshot_changes"),
    ));
    add(sql(
        &mut engine,
        &kv,
        &format!("SELECT data_file_id + 2 FROM {p}.ducklake_data_file"),
    ));
    add(sql(
        &mut engine,
        &kv,
        &format!("SELECT data_file_id + 2 FROM {p}.ducklake_file_column_stats"),
    ));
    // A data file must belong to its own snapshot.
    let begins = sql(
        &mut engine,
        &kv,
        &format!("SELECT data_file_id + 2 - begin_snapshot FROM {p}.ducklake_data_file"),
    );
    if begins.iter().any(|d| *d != 0) {
        return Err("a data file is attached to another snapshot".into());
    }
    Ok(Catalog {
        commits,
        keys: kv.len(),
    })
}

/// The tallies of a suite.
#[derive(Debug, Default)]
struct Tally {
    runs: usize,
    crashed: usize,
    commits_checked: usize,
    acked: usize,
    unacked_present: usize,
    not_committed: usize,
    unknown: usize,
}

/// Which sessions committed which snapshots, as the children were told (sessions × ids).
#[derive(Default)]
struct Expected {
    /// snapshot id → (life, session, k).
    owner: BTreeMap<u64, (usize, u64, u64)>,
}

fn check(
    cat: &Catalog,
    expected: &Expected,
    acked_all: &BTreeSet<u64>,
    not_committed_all: &BTreeSet<u64>,
) -> Result<(), String> {
    // partial = 0
    for (snap, n) in &cat.commits {
        if *n != 5 {
            return Err(format!(
                "transaction {snap} partially present: {n} of 5 rows"
            ));
        }
    }
    // lost = 0
    for snap in acked_all {
        if !cat.commits.contains_key(snap) {
            return Err(format!("acknowledged transaction {snap} lost"));
        }
    }
    for snap in not_committed_all {
        if cat.commits.contains_key(snap) {
            return Err(format!(
                "transaction {snap} failed as not committed, yet it is present"
            ));
        }
    }
    // Nothing that no child committed, and per session a prefix.
    for snap in cat.commits.keys() {
        if !expected.owner.contains_key(snap) {
            return Err(format!("transaction {snap} present but never committed"));
        }
    }
    let mut per_session: BTreeMap<(usize, u64), BTreeSet<u64>> = BTreeMap::new();
    for (snap, &(life, s, k)) in &expected.owner {
        if cat.commits.contains_key(snap) {
            per_session.entry((life, s)).or_default().insert(k);
        }
    }
    for ((life, s), present) in per_session {
        if present.iter().enumerate().any(|(i, k)| *k != i as u64) {
            return Err(format!(
                "life {life} session {s}: present commits {present:?} are not a prefix"
            ));
        }
    }
    Ok(())
}

/// Runs per catalog: a chain restarts on a fresh catalog after this many crashes, so that
/// runs stay cheap (every open replays the WAL written since the last memtable flush, and
/// every check verifies the whole catalog).
const CHAIN: usize = 20;

fn run_point(point: CrashPoint, runs: usize, seed: u64) -> Tally {
    let point_seed = seed ^ (point as u64 + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    let mut rng = Rng(point_seed | 1);
    let mut total = Tally::default();
    let mut first = 0;
    while first < runs {
        let n = CHAIN.min(runs - first);
        let t = run_chain(point, seed, &mut rng, first..first + n);
        total.runs += t.runs;
        total.crashed += t.crashed;
        total.commits_checked += t.commits_checked;
        total.acked += t.acked;
        total.unacked_present += t.unacked_present;
        total.not_committed += t.not_committed;
        total.unknown += t.unknown;
        first += n;
    }
    total
}

/// Crashes `runs` children in a row on one fresh catalog.
fn run_chain(point: CrashPoint, seed: u64, rng: &mut Rng, runs: std::ops::Range<usize>) -> Tally {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("catalog").display().to_string();
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let last_run = runs.end.saturating_sub(1);
    let replay = |run: usize| {
        format!(
            "replay: ROCKLAKE_CRASH_SEED={seed:#x} ROCKLAKE_CRASH_POINTS={point} \
             ROCKLAKE_CRASH_RUNS={} cargo test -p rocklake --test crash_points -- --nocapture",
            run + 1
        )
    };
    let mut tally = Tally::default();
    let mut expected = Expected::default();
    let mut acked_all = BTreeSet::new();
    let mut not_committed_all = BTreeSet::new();
    for (life_no, run) in runs.enumerate() {
        let sessions = 1 + rng.below(3);
        // WAL uploads of a life: #1 the open's epoch claim, (#2, #3 the first life's setup),
        // then about one per commit (fewer when concurrent commits share an upload). Journal
        // appends: (#1, #2 the setup), then one per commit group.
        let nth = 1 + rng.below(12);
        let run_seed = rng.next();
        let mut spec = format!("seed={run_seed},crash={point}:{nth}");
        if rng.below(4) == 0 {
            // Transient errors that SlateDB's retries absorb, on the way to the crash.
            spec.push_str(",put_error=0.05,get_error=0.03,list_error=0.03");
        }
        Faults::parse(&spec).expect("spec");
        let t = Instant::now();
        let life = match run_child(&path, &spec, sessions, Duration::from_secs(120)) {
            Ok(life) => life,
            Err(e) => panic!(
                "{point} run {run} ({FAULTS_ENV}={spec}): {e}\n{}",
                replay(run)
            ),
        };
        // A life that died before READY committed no transaction of its own.
        if let Some(latest) = life.latest_at_start {
            for s in 0..sessions {
                for k in 0..MAX_COMMITS_PER_SESSION {
                    expected
                        .owner
                        .insert(latest + 1 + s + k * sessions, (life_no, s, k));
                }
            }
        }
        acked_all.extend(life.acked.iter().copied());
        not_committed_all.extend(life.not_committed.iter().copied());
        tally.acked += life.acked.len();
        tally.not_committed += life.not_committed.len();
        tally.unknown += life.unknown.len();
        tally.runs += 1;
        tally.crashed += usize::from(life.killed);
        let summary = format!(
            "{point} run {run:3}: {FAULTS_ENV}={spec} sessions={sessions}: {} acked, killed={}",
            life.acked.len(),
            life.killed
        );
        let cat = match rt.block_on(read_catalog(&path)) {
            Ok(cat) => cat,
            Err(e) => panic!("{summary}: {e}\n{}", replay(run)),
        };
        if let Err(e) = check(&cat, &expected, &acked_all, &not_committed_all) {
            panic!("{summary}: {e}\n{}", replay(run));
        }
        // Unacknowledged transactions found durable are fine (either way is allowed).
        let present_unacked = cat
            .commits
            .keys()
            .filter(|s| !acked_all.contains(s))
            .count();
        tally.unacked_present = present_unacked;
        tally.commits_checked = cat.commits.len();
        println!(
            "{summary}, {} present ({present_unacked} without ACK), {} keys, {:?}",
            cat.commits.len(),
            cat.keys,
            t.elapsed()
        );
        // The next life's snapshot ids start after the highest present one; the ids of this
        // life's lost-in-flight commits above it are reused by the next life.
        let top = cat.commits.keys().next_back().copied().unwrap_or(1);
        expected.owner.retain(|snap, _| *snap <= top);
    }
    // The end of the chain: reopen as the writer, through the service, and look again.
    let reopened = rt.block_on(async {
        let mut config = ServiceConfig::new(path.clone());
        config.faults = Some(Faults::default());
        let service = CatalogService::open(&config).await.expect("final reopen");
        let sid = service.open_session("check", "lake");
        let r = service
            .query(
                sid,
                "SELECT count(*) FROM \"public\".ducklake_snapshot WHERE snapshot_id >= 2",
            )
            .await;
        service.close_session(sid).await;
        service.shutdown().await.expect("shutdown");
        rows(&r)
            .first()
            .and_then(|r| r.first())
            .cloned()
            .flatten()
            .and_then(|s| s.parse::<usize>().ok())
    });
    assert_eq!(
        reopened,
        Some(tally.commits_checked),
        "{point}: the writer reopen sees another catalog\n{}",
        replay(last_run)
    );
    tally
}

#[test]
fn crash_at_named_points_loses_nothing_acknowledged_and_shows_nothing_partial() {
    if std::env::var(CHILD_DIR_ENV).is_ok() {
        return;
    }
    let runs = env_u64("ROCKLAKE_CRASH_RUNS").unwrap_or(100) as usize;
    let seed = env_u64("ROCKLAKE_CRASH_SEED").unwrap_or(0xC0DE_5EED_0006);
    let points: Vec<CrashPoint> = match std::env::var("ROCKLAKE_CRASH_POINTS") {
        Ok(list) => list
            .split(',')
            .map(|p| CrashPoint::from_name(p.trim()).expect("crash point name"))
            .collect(),
        Err(_) => CrashPoint::ALL
            .into_iter()
            .chain(CrashPoint::JOURNAL)
            .collect(),
    };
    let started = Instant::now();
    // One chain per point, side by side (each child is mostly waiting on fsync).
    let handles: Vec<_> = points
        .iter()
        .map(|&p| (p, std::thread::spawn(move || run_point(p, runs, seed))))
        .collect();
    let mut total = Tally::default();
    let mut failed = Vec::new();
    for (p, h) in handles {
        match h.join() {
            Ok(t) => {
                println!(
                    "crash point {p}: runs={} crashed={} commits_checked={} acked={} \
                     present_without_ack={} failed_not_committed={} unknown={} lost=0 partial=0",
                    t.runs,
                    t.crashed,
                    t.commits_checked,
                    t.acked,
                    t.unacked_present,
                    t.not_committed,
                    t.unknown
                );
                total.runs += t.runs;
                total.crashed += t.crashed;
                total.commits_checked += t.commits_checked;
                total.acked += t.acked;
            }
            Err(_) => failed.push(p),
        }
    }
    assert!(failed.is_empty(), "crash points failed: {failed:?}");
    println!(
        "crash suite: seed={seed:#x} points={} runs={} crashed={} commits_checked={} acked={} \
         lost=0 partial=0 verify=clean in {:?}",
        points.len(),
        total.runs,
        total.crashed,
        total.commits_checked,
        total.acked,
        started.elapsed()
    );
    // Nearly every run must actually crash (a crash point beyond the child's last upload
    // lets it finish); otherwise the suite tests nothing.
    assert!(
        total.crashed * 10 >= total.runs * 9,
        "only {} of {} runs reached their crash point",
        total.crashed,
        total.runs
    );
}
