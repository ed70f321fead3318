//! The transaction model of the spec, exercised through the engine over an in-memory store:
//! all-or-nothing visibility, pinned readers, rollback, the 64 MiB limit, primary keys, and
//! write conflicts.

use rocklake_core::api::{CommitFailure, Output, Reply, SessionId, TxnStatus};
use rocklake_core::memkv::MemKv;
use rocklake_core::Engine;

struct Harness {
    kv: MemKv,
    engine: Engine,
    now: i64,
}

impl Harness {
    fn new() -> Harness {
        let kv = MemKv::new();
        let engine = Engine::open(&kv).expect("open");
        Harness {
            kv,
            engine,
            now: 1_000_000,
        }
    }

    fn reopen(&mut self) {
        self.engine = Engine::open(&self.kv).expect("reopen");
    }

    fn session(&mut self) -> SessionId {
        self.engine.open_session("t", "lake")
    }

    /// Runs a query, applying any commit batch to the store (a durable host).
    fn q(&mut self, s: SessionId, sql: &str) -> Reply {
        self.now += 1;
        let mut r = self.engine.query(&self.kv, s, sql, self.now);
        let mut outputs = std::mem::take(&mut r.outputs);
        while let Some(batch) = r.commit.take() {
            self.kv.apply(&batch);
            r = self.engine.commit_finished(&self.kv, s, Ok(()));
            outputs.append(&mut r.outputs);
        }
        r.outputs = outputs;
        r
    }

    fn ok(&mut self, s: SessionId, sql: &str) -> Vec<Output> {
        let r = self.q(s, sql);
        assert!(r.error.is_none(), "{sql}: {:?}", r.error);
        r.outputs
    }

    fn rows(&mut self, s: SessionId, sql: &str) -> Vec<Vec<Option<String>>> {
        let outs = self.ok(s, sql);
        match outs.last() {
            Some(Output::Rows { rows, .. }) => rows.to_strings(),
            other => panic!("{sql}: expected rows, got {other:?}"),
        }
    }

    /// Runs `sql` and asserts PostgreSQL's unique-violation error on `constraint` with `detail`.
    fn unique_violation(&mut self, s: SessionId, sql: &str, constraint: &str, detail: &str) {
        let e = self
            .q(s, sql)
            .error
            .unwrap_or_else(|| panic!("{sql}: expected 23505"));
        assert_eq!(e.code, "23505");
        assert_eq!(
            e.message,
            format!("duplicate key value violates unique constraint \"{constraint}\"")
        );
        assert_eq!(e.detail.as_deref(), Some(detail));
    }

    fn err(&mut self, s: SessionId, sql: &str) -> String {
        let r = self.q(s, sql);
        r.error
            .unwrap_or_else(|| panic!("{sql}: expected an error"))
            .code
    }
}

fn v(x: &str) -> Option<String> {
    Some(x.to_string())
}

#[test]
fn a_transaction_is_visible_all_at_once_and_only_after_commit() {
    let mut h = Harness::new();
    let a = h.session();
    let b = h.session();
    h.ok(a, "CREATE TABLE t (id BIGINT PRIMARY KEY, name VARCHAR)");
    h.ok(a, "BEGIN");
    h.ok(a, "INSERT INTO t VALUES (1, 'x')");
    h.ok(a, "INSERT INTO t VALUES (2, 'y')");
    assert_eq!(
        h.rows(a, "SELECT count(*) FROM t"),
        vec![vec![v("2")]],
        "own writes visible"
    );
    assert_eq!(
        h.rows(b, "SELECT count(*) FROM t"),
        vec![vec![v("0")]],
        "not visible to others before commit"
    );
    let before = h.kv.len();
    h.ok(a, "COMMIT");
    assert!(h.kv.len() > before, "commit wrote one batch");
    assert_eq!(
        h.rows(b, "SELECT id, name FROM t ORDER BY id"),
        vec![vec![v("1"), v("x")], vec![v("2"), v("y")]]
    );
}

#[test]
fn a_pinned_reader_sees_identical_results_after_later_commits_and_restart() {
    let mut h = Harness::new();
    let w = h.session();
    h.ok(
        w,
        "CREATE TABLE s (snapshot_id BIGINT PRIMARY KEY, note VARCHAR)",
    );
    h.ok(w, "INSERT INTO s VALUES (1, 'a'), (2, 'b')");
    let r = h.session();
    h.ok(r, "BEGIN TRANSACTION ISOLATION LEVEL REPEATABLE READ");
    let pinned = h.rows(r, "SELECT * FROM s ORDER BY snapshot_id");
    for i in 3..13 {
        h.ok(w, &format!("INSERT INTO s VALUES ({i}, 'n{i}')"));
        h.ok(
            w,
            &format!("UPDATE s SET note = 'changed{i}' WHERE snapshot_id = 1"),
        );
    }
    h.ok(w, "DELETE FROM s WHERE snapshot_id = 2");
    assert_eq!(
        h.rows(r, "SELECT * FROM s ORDER BY snapshot_id"),
        pinned,
        "repeatable read is stable"
    );
    h.ok(r, "COMMIT");
    assert_eq!(h.rows(r, "SELECT count(*) FROM s"), vec![vec![v("11")]]);

    // After a restart, the commit point the reader was bound to still reads the same rows.
    let at = 2; // commit 1 created the table, commit 2 inserted the first rows
    h.reopen();
    let rows = rocklake_core::engine::scan_visible(
        &h.kv,
        &rocklake_core::keys::table_prefix(1),
        &rocklake_core::keys::prefix_end(&rocklake_core::keys::table_prefix(1)),
        at,
    )
    .expect("scan");
    assert_eq!(rows.len(), 2, "two rows were visible at commit point {at}");
}

#[test]
fn rollback_and_dropped_sessions_leave_no_trace() {
    let mut h = Harness::new();
    let a = h.session();
    h.ok(a, "CREATE TABLE t (id BIGINT)");
    let keys_before = h.kv.len();
    h.ok(a, "BEGIN");
    h.ok(a, "INSERT INTO t VALUES (1)");
    h.ok(a, "CREATE TABLE u (x INTEGER)");
    h.ok(a, "ROLLBACK");
    let b = h.session();
    h.ok(b, "BEGIN");
    h.ok(b, "INSERT INTO t VALUES (2)");
    h.engine.close_session(b);
    assert_eq!(h.kv.len(), keys_before, "nothing reached the store");
    let c = h.session();
    assert_eq!(h.rows(c, "SELECT count(*) FROM t"), vec![vec![v("0")]]);
    assert_eq!(h.err(c, "SELECT * FROM u"), "42P01");
}

