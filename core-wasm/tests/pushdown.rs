//! Primary-key and index pushdown: a WHERE clause that fixes leading primary-key columns (or the
//! leading columns of one of RockLake's secondary indexes on DuckLake's tables) makes the scan
//! read only those key ranges (counted through the store), with exactly the rows a full scan
//! gives, at every commit point and inside a transaction's own writes; EXPLAIN says which scan
//! runs; verify notices a damaged index and repair mends it.

use std::cell::Cell;

use rocklake_core::api::{KvError, KvPage, KvRead, Output, Reply, SessionId};
use rocklake_core::memkv::MemKv;
use rocklake_core::Engine;

/// The store, counting every key it hands out.
struct Counting {
    kv: MemKv,
    keys_read: Cell<usize>,
}

impl KvRead for Counting {
    fn scan(&self, start: &[u8], end: &[u8], limit: usize) -> Result<KvPage, KvError> {
        let r = self.kv.scan(start, end, limit)?;
        self.keys_read.set(self.keys_read.get() + r.len());
        Ok(r)
    }
    fn get(&self, key: &[u8]) -> Result<Option<Vec<u8>>, KvError> {
        self.keys_read.set(self.keys_read.get() + 1);
        self.kv.get(key)
    }
    fn scan_rev(&self, start: &[u8], end: &[u8], limit: usize) -> Result<KvPage, KvError> {
        let r = self.kv.scan_rev(start, end, limit)?;
        self.keys_read.set(self.keys_read.get() + r.len());
        Ok(r)
    }
}

struct H {
    kv: Counting,
    engine: Engine,
    s: SessionId,
}

impl H {
    fn empty() -> H {
        let kv = Counting {
            kv: MemKv::new(),
            keys_read: Cell::new(0),
        };
        let mut engine = Engine::open(&kv).expect("open");
        let s = engine.open_session("t", "lake");
        H { kv, engine, s }
    }

    fn new() -> H {
        let mut h = H::empty();
        h.ok("CREATE TABLE snap (snapshot_id BIGINT PRIMARY KEY, v VARCHAR)");
        h.ok("CREATE TABLE pair (a BIGINT, b VARCHAR, c BIGINT, PRIMARY KEY (a, b))");
        h.ok("CREATE TABLE nokey (x BIGINT)");
        let rows: Vec<String> = (0..2000).map(|i| format!("({i}, 'v{i}')")).collect();
        h.ok(&format!("INSERT INTO snap VALUES {}", rows.join(",")));
        let rows: Vec<String> = (0..300)
            .map(|i| format!("({}, 'k{}', {i})", i % 30, i))
            .collect();
        h.ok(&format!("INSERT INTO pair VALUES {}", rows.join(",")));
        h.ok("INSERT INTO nokey VALUES (1), (2)");
        h
    }

    fn q(&mut self, sql: &str) -> Reply {
        let s = self.s;
        self.q_in(s, sql)
    }

    fn q_in(&mut self, s: SessionId, sql: &str) -> Reply {
        let mut r = self.engine.query(&self.kv, s, sql, 1);
        let mut outputs = std::mem::take(&mut r.outputs);
        while let Some(batch) = r.commit.take() {
            self.kv.kv.apply(&batch);
            r = self.engine.commit_finished(&self.kv, s, Ok(()));
            outputs.append(&mut r.outputs);
        }
        r.outputs = outputs;
        r
    }

    fn ok_in(&mut self, s: SessionId, sql: &str) -> Vec<Output> {
        let r = self.q_in(s, sql);
        assert!(r.error.is_none(), "{sql}: {:?}", r.error);
        r.outputs
    }

    fn ok(&mut self, sql: &str) -> Vec<Output> {
        let r = self.q(sql);
        assert!(r.error.is_none(), "{sql}: {:?}", r.error);
        r.outputs
    }

    /// Rows of the last result, and how many keys the statement read.
    fn rows(&mut self, sql: &str) -> (Vec<Vec<Option<String>>>, usize) {
        let s = self.s;
        self.rows_in(s, sql)
    }

    fn rows_in(&mut self, s: SessionId, sql: &str) -> (Vec<Vec<Option<String>>>, usize) {
        self.kv.keys_read.set(0);
        // Keys a plan reads from the store: a range kept by the scan cache would read none.
        self.engine.st.scans.borrow_mut().clear();
        let r = self.q_in(s, sql);
        assert!(r.error.is_none(), "{sql}: {:?}", r.error);
        let out = r.outputs;
        let n = self.kv.keys_read.get();
        match out.last() {
            Some(Output::Rows { rows, .. }) => (rows.to_strings(), n),
            other => panic!("{sql}: {other:?}"),
        }
    }

    fn plan(&mut self, sql: &str) -> String {
        let (rows, _) = self.rows(&format!("EXPLAIN {sql}"));
        rows.into_iter()
            .map(|r| r[0].clone().unwrap_or_default())
            .collect::<Vec<_>>()
            .join("\n")
    }
}

/// `fast` and `slow` must return the same rows; `fast` must read few keys, `slow` the table.
fn same_rows_fewer_keys(h: &mut H, fast: &str, slow: &str, most: usize) {
    let (a, ka) = h.rows(fast);
    let (b, kb) = h.rows(slow);
    assert_eq!(a, b, "{fast} vs {slow}");
    assert!(
        ka <= most,
        "{fast}: read {ka} keys (at most {most} expected)"
    );
    assert!(kb >= 300, "{slow}: read only {kb} keys — not a full scan?");
    assert!(h.plan(fast).contains("Index Scan"), "{}", h.plan(fast));
    assert!(h.plan(slow).contains("Seq Scan"), "{}", h.plan(slow));
}

