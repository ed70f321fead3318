//! COPY's text and CSV formats as PostgreSQL 15 has them: every option (both syntaxes), the
//! CSV quoting rules both ways, headers (`HEADER MATCH` too), line endings, the end-of-copy
//! marker, and the errors with their CONTEXT line (`COPY t, line 3, column b: "x"`), compared
//! with a real PostgreSQL through psycopg; and psql's `\copy` exporting and importing CSV.

use std::process::Command;

use rocklake_tests::{same_outcomes_as_postgres, Postgres, Server};

/// Runs COPY FROM with data and COPY TO statements; prints each outcome (rows written, or the
/// error's SQLSTATE, message, detail, hint and context), then the tables' contents.
const RUNNER: &str = r#"
import sys, json, psycopg
out = []
def err(e):
    d = e.diag
    return ["err", e.sqlstate, d.message_primary, d.message_detail, d.message_hint, d.context]
with psycopg.connect(sys.argv[1], autocommit=True) as c:
    for ddl in [
        "CREATE TABLE c1 (i BIGINT, s VARCHAR, b BOOLEAN)",
        "CREATE TABLE c2 (id INTEGER NOT NULL, name VARCHAR(5), d DOUBLE PRECISION DEFAULT 1.5, t TEXT DEFAULT 'dflt')",
        'CREATE TABLE "Mixed" ("Col A" INTEGER, "q""uote" TEXT)',
        "CREATE TABLE one (v TEXT)",
        "CREATE TABLE z0 ()",
        "CREATE TABLE o (k INTEGER, v TEXT, n NUMERIC(10,2), a INTEGER[], by BYTEA, ts TIMESTAMP)",
        "INSERT INTO o VALUES (1, 'plain', 1.5, '{1,2}', '\\x00ff', '2024-01-02 03:04:05'), (2, 'with,comma', NULL, NULL, NULL, NULL), (3, 'quote\"in', -2, '{}', '\\x', '2000-01-01'), (4, E'new\\nline', 0, '{3}', '\\x41', NULL), (5, '', 7, NULL, NULL, NULL), (6, NULL, NULL, NULL, NULL, NULL)",
    ]:
        c.execute(ddl)
    ins = [
        ("COPY c1 FROM STDIN (FORMAT csv)", '1,hello,t\n2,"a,b",f\n3,,\n4,"",true\n'),
        ("COPY c1 FROM STDIN (FORMAT csv, HEADER)", 'i,s,b\n5,x,t\n'),
        ("COPY c1 FROM STDIN (FORMAT csv, HEADER match)", 'i,s,b\n6,y,f\n'),
        ("COPY c1 FROM STDIN (FORMAT csv, HEADER match)", 'i,z,b\n7,y,f\n'),
        ("COPY c1 FROM STDIN (FORMAT csv, HEADER match)", 'i,s\n'),
        ("COPY c1 FROM STDIN (FORMAT csv, HEADER match)", 'i,,b\n'),
        ("COPY c1 FROM STDIN (FORMAT csv, HEADER 'match')", ''),
        ("COPY c1 FROM STDIN (FORMAT text, HEADER MATCH)", 'i\ts\tb\n8\tt\tt\n'),
        ("COPY c1 FROM STDIN WITH CSV HEADER", 'whatever\n9,legacy,t\n'),
        ("COPY c1 FROM STDIN (FORMAT csv, DELIMITER ';', QUOTE '''', ESCAPE '\\')", "10;'it\\'s';t\n11;'a''b';f\n"),
        ("COPY c1 FROM STDIN (FORMAT csv, FORCE_NOT_NULL (s))", '12,,t\n'),
        ("COPY c1 FROM STDIN (FORMAT csv, FORCE_NULL (s))", '13,"",t\n'),
        ("COPY c1 FROM STDIN (FORMAT csv, FORCE_NULL (s, b), FORCE_NOT_NULL (i))", '14,"",""\n'),
        ("COPY c1 FROM STDIN (FORMAT csv)", '15,"line1\nline2",t\n16,x,t\n'),
        ("COPY c1 FROM STDIN (FORMAT csv)", '17,a,t\r\n18,b,f\r\n'),
        ("COPY c1 FROM STDIN (FORMAT csv)", '19,a,t\n20,b,f\r\n'),
        ("COPY c1 FROM STDIN (FORMAT csv)", '21,a,t\r22,b,f\n'),
        ("COPY c1 FROM STDIN (FORMAT csv)", '23,"abc,t\n'),
        ("COPY c1 FROM STDIN (FORMAT csv)", '24,a,t,extra\n'),
        ("COPY c1 FROM STDIN (FORMAT csv)", '25,a\n'),
        ("COPY c1 FROM STDIN (FORMAT csv)", 'x,a,t\n'),
        ("COPY c1 FROM STDIN (FORMAT csv)", '26,a,maybe\n'),
        ("COPY c1 FROM STDIN (FORMAT csv)", '27,"a\nb\nc",t\n28,x,nope\n'),
        ("COPY c1 FROM STDIN (FORMAT csv)", '29,a,t\n\\.\n30,b,t\n'),
        ("COPY c1 FROM STDIN (FORMAT csv)", '31,"\\.",t\n\\.x,y,z\n'),
        ("COPY c1 FROM STDIN (FORMAT csv)", '32,' + 'y' * 150 + ',bad\n'),
        ("COPY c2 FROM STDIN (FORMAT csv)", ',abc,1,t\n'),
        ("COPY c2 FROM STDIN (FORMAT csv)", '1,toolongname,1,t\n'),
        ("COPY c2 (id, name) FROM STDIN (FORMAT csv)", '1,ab\n2,\n'),
        ("COPY c2 (name, id) FROM STDIN", 'zz\t3\n'),
        ("COPY c2 (id, id) FROM STDIN", ''),
        ("COPY c2 (nope) FROM STDIN", ''),
        ("COPY c1 FROM STDIN (FORMAT csv, FORCE_QUOTE (s))", ''),
        ("COPY c1 FROM STDIN (FORMAT csv, FORCE_QUOTE *)", ''),
        ("COPY c1 FROM STDIN (FORCE_NOT_NULL (s))", ''),
        ("COPY c1 FROM STDIN (FORMAT csv, FORCE_NULL (zz))", ''),
        ("COPY c2 (id) FROM STDIN (FORMAT csv, FORCE_NULL (name))", ''),
        ("COPY c1 FROM STDIN (FORMAT csv, FORCE_NULL s)", ''),
        ("COPY c1 FROM STDIN (FORMAT text, HEADER)", 'i\ts\tb\n33\tq\tt\n'),
        ("COPY c1 FROM STDIN", '34\ta\tt\n\n'),
        ("COPY c1 FROM STDIN", '35\ta\tt\n\\.\n36\tb\tt\n'),
        ("COPY c1 FROM STDIN", '37\ta\\.\n'),
        ("COPY c1 FROM STDIN", '38\ta\tt\n\\.'),
        ("COPY c1 FROM STDIN", '39\ta\tt\r\n40\tb\tt\n'),
        ("COPY c1 FROM STDIN", '41\ta\tt\n42\tb\n'),
        ("COPY c1 FROM STDIN", '43\ta\tt\tmore\n'),
        ("COPY c1 FROM STDIN", '44\t\\x41\\102\\\\\tt\n'),
        ("COPY c1 FROM STDIN", '45\ta\\\nb\tt\n'),
        ("COPY c1 FROM STDIN (FORMAT csv, DELIMITER ',', QUOTE ',')", ''),
        ("COPY c1 FROM STDIN (QUOTE '\"')", ''),
        ("COPY c1 FROM STDIN (ESCAPE '\"')", ''),
        ("COPY c1 FROM STDIN (FORMAT csv, NULL '\"')", ''),
        ("COPY c1 FROM STDIN (FORMAT csv, NULL ',')", ''),
        ("COPY c1 FROM STDIN (HEADER 2)", ''),
        ("COPY c1 FROM STDIN (HEADER on, FORMAT csv)", 'h\n46,on,t\n'),
        ("COPY c1 FROM STDIN (HEADER 0, FORMAT csv)", '47,zero,t\n'),
        ("COPY c1 FROM STDIN (FORMAT 'CSV')", ''),
        ("COPY c1 FROM STDIN (FORMAT 'csv')", '48,quoted format,t\n'),
        ("COPY c1 FROM STDIN (FORMAT csv, HEADER, HEADER false)", ''),
        ("COPY c1 FROM STDIN (FORMAT csv, FORMAT text)", ''),
        ("COPY c1 FROM STDIN (foo 1)", ''),
        ("COPY c1 FROM STDIN (DELIMITER ';;')", ''),
        ("COPY c1 FROM STDIN (DELIMITER)", ''),
        ("COPY c1 FROM STDIN (FREEZE maybe)", ''),
        ("COPY c1 FROM STDIN (FORMAT binary, HEADER)", ''),
        ("COPY c1 FROM STDIN (FORMAT csv, ENCODING 'UTF8')", '49,utf8 ok é,t\n'),
        ("COPY c1 FROM STDIN (ENCODING 'nonsense')", ''),
        ("COPY c1 FROM STDIN (FORMAT csv, QUOTE 'ab')", ''),
        (b"COPY c1 FROM STDIN (FORMAT csv)", b'50,ok,t\n51,\xff\xfe,t\n'),
        (b"COPY c1 FROM STDIN", b'52\t\\377\tt\n'),
        ('COPY "Mixed" FROM STDIN (FORMAT csv, HEADER match)', '"Col A","q""uote"\n1,x\n'),
        ('COPY "Mixed" FROM STDIN (FORMAT csv, HEADER match)', 'Col A,q"uote\n'),
        ("COPY c1 FROM STDIN WITH DELIMITER AS '|' NULL AS 'nil' CSV QUOTE AS '''' FORCE NOT NULL s", "53|nil|t\n54|'nil'|nil\n"),
        ("COPY c1 FROM STDIN CSV FORCE NULL s, b", '55,"",""\n'),
        ("COPY c1 FROM STDIN USING DELIMITERS '|'", '56|delims|t\n'),
        ("COPY c1 FROM STDIN DELIMITERS ','", '57,delims2,f\n'),
        ("COPY one FROM STDIN (FORMAT csv)", '\n"\\."\n\\.\n'),
        ("COPY one FROM STDIN (FORMAT csv, NULL 'N')", '""\nN\n"N"\n'),
        ("COPY one FROM STDIN", '\n\\N\n'),
        ("COPY one FROM STDIN", 'ends in a backslash\\'),
        ("COPY c1 FROM STDIN", '60\tx\\000y\tt\n'),
        ("COPY c1 FROM STDIN", '61\tx\\x00y\tt\n'),
        ("COPY c1 FROM STDIN (FORMAT text, HEADER)", '\\xff\tq\n62\th\tt\n'),
        ("COPY c1 FROM STDIN (FORMAT csv, HEADER)", 'a,"b\n63,h,t\n'),
        ("COPY z0 FROM STDIN", '\n\n'),
        ("COPY z0 FROM STDIN", 'x\n'),
        ("COPY nosuch FROM STDIN (FORMAT csv)", ''),
        ("COPY c1 FROM STDIN (FORMAT csv, ESCAPE '\\')", '58,"a\\"b\\\\c\\d",t\n'),
        ("COPY c1 FROM STDIN (FORMAT csv) WHERE i > 100", '99,no,t\n101,yes,t\n102,,\n'),
        ("COPY c1 (i, b) FROM STDIN (FORMAT csv) WHERE s IS NULL AND b", '103,t\n104,f\n'),
        ("COPY c2 (id, name) FROM STDIN (FORMAT csv) WHERE d > 1 AND t = 'dflt'", '200,x\n'),
        ("COPY c1 FROM STDIN WHERE (SELECT 1) = 1", ''),
        ("COPY c1 FROM STDIN WHERE i IN (SELECT 1)", ''),
        ("COPY c1 FROM STDIN WHERE count(*) > 1", ''),
        ("COPY c1 FROM STDIN WHERE row_number() OVER () > 1", ''),
        ("COPY c1 FROM STDIN WHERE generate_series(1, 2) > 1", ''),
        ("COPY c1 FROM STDIN WHERE nosuch > 1", ''),
        ("COPY c1 FROM STDIN WHERE i", ''),
        ("COPY c1 FROM STDIN WHERE ctid IS NULL", ''),
        ("COPY nosuch FROM STDIN WHERE x > 1", ''),
        ("COPY c1 FROM STDIN (FORMAT xml) WHERE nosuch > 1", ''),
        ("COPY c1 FROM STDIN (FORMAT csv) WHERE i / 0 > 1", '105,z,t\n'),
    ]
    for sql, data in ins:
        try:
            cur = c.cursor()
            with cur.copy(sql) as cp:
                if data:
                    cp.write(data)
            out.append([str(sql), "ok", cur.rowcount])
        except psycopg.Error as e:
            out.append([str(sql)] + err(e))
        out[-1].append(c.execute("SELECT 1").fetchall() == [(1,)])
    out.append(c.execute("SELECT i, s, b FROM c1 ORDER BY i NULLS FIRST, s").fetchall())
    out.append(c.execute("SELECT id, name, d, t FROM c2 ORDER BY id, name").fetchall())
    out.append(c.execute('SELECT * FROM "Mixed"').fetchall())
    out.append(c.execute("SELECT v, v IS NULL FROM one ORDER BY v NULLS FIRST").fetchall())
    outs = [
        "COPY (SELECT * FROM o ORDER BY k) TO STDOUT (FORMAT csv)",
        "COPY (SELECT * FROM o ORDER BY k) TO STDOUT (FORMAT csv, HEADER)",
        "COPY (SELECT * FROM o ORDER BY k) TO STDOUT (FORMAT csv, HEADER true, FORCE_QUOTE *)",
        "COPY (SELECT k, v FROM o ORDER BY k) TO STDOUT (FORMAT csv, FORCE_QUOTE (v), NULL 'NULL')",
        "COPY (SELECT k, v FROM o ORDER BY k) TO STDOUT (FORMAT csv, QUOTE '''', ESCAPE '\\', DELIMITER '|')",
        "COPY (SELECT k, v FROM o ORDER BY k) TO STDOUT WITH CSV HEADER FORCE QUOTE v",
        "COPY (SELECT k, v FROM o ORDER BY k) TO STDOUT WITH CSV FORCE QUOTE *",
        "COPY o TO STDOUT (FORMAT csv, HEADER)",
        "COPY o (v, k) TO STDOUT (FORMAT csv, HEADER, FORCE_QUOTE (k))",
        "COPY o (v) TO STDOUT (FORMAT csv, FORCE_QUOTE (k))",
        "COPY o (v) TO STDOUT (FORMAT csv, FORCE_QUOTE (zz))",
        "COPY o (zz) TO STDOUT (FORMAT csv)",
        "COPY o (k, k) TO STDOUT (FORMAT csv)",
        "COPY (SELECT 1 AS x) TO STDOUT (FORMAT csv, FORCE_QUOTE (zz))",
        "COPY (SELECT 1 AS x) TO STDOUT (FORMAT csv, FORCE_NOT_NULL (x))",
        "COPY (SELECT 1 AS x) TO STDOUT (FORMAT csv, FORCE_NULL (x))",
        "COPY (SELECT 1 AS x) TO STDOUT (FORMAT csv, HEADER match)",
        "COPY (SELECT '\\.' AS x) TO STDOUT (FORMAT csv)",
        "COPY (SELECT '\\.' AS x, 1) TO STDOUT (FORMAT csv)",
        "COPY (SELECT 1 AS \"a\tb\", 2 AS \"c,d\", 3 AS \"e\"\"f\") TO STDOUT (HEADER)",
        "COPY (SELECT 1 AS \"a\tb\", 2 AS \"c,d\", 3 AS \"e\"\"f\") TO STDOUT (FORMAT csv, HEADER)",
        "COPY \"Mixed\" TO STDOUT (FORMAT csv, HEADER)",
        "COPY (SELECT k, v FROM o ORDER BY k) TO STDOUT (FORMAT text, HEADER, NULL 'nil')",
        "COPY BINARY one TO STDOUT",
        "COPY (SELECT * FROM nosuch) TO STDOUT (FORMAT xml)",
        "COPY nosuch TO STDOUT (FORMAT xml)",
        "COPY (SELECT 1) TO STDOUT (FORMAT csv, NULL 'a', DELIMITER 'a')",
        "COPY (SELECT true, false, NULL::bool, 1.50::numeric, 'x'::bytea) TO STDOUT (FORMAT csv)",
    ]
    for sql in outs:
        try:
            buf = b""
            with c.cursor().copy(sql) as cp:
                for chunk in cp:
                    buf += bytes(chunk)
            out.append([sql, buf.decode("latin1")])
        except psycopg.Error as e:
            out.append([sql] + err(e))