#[test]
fn an_error_aborts_the_block_until_rollback() {
    let mut h = Harness::new();
    let a = h.session();
    h.ok(a, "CREATE TABLE t (id BIGINT PRIMARY KEY)");
    h.ok(a, "BEGIN");
    h.ok(a, "INSERT INTO t VALUES (1)");
    let r = h.q(a, "INSERT INTO t VALUES (1)");
    assert_eq!(r.error.as_ref().map(|e| e.code.as_str()), Some("23505"));
    assert_eq!(r.status, TxnStatus::Failed);
    assert_eq!(h.err(a, "SELECT 1"), "25P02");
    let r = h.q(a, "COMMIT");
    assert!(
        matches!(r.outputs.last(), Some(Output::Command { tag }) if tag == "ROLLBACK"),
        "COMMIT of a failed block rolls back"
    );
    assert_eq!(h.rows(a, "SELECT count(*) FROM t"), vec![vec![v("0")]]);
}

#[test]
fn the_64_mib_limit_gives_54001_and_the_session_continues() {
    let mut h = Harness::new();
    let a = h.session();
    h.ok(a, "CREATE TABLE big (id BIGINT, payload VARCHAR)");
    h.ok(a, "BEGIN");
    let chunk = "x".repeat(1024 * 1024);
    let mut code = None;
    for i in 0..80 {
        let r = h.q(a, &format!("INSERT INTO big VALUES ({i}, '{chunk}')"));
        if let Some(e) = r.error {
            assert_eq!(
                e.message,
                "Transaction exceeds maximum batch size (64 MiB)."
            );
            assert_eq!(
                e.hint.as_deref(),
                Some("Split large operations into smaller transactions.")
            );
            code = Some(e.code);
            break;
        }
    }
    assert_eq!(code.as_deref(), Some("54001"));
    h.ok(a, "ROLLBACK");
    h.ok(a, "INSERT INTO big VALUES (1, 'small')");
    assert_eq!(h.rows(a, "SELECT count(*) FROM big"), vec![vec![v("1")]]);
}

#[test]
fn concurrent_commits_of_one_snapshot_id_give_23505_with_postgres_text() {
    let mut h = Harness::new();
    let a = h.session();
    let b = h.session();
    h.ok(
        a,
        "CREATE TABLE ducklake_snapshot (snapshot_id BIGINT PRIMARY KEY, schema_version BIGINT)",
    );
    h.ok(a, "BEGIN TRANSACTION ISOLATION LEVEL REPEATABLE READ");
    h.ok(b, "BEGIN TRANSACTION ISOLATION LEVEL REPEATABLE READ");
    h.ok(a, "INSERT INTO ducklake_snapshot VALUES (52, 1)");
    h.ok(b, "INSERT INTO ducklake_snapshot VALUES (52, 1)");
    h.ok(a, "COMMIT");
    h.unique_violation(
        b,
        "COMMIT",
        "ducklake_snapshot_pkey",
        "Key (snapshot_id)=(52) already exists.",
    );
    // After the conflict, a fresh insert of the committed id fails at once, as in PostgreSQL.
    assert_eq!(
        h.err(b, "INSERT INTO ducklake_snapshot VALUES (52, 2)"),
        "23505"
    );
}

/// Two sessions, each inside a transaction that created its own table `t` (uncommitted).
fn two_uncommitted_creates_of_t(h: &mut Harness) -> (SessionId, SessionId) {
    let a = h.session();
    let b = h.session();
    h.ok(a, "BEGIN");
    h.ok(b, "BEGIN");
    h.ok(a, "CREATE TABLE t (x BIGINT)");
    h.ok(b, "CREATE TABLE t (y BIGINT)");
    (a, b)
}

#[test]
fn concurrent_creates_of_one_table_name_give_23505_to_the_later_commit() {
    let mut h = Harness::new();
    let s = h.session();
    h.ok(s, "CREATE SCHEMA other");
    let (a, b) = two_uncommitted_creates_of_t(&mut h);
    h.ok(a, "COMMIT");
    // PostgreSQL 15 makes b's CREATE wait for a, then answers exactly this.
    h.unique_violation(
        b,
        "COMMIT",
        "pg_type_typname_nsp_index",
        "Key (typname, typnamespace)=(t, 2200) already exists.",
    );
    // The same name in another schema is another table.
    h.ok(b, "BEGIN");
    h.ok(b, "CREATE TABLE other.t (y BIGINT)");
    h.ok(b, "COMMIT");
    assert_eq!(h.rows(a, "SELECT count(*) FROM t"), vec![vec![v("0")]]);
    assert_eq!(
        h.rows(a, "SELECT y FROM other.t"),
        Vec::<Vec<Option<String>>>::new()
    );
    // In a user schema the detail carries that schema's OID.
    let other = h.rows(a, "SELECT oid FROM pg_namespace WHERE nspname = 'other'")[0][0].clone();
    h.ok(a, "BEGIN");
    h.ok(b, "BEGIN");
    h.ok(a, "CREATE TABLE other.u (x BIGINT)");
    h.ok(b, "CREATE TABLE other.u (y BIGINT)");
    h.ok(a, "COMMIT");
    let detail = format!(
        "Key (typname, typnamespace)=(u, {}) already exists.",
        other.unwrap_or_default()
    );
    h.unique_violation(b, "COMMIT", "pg_type_typname_nsp_index", &detail);
}

#[test]
fn a_create_meeting_one_still_in_flight_gets_23505() {
    // Group commit: the first commit's batch is not durable yet when the second is planned.
    let mut h = Harness::new();
    let (a, b) = two_uncommitted_creates_of_t(&mut h);
    let ra = h.engine.query(&h.kv, a, "COMMIT", 10);
    let batch = ra.commit.expect("a's commit is planned");
    let rb = h.engine.query(&h.kv, b, "COMMIT", 11);
    assert!(rb.commit.is_none(), "b must not be planned beside a");
    assert_eq!(rb.error.map(|e| e.code).as_deref(), Some("23505"));
    h.kv.apply(&batch);
    let done = h.engine.commit_finished(&h.kv, a, Ok(()));
    assert!(done.error.is_none(), "{:?}", done.error);
    assert_eq!(h.rows(b, "SELECT count(*) FROM t"), vec![vec![v("0")]]);
}

#[test]
fn concurrent_update_under_repeatable_read_gives_40001() {
    let mut h = Harness::new();
    let a = h.session();
    let b = h.session();
    h.ok(a, "CREATE TABLE t (id BIGINT, v BIGINT)");
    h.ok(a, "INSERT INTO t VALUES (1, 0)");
    h.ok(b, "BEGIN TRANSACTION ISOLATION LEVEL REPEATABLE READ");
    h.rows(b, "SELECT * FROM t");
    h.ok(a, "UPDATE t SET v = 1 WHERE id = 1");
    assert_eq!(h.err(b, "UPDATE t SET v = 2 WHERE id = 1"), "40001");
}