#[test]
fn equality_in_lists_and_subqueries_read_only_their_keys() {
    let mut h = H::new();
    same_rows_fewer_keys(
        &mut h,
        "SELECT * FROM snap WHERE snapshot_id = 1234",
        "SELECT * FROM snap WHERE snapshot_id + 0 = 1234",
        4,
    );
    same_rows_fewer_keys(
        &mut h,
        "SELECT v FROM snap WHERE snapshot_id IN (5, 7, 5, 1999, 4000) ORDER BY 1",
        "SELECT v FROM snap WHERE snapshot_id + 0 IN (5, 7, 5, 1999, 4000) ORDER BY 1",
        10,
    );
    // DuckLake's query at every transaction start.
    let (rows, _) = h.rows(
        "SELECT snapshot_id, v FROM snap WHERE snapshot_id = (SELECT MAX(snapshot_id) FROM snap)",
    );
    assert_eq!(rows, vec![vec![Some("1999".into()), Some("v1999".into())]]);
    assert!(h
        .plan("SELECT v FROM snap WHERE snapshot_id = (SELECT MAX(snapshot_id) FROM snap)")
        .starts_with("Index Scan using snap_pkey on public.snap"));
    // A prefix of a composite key; the full key.
    same_rows_fewer_keys(
        &mut h,
        "SELECT b, c FROM pair WHERE a = 7 ORDER BY c",
        "SELECT b, c FROM pair WHERE a + 0 = 7 ORDER BY c",
        12,
    );
    same_rows_fewer_keys(
        &mut h,
        "SELECT c FROM pair WHERE b = 'k37' AND a = 7",
        "SELECT c FROM pair WHERE b = 'k37' AND a + 0 = 7",
        2,
    );
    // A join: the first table is narrowed, the rest of the query is unchanged.
    same_rows_fewer_keys(
        &mut h,
        "SELECT s.v, p.c FROM snap s LEFT JOIN pair p ON p.c = s.snapshot_id WHERE s.snapshot_id = 3",
        "SELECT s.v, p.c FROM snap s LEFT JOIN pair p ON p.c = s.snapshot_id WHERE s.snapshot_id + 0 = 3",
        400,
    );
}

#[test]
fn edge_cases_keep_postgresql_results() {
    let mut h = H::new();
    // = NULL matches nothing (and reads nothing).
    let (rows, n) = h.rows("SELECT * FROM snap WHERE snapshot_id = NULL");
    assert!(rows.is_empty());
    assert!(n <= 2, "{n}");
    // A value of another type falls back to the full scan, with the same answer.
    let (a, _) = h.rows("SELECT v FROM snap WHERE snapshot_id = 12.0");
    assert_eq!(a, vec![vec![Some("v12".into())]]);
    // OR is not a key condition.
    assert!(h
        .plan("SELECT v FROM snap WHERE snapshot_id = 1 OR v = 'v2'")
        .contains("Seq Scan"));
    // Tables without a primary key are scanned whole.
    assert!(h
        .plan("SELECT * FROM nokey WHERE x = 1")
        .contains("Seq Scan"));
    // Own writes of the open transaction are seen through the key range too.
    h.ok("BEGIN");
    h.ok("INSERT INTO snap VALUES (5000, 'new')");
    h.ok("DELETE FROM snap WHERE snapshot_id = 10");
    h.ok("UPDATE snap SET v = 'changed' WHERE snapshot_id = 11");
    let (rows, _) =
        h.rows("SELECT snapshot_id, v FROM snap WHERE snapshot_id IN (5000, 10, 11) ORDER BY 1");
    assert_eq!(
        rows,
        vec![
            vec![Some("11".into()), Some("changed".into())],
            vec![Some("5000".into()), Some("new".into())],
        ]
    );
    h.ok("ROLLBACK");
    let (rows, _) = h.rows("SELECT v FROM snap WHERE snapshot_id = 5000");
    assert!(rows.is_empty());
}

