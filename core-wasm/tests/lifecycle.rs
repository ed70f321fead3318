//! Snapshot lifecycle (spec F-31) through the engine over an in-memory store: the gc → excise
//! sequence rules, leases with an injected clock, checkpoints and the logical restore, and a
//! state-machine property test that checks, after every step, that verify is clean and every
//! retained, leased or checkpointed snapshot reads exactly what it read when it was made.

use std::collections::BTreeMap;

use proptest::prelude::*;
use rocklake_core::api::{Output, Reply, SessionId};
use rocklake_core::engine::scan_visible;
use rocklake_core::keys;
use rocklake_core::memkv::MemKv;
use rocklake_core::verify::verify;
use rocklake_core::writer::init_statements;
use rocklake_core::Engine;

const SECOND: i64 = 1_000_000;

struct Lake {
    kv: MemKv,
    engine: Engine,
    s: SessionId,
    /// The injected clock (microseconds since 2000-01-01).
    now: i64,
    next_snapshot: i64,
    next_file: i64,
    /// Snapshot id → (commit that created it, fingerprint of the catalog at that commit).
    made: BTreeMap<u64, (u64, String)>,
}

impl Lake {
    fn new() -> Lake {
        let kv = MemKv::new();
        let mut engine = Engine::open(&kv).expect("open");
        let s = engine.open_session("t", "lake");
        let mut lake = Lake {
            kv,
            engine,
            s,
            now: 800_000_000 * SECOND,
            next_snapshot: 1,
            next_file: 0,
            made: BTreeMap::new(),
        };
        let mut sql = vec!["BEGIN".to_string()];
        sql.extend(init_statements(
            "/data/",
            "test",
            "0190f6a2-0000-7000-8000-000000000000",
        ));
        sql.push("CREATE TABLE side(k BIGINT PRIMARY KEY, v BIGINT)".into());
        sql.push("COMMIT".into());
        lake.ok(&sql.join(";\n"));
        lake.record(0);
        lake.snapshot(
            "INSERT INTO ducklake_table VALUES (1, '0190f6a2-0000-7000-8000-000000000001', {S}, NULL, 0, 't', 't/', true)",
        );
        lake
    }

    /// A restart: a new engine over the same store.
    fn reopen(&mut self) {
        self.engine = Engine::open(&self.kv).expect("reopen");
        self.s = self.engine.open_session("t", "lake");
    }

    fn q(&mut self, sql: &str) -> Reply {
        self.now += 1000;
        let mut r = self.engine.query(&self.kv, self.s, sql, self.now);
        let mut outputs = std::mem::take(&mut r.outputs);
        while let Some(batch) = r.commit.take() {
            self.kv.apply(&batch);
            r = self.engine.commit_finished(&self.kv, self.s, Ok(()));
            outputs.append(&mut r.outputs);
        }
        r.outputs = outputs;
        r
    }

    fn ok(&mut self, sql: &str) -> Vec<Output> {
        let r = self.q(sql);
        assert!(r.error.is_none(), "{sql}: {:?}", r.error);
        r.outputs
    }

    /// Rows of the last result as (column name → text) maps.
    fn rows(&mut self, sql: &str) -> Vec<BTreeMap<String, Option<String>>> {
        match self.ok(sql).pop() {
            Some(Output::Rows { fields, rows, .. }) => rows
                .to_vecs()
                .into_iter()
                .map(|r| {
                    fields
                        .iter()
                        .zip(r)
                        .map(|(f, c)| {
                            (
                                f.name.clone(),
                                c.map(|b| String::from_utf8_lossy(&b).to_string()),
                            )
                        })
                        .collect()
                })
                .collect(),
            other => panic!("{sql}: expected rows, got {other:?}"),
        }
    }

    fn one(&mut self, sql: &str, col: &str) -> String {
        let rows = self.rows(sql);
        rows[0][col].clone().unwrap_or_default()
    }

    fn err(&mut self, sql: &str) -> (String, String) {
        let r = self.q(sql);
        let e = r
            .error
            .unwrap_or_else(|| panic!("{sql}: expected an error"));
        (e.code, e.message)
    }