#[test]
fn a_failed_durable_write_reports_the_error_and_commits_nothing() {
    let mut h = Harness::new();
    let a = h.session();
    h.ok(a, "CREATE TABLE t (id BIGINT)");
    h.now += 1;
    let r = h.engine.query(&h.kv, a, "INSERT INTO t VALUES (1)", h.now);
    assert!(r.commit.is_some(), "auto-commit produced a batch");
    let r = h.engine.commit_finished(
        &h.kv,
        a,
        Err(CommitFailure {
            fenced: true,
            transient: false,
            message: "fenced".into(),
        }),
    );
    assert_eq!(r.error.map(|e| e.code), Some("57P04".to_string()));
    assert_eq!(h.rows(a, "SELECT count(*) FROM t"), vec![vec![v("0")]]);
    h.reopen();
    let c = h.session();
    assert_eq!(h.rows(c, "SELECT count(*) FROM t"), vec![vec![v("0")]]);
}

#[test]
fn table_definitions_and_tuple_counters_survive_reopen() {
    let mut h = Harness::new();
    let a = h.session();
    h.ok(a, "CREATE SCHEMA IF NOT EXISTS\"dlmeta\"");
    h.ok(
        a,
        "CREATE TABLE dlmeta.x (a BIGINT, b DECIMAL(9,2), c UUID, d TIMESTAMP WITH TIME ZONE)",
    );
    h.ok(a, "INSERT INTO dlmeta.x VALUES (1, 2.5, 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11', '2024-06-15 12:00:00+00')");
    let before = h.rows(a, "SELECT ctid, * FROM dlmeta.x");
    h.reopen();
    let b = h.session();
    assert_eq!(h.rows(b, "SELECT ctid, * FROM dlmeta.x"), before);
    h.ok(b, "INSERT INTO dlmeta.x (a) VALUES (2)");
    let ctids = h.rows(b, "SELECT ctid FROM dlmeta.x ORDER BY a");
    assert_eq!(
        ctids,
        vec![vec![v("(0,1)")], vec![v("(0,2)")]],
        "tuple numbers continue after reopen"
    );
    assert_eq!(before[0][2], v("2.50"), "numeric(9,2) keeps its scale");
}

#[test]
fn psql_style_operators_and_visibility() {
    let mut h = Harness::new();
    let a = h.session();
    h.ok(a, "CREATE SCHEMA dlmeta");
    h.ok(a, "CREATE TABLE public.pub_t (id BIGINT)");
    h.ok(a, "CREATE TABLE dlmeta.hidden_t (id BIGINT)");
    assert_eq!(
        h.rows(a, "SELECT 'abc' OPERATOR(pg_catalog.~) '^(a.c)$'"),
        vec![vec![v("t")]]
    );
    assert_eq!(
        h.rows(a, "SELECT c.relname FROM pg_catalog.pg_class c WHERE c.relname OPERATOR(pg_catalog.~) '^(pub_t)$' COLLATE pg_catalog.default"),
        vec![vec![v("pub_t")]]
    );
    assert_eq!(
        h.rows(a, "SELECT relname FROM pg_class WHERE relname LIKE '%\\_t' AND pg_table_is_visible(oid) ORDER BY 1"),
        vec![vec![v("pub_t")]],
        "only search_path tables are visible"
    );
}

/// A read replica's engine over the same store: refuses writes with 25006, sees the writer's
/// commits after `refresh`, and a REPEATABLE READ transaction begun before keeps its view.
#[test]
fn replica_engine_refreshes_and_refuses_writes() {
    let mut w = Harness::new();
    let ws = w.session();
    w.ok(ws, "CREATE TABLE t (id BIGINT PRIMARY KEY)");
    w.ok(ws, "INSERT INTO t VALUES (1)");

    let mut replica = Engine::open(&w.kv).expect("open replica");
    replica.set_read_only(true);
    let rs = replica.open_session("r", "lake");
    let pinned = replica.open_session("r", "lake");
    let q = |e: &mut Engine, kv: &MemKv, s: SessionId, sql: &str| e.query(kv, s, sql, 1);
    let r = q(&mut replica, &w.kv, rs, "INSERT INTO t VALUES (2)");
    assert_eq!(r.error.map(|e| e.code).as_deref(), Some("25006"));
    let r = q(&mut replica, &w.kv, rs, "CREATE TABLE u (x INT)");
    assert_eq!(r.error.map(|e| e.code).as_deref(), Some("25006"));
    let r = q(
        &mut replica,
        &w.kv,
        pinned,
        "BEGIN ISOLATION LEVEL REPEATABLE READ; SELECT count(*) FROM t",
    );
    assert!(r.error.is_none(), "{:?}", r.error);

    w.ok(ws, "INSERT INTO t VALUES (2), (3)");
    w.ok(ws, "CREATE TABLE u (x INT)");
    let count = |e: &mut Engine, s: SessionId, sql: &str| match q(e, &w.kv, s, sql).outputs.last() {
        Some(Output::Rows { rows, .. }) => {
            String::from_utf8_lossy(rows.to_vecs()[0][0].as_deref().unwrap_or_default()).to_string()
        }
        other => panic!("{sql}: {other:?}"),
    };
    assert_eq!(
        count(&mut replica, rs, "SELECT count(*) FROM t"),
        "1",
        "not refreshed yet"
    );
    replica.refresh(&w.kv).expect("refresh");
    assert_eq!(count(&mut replica, rs, "SELECT count(*) FROM t"), "3");
    assert_eq!(
        count(&mut replica, rs, "SELECT count(*) FROM u"),
        "0",
        "new table visible"
    );
    assert_eq!(
        count(&mut replica, pinned, "SELECT count(*) FROM t"),
        "1",
        "pinned view kept"
    );
    let r = q(&mut replica, &w.kv, rs, "INSERT INTO t VALUES (9)");
    assert_eq!(
        r.error.map(|e| e.code).as_deref(),
        Some("25006"),
        "still read-only"
    );
}