/// Bounds on an integer key column (`snapshot_id > n`: DuckLake's conflict check on
/// `ducklake_snapshot_changes` when a commit retries, and its snapshot listings) read only the
/// keys in range, with the rows a full scan gives.
#[test]
fn bounds_on_an_integer_key_read_only_their_range() {
    let mut h = H::new();
    same_rows_fewer_keys(
        &mut h,
        "SELECT snapshot_id, v FROM snap WHERE snapshot_id > '1990'",
        "SELECT snapshot_id, v FROM snap WHERE snapshot_id + 0 > '1990'",
        12,
    );
    same_rows_fewer_keys(
        &mut h,
        "SELECT v FROM snap WHERE (snapshot_id >= 100 AND snapshot_id <= 120) ORDER BY 1",
        "SELECT v FROM snap WHERE (snapshot_id + 0 >= 100 AND snapshot_id + 0 <= 120) ORDER BY 1",
        24,
    );
    same_rows_fewer_keys(
        &mut h,
        "SELECT v FROM snap WHERE snapshot_id BETWEEN 7 AND 9",
        "SELECT v FROM snap WHERE snapshot_id + 0 BETWEEN 7 AND 9",
        6,
    );
    same_rows_fewer_keys(
        &mut h,
        "SELECT count(*) FROM snap WHERE 5 > snapshot_id",
        "SELECT count(*) FROM snap WHERE 5 > snapshot_id + 0",
        8,
    );
    // Exclusive bounds exclude their own key; an empty range reads nothing.
    let (rows, _) =
        h.rows("SELECT snapshot_id FROM snap WHERE snapshot_id > 1997 AND snapshot_id < 1999");
    assert_eq!(rows, vec![vec![Some("1998".into())]]);
    let (rows, n) = h.rows("SELECT * FROM snap WHERE snapshot_id > 10 AND snapshot_id < 11");
    assert!(rows.is_empty());
    assert!(n <= 2, "{n}");
    // A NULL bound matches nothing; a bound of another type falls back to the full scan.
    let (rows, n) = h.rows("SELECT * FROM snap WHERE snapshot_id > NULL");
    assert!(rows.is_empty());
    assert!(n <= 2, "{n}");
    let (rows, _) = h.rows("SELECT v FROM snap WHERE snapshot_id > 1997.5");
    assert_eq!(
        rows,
        vec![vec![Some("v1998".into())], vec![Some("v1999".into())]]
    );
    let plan = h.plan("SELECT * FROM snap WHERE snapshot_id > 1990 AND snapshot_id <= 1995");
    assert_eq!(
        plan,
        "Index Scan using snap_pkey on public.snap (key range: snapshot_id > 1990, snapshot_id <= 1995)"
    );
    // After a key prefix, on the next key column; text keys are not bounded.
    let mut f = ducklake_files();
    same_rows_fewer_keys(
        &mut f,
        "SELECT data_file_id, column_id FROM ducklake_file_column_stats WHERE table_id = 3 AND column_id >= 2",
        "SELECT data_file_id, column_id FROM ducklake_file_column_stats WHERE table_id + 0 = 3 AND column_id >= 2",
        85,
    );
    same_rows_fewer_keys(
        &mut f,
        "SELECT data_file_id FROM ducklake_data_file WHERE table_id >= 18",
        "SELECT data_file_id FROM ducklake_data_file WHERE table_id + 0 >= 18",
        85,
    );
    assert!(h
        .plan("SELECT * FROM pair WHERE a = 7 AND b > 'k3'")
        .ends_with("(key prefix: a = 7)"));
    // UPDATE and DELETE, with the transaction's own writes seen in the range.
    h.ok("BEGIN");
    h.ok("DELETE FROM snap WHERE snapshot_id >= 1998");
    h.ok("INSERT INTO snap VALUES (5000, 'new')");
    h.kv.keys_read.set(0);
    h.ok("UPDATE snap SET v = 'late' WHERE snapshot_id > 1995");
    assert!(h.kv.keys_read.get() <= 40, "{}", h.kv.keys_read.get());
    let (a, _) = h.rows("SELECT snapshot_id, v FROM snap WHERE snapshot_id > 1994 ORDER BY 1");
    let (b, _) = h.rows("SELECT snapshot_id, v FROM snap WHERE snapshot_id + 0 > 1994 ORDER BY 1");
    assert_eq!(a, b);
    assert_eq!(
        a.iter()
            .map(|r| r[0].clone().unwrap_or_default())
            .collect::<Vec<_>>(),
        ["1995", "1996", "1997", "5000"]
    );
    assert_eq!(a[1][1].as_deref(), Some("late"));
    h.ok("ROLLBACK");
}

/// Random bounds, on the primary key and after an index prefix, give what a full scan gives.
#[test]
fn random_bounds_give_the_rows_a_full_scan_gives() {
    use proptest::prelude::*;
    use proptest::test_runner::{Config, TestRunner};
    let h = std::cell::RefCell::new(ducklake_files());
    let ops = prop::sample::select(vec![">", ">=", "<", "<=", "="]);
    let bound = prop_oneof![
        (-5i64..810).prop_map(|v| v.to_string()),
        Just("NULL".to_string())
    ];
    let cond = (ops.clone(), bound.clone(), prop::option::of((ops, bound)));
    let mut runner = TestRunner::new(Config::with_cases(300));
    runner
        .run(
            &(cond, 0i64..22, any::<bool>()),
            |((op1, b1, more), table, on_index)| {
                let col = if on_index {
                    "column_id"
                } else {
                    "data_file_id"
                };
                let rel = if on_index {
                    "ducklake_file_column_stats"
                } else {
                    "ducklake_data_file"
                };
                let prefix = if on_index {
                    format!("table_id = {table} AND ")
                } else {
                    String::new()
                };
                let mut fast = format!("{prefix}{col} {op1} {b1}");
                let mut slow = format!("{prefix}{col} + 0 {op1} {b1}");
                if let Some((op2, b2)) = more {
                    fast.push_str(&format!(" AND {col} {op2} {b2}"));
                    slow.push_str(&format!(" AND {col} + 0 {op2} {b2}"));
                }
                let q = |w: &str| {
                    format!("SELECT data_file_id, table_id FROM {rel} WHERE {w} ORDER BY 1, 2")
                };
                let (a, _) = h.borrow_mut().rows(&q(&fast));
                let (b, _) = h.borrow_mut().rows(&q(&slow));
                prop_assert_eq!(a, b, "{}", fast);
                Ok(())
            },
        )
        .unwrap_or_else(|e| panic!("{e}"));
}

