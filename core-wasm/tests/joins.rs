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
                .to_vecs()
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
    // A grouped column read in HAVING, after columns nothing reads.
    assert_eq!(
        h.rows(
            "SELECT c.label, count(*) FROM a JOIN c ON c.id = a.id GROUP BY c.label \
             HAVING c.label <> 'two' ORDER BY 1"
        ),
        ["four|1", "one|1", "three|1"]
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

#[test]
fn where_conditions_filter_join_inputs_without_changing_results() {
    let mut h = H::new();
    // A condition on the nullable side of a LEFT JOIN must see the padded rows: filtering b
    // before the join would pad every a row and return all four.
    assert_eq!(
        h.rows("SELECT a.id FROM a LEFT JOIN b ON b.a_id = a.id WHERE b.id IS NULL ORDER BY a.id"),
        ["4"]
    );
    assert_eq!(
        h.rows(
            "SELECT a.id, b.id FROM a LEFT JOIN b ON b.a_id = a.id \
             WHERE coalesce(b.tag, 'none') <> 'x' ORDER BY a.id, b.id"
        ),
        ["1|11", "4|-"]
    );
    // Conditions on the preserved side, on each inner side, one spanning two items, an OR
    // within one item, and a comma join whose only link is in WHERE.
    assert_eq!(
        h.rows(
            "SELECT a.id, b.id FROM a LEFT JOIN b ON b.a_id = a.id \
             WHERE a.tag = 'x' ORDER BY a.id, b.id"
        ),
        ["1|10", "1|11", "1|12", "3|14"]
    );
    assert_eq!(
        h.rows(
            "SELECT a.id, b.id, c.label FROM a JOIN b ON b.a_id = a.id JOIN c ON c.id = a.id \
             WHERE (b.n < 2 OR b.n > 4) AND c.label <> 'three' AND a.w > b.n * 5 \
             ORDER BY a.id, b.id"
        ),
        ["1|10|one"]
    );
    assert_eq!(
        h.rows("SELECT a.id, c.label FROM a, c WHERE c.label IN ('two', 'four') AND a.id = c.id"),
        ["2|two", "4|four"]
    );
    // Heap order of the joined rows is kept when inputs are filtered early.
    assert_eq!(
        h.rows("SELECT b.id, c.label FROM b, c WHERE c.id = 2 AND b.tag = 'x'"),
        ["10|two", "12|two", "13|two", "14|two", "15|two"]
    );
}

/// The same query over the catalogs themselves and over derived tables of them: a virtual
/// relation read directly builds only the rows its join keys or constant conditions can use,
/// which must not change the result.
#[test]
fn catalog_rows_built_for_a_join_are_the_rows_it_needs() {
    let mut h = H::new();
    h.rows("CREATE TABLE \"Mixed\" (k INTEGER PRIMARY KEY, v BOOLEAN, t TEXT NOT NULL)");
    let wrap = |sql: &str| {
        let mut out = sql.to_string();
        for rel in [
            "pg_class",
            "pg_namespace",
            "pg_attribute",
            "pg_type",
            "pg_constraint",
        ] {
            let derived = format!("(SELECT * FROM {rel}) AS");
            for (pat, alias) in [
                (format!("FROM {rel}\n"), format!("{rel}\n")),
                (format!("FROM {rel} t\n"), "t\n".to_string()),
                (format!("JOIN {rel} ON"), format!("{rel} ON")),
                (format!("JOIN {rel} t ON"), "t ON".to_string()),
                (format!("JOIN {rel} type_ns ON"), "type_ns ON".to_string()),
            ] {
                let verb = &pat[..pat.find(' ').unwrap_or(0)];
                out = out.replace(&pat, &format!("{verb} {derived} {alias}"));
            }
        }
        assert_ne!(out, sql, "nothing wrapped in {sql}");
        out
    };
    // DuckDB's per-table column query (its postgres scanner), for a table with a primary
    // key, a table without, the quoted one, a primary-key index and a virtual catalog.
    let duckdb = |rel: &str| {
        format!(
            "SELECT pg_namespace.oid AS namespace_id, relname, relpages, attname, \
             pg_type.typname type_name, atttypmod type_modifier, pg_attribute.attndims ndim, \
             attnum, pg_attribute.attnotnull AS notnull, NULL constraint_id, \
             NULL constraint_type, NULL constraint_key, type_ns.nspname AS type_schema\n\
             FROM pg_class\n\
             JOIN pg_namespace ON relnamespace = pg_namespace.oid\n\
             JOIN pg_attribute ON pg_class.oid=pg_attribute.attrelid\n\
             JOIN pg_type ON atttypid=pg_type.oid\n\
             JOIN pg_namespace type_ns ON pg_type.typnamespace = type_ns.oid\n\
             WHERE attnum > 0 AND relkind IN ('r', 'v', 'm', 'f', 'p', 'i') \
             AND pg_namespace.nspname IN ('public', 'pg_catalog') AND relname='{rel}'\n\
             UNION ALL\n\
             SELECT pg_namespace.oid AS namespace_id, relname, NULL relpages, NULL attname, \
             NULL type_name, NULL type_modifier, NULL ndim, NULL attnum, NULL AS notnull, \
             pg_constraint.oid AS constraint_id, contype AS constraint_type, \
             conkey AS constraint_key, NULL AS type_schema\n\
             FROM pg_class\n\
             JOIN pg_namespace ON relnamespace = pg_namespace.oid\n\
             JOIN pg_constraint ON (pg_class.oid=pg_constraint.conrelid)\n\
             WHERE relkind IN ('r', 'v', 'm', 'f', 'p') AND contype IN ('p', 'u') \
             AND relname='{rel}'\n\
             ORDER BY namespace_id, relname, attnum, constraint_id"
        )
    };
    let mut queries: Vec<String> = ["a", "c", "Mixed", "b_pkey", "pg_type"]
        .iter()
        .map(|r| duckdb(r))
        .collect();
    queries.extend(
        [
            // Base types, array types (by OID and by name) and composite row types.
            "SELECT t.oid, t.typname, t.typelem\nFROM pg_type t\n\
             WHERE t.oid IN (16, 23, 1007, 1009) ORDER BY 1",
            "SELECT t.oid, t.typname\nFROM pg_type t\n\
             WHERE t.typname IN ('_int4', 'Mixed', 'pg_class', 'text') ORDER BY 1",
            // pg_class by OID through a join key, pg_attribute by a key list.
            "SELECT pg_class.relname, t.typname\nFROM pg_type t\nJOIN pg_class ON pg_class.oid = t.typrelid \
             WHERE t.typname IN ('a', 'Mixed', 'pg_attribute') ORDER BY 1",
            "SELECT pg_class.relname, t.typname, t.typrelid\nFROM pg_class\n\
             JOIN pg_type t ON t.oid = pg_class.reltype \
             WHERE pg_class.relname IN ('a', 'Mixed', 'pg_attribute') ORDER BY 1",
            // Primary-key indexes in pg_class by OID.
            "SELECT pg_index.indrelid, pg_class.relname\nFROM pg_index\n\
             JOIN pg_class ON pg_class.oid = pg_index.indexrelid ORDER BY 2",
            "SELECT attrelid, attname\nFROM pg_attribute\nWHERE attrelid IN \
             (SELECT oid FROM pg_class WHERE relname IN ('b', 'Mixed')) ORDER BY 1, attnum",
            "SELECT pg_class.relname, pg_attribute.attname\nFROM pg_class\n\
             JOIN pg_attribute ON pg_class.oid=pg_attribute.attrelid \
             WHERE pg_class.oid IN (SELECT attrelid FROM pg_attribute WHERE attname = 'label') \
             ORDER BY 1, 2",
        ]
        .map(String::from),
    );
    for sql in &queries {
        let direct = h.rows(sql);
        assert!(!direct.is_empty(), "{sql}");
        assert_eq!(direct, h.rows(&wrap(sql)), "{sql}");
    }
    // What the direct forms return, spelled out for two of them.
    assert_eq!(
        h.rows(&queries[5]),
        ["16|bool|0", "23|int4|0", "1007|_int4|23", "1009|_text|25"]
    );
    let mixed = h.rows(&duckdb("Mixed"));
    assert_eq!(mixed.len(), 4, "{mixed:?}");
    assert!(mixed[1].contains("|v|bool|"), "{mixed:?}");
}