#[test]
fn a_dropped_schema_and_a_table_made_in_it_meanwhile_do_not_both_commit() {
    let mut h = Harness::new();
    let s = h.session();
    h.ok(s, "CREATE SCHEMA gone");
    let (a, b) = (h.session(), h.session());
    // The drop commits first: the table's commit finds its schema gone.
    h.ok(a, "BEGIN");
    h.ok(b, "BEGIN");
    h.ok(a, "DROP SCHEMA gone");
    h.ok(b, "CREATE TABLE gone.t (x BIGINT)");
    h.ok(a, "COMMIT");
    assert_eq!(h.err(b, "COMMIT"), "3F000");
    assert_eq!(
        h.rows(
            s,
            "SELECT count(*) FROM pg_namespace WHERE nspname = 'gone'"
        ),
        vec![vec![v("0")]]
    );
    // The table commits first: the drop's commit finds a table depending on the schema.
    h.ok(s, "CREATE SCHEMA kept");
    h.ok(a, "BEGIN");
    h.ok(b, "BEGIN");
    h.ok(a, "DROP SCHEMA kept");
    h.ok(b, "CREATE TABLE kept.t (x BIGINT)");
    h.ok(b, "COMMIT");
    assert_eq!(h.err(a, "COMMIT"), "2BP01");
    assert_eq!(h.rows(s, "SELECT count(*) FROM kept.t"), vec![vec![v("0")]]);
    // Dropped with CASCADE, its tables go with it, durably.
    h.ok(s, "DROP SCHEMA kept CASCADE");
    assert_eq!(h.err(s, "SELECT count(*) FROM kept.t"), "42P01");
    assert_eq!(
        h.rows(s, "SELECT count(*) FROM pg_class WHERE relname = 't'"),
        vec![vec![v("0")]]
    );
}

#[test]
fn a_table_of_the_transaction_is_found_by_its_bare_name_only_through_search_path() {
    let mut h = Harness::new();
    let s = h.session();
    h.ok(s, "BEGIN");
    h.ok(s, "CREATE SCHEMA hidden");
    h.ok(s, "CREATE TABLE hidden.t (x BIGINT)");
    h.ok(s, "SAVEPOINT p");
    assert_eq!(h.err(s, "SELECT * FROM t"), "42P01");
    h.ok(s, "ROLLBACK TO p");
    h.ok(s, "SET LOCAL search_path = hidden");
    assert_eq!(h.rows(s, "SELECT count(*) FROM t"), vec![vec![v("0")]]);
    h.ok(s, "COMMIT");
}

fn column_names(h: &mut Harness, s: SessionId) -> Vec<Vec<Option<String>>> {
    h.rows(
        s,
        "SELECT column_name FROM information_schema.columns WHERE table_name = 't' \
         ORDER BY ordinal_position",
    )
}

#[test]
fn writes_planned_by_a_definition_another_commit_changed_fail_at_commit() {
    // Rows are stored by column position: a row written by the old definition must not land
    // after a DROP COLUMN, nor one of two concurrent ALTERs be lost.
    let mut h = Harness::new();
    let a = h.session();
    let b = h.session();
    h.ok(a, "CREATE TABLE t (id BIGINT, b TEXT, c BIGINT)");
    h.ok(a, "INSERT INTO t VALUES (1, 'x', 10)");
    h.ok(b, "BEGIN");
    h.ok(b, "INSERT INTO t VALUES (2, 'y', 20)");
    h.ok(a, "ALTER TABLE t DROP COLUMN b");
    assert_eq!(h.err(b, "COMMIT"), "40001");
    assert_eq!(h.rows(a, "SELECT * FROM t"), vec![vec![v("1"), v("10")]]);

    h.ok(a, "BEGIN");
    h.ok(a, "ALTER TABLE t ADD COLUMN d TEXT");
    h.ok(b, "BEGIN");
    h.ok(b, "ALTER TABLE t ADD COLUMN e TEXT");
    h.ok(a, "COMMIT");
    assert_eq!(h.err(b, "COMMIT"), "40001");
    assert_eq!(
        column_names(&mut h, a),
        vec![vec![v("id")], vec![v("c")], vec![v("d")]]
    );

    // An UPDATE and a DELETE meeting a DROP TABLE.
    h.ok(b, "BEGIN");
    h.ok(b, "UPDATE t SET c = 11");
    h.ok(a, "BEGIN");
    h.ok(a, "DELETE FROM t");
    h.ok(a, "DROP TABLE t");
    h.ok(a, "COMMIT");
    assert_eq!(h.err(b, "COMMIT"), "40001");
    assert_eq!(h.err(a, "SELECT * FROM t"), "42P01");
    // Writes by the definition a transaction altered itself go through.
    h.ok(a, "CREATE TABLE t (id BIGINT, b TEXT)");
    h.ok(a, "BEGIN");
    h.ok(a, "INSERT INTO t VALUES (1, 'x')");
    h.ok(a, "ALTER TABLE t ADD COLUMN c BIGINT");
    h.ok(a, "INSERT INTO t VALUES (2, 'y', 3)");
    h.ok(a, "COMMIT");
    assert_eq!(
        h.rows(a, "SELECT * FROM t ORDER BY id"),
        vec![vec![v("1"), v("x"), None], vec![v("2"), v("y"), v("3")]]
    );
}

#[test]
fn a_snapshot_older_than_a_rewrite_cannot_read_the_rows_by_the_new_layout() {
    let mut h = Harness::new();
    let a = h.session();
    let b = h.session();
    h.ok(a, "CREATE TABLE t (id BIGINT, b TEXT, c BIGINT)");
    h.ok(a, "INSERT INTO t VALUES (1, 'x', 10)");
    h.ok(a, "CREATE TABLE u (id BIGINT, c BIGINT)");
    h.ok(b, "BEGIN TRANSACTION ISOLATION LEVEL REPEATABLE READ");
    assert_eq!(h.rows(b, "SELECT count(*) FROM t"), vec![vec![v("1")]]);
    h.ok(a, "ALTER TABLE t DROP COLUMN b");
    // Its snapshot sees the rows as they were, with `b`: read by the new definition their
    // values would land in the wrong columns.
    for sql in [
        "SELECT * FROM t",
        "INSERT INTO u SELECT * FROM t",
        "COPY t TO STDOUT",
        "DELETE FROM t",
    ] {
        let e = h
            .q(b, sql)
            .error
            .unwrap_or_else(|| panic!("{sql}: expected 40001"));
        assert_eq!(e.code, "40001", "{sql}");
        assert_eq!(
            e.message,
            "could not serialize access due to concurrent ALTER TABLE"
        );
        h.ok(b, "ROLLBACK");
        h.ok(b, "BEGIN TRANSACTION ISOLATION LEVEL REPEATABLE READ");
        h.rows(b, "SELECT count(*) FROM u");
        h.ok(a, "ALTER TABLE t ADD COLUMN z BIGINT");
        h.ok(a, "ALTER TABLE t DROP COLUMN z");
    }
    h.ok(b, "ROLLBACK");
    // A snapshot taken after it reads the rows, also after a restart.
    assert_eq!(h.rows(b, "SELECT * FROM t"), vec![vec![v("1"), v("10")]]);
    h.reopen();
    let c = h.session();
    assert_eq!(h.rows(c, "SELECT * FROM t"), vec![vec![v("1"), v("10")]]);
    // The transaction that drops the column reads its own rewrite.
    h.ok(c, "BEGIN");
    h.ok(c, "ALTER TABLE t DROP COLUMN c");
    assert_eq!(h.rows(c, "SELECT * FROM t"), vec![vec![v("1")]]);
    h.ok(c, "COMMIT");
}