/// DuckLake's data-file and file-stats tables (no index of their own in DuckLake): 20 tables,
/// 40 files each, 3 columns of stats per file.
fn ducklake_files() -> H {
    let mut h = H::empty();
    h.ok("CREATE TABLE ducklake_data_file(data_file_id BIGINT PRIMARY KEY, table_id BIGINT, begin_snapshot BIGINT, end_snapshot BIGINT, path VARCHAR)");
    h.ok("CREATE TABLE ducklake_file_column_stats(data_file_id BIGINT, table_id BIGINT, column_id BIGINT, min_value VARCHAR, max_value VARCHAR)");
    let files: Vec<String> = (0..800)
        .map(|f| format!("({f}, {}, {}, NULL, 'f{f}.parquet')", f % 20, f / 100))
        .collect();
    h.ok(&format!(
        "INSERT INTO ducklake_data_file VALUES {}",
        files.join(",")
    ));
    let stats: Vec<String> = (0..800)
        .flat_map(|f| (1..=3).map(move |c| format!("({f}, {}, {c}, '{f}', '{}')", f % 20, f + c)))
        .collect();
    h.ok(&format!(
        "INSERT INTO ducklake_file_column_stats VALUES {}",
        stats.join(",")
    ));
    h
}

#[test]
fn secondary_indexes_serve_ducklake_filters() {
    let mut h = ducklake_files();
    // The statements DuckDB's postgres scanner sends for a scan of one DuckLake table.
    same_rows_fewer_keys(
        &mut h,
        r#"SELECT "data_file_id","path" FROM "public"."ducklake_data_file" WHERE "table_id" = '3' AND "begin_snapshot" <= '5'"#,
        r#"SELECT "data_file_id","path" FROM "public"."ducklake_data_file" WHERE "table_id" + 0 = 3 AND "begin_snapshot" <= '5'"#,
        45,
    );
    same_rows_fewer_keys(
        &mut h,
        "SELECT data_file_id, max_value, min_value FROM \"public\".ducklake_file_column_stats WHERE column_id = 1 AND table_id = 3",
        "SELECT data_file_id, max_value, min_value FROM \"public\".ducklake_file_column_stats WHERE column_id = 1 AND table_id + 0 = 3",
        45,
    );
    // Only the leading index column fixed; an IN list.
    same_rows_fewer_keys(
        &mut h,
        "SELECT count(*), min(data_file_id) FROM ducklake_file_column_stats WHERE table_id = 7",
        "SELECT count(*), min(data_file_id) FROM ducklake_file_column_stats WHERE table_id + 0 = 7",
        125,
    );
    same_rows_fewer_keys(
        &mut h,
        "SELECT data_file_id FROM ducklake_data_file WHERE table_id IN (3, 5) AND end_snapshot IS NULL ORDER BY 1",
        "SELECT data_file_id FROM ducklake_data_file WHERE table_id + 0 IN (3, 5) AND end_snapshot IS NULL ORDER BY 1",
        85,
    );
    let plan = h.plan("SELECT * FROM ducklake_data_file WHERE table_id = 3");
    assert!(
        plan.starts_with("Index Scan using ducklake_data_file_table_id_idx on public.ducklake_data_file (key prefix: table_id = 3)"),
        "{plan}"
    );
    // The primary key still wins when the condition fixes it.
    assert!(h
        .plan("SELECT * FROM ducklake_data_file WHERE table_id = 3 AND data_file_id = 3")
        .starts_with("Index Scan using ducklake_data_file_pkey"));
    // UPDATE and DELETE find their rows through the index too.
    h.kv.keys_read.set(0);
    h.ok("UPDATE ducklake_data_file SET end_snapshot = 9 WHERE table_id = 4 AND end_snapshot IS NULL");
    let n = h.kv.keys_read.get();
    assert!(n <= 400, "UPDATE through the index read {n} keys");
    h.kv.keys_read.set(0);
    h.ok("DELETE FROM ducklake_file_column_stats WHERE table_id = 4 AND column_id = 2");
    let n = h.kv.keys_read.get();
    assert!(n <= 400, "DELETE through the index read {n} keys");
    let (rows, _) = h.rows(
        "SELECT count(*) FROM ducklake_data_file WHERE table_id + 0 = 4 AND end_snapshot = 9",
    );
    assert_eq!(rows, vec![vec![Some("40".into())]]);
    let (rows, _) = h.rows("SELECT count(*) FROM ducklake_file_column_stats WHERE table_id = 4");
    assert_eq!(rows, vec![vec![Some("80".into())]]);
    let report = rocklake_core::verify::verify(&mut h.engine, &h.kv).expect("verify");
    assert!(report.violations.is_empty(), "{:?}", report.violations);
}

