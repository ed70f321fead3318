//! Primary-key pushdown: a WHERE clause that fixes leading primary-key columns makes the scan
//! read only those key ranges (counted through the store), with exactly the rows a full scan
//! gives; EXPLAIN says which scan runs.

use std::cell::Cell;

use rocklake_core::api::{KvError, KvPairs, KvRead, Output, Reply, SessionId};
use rocklake_core::memkv::MemKv;
use rocklake_core::Engine;

/// The store, counting every key it hands out.
struct Counting {
    kv: MemKv,
    keys_read: Cell<usize>,
}

impl KvRead for Counting {
    fn scan(&self, start: &[u8], end: &[u8], limit: usize) -> Result<KvPairs, KvError> {
        let r = self.kv.scan(start, end, limit)?;
        self.keys_read.set(self.keys_read.get() + r.len());
        Ok(r)
    }
    fn get(&self, key: &[u8]) -> Result<Option<Vec<u8>>, KvError> {
        self.keys_read.set(self.keys_read.get() + 1);
        self.kv.get(key)
    }
}

struct H {
    kv: Counting,
    engine: Engine,
    s: SessionId,
}

impl H {
    fn new() -> H {
        let kv = Counting {
            kv: MemKv::new(),
            keys_read: Cell::new(0),
        };
        let mut engine = Engine::open(&kv).expect("open");
        let s = engine.open_session("t", "lake");
        let mut h = H { kv, engine, s };
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
        let mut r = self.engine.query(&self.kv, self.s, sql, 1);
        let mut outputs = std::mem::take(&mut r.outputs);
        while let Some(batch) = r.commit.take() {
            self.kv.kv.apply(&batch);
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

    /// Rows of the last result, and how many keys the statement read.
    fn rows(&mut self, sql: &str) -> (Vec<Vec<Option<String>>>, usize) {
        self.kv.keys_read.set(0);
        let out = self.ok(sql);
        let n = self.kv.keys_read.get();
        match out.last() {
            Some(Output::Rows { rows, .. }) => (
                rows.iter()
                    .map(|r| {
                        r.iter()
                            .map(|c| c.as_ref().map(|b| String::from_utf8_lossy(b).into_owned()))
                            .collect()
                    })
                    .collect(),
                n,
            ),
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