    /// Everything visible at commit `seq` (schemas, table definitions, rows).
    fn fingerprint(&self, seq: u64) -> String {
        let start = [keys::TAG_SCHEMA];
        let end = [0xFF];
        let rows = scan_visible(&self.kv, &start, &end, seq).expect("scan");
        let mut out = String::new();
        for (k, env, s) in rows {
            out.push_str(&format!("{k:?}@{s}:{env:?}\n"));
        }
        out
    }

    fn record(&mut self, snapshot: u64) {
        let seq = self.engine.latest().0;
        let fp = self.fingerprint(seq);
        self.made.insert(snapshot, (seq, fp));
    }

    /// One DuckLake-like commit: a new snapshot row plus `body` (`{S}` = the snapshot id),
    /// and an update of a side row so every commit leaves superseded versions behind.
    fn snapshot(&mut self, body: &str) -> u64 {
        let s = self.next_snapshot;
        self.next_snapshot += 1;
        let body = body.replace("{S}", &s.to_string());
        self.ok(&format!(
            "BEGIN;\
             INSERT INTO ducklake_snapshot VALUES ({s}, now(), {s}, 10, {f});\
             INSERT INTO ducklake_snapshot_changes VALUES ({s}, 'x', NULL, NULL, NULL);\
             {body};\
             DELETE FROM side WHERE k = 1; INSERT INTO side VALUES (1, {s});\
             COMMIT",
            f = self.next_file
        ));
        self.record(s as u64);
        s as u64
    }

    fn add_file(&mut self) -> u64 {
        let f = self.next_file;
        self.next_file += 1;
        self.snapshot(&format!(
            "INSERT INTO ducklake_data_file (data_file_id, table_id, begin_snapshot, end_snapshot, path, path_is_relative, file_format, record_count, file_size_bytes, footer_size, row_id_start) VALUES ({f}, 1, {{S}}, NULL, 'f{f}.parquet', true, 'parquet', 1, 100, 10, {f})"
        ))
    }

    fn assert_clean(&mut self) {
        let report = verify(&mut self.engine, &self.kv).expect("verify");
        assert!(report.violations.is_empty(), "{:?}", report.violations);
    }

    fn floor(&mut self) -> u64 {
        let rows = self.rows("SELECT * FROM rocklake_status()");
        rows.iter()
            .find(|r| r["name"].as_deref() == Some("retain_from"))
            .and_then(|r| r["value"].clone())
            .and_then(|v| v.parse().ok())
            .unwrap_or(0)
    }

    /// Snapshots still guaranteed: at or above the floor, or leased, or checkpointed.
    fn protected(&mut self) -> Vec<u64> {
        let floor = self.floor();
        let mut out: Vec<u64> = self.made.keys().copied().filter(|s| *s >= floor).collect();
        for r in self.rows("SELECT * FROM rocklake_leases()") {
            if r["live"].as_deref() == Some("t") {
                out.push(
                    r["snapshot_id"]
                        .clone()
                        .unwrap_or_default()
                        .parse()
                        .expect("id"),
                );
            }
        }
        for r in self.rows("SELECT * FROM rocklake_checkpoints()") {
            out.push(
                r["snapshot_id"]
                    .clone()
                    .unwrap_or_default()
                    .parse()
                    .expect("id"),
            );
        }
        out.sort_unstable();
        out.dedup();
        out
    }

    fn assert_protected_read_identically(&mut self) {
        for s in self.protected() {
            let (seq, fp) = self.made[&s].clone();
            assert_eq!(
                self.fingerprint(seq),
                fp,
                "snapshot {s} (commit {seq}) reads differently"
            );
        }
    }
}

#[test]
fn excise_without_a_floor_fails() {
    let mut lake = Lake::new();
    lake.add_file();
    let (code, msg) = lake.err("SELECT * FROM rocklake_excise_apply(1)");
    assert_eq!(code, "55000");
    assert!(msg.starts_with("ExcisionUnsafe"), "{msg}");
    assert!(msg.contains("retain_from = 0"), "{msg}");
    // Same for the plan, and for a cut of 0.
    assert_eq!(lake.err("SELECT * FROM rocklake_excise_plan(0)").0, "55000");
}