/// DuckLake's commits name the catalog rows they change in a constant list joined to the
/// table (`WITH new_values(tid, cid, …) AS (VALUES …) UPDATE … FROM new_values WHERE table_id =
/// tid AND column_id = cid`): the list's values fix the key as an IN list would.
#[test]
fn a_join_with_constant_rows_reads_only_their_keys() {
    let mut h = ducklake_files();
    let update = "WITH new_values (tid, cid, new_min) AS (VALUES (3, 1, 'x'), (3, 2, 'y'), (5, 1, 'z'), (3, 1, 'x'), (NULL, 1, 'n')) \
         UPDATE ducklake_file_column_stats SET min_value = new_min FROM new_values WHERE table_id = tid AND column_id = cid";
    let plan = h.plan(update);
    assert!(
        plan.starts_with("Update on public.ducklake_file_column_stats\n  ->  Nested Loop / Hash Join\n        ->  Index Scan using ducklake_file_column_stats_table_id_column_id_idx"),
        "{plan}"
    );
    h.kv.keys_read.set(0);
    let out = h.ok(update);
    let n = h.kv.keys_read.get();
    // 120 matching rows (index entries, rows, each checked again before it is replaced) of
    // 2,400: a whole scan reads every row at least once.
    assert!(n <= 700, "UPDATE from constant rows read {n} keys");
    assert!(
        matches!(out.last(), Some(Output::Command { tag }) if tag == "UPDATE 120"),
        "{out:?}"
    );
    let (rows, _) = h.rows(
        "SELECT min_value, count(*) FROM ducklake_file_column_stats WHERE table_id + 0 IN (3, 5) GROUP BY 1 ORDER BY 1",
    );
    let by_value: Vec<(String, String)> = rows
        .into_iter()
        .map(|r| {
            (
                r[0].clone().unwrap_or_default(),
                r[1].clone().unwrap_or_default(),
            )
        })
        .filter(|(v, _)| v.chars().all(|c| c.is_ascii_alphabetic()))
        .collect();
    assert_eq!(
        by_value,
        vec![
            ("x".into(), "40".into()),
            ("y".into(), "40".into()),
            ("z".into(), "40".into())
        ]
    );
    // A SELECT joining a VALUES list, the column cast; a LEFT JOIN to constant rows.
    same_rows_fewer_keys(
        &mut h,
        "SELECT d.data_file_id FROM ducklake_data_file d, (VALUES (3), (5), (5)) v(t) WHERE d.table_id = v.t::bigint ORDER BY 1",
        "SELECT d.data_file_id FROM ducklake_data_file d, (VALUES (3), (5), (5)) v(t) WHERE d.table_id + 0 = v.t::bigint ORDER BY 1",
        90,
    );
    same_rows_fewer_keys(
        &mut h,
        "SELECT d.data_file_id, v.t FROM ducklake_data_file d LEFT JOIN (VALUES (3)) v(t) ON v.t > 0 WHERE d.table_id = v.t ORDER BY 1",
        "SELECT d.data_file_id, v.t FROM ducklake_data_file d LEFT JOIN (VALUES (3)) v(t) ON v.t > 0 WHERE d.table_id + 0 = v.t ORDER BY 1",
        45,
    );
    let plan = h.plan("DELETE FROM ducklake_file_column_stats WHERE table_id = 4");
    assert!(
        plan.starts_with("Delete on public.ducklake_file_column_stats\n  ->  Index Scan using"),
        "{plan}"
    );
    // Rows that are not constants leave the scan whole.
    assert!(h
        .plan("SELECT 1 FROM ducklake_data_file d, (SELECT table_id AS t FROM ducklake_data_file) v WHERE d.table_id = v.t")
        .starts_with("Nested Loop / Hash Join\n  ->  Seq Scan on public.ducklake_data_file"));
}

type Rows = Vec<Vec<Option<String>>>;

/// Every stored version of every index entry (key with its version, value).
fn index_key_versions(h: &H) -> Vec<(Vec<u8>, Vec<u8>)> {
    h.kv.kv
        .scan(
            &[rocklake_core::keys::TAG_INDEX],
            &[rocklake_core::keys::TAG_INDEX + 1],
            usize::MAX,
        )
        .expect("scan")
        .to_pairs()
}

/// The same question through the index and through a full scan.
fn by_index_and_scan(h: &mut H, s: SessionId, table_id: i64) -> Rows {
    let (a, _) = h.rows_in(
        s,
        &format!("SELECT data_file_id, end_snapshot FROM ducklake_data_file WHERE table_id = {table_id} ORDER BY 1"),
    );
    let (b, _) = h.rows_in(
        s,
        &format!("SELECT data_file_id, end_snapshot FROM ducklake_data_file WHERE table_id + 0 = {table_id} ORDER BY 1"),
    );
    assert_eq!(a, b, "index and scan disagree for table_id {table_id}");
    a
}

#[test]
fn index_entries_follow_every_change_at_every_commit_point() {
    let mut h = H::empty();
    h.ok("CREATE TABLE ducklake_data_file(data_file_id BIGINT PRIMARY KEY, table_id BIGINT, begin_snapshot BIGINT, end_snapshot BIGINT, path VARCHAR)");
    // Readers pinned at earlier commits (REPEATABLE READ), with what they saw then.
    let mut pinned: Vec<(SessionId, Vec<Rows>)> = vec![];
    let mut seed: u64 = 0x5eed_1234;
    let mut next = |n: u64| {
        seed = seed
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        (seed >> 33) % n
    };
    let mut next_file = 0u64;
    for txn in 0..80u64 {
        h.ok("BEGIN");
        for _ in 0..1 + next(4) {
            let f = if next_file == 0 { 0 } else { next(next_file) };
            match next(5) {
                0 | 1 => {
                    h.ok(&format!(
                        "INSERT INTO ducklake_data_file VALUES ({next_file}, {}, {txn}, NULL, 'f')",
                        next(4)
                    ));
                    next_file += 1;
                    vec![]
                }
                // Moves the row's entry to another index value.
                2 => h.ok(&format!("UPDATE ducklake_data_file SET table_id = {} WHERE data_file_id = {f}", next(4))),
                // Rewrites the entry in place (same indexed value, new row).
                3 => h.ok(&format!("UPDATE ducklake_data_file SET end_snapshot = {txn} WHERE table_id = {} AND data_file_id = {f}", next(4))),
                _ => h.ok(&format!("DELETE FROM ducklake_data_file WHERE data_file_id = {f}")),
            };
        }
        // Own writes are seen through the index as through the scan.
        let s = h.s;
        for t in 0..4 {
            by_index_and_scan(&mut h, s, t);
        }
        h.ok(if next(6) == 0 { "ROLLBACK" } else { "COMMIT" });
        if txn % 10 == 0 {
            let r = h.engine.open_session("reader", "lake");
            h.ok_in(r, "BEGIN ISOLATION LEVEL REPEATABLE READ");
            let seen = (0..4).map(|t| by_index_and_scan(&mut h, r, t)).collect();
            pinned.push((r, seen));
        }
    }
    for (r, seen) in pinned {
        let now: Vec<_> = (0..4).map(|t| by_index_and_scan(&mut h, r, t)).collect();
        assert_eq!(now, seen, "a pinned reader's view changed");
        h.ok_in(r, "COMMIT");
    }
    let report = rocklake_core::verify::verify(&mut h.engine, &h.kv).expect("verify");
    assert!(report.violations.is_empty(), "{:?}", report.violations);
}