#[test]
fn an_alter_that_read_the_whole_table_fails_if_rows_were_committed_into_it_since() {
    // A DROP COLUMN rewrite, an added column's fill and a NOT NULL check read every row at
    // the transaction's read point: a row another transaction commits afterwards was neither
    // rewritten nor filled nor checked.
    let mut h = Harness::new();
    let a = h.session();
    let b = h.session();
    h.ok(a, "CREATE TABLE t (id BIGINT, b TEXT, c BIGINT)");
    h.ok(a, "INSERT INTO t VALUES (1, 'x', 10)");
    for alter in [
        "ALTER TABLE t DROP COLUMN b",
        "ALTER TABLE t ADD COLUMN d BIGINT DEFAULT 7",
        "ALTER TABLE t ALTER COLUMN c SET NOT NULL",
        "ALTER TABLE t ALTER COLUMN c TYPE TEXT",
    ] {
        h.ok(a, "BEGIN");
        h.ok(a, alter);
        h.ok(b, "INSERT INTO t (id) VALUES (2)");
        assert_eq!(h.err(a, "COMMIT"), "40001", "{alter}");
        h.ok(b, "DELETE FROM t WHERE id = 2");
    }
    assert_eq!(
        column_names(&mut h, a),
        vec![vec![v("id")], vec![v("b")], vec![v("c")]]
    );
    // Without a concurrent write each goes through.
    h.ok(a, "ALTER TABLE t ALTER COLUMN c SET NOT NULL");
    h.ok(a, "ALTER TABLE t ADD COLUMN d BIGINT DEFAULT 7");
    h.ok(a, "ALTER TABLE t DROP COLUMN b");
    assert_eq!(
        h.rows(a, "SELECT * FROM t"),
        vec![vec![v("1"), v("10"), v("7")]]
    );
}

#[test]
fn work_rolled_back_to_a_savepoint_leaves_no_definition_conflict() {
    // ROLLBACK TO undoes what the definition checks recorded, as it undoes the work.
    let mut h = Harness::new();
    let a = h.session();
    let b = h.session();
    h.ok(a, "CREATE TABLE t (id BIGINT, b TEXT)");
    h.ok(a, "INSERT INTO t VALUES (1, 'x')");
    h.ok(a, "BEGIN");
    h.ok(a, "SAVEPOINT s");
    h.ok(a, "ALTER TABLE t DROP COLUMN b");
    h.ok(a, "ROLLBACK TO s");
    h.ok(a, "CREATE TABLE u (id BIGINT)");
    h.ok(b, "INSERT INTO t VALUES (2, 'y')");
    h.ok(a, "COMMIT");
    h.ok(a, "BEGIN");
    h.ok(a, "SAVEPOINT s");
    h.ok(a, "INSERT INTO t VALUES (3, 'z')");
    h.ok(a, "ROLLBACK TO s");
    h.ok(a, "INSERT INTO u VALUES (1)");
    h.ok(b, "ALTER TABLE t ADD COLUMN c BIGINT");
    h.ok(a, "COMMIT");
    assert_eq!(
        h.rows(a, "SELECT * FROM t ORDER BY id"),
        vec![vec![v("1"), v("x"), None], vec![v("2"), v("y"), None]]
    );
}

#[test]
fn tuple_counters_survive_reopen_when_commits_land_out_of_allocation_order() {
    let mut h = Harness::new();
    let a = h.session();
    let b = h.session();
    h.ok(a, "CREATE TABLE t (x int)");
    h.ok(a, "BEGIN");
    h.ok(b, "BEGIN");
    h.ok(a, "INSERT INTO t VALUES (1)");
    h.ok(b, "INSERT INTO t VALUES (2)");
    // b took the higher tuple number and commits first; a's commit must not move the
    // persisted counter back below it.
    h.ok(b, "COMMIT");
    h.ok(a, "COMMIT");
    h.reopen();
    let c = h.session();
    h.ok(c, "INSERT INTO t VALUES (3)");
    assert_eq!(
        h.rows(c, "SELECT x, ctid FROM t ORDER BY x"),
        vec![
            vec![v("1"), v("(0,1)")],
            vec![v("2"), v("(0,2)")],
            vec![v("3"), v("(0,3)")],
        ]
    );
}

#[test]
fn sequence_values_survive_reopen_and_are_never_handed_out_twice() {
    let mut h = Harness::new();
    let a = h.session();
    let b = h.session();
    h.ok(a, "CREATE SEQUENCE s");
    h.ok(a, "CREATE TABLE t (id serial PRIMARY KEY, v int)");
    // A SELECT that draws a value commits it, like PostgreSQL's nextval writes WAL.
    assert_eq!(h.rows(a, "SELECT nextval('s')"), vec![vec![v("1")]]);
    // Two open transactions draw distinct values; the later draw commits first.
    h.ok(a, "BEGIN");
    h.ok(b, "BEGIN");
    h.ok(a, "INSERT INTO t (v) VALUES (1)");
    h.ok(b, "INSERT INTO t (v) VALUES (2)");
    h.ok(b, "COMMIT");
    h.ok(a, "COMMIT");
    // A rolled-back draw is not taken back, and the next commit of anyone records it.
    h.ok(a, "BEGIN");
    assert_eq!(h.rows(a, "SELECT nextval('s')"), vec![vec![v("2")]]);
    h.ok(a, "ROLLBACK");
    h.ok(b, "CREATE TABLE other (x int)");
    h.reopen();
    let c = h.session();
    assert_eq!(h.rows(c, "SELECT nextval('s')"), vec![vec![v("3")]]);
    h.ok(c, "INSERT INTO t (v) VALUES (3)");
    assert_eq!(
        h.rows(c, "SELECT id, v FROM t ORDER BY id"),
        vec![
            vec![v("1"), v("1")],
            vec![v("2"), v("2")],
            vec![v("3"), v("3")],
        ]
    );
    // A dropped sequence's value goes with it: a new one of the same name starts over.
    h.ok(c, "DROP SEQUENCE s");
    h.ok(c, "CREATE SEQUENCE s");
    h.reopen();
    let d = h.session();
    assert_eq!(h.rows(d, "SELECT nextval('s')"), vec![vec![v("1")]]);
    assert_eq!(h.err(d, "SELECT currval('t_id_seq')"), "55000");
    // DROP TABLE drops the serial column's sequence.
    h.ok(d, "DROP TABLE t");
    assert_eq!(h.err(d, "SELECT nextval('t_id_seq')"), "42P01");
}