#[test]
fn excise_beyond_the_floor_fails_and_gc_then_excise_succeeds() {
    let mut lake = Lake::new();
    for _ in 0..5 {
        lake.add_file();
    }
    assert_eq!(
        lake.one("SELECT * FROM rocklake_gc_apply(3)", "retain_from"),
        "3"
    );
    let (code, msg) = lake.err("SELECT * FROM rocklake_excise_apply(4)");
    assert_eq!(code, "55000");
    assert!(msg.contains("lags behind"), "{msg}");
    let before = lake.kv.len();
    let r = lake.rows("SELECT * FROM rocklake_excise_apply(3)");
    assert_eq!(r[0]["done"].as_deref(), Some("t"));
    let deleted: usize = r[0]["versions"]
        .clone()
        .unwrap_or_default()
        .parse()
        .expect("n");
    assert!(deleted > 0, "superseded side rows must go");
    assert_eq!(
        lake.kv.len(),
        before - deleted + 1,
        "deleted keys are gone (+1: excised_seq)"
    );
    lake.assert_clean();
    lake.assert_protected_read_identically();
    // The floor never moves back.
    let (code, _) = lake.err("SELECT * FROM rocklake_gc_apply(2)");
    assert_eq!(code, "22023");
    // Nothing is left to excise at the same cut.
    let r = lake.rows("SELECT * FROM rocklake_excise_plan(3)");
    assert_eq!(r[0]["versions"].as_deref(), Some("0"));
}

#[test]
fn leases_block_the_floor_until_they_expire_with_skew_tolerance() {
    let mut lake = Lake::new();
    let s = lake.add_file();
    for _ in 0..3 {
        lake.add_file();
    }
    let lease = lake.one(
        &format!("SELECT * FROM rocklake_lease({s}, 60)"),
        "lease_id",
    );
    let (code, msg) = lake.err("SELECT * FROM rocklake_gc_apply(4)");
    assert_eq!(code, "55006", "{msg}");
    assert!(msg.contains("leased"), "{msg}");
    // The plan reports the blocker instead of failing.
    let plan = lake.rows("SELECT * FROM rocklake_gc_plan(4)");
    assert!(plan[0]["blocked_by"]
        .clone()
        .unwrap_or_default()
        .contains("leased"));
    // 60 s later the lease has expired, but the 5 s skew tolerance still protects it.
    lake.now += 62 * SECOND;
    assert_eq!(lake.err("SELECT * FROM rocklake_gc_apply(4)").0, "55006");
    // Renewal is refused only after expiry + tolerance; here it still works.
    lake.ok(&format!("SELECT * FROM rocklake_lease_renew({lease}, 10)"));
    lake.now += 16 * SECOND;
    lake.ok("SELECT * FROM rocklake_gc_apply(4)");
    // Leasing below the floor is refused.
    assert_eq!(
        lake.err(&format!("SELECT * FROM rocklake_lease({s})")).0,
        "22023"
    );
    lake.ok(&format!("SELECT * FROM rocklake_lease_release({lease})"));
    assert_eq!(
        lake.err(&format!("SELECT * FROM rocklake_lease_release({lease})"))
            .0,
        "42704"
    );
    lake.assert_clean();
}

#[test]
fn lifecycle_functions_refuse_transaction_blocks_and_read_only() {
    let mut lake = Lake::new();
    lake.add_file();
    lake.ok("BEGIN");
    assert_eq!(lake.err("SELECT * FROM rocklake_gc_apply(1)").0, "25001");
    lake.ok("ROLLBACK");
    assert_eq!(lake.err("SELECT rocklake_nonsense()").0, "42883");
    lake.engine.set_read_only(true);
    assert_eq!(
        lake.err("SELECT * FROM rocklake_checkpoint_create()").0,
        "25006"
    );
    // Reading the state is fine on a replica.
    lake.rows("SELECT * FROM rocklake_status()");
}