#[test]
fn verify_reports_a_damaged_index_and_repair_rewrites_it() {
    use rocklake_core::api::{CommitBatch, CommitSeq};
    let mut h = ducklake_files();
    let before = by_index_and_scan_count(&mut h);
    // Lose the entry of one row and leave a stray entry behind (a store restored from parts).
    let index_keys = index_key_versions(&h);
    let (lost, lost_value) = index_keys[5].clone();
    let mut stray = lost.clone();
    stray[10] ^= 0x01;
    h.kv.kv.apply(&CommitBatch {
        seq: CommitSeq(0),
        puts: vec![(stray, lost_value)],
        deletes: vec![lost],
    });
    let report = rocklake_core::verify::verify(&mut h.engine, &h.kv).expect("verify");
    let index: Vec<_> = report
        .violations
        .iter()
        .filter(|v| v.check == "index")
        .collect();
    assert!(
        index
            .iter()
            .any(|v| v.detail.contains("live row without its index entry"))
            && index
                .iter()
                .any(|v| v.detail.contains("entry without a matching live row")),
        "{:?}",
        report.violations
    );
    assert_ne!(
        by_index_and_scan_count(&mut h),
        before,
        "the damage is visible to queries"
    );
    let (dry, _) = h.rows("SELECT \"check\" FROM rocklake_repair()");
    assert!(
        dry.iter()
            .filter(|r| r[0].as_deref() == Some("index"))
            .count()
            >= 2,
        "{dry:?}"
    );
    h.ok("SELECT * FROM rocklake_repair(true)");
    let report = rocklake_core::verify::verify(&mut h.engine, &h.kv).expect("verify");
    assert!(report.violations.is_empty(), "{:?}", report.violations);
    assert_eq!(by_index_and_scan_count(&mut h), before);
}

/// Data files per table id found through the index (tables 0..20).
fn by_index_and_scan_count(h: &mut H) -> Vec<Vec<Option<String>>> {
    h.rows("SELECT table_id, count(*) FROM ducklake_data_file WHERE table_id IN (0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19) GROUP BY 1 ORDER BY 1")
        .0
}

/// `max` of a table's leading integer key column (DuckLake's latest-snapshot lookup in every
/// transaction) reads the end of the table backwards: a few keys, with the answer a full scan
/// gives — past deleted and updated rows, at a pinned commit point, and falling back to the
/// scan when the transaction wrote to the table itself.
#[test]
fn max_of_the_leading_key_reads_only_the_end_of_the_table() {
    let mut h = H::new();
    let one = |h: &mut H, sql: &str| {
        let (rows, n) = h.rows(sql);
        (rows[0][0].clone(), n)
    };
    let (max, n) = one(&mut h, "SELECT max(snapshot_id) FROM snap");
    assert_eq!(
        (max.as_deref(), n < 80),
        (Some("1999"), true),
        "read {n} keys"
    );
    let (rows, n) = h.rows(
        "SELECT snapshot_id, v FROM snap WHERE snapshot_id = (SELECT MAX(snapshot_id) FROM snap)",
    );
    assert_eq!(
        rows,
        [[Some("1999".to_string()), Some("v1999".to_string())]]
    );
    assert!(n < 80, "DuckLake's query read {n} keys");
    h.ok("DELETE FROM snap WHERE snapshot_id >= 1990");
    h.ok("UPDATE snap SET v = 'x' WHERE snapshot_id = 1989");
    assert_eq!(
        one(&mut h, "SELECT max(snapshot_id) FROM snap")
            .0
            .as_deref(),
        Some("1989")
    );
    // A pinned reader keeps its answer while others commit a larger key.
    let pinned = h.engine.open_session("p", "lake");
    h.ok_in(pinned, "BEGIN ISOLATION LEVEL REPEATABLE READ");
    let (rows, _) = h.rows_in(pinned, "SELECT max(snapshot_id) FROM snap");
    assert_eq!(rows[0][0].as_deref(), Some("1989"));
    h.ok("INSERT INTO snap VALUES (5000, 'n')");
    let (rows, _) = h.rows_in(pinned, "SELECT max(snapshot_id) FROM snap");
    assert_eq!(rows[0][0].as_deref(), Some("1989"));
    h.ok_in(pinned, "COMMIT");
    assert_eq!(
        one(&mut h, "SELECT max(snapshot_id) FROM snap")
            .0
            .as_deref(),
        Some("5000")
    );
    // Own writes: the scan, which sees them.
    h.ok("BEGIN");
    h.ok("INSERT INTO snap VALUES (6000, 'own')");
    let (max, n) = one(&mut h, "SELECT max(snapshot_id) FROM snap");
    assert_eq!(max.as_deref(), Some("6000"));
    assert!(n > 1000, "own writes fall back to the scan ({n} keys)");
    h.ok("ROLLBACK");
    // Other shapes keep PostgreSQL's answers through the general path.
    let (rows, _) = h.rows("SELECT max(snapshot_id), count(*) FROM snap");
    assert_eq!(
        rows[0],
        [Some("5000".to_string()), Some("1991".to_string())]
    );
    assert_eq!(
        one(&mut h, "SELECT max(a) FROM pair").0.as_deref(),
        Some("29")
    );
    h.ok("CREATE TABLE e (id BIGINT PRIMARY KEY)");
    assert_eq!(one(&mut h, "SELECT max(id) FROM e").0, None);
    h.ok("INSERT INTO e VALUES (3)");
    h.ok("DELETE FROM e WHERE id = 3");
    assert_eq!(one(&mut h, "SELECT max(id) FROM e").0, None);
}

