//! The parse cache answers texts of a known shape by filling a kept tree with their literals
//! (parsecache.rs). Whatever it answers must be exactly what parsing the text gives: checked
//! for every text DuckDB sent in the recorded traces, and for random literals put into
//! statement shapes DuckDB uses.

mod common;

use proptest::prelude::*;
use rocklake_core::parsecache::ParseCache;

/// Every simple-query text of the recorded traces, in the order DuckDB sent them.
fn traced_queries() -> Vec<String> {
    let mut out = Vec::new();
    for run in ["pg155", "pg155default", "pg155conflict"] {
        for rec in common::trace(run) {
            for msg in rec["front"].as_array().expect("front messages") {
                if msg["type"] == "Query" {
                    out.push(msg["query"].as_str().expect("query text").to_string());
                }
            }
        }
    }
    out
}

/// The cache's answer for `sql` equals parsing it alone (the same trees, or the same error).
fn assert_same_as_parsing(cache: &mut ParseCache, sql: &str) -> Result<(), TestCaseError> {
    let direct = rocklake_core::exec::parse(sql);
    match (direct, cache.parse(sql)) {
        (Ok(d), Ok(c)) => {
            prop_assert_eq!(d.len(), c.len(), "{}", sql);
            for (a, b) in d.iter().zip(c.iter()) {
                prop_assert_eq!(a, &**b, "{}", sql);
            }
        }
        (Err(d), Err(c)) => prop_assert_eq!(d.to_pg(), c.to_pg(), "{}", sql),
        (d, c) => prop_assert!(false, "{sql}: parsed {d:?}, cached {c:?}"),
    }
    Ok(())
}

#[test]
fn every_traced_text_gets_the_tree_parsing_it_gives() {
    let queries = traced_queries();
    assert!(queries.len() > 8_000, "{} texts", queries.len());
    let mut cache = ParseCache::default();
    for round in 0..2 {
        for q in &queries {
            assert_same_as_parsing(&mut cache, q).unwrap_or_else(|e| panic!("round {round}: {e}"));
        }
    }
    let s = cache.stats();
    eprintln!("{} texts twice: {s:?}", queries.len());
    // Most of DuckDB's texts repeat a shape with other literals: they must be filled in, not
    // parsed (and the check above is then about filled-in trees).
    assert!(s.shape_hits > 2_000, "{s:?}");
    assert!(s.templates > 50, "{s:?}");
    assert!(
        s.parses < queries.len() as u64 / 4,
        "{} texts, {s:?}",
        queries.len()
    );
}

/// Statement shapes of DuckDB's DuckLake: `{s}` takes a string literal, `{n}` a number; and
/// whether the cache must fill texts of the shape in (false: the parser keeps a literal
/// outside a value node, or random literals may make the text an error).
const SHAPES: &[(&str, bool)] = &[
    ("SELECT column_id, column_name FROM ducklake_column WHERE table_id = {n} AND column_name = {s} AND {n} >= begin_snapshot ORDER BY column_order", true),
    ("INSERT INTO ducklake_snapshot VALUES ({n}, NOW(), {n}, {n}, {n}); INSERT INTO ducklake_snapshot_changes VALUES ({n}, {s}, {s}, {s}, NULL)", true),
    ("UPDATE ducklake_table_stats SET record_count = {n}, file_size_bytes = {n} WHERE table_id = {n}", true),
    ("SELECT * FROM t WHERE x IN ({s}, {s}) AND ctid >= {s}::tid LIMIT {n}", true),
    ("DELETE FROM ducklake_inlined_data_1_1 WHERE ctid IN ({s}, {s})", true),
    ("SELECT CAST({s} AS BIGINT) + {n}, {s}::date, TIMESTAMP {s}, {s} || {s}, ARRAY[{n}, {n}][{n}]", true),
    ("SET search_path = {s}", true),
    ("SELECT -{n}, - {n}, {n}-{n}, x.\"1\", 1e5, 2.5e3 FROM t WHERE a=7AND b={s}", true),
    ("CREATE TABLE t (a VARCHAR({n}), b BIGINT DEFAULT {n}, c VARCHAR DEFAULT {s})", false),
    ("SELECT {s} {s}", false),
];

fn fill(shape: &str, strs: &[String], nums: &[String]) -> String {
    let (mut s, mut n) = (strs.iter(), nums.iter());
    let mut out = String::new();
    let mut rest = shape;
    while let Some(at) = rest.find('{') {
        out.push_str(&rest[..at]);
        match &rest[at..at + 3] {
            "{s}" => {
                out.push('\'');
                out.push_str(&s.next().expect("string").replace('\'', "''"));
                out.push('\'');
            }
            _ => out.push_str(n.next().expect("number")),
        }
        rest = &rest[at + 3..];
    }
    out.push_str(rest);
    out
}

fn literals() -> impl Strategy<Value = (Vec<String>, Vec<String>)> {
    (
        prop::collection::vec("(\\PC|['\\\\\n\t\u{1}])*", 12),
        prop::collection::vec("[0-9]{1,22}(\\.[0-9]{1,8})?", 12),
    )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn random_literals_in_duckdb_shapes_get_the_tree_parsing_gives(
        (shape, filled_in) in prop::sample::select(SHAPES),
        sets in prop::collection::vec(literals(), 4),
    ) {
        // First text: parsed; second: template built (checked against the first) and filled
        // in; third and fourth: filled in.
        let mut cache = ParseCache::default();
        for (strs, nums) in &sets {
            assert_same_as_parsing(&mut cache, &fill(shape, strs, nums))?;
        }
        if filled_in {
            // Texts after the first are filled in, or answered whole when random literals
            // repeated an earlier text exactly (short strings often do): never parsed again.
            let s = cache.stats();
            prop_assert_eq!(s.parses, 1, "{}: {:?}", shape, s);
            prop_assert_eq!(s.shape_hits + s.exact_hits, 3, "{}: {:?}", shape, s);
        }
    }
}
