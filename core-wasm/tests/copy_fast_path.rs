//! Binary COPY of a filtered projection of one table is encoded straight from the scanned
//! rows (`Executor::copy_simple_scan`). It must give the same bytes as running the query and
//! encoding its rows: a `LIMIT` larger than any result makes the same statement take the
//! general path, so random tables, histories and statements are compared both ways.

mod common;

use proptest::prelude::*;

use common::{copy_of as copy_out, run_ok as run};

#[derive(Debug, Clone)]
enum Change {
    Insert(i64, i64, Option<String>),
    Update(i64, i64),
    Delete(i64),
}

fn change() -> impl Strategy<Value = Change> {
    prop_oneof![
        (0i64..60, 0i64..5, proptest::option::of("[a-c]{0,3}"))
            .prop_map(|(id, g, s)| Change::Insert(id, g, s)),
        (0i64..60, 0i64..5).prop_map(|(id, g)| Change::Update(id, g)),
        (0i64..60).prop_map(Change::Delete),
    ]
}

/// Select lists and filters over `t (id BIGINT PRIMARY KEY, g BIGINT, s TEXT, f DOUBLE, b BOOLEAN)`
/// (indexed by nothing but its key) and `ducklake_data_file` (indexed by `table_id`).
fn statement() -> impl Strategy<Value = String> {
    let cols = prop_oneof![
        Just("id, g, s"),
        Just("s, id, s"),
        Just("ctid, id"),
        Just("f, b, g"),
        Just("*"),
    ];
    let filter = prop_oneof![
        Just(String::new()),
        (0i64..5).prop_map(|g| format!(" WHERE g = {g}")),
        (0i64..60).prop_map(|i| format!(" WHERE id = {i}")),
        (0i64..60).prop_map(|i| format!(" WHERE id >= '{i}' AND s IS NOT NULL")),
        Just(" WHERE s LIKE 'a%' OR g IS NULL".to_string()),
        (0i64..5).prop_map(|g| format!(" WHERE g <> {g} AND b")),
    ];
    let df = (0i64..5, 0i64..9).prop_map(|(t, snap)| {
        format!(
            "SELECT data_file_id, path, table_id FROM \"public\".ducklake_data_file \
             WHERE table_id = '{t}' AND begin_snapshot <= '{snap}'"
        )
    });
    prop_oneof![
        (cols, filter).prop_map(|(c, f)| format!("SELECT {c} FROM \"public\".t{f}")),
        df.clone(),
        // DuckDB's wrapping of a statement in a derived table.
        df.prop_map(|q| format!(
            "SELECT \"path\", \"data_file_id\" FROM ({q}) AS __unnamed_subquery"
        )),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn the_fast_path_gives_the_bytes_of_the_general_path(
        changes in proptest::collection::vec(change(), 0..80),
        statements in proptest::collection::vec(statement(), 1..6),
    ) {
        let (mut kv, mut e, s) = common::fresh();
        run(&mut e, &mut kv, s, "CREATE TABLE t (id BIGINT PRIMARY KEY, g BIGINT, s TEXT, f DOUBLE PRECISION, b BOOLEAN)");
        run(&mut e, &mut kv, s, "CREATE TABLE ducklake_data_file (data_file_id BIGINT PRIMARY KEY, table_id BIGINT, begin_snapshot BIGINT, path TEXT)");
        for ch in &changes {
            let (a, b) = match ch {
                Change::Insert(id, g, txt) => {
                    let txt = txt.as_ref().map(|t| format!("'{t}'")).unwrap_or_else(|| "NULL".into());
                    (format!("INSERT INTO t VALUES ({id}, {g}, {txt}, {id}.5, {})", id % 2 == 0),
                     format!("INSERT INTO ducklake_data_file VALUES ({id}, {g}, {}, {txt})", id % 9))
                }
                Change::Update(id, g) => (
                    format!("UPDATE t SET g = {g}, s = s || 'u' WHERE id = {id}"),
                    format!("UPDATE ducklake_data_file SET table_id = {g}, begin_snapshot = 8 WHERE data_file_id = {id}"),
                ),
                Change::Delete(id) => (
                    format!("DELETE FROM t WHERE id = {id}"),
                    format!("DELETE FROM ducklake_data_file WHERE data_file_id = {id}"),
                ),
            };
            // A duplicate key fails; the history goes on.
            common::run(&mut e, &mut kv, s, &a);
            common::run(&mut e, &mut kv, s, &b);
        }
        for q in &statements {
            let fast = copy_out(&run(&mut e, &mut kv, s, &format!("COPY ({q}) TO STDOUT (FORMAT binary)")));
            let general = copy_out(&run(&mut e, &mut kv, s, &format!("COPY ({q} LIMIT 1000000) TO STDOUT (FORMAT binary)")));
            prop_assert_eq!(&fast, &general, "{}", q);
        }
    }
}