/// `SELECT id … WHERE cond` through whatever the plan picks and through a full scan (`+ 0`
/// hides the columns from the pushdown): the same ids.
fn ids_both_ways(h: &mut H, s: SessionId, cond: &str, scanned: &str) -> Rows {
    let (a, _) = h.rows_in(s, &format!("SELECT id FROM f WHERE {cond} ORDER BY 1"));
    let (b, _) = h.rows_in(s, &format!("SELECT id FROM f WHERE {scanned} ORDER BY 1"));
    assert_eq!(a, b, "{cond} vs {scanned}");
    a
}

#[test]
fn create_index_serves_lookups_at_every_commit_point_and_drop_index_removes_its_entries() {
    let mut h = H::empty();
    h.ok("CREATE TABLE f (id BIGINT PRIMARY KEY, tbl BIGINT, name VARCHAR, end_snap BIGINT)");
    let rows: Vec<String> = (0..3000)
        .map(|i| format!("({i}, {}, 'n{}', NULL)", i % 50, i % 7))
        .collect();
    h.ok(&format!("INSERT INTO f VALUES {}", rows.join(",")));
    let q = "SELECT id FROM f WHERE tbl = 7 ORDER BY 1";
    assert!(h.plan(q).contains("Seq Scan"), "{}", h.plan(q));
    let (before, scanned) = h.rows(q);
    assert_eq!(before.len(), 60);
    // A reader pinned before the index exists, and a writer that started before it.
    let pinned = h.engine.open_session("pinned", "lake");
    h.ok_in(pinned, "BEGIN ISOLATION LEVEL REPEATABLE READ");
    assert_eq!(h.rows_in(pinned, q).0, before);
    let writer = h.engine.open_session("writer", "lake");
    h.ok_in(writer, "BEGIN");
    h.ok_in(writer, "UPDATE f SET tbl = 7 WHERE id = 1");

    h.ok("CREATE INDEX f_tbl ON f (tbl)");
    assert!(
        h.plan(q).contains("Index Scan using f_tbl"),
        "{}",
        h.plan(q)
    );
    let (after, read) = h.rows(q);
    assert_eq!(after, before);
    assert!(
        read < 100 && scanned >= 3000,
        "read {read} keys, the scan {scanned}"
    );
    // The pinned snapshot is older than the index's entries: it scans, with its rows.
    assert_eq!(h.rows_in(pinned, q).0, before);
    h.ok_in(pinned, "COMMIT");
    // The writer's commit comes after the index's and writes its entries (PostgreSQL would
    // have made the index wait for it; here neither fails).
    h.ok_in(writer, "COMMIT");
    let s = h.s;
    let seven = ids_both_ways(&mut h, s, "tbl = 7", "tbl + 0 = 7");
    assert_eq!(seven.len(), 61);
    assert_eq!(seven[0], vec![Some("1".to_string())]);

    // An index made inside a transaction answers through scans until its commit writes the
    // entries; the transaction's own writes are seen either way.
    h.ok("BEGIN");
    h.ok("CREATE INDEX ON f (name DESC, tbl)");
    h.ok("INSERT INTO f VALUES (5000, 10, 'n3', NULL)");
    h.ok("UPDATE f SET name = 'n3' WHERE id = 2");
    let in_txn = ids_both_ways(
        &mut h,
        s,
        "name = 'n3' AND tbl = 10",
        "name || '' = 'n3' AND tbl + 0 = 10",
    );
    assert!(
        in_txn.contains(&vec![Some("5000".to_string())]),
        "{in_txn:?}"
    );
    h.ok("COMMIT");
    let q2 = "SELECT id FROM f WHERE name = 'n3' AND tbl = 10 ORDER BY 1";
    assert!(
        h.plan(q2).contains("Index Scan using f_name_tbl_idx"),
        "{}",
        h.plan(q2)
    );
    assert_eq!(
        ids_both_ways(
            &mut h,
            s,
            "name = 'n3' AND tbl = 10",
            "name || '' = 'n3' AND tbl + 0 = 10"
        ),
        in_txn
    );

    // Writes move entries of both indexes; a dropped index's entries go, and a new index
    // may take its slot.
    h.ok("UPDATE f SET tbl = tbl + 1 WHERE id % 3 = 0");
    h.ok("DELETE FROM f WHERE id % 11 = 0");
    let index_entries = |h: &H| index_key_versions(h).len();
    let with_both = index_entries(&h);
    h.ok("DROP INDEX f_tbl");
    assert!(h.plan(q).contains("Seq Scan"), "{}", h.plan(q));
    // Tombstones were added for the dropped entries: versions only grow until excision.
    assert!(index_entries(&h) > with_both);
    h.ok("CREATE INDEX f_end ON f (end_snap, tbl)");
    h.ok("UPDATE f SET end_snap = 9 WHERE tbl = 8");
    for t in [7, 8, 9] {
        ids_both_ways(&mut h, s, &format!("tbl = {t}"), &format!("tbl + 0 = {t}"));
        ids_both_ways(
            &mut h,
            s,
            &format!("end_snap = 9 AND tbl = {t}"),
            &format!("end_snap + 0 = 9 AND tbl + 0 = {t}"),
        );
    }
    // DROP COLUMN takes the indexes over it along; a column's new type moves the entries.
    h.ok("ALTER TABLE f ALTER COLUMN tbl TYPE integer");
    ids_both_ways(
        &mut h,
        s,
        "end_snap = 9 AND tbl = 8",
        "end_snap + 0 = 9 AND tbl + 0 = 8",
    );
    h.ok("ALTER TABLE f DROP COLUMN name");
    let (listed, _) = h.rows("SELECT indexname FROM pg_indexes WHERE tablename = 'f' ORDER BY 1");
    assert_eq!(
        listed,
        vec![
            vec![Some("f_end".to_string())],
            vec![Some("f_pkey".to_string())]
        ]
    );
    let report = rocklake_core::verify::verify(&mut h.engine, &h.kv).expect("verify");
    assert!(report.violations.is_empty(), "{:?}", report.violations);
}

