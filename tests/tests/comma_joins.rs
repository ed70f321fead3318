//! Comma joins whose WHERE equalities become hash-join keys (`query::push_down_join_keys`),
//! compared with PostgreSQL: NULL keys never match, integer widths and numerics match by
//! value, strings of the text family match, a LEFT JOIN's null side and a later RIGHT JOIN
//! keep their WHERE conditions.

#[test]
fn comma_join_keys_match_postgres() {
    let script = format!(
        "{}{}",
        rocklake_tests::PSYCOPG_HARNESS,
        r#"
for sql in [
    "CREATE TABLE a (id int PRIMARY KEY, k bigint, s text, n numeric)",
    "CREATE TABLE b (id bigint PRIMARY KEY, a_id int, s varchar(5), n int)",
    "CREATE TABLE c (id int PRIMARY KEY, b_id bigint, tag text)",
    "INSERT INTO a VALUES (1, 10, 'x', 1.0), (2, 20, 'y', 2), (3, NULL, NULL, NULL), (4, 10, 'x', 4.5)",
    "INSERT INTO b VALUES (10, 1, 'x', 1), (20, 2, 'y', 2), (30, NULL, NULL, NULL), (40, 1, 'z', 5), (50, 4, 'x', 4)",
    "INSERT INTO c VALUES (1, 10, 'p'), (2, 10, 'q'), (3, 40, 'r'), (4, NULL, 's'), (5, 50, NULL)",
    "SELECT a.id, b.id, c.id FROM a, b, c WHERE a.id = b.a_id AND b.id = c.b_id ORDER BY 1, 2, 3",
    "SELECT a.id, b.id FROM a, b WHERE a.k = b.id ORDER BY 1, 2",
    "SELECT a.id, b.id FROM a, b WHERE b.a_id = a.id AND a.s = b.s ORDER BY 1",
    "SELECT a.id, b.id FROM a, b WHERE a.n = b.n ORDER BY 1",
    "SELECT a.id, b.id FROM a, b WHERE a.s = b.s OR a.id = b.a_id ORDER BY 1, 2",
    "SELECT a.id, b.id FROM a, b WHERE a.id = b.a_id AND b.n > 1 ORDER BY 1, 2",
    "SELECT a.id, b.id, c.id FROM a LEFT JOIN b ON a.id = b.a_id, c WHERE b.id = c.b_id ORDER BY 1, 2, 3",
    "SELECT a.id, b.id, c.id FROM a, b RIGHT JOIN c ON b.id = c.b_id WHERE a.id = b.a_id ORDER BY 1, 2, 3",
    "SELECT a.id, g FROM a, generate_series(1, 3) g WHERE a.id = g ORDER BY 1",
    "SELECT count(*) FROM a, b, c WHERE a.id = b.a_id AND c.b_id = b.id AND c.tag IS NOT NULL",
    "SELECT x.id, y.id FROM a x, a y WHERE x.k = y.k AND x.id < y.id ORDER BY 1, 2",
    "SELECT a.id FROM a, (SELECT a_id FROM b GROUP BY a_id) s WHERE s.a_id = a.id ORDER BY 1",
    "SELECT a.id, b.id FROM a, b WHERE a.id = b.a_id AND a.id = $$2$$::int ORDER BY 2",
]:
    run(sql)
print("RESULT", json.dumps(out))
"#
    );
    let results = rocklake_tests::same_outcomes_as_postgres(&script);
    assert_eq!(results.len(), 19, "every statement compared");
}