print("RESULT", json.dumps(out))
"#;

#[test]
fn copy_text_and_csv_match_postgres() {
    let got = same_outcomes_as_postgres(RUNNER);
    let text = serde_json::to_string(&got).expect("json");
    assert!(text.contains(r#"[2,"a,b",false]"#), "{text}");
    assert!(
        text.contains(r#""COPY c1, line 1, column i: \"x\"""#),
        "{text}"
    );
    assert!(
        text.contains("column name mismatch in header line field 2"),
        "{text}"
    );
}

fn psql(dsn: &str, dir: &std::path::Path, command: &str) -> String {
    let out = Command::new("psql")
        .current_dir(dir)
        .args(["-X", "-q", "-v", "ON_ERROR_STOP=1", dsn, "-c", command])
        .output()
        .expect("run psql");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "psql {command:?} on {dsn}: {stderr}");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// psql's `\\copy` sends `COPY … TO STDOUT` / `FROM STDIN` with the options as typed (here
/// the unparenthesised `CSV HEADER` and the parenthesised list): a table exported to CSV is the
/// same file as PostgreSQL's, and imported back gives the same rows.
#[test]
fn psql_copy_exports_and_imports_csv_as_postgres_does() {
    let pg = Postgres::start().expect("postgres");
    let dir = tempfile::tempdir().expect("tempdir");
    let rl = Server::start(&dir.path().join("catalog"), "postgres", &[]).expect("rocklake");
    let setup = "CREATE TABLE export (id INTEGER, note TEXT, amount NUMERIC(8,2), seen TIMESTAMPTZ);
        INSERT INTO export VALUES (1, 'plain', 1.5, '2026-01-02 03:04:05+00'),
          (2, 'comma, and \"quotes\"', NULL, NULL), (3, E'two\\nlines', -7, '2000-01-01 00:00:00+00'),
          (4, '', 0, NULL), (5, NULL, 12.25, NULL);
        CREATE TABLE import (id INTEGER, note TEXT, amount NUMERIC(8,2), seen TIMESTAMPTZ);";
    let mut files = Vec::new();
    for (name, dsn) in [("pg", pg.dsn()), ("rl", rl.dsn())] {
        psql(&dsn, dir.path(), setup);
        let file = format!("{name}.csv");
        psql(
            &dsn,
            dir.path(),
            &format!("\\copy (SELECT * FROM export ORDER BY id) TO '{file}' CSV HEADER"),
        );
        psql(
            &dsn,
            dir.path(),
            &format!("\\copy import FROM '{file}' WITH (FORMAT csv, HEADER match)"),
        );
        let rows = psql(&dsn, dir.path(), "SELECT * FROM import ORDER BY id");
        files.push((
            std::fs::read_to_string(dir.path().join(&file)).expect("exported"),
            rows,
        ));
    }
    assert_eq!(
        files[1], files[0],
        "RockLake (right) differs from PostgreSQL (left)"
    );
    let (csv, rows) = &files[1];
    assert!(
        csv.starts_with("id,note,amount,seen\n1,plain,1.50,2026-01-02 03:04:05+00\n"),
        "{csv}"
    );
    assert!(csv.contains("2,\"comma, and \"\"quotes\"\"\",,\n"), "{csv}");
    assert!(rows.contains("(5 rows)"), "{rows}");
    rl.stop().expect("stop");
}