#[test]
fn index_changes_cover_rows_committed_after_their_statement() {
    let mut h = H::empty();
    h.ok("CREATE TABLE f (id BIGINT PRIMARY KEY, tbl BIGINT)");
    h.ok("INSERT INTO f VALUES (1, 1), (2, 2)");
    h.ok("BEGIN");
    h.ok("CREATE INDEX f_tbl ON f (tbl)");
    // Committed after the statement read the table, before the index's commit: its commit
    // writes this row's entry too (PostgreSQL would have made the insert wait).
    let other = h.engine.open_session("other", "lake");
    h.ok_in(other, "INSERT INTO f VALUES (3, 1)");
    h.ok("COMMIT");
    let s = h.s;
    assert!(h
        .plan("SELECT id FROM f WHERE tbl = 1")
        .contains("Index Scan using f_tbl"));
    let ones = ids_both_ways(&mut h, s, "tbl = 1", "tbl + 0 = 1");
    assert_eq!(ones.len(), 2, "{ones:?}");
    // The same for a drop: the entries of rows committed meanwhile go too.
    h.ok("BEGIN");
    h.ok("DROP INDEX f_tbl");
    h.ok_in(other, "INSERT INTO f VALUES (4, 1)");
    h.ok_in(other, "UPDATE f SET tbl = 5 WHERE id = 1");
    h.ok("COMMIT");
    let report = rocklake_core::verify::verify(&mut h.engine, &h.kv).expect("verify");
    assert!(report.violations.is_empty(), "{:?}", report.violations);
    let versions = index_key_versions(&h);
    let live_entries = versions
        .iter()
        .filter(|(_, v)| {
            !matches!(
                rocklake_core::envelope::Envelope::decode(v),
                Ok(rocklake_core::envelope::Envelope::Tombstone)
            )
        })
        .count();
    // Each entry version ever written has its tombstone at the drop's commit or earlier.
    let tombstones = versions.len() - live_entries;
    assert!(
        tombstones >= 4,
        "{live_entries} live, {tombstones} tombstones"
    );
    h.ok("CREATE INDEX f_tbl2 ON f (tbl)");
    assert_eq!(ids_both_ways(&mut h, s, "tbl = 1", "tbl + 0 = 1").len(), 2);
    assert_eq!(ids_both_ways(&mut h, s, "tbl = 5", "tbl + 0 = 5").len(), 1);
}

#[test]
fn a_transaction_that_rewrites_a_table_reads_it_whole_not_through_old_entries() {
    // The entries hold rows in the committed layout; after DROP COLUMN in this transaction
    // every row is an own write in the new one.
    let mut h = H::empty();
    h.ok("CREATE TABLE t (a INT, b INT PRIMARY KEY, c INT)");
    h.ok("CREATE INDEX t_c ON t (c)");
    h.ok("INSERT INTO t VALUES (7, 5, 5), (1, 2, 3)");
    h.ok("BEGIN");
    h.ok("ALTER TABLE t DROP COLUMN a");
    let (rows, _) = h.rows("SELECT * FROM t WHERE c = 5");
    assert_eq!(
        rows,
        vec![vec![Some("5".to_string()), Some("5".to_string())]]
    );
    assert!(h.plan("SELECT * FROM t WHERE c = 5").contains("Seq Scan"));
    h.ok("UPDATE t SET c = 6 WHERE c = 5");
    h.ok("COMMIT");
    let (rows, _) = h.rows("SELECT b, c FROM t ORDER BY b");
    assert_eq!(
        rows,
        vec![
            vec![Some("2".to_string()), Some("3".to_string())],
            vec![Some("5".to_string()), Some("6".to_string())]
        ]
    );
    let s = h.s;
    let (six, _) = h.rows_in(s, "SELECT b FROM t WHERE c = 6");
    assert_eq!(six, vec![vec![Some("5".to_string())]]);
    let report = rocklake_core::verify::verify(&mut h.engine, &h.kv).expect("verify");
    assert!(report.violations.is_empty(), "{:?}", report.violations);
}