#[test]
fn restore_hides_later_facts_revives_removed_ones_and_keeps_history() {
    let mut lake = Lake::new();
    let s_file = lake.add_file();
    let cp = lake.one(
        "SELECT * FROM rocklake_checkpoint_create('before-changes')",
        "checkpoint_id",
    );
    let cp_snapshot = s_file;
    // After the checkpoint: a new table, a new file, and table 1 renamed (ended + new row).
    let after = lake.snapshot(
        "INSERT INTO ducklake_table VALUES (2, '0190f6a2-0000-7000-8000-000000000002', {S}, NULL, 0, 'u', 'u/', true)",
    );
    lake.add_file();
    lake.snapshot(
        "UPDATE ducklake_table SET end_snapshot = {S} WHERE table_id = 1 AND end_snapshot IS NULL; \
         INSERT INTO ducklake_table VALUES (1, '0190f6a2-0000-7000-8000-000000000001', {S}, NULL, 0, 't2', 't/', true)",
    );
    let last = lake.next_snapshot - 1;
    let r = lake.rows(&format!("SELECT * FROM rocklake_checkpoint_restore({cp})"));
    let hide: i64 = r[0]["hide_snapshot"]
        .clone()
        .unwrap_or_default()
        .parse()
        .expect("hide");
    assert_eq!(hide, last + 1, "hide snapshot = latest + 1");
    assert_eq!(r[0]["revived_rows"].as_deref(), Some("1"));
    let at = |s: i64| {
        format!(
            "SELECT table_id, table_name FROM ducklake_table WHERE begin_snapshot <= {s} AND (end_snapshot IS NULL OR end_snapshot > {s}) ORDER BY table_id"
        )
    };
    let tables_at = |lake: &mut Lake, s: i64| -> Vec<(String, String)> {
        lake.rows(&at(s))
            .into_iter()
            .map(|r| {
                (
                    r["table_id"].clone().unwrap_or_default(),
                    r["table_name"].clone().unwrap_or_default(),
                )
            })
            .collect()
    };
    // At the hide snapshot: the checkpoint's state.
    assert_eq!(
        tables_at(&mut lake, hide),
        tables_at(&mut lake, cp_snapshot as i64)
    );
    assert_eq!(tables_at(&mut lake, hide), vec![("1".into(), "t".into())]);
    let files = |lake: &mut Lake, s: i64| {
        lake.rows(&format!(
            "SELECT count(*) AS n FROM ducklake_data_file WHERE begin_snapshot <= {s} AND (end_snapshot IS NULL OR end_snapshot > {s})"
        ))[0]["n"]
            .clone()
            .unwrap_or_default()
    };
    assert_eq!(files(&mut lake, hide), "1");
    // Old ids still read their own history (no split timeline).
    assert_eq!(tables_at(&mut lake, after as i64).len(), 2);
    assert_eq!(files(&mut lake, last), "2");
    // The counter moved: the next snapshot is hide + 1.
    assert_eq!(
        lake.one("SELECT max(snapshot_id) AS m FROM ducklake_snapshot", "m"),
        hide.to_string()
    );
    lake.assert_clean();
    lake.assert_protected_read_identically();
    // A file removed after the checkpoint cannot be revived with its unique id: refused.
    let cp2 = lake.one(
        "SELECT * FROM rocklake_checkpoint_create()",
        "checkpoint_id",
    );
    lake.next_snapshot = hide + 1;
    lake.snapshot("UPDATE ducklake_data_file SET end_snapshot = {S} WHERE end_snapshot IS NULL");
    let (code, msg) = lake.err(&format!("SELECT * FROM rocklake_checkpoint_restore({cp2})"));
    assert_eq!(code, "55000");
    assert!(msg.contains("ducklake_data_file"), "{msg}");
    // The checkpoint pins its snapshot against the floor until dropped.
    let latest = lake.next_snapshot - 1;
    assert_eq!(
        lake.err(&format!("SELECT * FROM rocklake_gc_apply({latest})"))
            .0,
        "55006"
    );
    lake.ok(&format!("SELECT * FROM rocklake_checkpoint_drop({cp})"));
    lake.ok(&format!("SELECT * FROM rocklake_checkpoint_drop({cp2})"));
    lake.ok(&format!("SELECT * FROM rocklake_gc_apply({latest})"));
}