#[test]
fn a_sequence_created_in_an_open_transaction_keeps_its_value_when_others_commit_first() {
    let mut h = Harness::new();
    let a = h.session();
    let b = h.session();
    h.ok(a, "BEGIN");
    h.ok(a, "CREATE SEQUENCE mine START 40");
    assert_eq!(
        h.rows(a, "SELECT nextval('mine'), nextval('mine')"),
        vec![vec![v("40"), v("41")]]
    );
    h.ok(b, "CREATE TABLE other (x int)");
    h.ok(a, "COMMIT");
    h.reopen();
    let c = h.session();
    assert_eq!(h.rows(c, "SELECT nextval('mine')"), vec![vec![v("42")]]);
}

#[test]
fn a_select_that_draws_a_value_commits_it() {
    let mut h = Harness::new();
    let a = h.session();
    h.ok(a, "CREATE SEQUENCE s");
    assert_eq!(h.rows(a, "SELECT nextval('s')"), vec![vec![v("1")]]);
    // No other commit before the restart.
    h.reopen();
    let b = h.session();
    assert_eq!(h.rows(b, "SELECT nextval('s')"), vec![vec![v("2")]]);
}

#[test]
fn sequence_values_a_failed_commit_carried_are_written_by_the_next() {
    let mut h = Harness::new();
    let a = h.session();
    let b = h.session();
    h.ok(a, "CREATE TABLE t (id serial PRIMARY KEY)");
    h.ok(a, "CREATE TABLE other (x int)");
    h.ok(a, "BEGIN");
    h.ok(a, "INSERT INTO t DEFAULT VALUES");
    // b's commit carries t_id_seq's value (drawn by a) and fails.
    h.now += 1;
    let r = h
        .engine
        .query(&h.kv, b, "INSERT INTO other VALUES (1)", h.now);
    assert!(r.commit.is_some(), "auto-commit produced a batch");
    let r = h.engine.commit_finished(
        &h.kv,
        b,
        Err(CommitFailure {
            fenced: false,
            transient: true,
            message: "store unavailable".into(),
        }),
    );
    assert_eq!(r.error.map(|e| e.code), Some("58030".to_string()));
    h.ok(a, "COMMIT");
    h.reopen();
    let c = h.session();
    assert_eq!(
        h.rows(c, "INSERT INTO t DEFAULT VALUES RETURNING id"),
        vec![vec![v("2")]]
    );
}

/// ADD PRIMARY KEY moves the rows from their row ids to their key: a snapshot from before the
/// change never reads by the new key a row it cannot find there (40001 instead), a concurrent
/// insert into the table makes the ALTER's commit fail, and after a restart the rows are found
/// by key, and an update or delete by key reaches them.
#[test]
fn add_primary_key_moves_rows_under_their_key() {
    let mut h = Harness::new();
    let a = h.session();
    let b = h.session();
    h.ok(a, "CREATE TABLE t (id BIGINT, v TEXT)");
    h.ok(
        a,
        "INSERT INTO t VALUES (1, 'one'), (2, 'two'), (3, 'three')",
    );
    h.ok(b, "BEGIN TRANSACTION ISOLATION LEVEL REPEATABLE READ");
    assert_eq!(h.rows(b, "SELECT count(*) FROM t"), vec![vec![v("3")]]);
    h.ok(a, "ALTER TABLE t ADD PRIMARY KEY (id)");
    match h.q(b, "SELECT v FROM t WHERE id = 2") {
        r if r.error.is_none() => match r.outputs.last() {
            Some(Output::Rows { rows, .. }) => assert_eq!(rows.to_strings(), vec![vec![v("two")]]),
            other => panic!("expected rows, got {other:?}"),
        },
        r => assert_eq!(r.error.map(|e| e.code).as_deref(), Some("40001")),
    }
    h.ok(b, "ROLLBACK");
    assert_eq!(
        h.rows(b, "SELECT v FROM t WHERE id = 2"),
        vec![vec![v("two")]]
    );
    h.unique_violation(
        b,
        "INSERT INTO t VALUES (3, 'again')",
        "t_pkey",
        "Key (id)=(3) already exists.",
    );

    // A row inserted while the ALTER's transaction was open was neither checked nor moved.
    h.ok(a, "CREATE TABLE u (id BIGINT)");
    h.ok(a, "INSERT INTO u VALUES (1)");
    h.ok(a, "BEGIN");
    h.ok(a, "ALTER TABLE u ADD PRIMARY KEY (id)");
    h.ok(b, "INSERT INTO u VALUES (1)");
    assert_eq!(h.err(a, "COMMIT"), "40001");
    assert_eq!(h.rows(b, "SELECT count(*) FROM u"), vec![vec![v("2")]]);

    h.reopen();
    let c = h.session();
    assert_eq!(
        h.rows(c, "SELECT v FROM t WHERE id = 3"),
        vec![vec![v("three")]]
    );
    h.ok(c, "UPDATE t SET v = 'deux' WHERE id = 2");
    h.ok(c, "DELETE FROM t WHERE id = 1");
    assert_eq!(
        h.rows(c, "SELECT id, v FROM t ORDER BY id"),
        vec![vec![v("2"), v("deux")], vec![v("3"), v("three")]]
    );
    let report = rocklake_core::verify::verify(&mut h.engine, &h.kv).expect("verify");
    assert!(report.violations.is_empty(), "{:?}", report.violations);
}

/// A snapshot `pg_export_snapshot()` named stays pinned (garbage collection and excision keep
/// what it reads) while the exporting transaction is open, even under READ COMMITTED, whose
/// own statements pin nothing; an importer then reads it.
#[test]
fn an_exported_snapshot_is_pinned_while_its_exporter_is_open() {
    let mut h = Harness::new();
    let (a, b, c) = (h.session(), h.session(), h.session());
    h.ok(a, "CREATE TABLE t (x int)");
    h.ok(a, "INSERT INTO t VALUES (1)");
    h.ok(a, "BEGIN");
    let id = h.rows(a, "SELECT pg_export_snapshot()")[0][0]
        .clone()
        .expect("an id");
    let pinned = h
        .engine
        .oldest_pinned_snapshot()
        .expect("pinned by the export");
    h.ok(b, "INSERT INTO t VALUES (2)");
    h.ok(b, "INSERT INTO t VALUES (3)");
    assert_eq!(h.engine.oldest_pinned_snapshot(), Some(pinned));
    h.ok(c, "BEGIN ISOLATION LEVEL REPEATABLE READ");
    h.ok(c, &format!("SET TRANSACTION SNAPSHOT '{id}'"));
    assert_eq!(
        h.rows(c, "SELECT count(*) FROM t"),
        vec![vec![Some("1".into())]]
    );
    h.ok(c, "COMMIT");
    h.ok(a, "COMMIT");
    assert_eq!(h.engine.oldest_pinned_snapshot(), None);
    h.ok(c, "BEGIN ISOLATION LEVEL REPEATABLE READ");
    let gone = h.q(c, &format!("SET TRANSACTION SNAPSHOT '{id}'"));
    assert_eq!(gone.error.expect("the exporter ended").code, "22023");
}

