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

/// A plain literal as DuckLake writes them into its bulk INSERTs (read without the parser).
fn plain_value() -> impl Strategy<Value = String> {
    prop_oneof![
        4 => "(\\PC|[';\n\t\u{1}\\\\\"])*".prop_map(|s| format!("'{}'", s.replace('\'', "''"))),
        3 => "-?[0-9]{1,20}(\\.[0-9]{1,6})?",
        2 => prop::sample::select(&["NULL", "null", "TRUE", "false", "False"][..])
            .prop_map(str::to_string),
    ]
}

/// Anything else in a row: the statement must then be parsed (and still give its tree).
const NOT_PLAIN: &[&str] = &[
    "now()",
    "1e5",
    "CAST('1' AS BIGINT)",
    "- 5",
    "1.",
    ".5",
    "E'x'",
    "$1",
    "'a' 'b'",
    "'a'\n'b'",
    "1 -- c\n",
    "NULL::text",
    "+1",
    "-'1'",
    "1_000",
    "(1)",
    "",
];

/// A bulk `INSERT … VALUES` text, its row count, and whether all its values are plain.
fn bulk_insert() -> impl Strategy<Value = (String, usize, bool)> {
    (1usize..8, 20usize..160, any::<bool>())
        .prop_flat_map(|(width, rows, columns)| {
            (
                prop::collection::vec(prop::collection::vec(plain_value(), width), rows),
                prop::collection::vec(prop::sample::select(&[",", ", ", " ,\n", ",\t"][..]), rows),
                prop::option::weighted(
                    0.2,
                    (
                        any::<prop::sample::Index>(),
                        prop::sample::select(NOT_PLAIN),
                    ),
                ),
                Just(columns.then(|| {
                    let names: Vec<String> = (0..width).map(|i| format!("c{i}")).collect();
                    format!(" ({})", names.join(", "))
                })),
            )
        })
        .prop_map(|(mut rows, seps, spoil, columns)| {
            if let Some((at, odd)) = spoil {
                let n = rows.len();
                let row = &mut rows[at.index(n)];
                let w = row.len();
                row[at.index(w)] = odd.to_string();
            }
            let mut sql = format!(
                "INSERT INTO \"public\".ducklake_file_column_stats{} VALUES ",
                columns.unwrap_or_default()
            );
            for (i, (row, sep)) in rows.iter().zip(&seps).enumerate() {
                if i > 0 {
                    sql.push_str(sep);
                }
                sql.push('(');
                sql.push_str(&row.join(sep));
                sql.push(')');
            }
            (sql, rows.len(), spoil.is_none())
        })
}

/// The other statements of a DuckLake commit string (one of them a syntax error).
const SHORT: &[(&str, bool)] = &[
    (
        "UPDATE ducklake_table_stats SET record_count = 5 WHERE table_id = 1",
        true,
    ),
    ("SELECT 'a;b', \"c;d\" FROM t", true),
    (
        "DELETE FROM ducklake_data_file WHERE data_file_id IN (1, 2)",
        true,
    ),
    (
        "INSERT INTO ducklake_snapshot VALUES (3, NOW(), 1, 2, 3)",
        true,
    ),
    ("SELEC 1", false),
];

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// Long texts are split into statements and their bulk rows read without the parser
    /// (longtext.rs): the trees (or the error) must be parsing's own.
    #[test]
    fn long_commit_texts_get_the_trees_parsing_gives(
        pieces in prop::collection::vec(
            prop_oneof![
                3 => bulk_insert().prop_map(|(s, rows, plain)| (s, Some(rows), plain)),
                1 => prop::sample::select(SHORT).prop_map(|(s, ok)| (s.to_string(), None, ok)),
            ],
            1..5,
        ),
        seps in prop::collection::vec(prop::sample::select(&[";", ";\n", "; ;", ";;", " ;\n\t"][..]), 5),
    ) {
        let mut sql = String::new();
        for (i, (piece, _, _)) in pieces.iter().enumerate() {
            sql.push_str(piece);
            sql.push_str(seps[i]);
        }
        let mut cache = ParseCache::default();
        assert_same_as_parsing(&mut cache, &sql)?;
        let s = cache.stats();
        if sql.len() > 4096 && pieces.iter().all(|(_, _, plain)| *plain) {
            // A statement is the text between semicolons: a piece with the whitespace the
            // separator before it leaves and the whitespace before its own separator's
            // semicolon (longtext keeps both).
            let rows: usize = pieces
                .iter()
                .enumerate()
                .filter(|(i, (piece, _, _))| {
                    let lead = match i.checked_sub(1) {
                        Some(j) => seps[j].rsplit(';').next().map_or(0, str::len),
                        None => 0,
                    };
                    let trail = seps[*i].split(';').next().map_or(0, str::len);
                    lead + piece.len() + trail > 4096
                })
                .filter_map(|(_, (_, rows, _))| *rows)
                .sum();
            prop_assert_eq!(s.long_texts, 1, "{:?}", s);
            prop_assert_eq!(s.rows_read, rows as u64, "{:?}", s);
        }
    }
}