#[test]
fn excision_in_small_batches_resumes_from_its_cursor() {
    let mut lake = Lake::new();
    for _ in 0..12 {
        lake.add_file();
    }
    lake.ok("SELECT * FROM rocklake_gc_apply(10)");
    let total: usize = lake
        .one("SELECT * FROM rocklake_excise_plan(10)", "versions")
        .parse()
        .expect("n");
    assert!(total >= 6, "{total}");
    let mut deleted = 0usize;
    let mut batches = 0;
    loop {
        let r = lake.rows("SELECT * FROM rocklake_excise_apply(10, 3)");
        batches += 1;
        deleted += r[0]["versions"]
            .clone()
            .unwrap_or_default()
            .parse::<usize>()
            .expect("n");
        lake.assert_clean();
        lake.assert_protected_read_identically();
        if batches > 1 {
            assert_eq!(r[0]["resumed"].as_deref(), Some("t"));
        }
        if r[0]["done"].as_deref() == Some("t") {
            break;
        }
        // A restart between batches resumes where the last one stopped.
        lake.reopen();
    }
    assert!(batches > 1);
    assert_eq!(deleted, total);
}

#[derive(Debug, Clone)]
enum Op {
    AddFile,
    Rename,
    EndFile,
    Lease { pick: usize, ttl: i64 },
    Release { pick: usize },
    Clock { secs: i64 },
    Gc { back: u64 },
    Excise { back: u64, batch: usize },
    Checkpoint,
    DropCheckpoint { pick: usize },
    Restore { pick: usize },
    Reopen,
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        4 => Just(Op::AddFile),
        1 => Just(Op::Rename),
        1 => Just(Op::EndFile),
        2 => (0usize..8, 1i64..120).prop_map(|(pick, ttl)| Op::Lease { pick, ttl }),
        1 => (0usize..4).prop_map(|pick| Op::Release { pick }),
        2 => (1i64..90).prop_map(|secs| Op::Clock { secs }),
        2 => (0u64..4).prop_map(|back| Op::Gc { back }),
        2 => (0u64..4, 1usize..8).prop_map(|(back, batch)| Op::Excise { back, batch }),
        1 => Just(Op::Checkpoint),
        1 => (0usize..4).prop_map(|pick| Op::DropCheckpoint { pick }),
        1 => (0usize..4).prop_map(|pick| Op::Restore { pick }),
        1 => Just(Op::Reopen),
    ]
}

fn ids(lake: &mut Lake, sql: &str, col: &str) -> Vec<String> {
    lake.rows(sql)
        .into_iter()
        .filter_map(|r| r[col].clone())
        .collect()
}