/// Comments (`COMMENT ON`, decision 0032) are stored with their objects: they survive a
/// restart, the built-in schema `public` keeps one schema row, and a comment on a schema
/// another transaction dropped meanwhile, or on a table another changed, fails its commit
/// (40001) rather than bringing the schema back or losing the other change.
#[test]
fn comments_are_durable_and_conflict_like_definitions() {
    let mut h = Harness::new();
    let a = h.session();
    h.ok(a, "CREATE SCHEMA sc");
    h.ok(a, "CREATE TABLE sc.t (x int PRIMARY KEY, y text)");
    h.ok(a, "COMMENT ON TABLE sc.t IS 'table'");
    h.ok(a, "COMMENT ON COLUMN sc.t.y IS 'column'");
    h.ok(a, "COMMENT ON INDEX sc.t_pkey IS 'index'");
    h.ok(a, "COMMENT ON SCHEMA sc IS 'schema'");
    h.ok(a, "COMMENT ON SCHEMA public IS 'mine'");
    let described = "SELECT objsubid, description FROM pg_description ORDER BY description";
    let want = vec![
        vec![v("2"), v("column")],
        vec![v("0"), v("index")],
        vec![v("0"), v("mine")],
        vec![v("0"), v("reserved schema for TOAST tables")],
        vec![v("0"), v("schema")],
        vec![v("0"), v("system catalog schema")],
        vec![v("0"), v("table")],
    ];
    assert_eq!(h.rows(a, described), want);
    h.reopen();
    let (a, b) = (h.session(), h.session());
    assert_eq!(h.rows(a, described), want, "after a restart");
    assert_eq!(
        h.rows(
            a,
            "SELECT count(*) FROM pg_namespace WHERE nspname = 'public'"
        ),
        vec![vec![v("1")]]
    );

    // A schema dropped while another transaction comments on it.
    let b2 = h.session();
    h.ok(b2, "BEGIN");
    h.ok(b2, "COMMENT ON SCHEMA sc IS 'late'");
    h.ok(a, "DROP SCHEMA sc CASCADE");
    assert_eq!(h.err(b2, "COMMIT"), "40001");
    assert_eq!(
        h.rows(a, "SELECT count(*) FROM pg_namespace WHERE nspname = 'sc'"),
        vec![vec![v("0")]],
        "the dropped schema stays dropped"
    );

    // The same while the DROP (and a CREATE of the same name) is still in flight: the
    // comment's commit must not bring back the old schema under its old OID.
    h.ok(a, "CREATE SCHEMA sc");
    h.ok(b2, "BEGIN");
    h.ok(b2, "COMMENT ON SCHEMA sc IS 'late'");
    h.ok(a, "BEGIN");
    h.ok(a, "DROP SCHEMA sc");
    h.ok(a, "CREATE SCHEMA sc");
    let planned = h.engine.query(&h.kv, a, "COMMIT", 100);
    let batch = planned.commit.expect("the DROP and CREATE are planned");
    let late = h.engine.query(&h.kv, b2, "COMMIT", 101);
    assert!(
        late.commit.is_none(),
        "the comment must not be planned beside it"
    );
    assert_eq!(late.error.map(|e| e.code).as_deref(), Some("40001"));
    h.kv.apply(&batch);
    let done = h.engine.commit_finished(&h.kv, a, Ok(()));
    assert!(done.error.is_none(), "{:?}", done.error);
    assert_eq!(
        h.rows(
            a,
            "SELECT obj_description('sc'::regnamespace, 'pg_namespace')"
        ),
        vec![vec![None]]
    );

    // A writer of rows does not conflict with a comment on its table, committed or in
    // flight (PostgreSQL's COMMENT does not block writers); an ALTER still fails it.
    h.ok(a, "CREATE TABLE w (x int PRIMARY KEY, y text)");
    h.ok(a, "INSERT INTO w VALUES (1, 'a')");
    h.ok(b, "BEGIN");
    h.ok(b, "INSERT INTO w VALUES (2, 'b')");
    h.ok(b, "UPDATE w SET y = 'c' WHERE x = 1");
    h.ok(a, "COMMENT ON TABLE w IS 'commented'");
    h.ok(a, "COMMENT ON COLUMN w.y IS 'commented too'");
    h.ok(b, "DELETE FROM w WHERE x = 2");
    h.ok(b, "INSERT INTO w VALUES (3, 'd')");
    h.ok(b, "COMMIT");
    h.ok(b, "BEGIN");
    h.ok(b, "INSERT INTO w VALUES (4, 'e')");
    h.ok(a, "BEGIN");
    h.ok(a, "COMMENT ON INDEX w_pkey IS 'in flight'");
    let planned = h.engine.query(&h.kv, a, "COMMIT", 200);
    let batch = planned.commit.expect("the comment is planned");
    let writer = h.engine.query(&h.kv, b, "COMMIT", 201);
    assert!(writer.error.is_none(), "{:?}", writer.error);
    h.kv.apply(&batch);
    let done = h.engine.commit_finished(&h.kv, a, Ok(()));
    assert!(done.error.is_none(), "{:?}", done.error);
    if let Some(batch) = writer.commit {
        h.kv.apply(&batch);
        let done = h.engine.commit_finished(&h.kv, b, Ok(()));
        assert!(done.error.is_none(), "{:?}", done.error);
    }
    assert_eq!(
        h.rows(a, "SELECT x, y FROM w ORDER BY x"),
        vec![
            vec![v("1"), v("c")],
            vec![v("3"), v("d")],
            vec![v("4"), v("e")]
        ]
    );
    // Rows written, a comment committed by another, then a comment of one's own on the
    // table as it is now: planned against the commented definition, it commits.
    h.ok(b, "BEGIN");
    h.ok(b, "INSERT INTO w VALUES (7, 'h')");
    h.ok(a, "COMMENT ON TABLE w IS 'by a'");
    h.ok(b, "COMMENT ON COLUMN w.x IS 'by b'");
    h.ok(b, "COMMIT");
    assert_eq!(
        h.rows(
            a,
            "SELECT obj_description('w'::regclass, 'pg_class'), col_description('w'::regclass, 1)"
        ),
        vec![vec![v("by a"), v("by b")]]
    );
    h.ok(a, "DELETE FROM w WHERE x = 7");
    h.ok(b, "BEGIN");
    h.ok(b, "INSERT INTO w VALUES (5, 'f')");
    h.ok(a, "ALTER TABLE w ADD COLUMN z int");
    assert_eq!(h.err(b, "COMMIT"), "40001", "an ALTER still conflicts");
    h.reopen();
    let (a, b) = (h.session(), h.session());
    h.ok(b, "BEGIN");
    h.ok(b, "INSERT INTO w VALUES (6, 'g', NULL)");
    h.ok(a, "COMMENT ON COLUMN w.z IS 'after a restart'");
    h.ok(b, "COMMIT");

    // Two comments on one table: the later commit fails.
    h.ok(a, "CREATE TABLE u (x int)");
    h.ok(a, "BEGIN");
    h.ok(a, "COMMENT ON TABLE u IS 'first'");
    h.ok(b, "COMMENT ON TABLE u IS 'second'");
    assert_eq!(h.err(a, "COMMIT"), "40001");
    assert_eq!(
        h.rows(b, "SELECT obj_description('u'::regclass, 'pg_class')"),
        vec![vec![v("second")]]
    );
}

