//! Joins: hash candidates with residual ON conditions, LEFT JOIN padding, several matches per
//! row, and the column pruning of joined rows (columns nothing reads are dropped early) —
//! including columns read only by a correlated subquery, ORDER BY, GROUP BY or HAVING.

use rocklake_core::api::{Output, Reply, SessionId};
use rocklake_core::memkv::MemKv;
use rocklake_core::Engine;

struct H {
    kv: MemKv,
    engine: Engine,
    s: SessionId,
}

impl H {
    fn new() -> H {
        let kv = MemKv::new();
        let mut engine = Engine::open(&kv).expect("open");
        let s = engine.open_session("t", "lake");
        let mut h = H { kv, engine, s };
        for sql in [
            "CREATE TABLE a (id BIGINT PRIMARY KEY, tag VARCHAR, w BIGINT)",
            "CREATE TABLE b (id BIGINT PRIMARY KEY, a_id BIGINT, tag VARCHAR, n BIGINT)",
            "CREATE TABLE c (id BIGINT PRIMARY KEY, label VARCHAR)",
            "INSERT INTO a VALUES (1, 'x', 10), (2, 'y', 20), (3, 'x', 30), (4, NULL, 40)",
            "INSERT INTO b VALUES (10, 1, 'x', 1), (11, 1, 'y', 2), (12, 1, 'x', 3), \
             (13, 2, 'x', 4), (14, 3, 'x', 5), (15, NULL, 'x', 6)",
            "INSERT INTO c VALUES (1, 'one'), (2, 'two'), (3, 'three'), (4, 'four')",
        ] {
            h.rows(sql);
        }
        h
    }

    fn q(&mut self, sql: &str) -> Reply {
        let s = self.s;
        let mut r = self.engine.query(&self.kv, s, sql, 1);
        let mut outputs = std::mem::take(&mut r.outputs);
        while let Some(batch) = r.commit.take() {
            self.kv.apply(&batch);
            r = self.engine.commit_finished(&self.kv, s, Ok(()));
            outputs.append(&mut r.outputs);
        }
        r.outputs = outputs;
        r
    }

    /// The last result's rows as `a|b|…` strings (NULL as `-`).
    fn rows(&mut self, sql: &str) -> Vec<String> {
        let r = self.q(sql);
        assert!(r.error.is_none(), "{sql}: {:?}", r.error);
        match r.outputs.last() {
            Some(Output::Rows { rows, .. }) => rows
                .iter()
                .map(|r| {
                    r.iter()
                        .map(|c| match c {
                            Some(b) => String::from_utf8_lossy(b).into_owned(),
                            None => "-".into(),
                        })
                        .collect::<Vec<_>>()
                        .join("|")
                })
                .collect(),
            _ => Vec::new(),
        }
    }
}

#[test]
fn several_matches_per_row_and_a_residual_condition() {
    let mut h = H::new();
    assert_eq!(
        h.rows("SELECT a.id, b.id FROM a JOIN b ON b.a_id = a.id ORDER BY a.id, b.id"),
        ["1|10", "1|11", "1|12", "2|13", "3|14"]
    );
    // The residual (b.tag = a.tag) rejects some hash candidates, among them the last one.
    assert_eq!(
        h.rows(
            "SELECT a.id, b.id FROM a JOIN b ON b.a_id = a.id AND b.tag = a.tag \
             ORDER BY a.id, b.id"
        ),
        ["1|10", "1|12", "3|14"]
    );
}

#[test]
fn left_join_pads_rows_whose_candidates_all_fail() {
    let mut h = H::new();
    // a=1: candidates 10 (x), 11 (y), 12 (x): the last fails after earlier ones matched.
    // a=2: candidate 13 (x) fails its residual: padded. a=3: 14 matches. a=4: no candidate.
    assert_eq!(
        h.rows(
            "SELECT a.id, b.id, a.tag FROM a LEFT JOIN b ON b.a_id = a.id AND b.tag = 'x' \
             AND b.n <> 3 ORDER BY a.id, b.id"
        ),
        ["1|10|x", "2|13|y", "3|14|x", "4|-|-"]
    );
    assert_eq!(
        h.rows(
            "SELECT a.id, b.id, a.w FROM a LEFT JOIN b ON b.a_id = a.id AND b.tag = a.tag \
             ORDER BY a.id, b.id"
        ),
        ["1|10|10", "1|12|10", "2|-|20", "3|14|30", "4|-|40"]
    );
    // The padded left row keeps every column, also after a later join.
    assert_eq!(
        h.rows(
            "SELECT a.id, a.tag, a.w, c.label FROM a LEFT JOIN b ON b.a_id = a.id AND b.n > 100 \
             JOIN c ON c.id = a.id ORDER BY a.id"
        ),
        ["1|x|10|one", "2|y|20|two", "3|x|30|three", "4|-|40|four"]
    );
}

#[test]
fn columns_read_anywhere_survive_pruning() {
    let mut h = H::new();
    // a.tag only inside a correlated subquery.
    assert_eq!(
        h.rows(
            "SELECT a.id, (SELECT count(*) FROM b WHERE b.a_id = a.id AND b.tag = a.tag) \
             FROM a JOIN c ON c.id = a.id ORDER BY a.id"
        ),
        ["1|2", "2|0", "3|1", "4|0"]
    );
    // c.label only in ORDER BY; a.w only in WHERE.
    assert_eq!(
        h.rows("SELECT a.id FROM a JOIN c ON c.id = a.id WHERE a.w >= 20 ORDER BY c.label"),
        ["4", "3", "2"]
    );
    // b.n only in an aggregate, a.tag only in GROUP BY, c.label only in HAVING.
    assert_eq!(
        h.rows(
            "SELECT count(*), sum(b.n) FROM a JOIN b ON b.a_id = a.id JOIN c ON c.id = a.id \
             GROUP BY a.tag HAVING max(c.label) <> 'zzz' ORDER BY 1"
        ),
        ["1|4", "4|11"]
    );
    // A column read only in a later join's condition, and IN (uncorrelated subquery).
    assert_eq!(
        h.rows(
            "SELECT c.label FROM b JOIN a ON a.id = b.a_id JOIN c ON c.id = a.w / 10 \
             WHERE b.id IN (SELECT id FROM b WHERE n < 5) ORDER BY b.id"
        ),
        ["one", "one", "one", "two"]
    );
}

#[test]
fn cross_joins_and_on_without_equality() {
    let mut h = H::new();
    assert_eq!(
        h.rows("SELECT a.id, c.id FROM a JOIN c ON c.id > a.id AND a.id >= 3 ORDER BY 1, 2"),
        ["3|4"]
    );
    assert_eq!(h.rows("SELECT count(*) FROM a CROSS JOIN c"), ["16"]);
    assert_eq!(
        h.rows("SELECT a.id, c.label FROM a LEFT JOIN c ON c.id < a.id - 2 ORDER BY 1, 2"),
        ["1|-", "2|-", "3|-", "4|one"]
    );
}