/// Applies one step; refusals must carry a lifecycle SQLSTATE and change nothing.
fn step(lake: &mut Lake, op: &Op) {
    let latest = (lake.next_snapshot - 1) as u64;
    let sql = match op {
        Op::AddFile => {
            lake.add_file();
            return;
        }
        Op::Rename => {
            lake.snapshot(
                "UPDATE ducklake_table SET end_snapshot = {S} WHERE table_id = 1 AND end_snapshot IS NULL; \
                 INSERT INTO ducklake_table VALUES (1, '0190f6a2-0000-7000-8000-000000000001', {S}, NULL, 0, 't{S}', 't/', true)",
            );
            return;
        }
        Op::EndFile => {
            lake.snapshot(
                "UPDATE ducklake_data_file SET end_snapshot = {S} WHERE data_file_id = (SELECT min(data_file_id) FROM ducklake_data_file WHERE end_snapshot IS NULL)",
            );
            return;
        }
        Op::Clock { secs } => {
            lake.now += secs * SECOND;
            return;
        }
        Op::Reopen => {
            lake.reopen();
            return;
        }
        Op::Lease { pick, ttl } => {
            let snaps: Vec<u64> = lake.made.keys().copied().filter(|s| *s > 0).collect();
            let s = snaps[pick % snaps.len()];
            format!("SELECT * FROM rocklake_lease({s}, {ttl})")
        }
        Op::Release { pick } => {
            let l = ids(lake, "SELECT * FROM rocklake_leases()", "lease_id");
            if l.is_empty() {
                return;
            }
            format!(
                "SELECT * FROM rocklake_lease_release({})",
                l[pick % l.len()]
            )
        }
        Op::Gc { back } => format!(
            "SELECT * FROM rocklake_gc_apply({})",
            latest.saturating_sub(*back)
        ),
        Op::Excise { back, batch } => {
            let floor = lake.floor();
            format!(
                "SELECT * FROM rocklake_excise_apply({}, {batch})",
                floor.saturating_sub(*back)
            )
        }
        Op::Checkpoint => "SELECT * FROM rocklake_checkpoint_create()".to_string(),
        Op::DropCheckpoint { pick } | Op::Restore { pick } => {
            let c = ids(
                lake,
                "SELECT * FROM rocklake_checkpoints()",
                "checkpoint_id",
            );
            if c.is_empty() {
                return;
            }
            let id = &c[pick % c.len()];
            if matches!(op, Op::Restore { .. }) {
                format!("SELECT * FROM rocklake_checkpoint_restore({id})")
            } else {
                format!("SELECT * FROM rocklake_checkpoint_drop({id})")
            }
        }
    };
    let before_len = lake.kv.len();
    let seq = lake.engine.latest().0;
    let r = lake.q(&sql);
    match r.error {
        Some(e) => {
            assert!(
                ["55000", "55006", "22023", "42704"].contains(&e.code.as_str()),
                "{sql}: unexpected {e:?}"
            );
            assert_eq!(lake.engine.latest().0, seq, "{sql}: a refusal committed");
            assert_eq!(lake.kv.len(), before_len);
        }
        None => {
            if matches!(op, Op::Restore { .. }) {
                // The restore made a snapshot of its own.
                lake.next_snapshot += 1;
                let s = (lake.next_snapshot - 1) as u64;
                lake.record(s);
            }
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]
    #[test]
    fn lifecycle_state_machine(ops in proptest::collection::vec(op(), 1..40)) {
        let mut lake = Lake::new();
        for _ in 0..3 {
            lake.add_file();
        }
        for op in &ops {
            step(&mut lake, op);
            lake.assert_clean();
            lake.assert_protected_read_identically();
        }
        // The sequence rule holds at the end of every history: excising past the floor fails.
        let floor = lake.floor();
        let (code, _) = lake.err(&format!("SELECT * FROM rocklake_excise_apply({})", floor + 1));
        prop_assert_eq!(code, "55000");
    }
}

#[test]
fn repair_fixes_counters_and_housekeeping_and_dry_run_changes_nothing() {
    use rocklake_core::api::{CommitBatch, CommitSeq, KvRead};
    let mut lake = Lake::new();
    for _ in 0..3 {
        lake.add_file();
    }
    lake.ok("SELECT * FROM rocklake_lease(2, 1)");
    lake.now += 10 * SECOND;
    // Damage: every tuple counter back to 0, DuckLake's file counter below its max id.
    let p = keys::meta_key("tuples/");
    let puts: Vec<(Vec<u8>, Vec<u8>)> = lake
        .kv
        .scan(&p, &keys::prefix_end(&p), usize::MAX)
        .expect("scan")
        .iter()
        .map(|(k, _)| (k.to_vec(), 0u64.to_be_bytes().to_vec()))
        .collect();
    assert!(!puts.is_empty());
    lake.kv.apply(&CommitBatch {
        seq: CommitSeq(0),
        puts,
        deletes: vec![],
    });
    lake.reopen();
    lake.ok("UPDATE ducklake_snapshot SET next_file_id = 1 WHERE snapshot_id = (SELECT max(snapshot_id) FROM ducklake_snapshot)");
    let checks = |lake: &mut Lake| -> Vec<&'static str> {
        let mut v: Vec<&'static str> = verify(&mut lake.engine, &lake.kv)
            .expect("verify")
            .violations
            .iter()
            .map(|v| v.check)
            .collect();
        v.sort_unstable();
        v.dedup();
        v
    };
    assert_eq!(checks(&mut lake), vec!["counters", "tuple_counter"]);
    let dry = lake.rows("SELECT * FROM rocklake_repair()");
    let kinds: Vec<String> = dry.iter().filter_map(|r| r["check"].clone()).collect();
    assert!(kinds.contains(&"tuple_counter".to_string()), "{kinds:?}");
    assert!(kinds.contains(&"counters".to_string()), "{kinds:?}");
    assert!(kinds.contains(&"lease".to_string()), "{kinds:?}");
    assert!(dry.iter().all(|r| r["applied"].as_deref() == Some("f")));
    assert_eq!(
        checks(&mut lake),
        vec!["counters", "tuple_counter"],
        "dry run changed nothing"
    );
    let applied = lake.rows("SELECT * FROM rocklake_repair(true)");
    assert_eq!(applied.len(), dry.len());
    assert!(checks(&mut lake).is_empty());
    let left = lake.rows("SELECT * FROM rocklake_repair()");
    assert!(left.is_empty(), "{left:?}");
    lake.reopen();
    assert!(checks(&mut lake).is_empty(), "the fixes are durable");
    assert!(lake.rows("SELECT * FROM rocklake_leases()").is_empty());
}