#[test]
fn a_writer_meeting_an_index_still_in_flight_gets_40001_and_one_after_it_commits() {
    // Group commit: CREATE INDEX's batch is not durable yet when a writer of the table plans
    // its own; that writer's entries would follow the definition without the index.
    let mut h = Harness::new();
    let a = h.session();
    let b = h.session();
    h.ok(a, "CREATE TABLE t (id BIGINT PRIMARY KEY, k BIGINT)");
    h.ok(a, "INSERT INTO t VALUES (1, 10), (2, 20)");
    h.ok(b, "BEGIN");
    h.ok(b, "INSERT INTO t VALUES (3, 10)");
    h.ok(a, "BEGIN");
    h.ok(a, "CREATE INDEX t_k ON t (k)");
    let ra = h.engine.query(&h.kv, a, "COMMIT", 10);
    let batch = ra.commit.expect("the index's commit is planned");
    let rb = h.engine.query(&h.kv, b, "COMMIT", 11);
    assert!(
        rb.commit.is_none(),
        "b must not be planned beside the index"
    );
    assert_eq!(rb.error.map(|e| e.code).as_deref(), Some("40001"));
    h.kv.apply(&batch);
    let done = h.engine.commit_finished(&h.kv, a, Ok(()));
    assert!(done.error.is_none(), "{:?}", done.error);
    // Once it is durable, a writer that began before it commits, with the index's entries.
    h.ok(b, "BEGIN");
    h.ok(b, "INSERT INTO t VALUES (3, 10)");
    h.ok(a, "CREATE INDEX t_k2 ON t (k, id)");
    h.ok(b, "COMMIT");
    assert_eq!(
        h.rows(a, "SELECT id FROM t WHERE k = 10 ORDER BY id"),
        vec![vec![v("1")], vec![v("3")]]
    );
    let report = rocklake_core::verify::verify(&mut h.engine, &h.kv).expect("verify");
    assert!(report.violations.is_empty(), "{:?}", report.violations);
}

#[test]
fn concurrent_relations_may_not_share_an_index_name() {
    // PostgreSQL's later commit meets the first one's pg_class row.
    let mut h = Harness::new();
    let a = h.session();
    let b = h.session();
    h.ok(a, "CREATE TABLE x (c INT)");
    h.ok(a, "CREATE TABLE y (c INT PRIMARY KEY)");
    let detail = |name: &str| format!("Key (relname, relnamespace)=({name}, 2200) already exists.");
    // Two indexes of one name on two tables.
    h.ok(a, "BEGIN");
    h.ok(b, "BEGIN");
    h.ok(a, "CREATE INDEX foo ON x (c)");
    h.ok(b, "CREATE INDEX foo ON y (c)");
    h.ok(a, "COMMIT");
    h.unique_violation(b, "COMMIT", "pg_class_relname_nsp_index", &detail("foo"));
    // An index and a table; a renamed index and a primary key's.
    h.ok(a, "BEGIN");
    h.ok(b, "BEGIN");
    h.ok(a, "CREATE INDEX bar ON x (c)");
    h.ok(b, "CREATE TABLE bar (z INT)");
    h.ok(b, "COMMIT");
    h.unique_violation(a, "COMMIT", "pg_class_relname_nsp_index", &detail("bar"));
    h.ok(a, "BEGIN");
    h.ok(b, "BEGIN");
    h.ok(a, "ALTER INDEX foo RENAME TO baz");
    h.ok(b, "ALTER INDEX y_pkey RENAME TO baz");
    h.ok(a, "COMMIT");
    h.unique_violation(b, "COMMIT", "pg_class_relname_nsp_index", &detail("baz"));
    assert_eq!(
        h.rows(a, "SELECT relname FROM pg_class WHERE relname IN ('foo', 'bar', 'baz', 'y_pkey') ORDER BY 1"),
        vec![vec![v("bar")], vec![v("baz")], vec![v("y_pkey")]]
    );
}

#[test]
fn a_renamed_table_frees_its_name_for_the_same_transaction() {
    let mut h = Harness::new();
    let a = h.session();
    h.ok(a, "CREATE TABLE t (x INT PRIMARY KEY)");
    h.ok(a, "CREATE TABLE u (y INT)");
    h.ok(a, "INSERT INTO t VALUES (1)");
    h.ok(a, "BEGIN");
    h.ok(a, "ALTER TABLE t RENAME TO t_old");
    h.ok(a, "CREATE TABLE t (id INT)");
    h.ok(a, "COMMIT");
    // Two names swapped through a third.
    h.ok(a, "BEGIN");
    h.ok(a, "ALTER TABLE t RENAME TO tmp");
    h.ok(a, "ALTER TABLE u RENAME TO t");
    h.ok(a, "ALTER TABLE tmp RENAME TO u");
    h.ok(a, "COMMIT");
    assert_eq!(h.rows(a, "SELECT count(*) FROM t_old"), vec![vec![v("1")]]);
    assert_eq!(
        h.rows(
            a,
            "SELECT relname, relnatts FROM pg_class WHERE relname IN ('t', 'u', 't_old') ORDER BY 1"
        ),
        vec![
            vec![v("t"), v("1")],
            vec![v("t_old"), v("1")],
            vec![v("u"), v("1")]
        ]
    );
    assert_eq!(
        h.rows(
            a,
            "SELECT attname FROM pg_attribute WHERE attrelid = 't'::regclass AND attnum > 0"
        ),
        vec![vec![v("y")]]
    );
}