/// A read replica's REPEATABLE READ transaction that outlives gc + excise on the writer fails
/// with 72000 once the replica refreshes, instead of reading a history with holes.
#[test]
fn a_replica_snapshot_older_than_excision_fails_with_72000() {
    let mut lake = Lake::new();
    for _ in 0..4 {
        lake.add_file();
    }
    let mut replica = Engine::open(&lake.kv).expect("replica");
    replica.set_read_only(true);
    let rs = replica.open_session("reader", "lake");
    let q = |engine: &mut Engine, kv: &MemKv, sql: &str| engine.query(kv, rs, sql, 1);
    let r = q(
        &mut replica,
        &lake.kv,
        "BEGIN ISOLATION LEVEL REPEATABLE READ",
    );
    assert!(r.error.is_none());
    let r = q(&mut replica, &lake.kv, "SELECT count(*) FROM side");
    assert!(r.error.is_none(), "{:?}", r.error);
    // The writer knows nothing of the replica's transaction.
    lake.add_file();
    let floor = lake.next_snapshot - 1;
    lake.ok(&format!("SELECT * FROM rocklake_gc_apply({floor})"));
    lake.ok(&format!("SELECT * FROM rocklake_excise_apply({floor})"));
    // Before the replica sees the excision its reads still work (nothing it knows is gone).
    let r = q(&mut replica, &lake.kv, "SELECT 1");
    assert!(r.error.is_none(), "{:?}", r.error);
    replica.refresh(&lake.kv).expect("refresh");
    let r = q(&mut replica, &lake.kv, "SELECT count(*) FROM side");
    let e = r.error.expect("72000 after the refresh");
    assert_eq!(
        (e.code.as_str(), e.message.as_str()),
        ("72000", "snapshot too old")
    );
    assert!(e.hint.is_some_and(|h| h.contains("lease")));
    // The transaction is aborted; a new one reads the current state.
    let r = q(&mut replica, &lake.kv, "ROLLBACK");
    assert!(r.error.is_none());
    let r = q(&mut replica, &lake.kv, "SELECT count(*) FROM side");
    assert!(r.error.is_none(), "{:?}", r.error);
}

/// `rocklake_verify()`: the checks of `rocklake verify` from SQL on a running catalog.
#[test]
fn verify_is_a_sql_function_that_finds_damage() {
    let mut lake = Lake::new();
    lake.add_file();
    let rows = lake.rows("SELECT * FROM rocklake_verify()");
    assert_eq!(rows.len(), 1, "{rows:?}");
    assert_eq!(rows[0]["check"].as_deref(), Some("summary"));
    assert_eq!(rows[0]["detail"].as_deref(), Some("ok"));
    assert!(rows[0]["subject"]
        .as_deref()
        .is_some_and(|s| s.contains("DuckLake schemas: public")));
    // A data file pointing at a table that does not exist.
    lake.snapshot(
        "INSERT INTO ducklake_data_file (data_file_id, table_id, begin_snapshot, end_snapshot, path, path_is_relative, file_format, record_count, file_size_bytes, footer_size, row_id_start) VALUES (99, 424242, {S}, NULL, 'x.parquet', true, 'parquet', 1, 1, 1, 0)",
    );
    let rows = lake.rows("SELECT * FROM rocklake_verify()");
    assert!(
        rows.iter()
            .any(|r| r["check"].as_deref() == Some("references")
                && r["detail"].as_deref().is_some_and(|d| d.contains("424242"))),
        "{rows:?}"
    );
    let last = rows.last().expect("summary");
    assert_eq!(last["check"].as_deref(), Some("summary"));
    assert_ne!(last["detail"].as_deref(), Some("ok"));
}
