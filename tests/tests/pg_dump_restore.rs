//! Moving a DuckLake catalog between PostgreSQL and RockLake with PostgreSQL's own tools:
//! `pg_dump` of a lake DuckDB made on PostgreSQL 15, restored into RockLake with `psql`
//! (`ALTER TABLE … OWNER TO`, `COPY … FROM stdin`, then `ALTER TABLE ONLY … ADD CONSTRAINT …
//! PRIMARY KEY`, which moves the rows already there under their key). DuckDB then reads the
//! same lake from RockLake, writes to it as it writes to PostgreSQL's, and everything stays
//! after a restart; `pg_restore --clean` of a custom-format dump over it (DROP CONSTRAINT of
//! each primary key first) too. `pg_dump` of RockLake writes the same dump as of PostgreSQL (it reads
//! every catalog: pg_class, pg_attribute, pg_depend, pg_init_privs, pg_proc, …), and that dump
//! restored into a new PostgreSQL database is the same lake again.

use std::process::Command;

use rocklake_tests::{Postgres, Server};

/// DuckDB 1.5 makes a lake: inlined and Parquet data, deletes, an update, an added column, a
/// second schema, a view.
const MAKE: &str = r#"
import sys, dlconn
con = dlconn.connect(exts=("ducklake", "postgres"))
con.execute(f"ATTACH 'ducklake:postgres:{sys.argv[1]}' AS lake (DATA_PATH '{sys.argv[2]}')")
con.execute("CREATE TABLE lake.a (i INTEGER, s VARCHAR)")
con.execute("INSERT INTO lake.a VALUES (1, 'one'), (2, 'two'), (3, 'three')")
con.execute("INSERT INTO lake.a SELECT range, 'r' || range FROM range(10, 2010)")
con.execute("DELETE FROM lake.a WHERE i % 5 = 0")
con.execute("UPDATE lake.a SET s = 'updated' WHERE i = 2")
con.execute("ALTER TABLE lake.a ADD COLUMN extra BIGINT DEFAULT 42")
con.execute("CREATE SCHEMA lake.other")
con.execute("CREATE TABLE lake.other.b AS SELECT range AS k, range * 2 AS v FROM range(3000)")
con.execute("CREATE VIEW lake.other.v AS SELECT count(*) AS n, sum(v) AS total FROM lake.other.b")
print("MADE")
"#;

/// DuckDB's answers over the lake (`read`), or after writing to it (`write`).
const ANSWERS: &str = r#"
import sys, json, dlconn
con = dlconn.connect(exts=("ducklake", "postgres"))
con.execute(f"ATTACH 'ducklake:postgres:{sys.argv[1]}' AS lake (DATA_PATH '{sys.argv[2]}')")
q = lambda sql: [list(r) for r in con.execute(sql).fetchall()]
if sys.argv[3] == "write":
    con.execute("INSERT INTO lake.a VALUES (5000, 'later', 1)")
    con.execute("DELETE FROM lake.other.b WHERE k < 100")
    con.execute("CREATE TABLE lake.c (x INTEGER)")
    con.execute("INSERT INTO lake.c VALUES (7)")
out = {
    "a": q("SELECT count(*), sum(i), min(s), max(s), sum(extra) FROM lake.a"),
    "a2": q("SELECT * FROM lake.a WHERE i < 4 ORDER BY i"),
    "v": q("SELECT * FROM lake.other.v"),
    "tables": q("SELECT table_name, schema_id, table_id FROM ducklake_table_info('lake') ORDER BY ALL"),
    "snapshots": q("SELECT snapshot_id, schema_version FROM ducklake_snapshots('lake') ORDER BY 1"),
    "old": q("SELECT count(*) FROM lake.a AT (VERSION => 3)"),
}
print("RESULT", json.dumps(out, default=str))
"#;

/// Every catalog table's definition and rows, through psycopg.
const CATALOG: &str = r#"
import sys, json, psycopg
out = {}
with psycopg.connect(sys.argv[1], autocommit=True) as c:
    tables = [t for (t,) in c.execute("SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' ORDER BY 1")]
    for t in tables:
        cols = c.execute("SELECT column_name, data_type, is_nullable, column_default FROM information_schema.columns WHERE table_schema = 'public' AND table_name = %s ORDER BY ordinal_position", (t,)).fetchall()
        out[t] = {"columns": cols, "rows": c.execute(f'SELECT * FROM "{t}" ORDER BY {", ".join(str(i + 1) for i in range(len(cols)))}').fetchall()}
    out["keys"] = c.execute("SELECT conrelid::regclass::text, conname, contype, conkey FROM pg_constraint WHERE connamespace = 'public'::regnamespace AND contype = 'p' ORDER BY 1").fetchall()
print("RESULT", json.dumps(out, default=str))
"#;

/// Restores a plain-text dump with psql, stopping at the first error.
fn restore(dsn: &str, dump: &str) {
    let out = client(
        "psql",
        &["-X", "-q", "-v", "ON_ERROR_STOP=1", "-d", dsn, "-f", dump],
    );
    assert!(!out.contains("ERROR"), "{out}");
}

/// A dump's lines without those that differ between any two dumps of the same data: the
/// `\restrict` key psql's restore checks, and the server version.
fn comparable(dump: &str) -> Vec<&str> {
    dump.lines()
        .filter(|l| {
            !l.starts_with("\\restrict")
                && !l.starts_with("\\unrestrict")
                && !l.starts_with("-- Dumped from database version")
        })
        .collect()
}

fn duckdb(script: &str, args: &[&str]) -> serde_json::Value {
    let (ok, out) = rocklake_tests::duckdb_python("155", script, args).expect("python");
    assert!(ok, "script failed with {args:?}");
    rocklake_tests::result_json(&out)
}

/// Runs a PostgreSQL client program; its stdout. Fails on a non-zero exit or an ERROR.
fn client(program: &str, args: &[&str]) -> String {
    let out = Command::new(program)
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("run {program}: {e}"));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success() && !stderr.contains("ERROR"),
        "{program} {args:?}: {stderr}"
    );
    String::from_utf8_lossy(&out.stdout).to_string()
}

#[test]
fn pg_dump_of_a_postgres_lake_restores_into_rocklake() {
    let pg = Postgres::start().expect("postgres");
    let dir = tempfile::tempdir().expect("tempdir");
    let catalog = dir.path().join("catalog");
    let files = dir.path().join("files/");
    let files = files.to_str().expect("utf-8 path");
    let made = rocklake_tests::duckdb_python("155", MAKE, &[&pg.dsn(), files]).expect("python");
    assert!(
        made.0 && made.1.contains("MADE"),
        "DuckDB could not make the lake"
    );

    let dump = dir.path().join("lake.sql");
    let dump_path = dump.to_str().expect("utf-8 path");
    client("pg_dump", &["-d", &pg.dsn(), "-f", dump_path]);
    let text = std::fs::read_to_string(&dump).expect("read the dump");
    assert!(
        text.contains("ADD CONSTRAINT ducklake_snapshot_pkey PRIMARY KEY (snapshot_id)")
            && text.contains("OWNER TO postgres")
            && text.contains("COPY public.ducklake_data_file"),
        "not the dump this test is about:\n{text}"
    );

    // RockLake's role is PostgreSQL's (`postgres`), so the dump's OWNER TO names it.
    let rl = Server::start(&catalog, "postgres", &[]).expect("rocklake");
    restore(&rl.dsn(), dump_path);

    // pg_dump of RockLake: PostgreSQL's dump, line for line (but its one-off \\restrict key
    // and the server version it names).
    let back = dir.path().join("back.sql");
    let back_path = back.to_str().expect("utf-8 path");
    client("pg_dump", &["-d", &rl.dsn(), "-f", back_path]);
    let again = std::fs::read_to_string(&back).expect("read the dump");
    assert_eq!(
        comparable(&again),
        comparable(&text),
        "pg_dump of RockLake differs"
    );
    // With every identifier quoted (pg_dump sets the server's quote_all_identifiers): the same.
    let quoted: Vec<String> = [pg.dsn(), rl.dsn()]
        .iter()
        .map(|dsn| client("pg_dump", &["--quote-all-identifiers", "-d", dsn]))
        .collect();
    assert!(
        quoted[0]
            .contains(r#"ADD CONSTRAINT "ducklake_snapshot_pkey" PRIMARY KEY ("snapshot_id")"#),
        "not the dump this test is about:\n{}",
        quoted[0]
    );
    assert_eq!(comparable(&quoted[1]), comparable(&quoted[0]));

    // pg_restore of PostgreSQL's custom-format dump over it (`--clean --if-exists`: each
    // primary key dropped, each table dropped and made again, two jobs at once): the same.
    let custom = dir.path().join("lake.dump");
    let custom_path = custom.to_str().expect("utf-8 path");
    client("pg_dump", &["-Fc", "-d", &pg.dsn(), "-f", custom_path]);
    client(
        "pg_restore",
        &[
            "--clean",
            "--if-exists",
            "--exit-on-error",
            "-j",
            "2",
            "-d",
            &rl.dsn(),
            custom_path,
        ],
    );
    assert_eq!(duckdb(CATALOG, &[&rl.dsn()]), duckdb(CATALOG, &[&pg.dsn()]));

    // That dump into a new PostgreSQL database: the same lake once more.
    client(
        "psql",
        &["-X", "-q", "-d", &pg.dsn(), "-c", "CREATE DATABASE lake2"],
    );
    let lake2 = pg.dsn().replace("dbname=lake", "dbname=lake2");
    restore(&lake2, back_path);
    assert_eq!(duckdb(CATALOG, &[&lake2]), duckdb(CATALOG, &[&pg.dsn()]));

    // The catalog itself: the same definitions, primary keys and rows.
    let want = duckdb(CATALOG, &[&pg.dsn()]);
    let got = duckdb(CATALOG, &[&rl.dsn()]);
    let tables = want.as_object().expect("object").len();
    assert!(tables > 20, "{tables} catalog tables");
    assert_eq!(got, want, "the restored catalog differs");
    assert_eq!(
        got["keys"].as_array().map(Vec::len),
        Some(5),
        "DuckLake's five primary keys: {}",
        got["keys"]
    );

    // DuckDB reads the lake from RockLake as from PostgreSQL, writes to both alike.
    let read = duckdb(ANSWERS, &[&rl.dsn(), files, "read"]);
    assert_eq!(read, duckdb(ANSWERS, &[&pg.dsn(), files, "read"]));
    assert_eq!(read["a2"][1][1], "updated", "{read}");
    let written = duckdb(ANSWERS, &[&rl.dsn(), files, "write"]);
    assert_eq!(written, duckdb(ANSWERS, &[&pg.dsn(), files, "write"]));
    assert_ne!(
        written["snapshots"], read["snapshots"],
        "the writes made snapshots"
    );

    // The rows moved under their keys survive a restart, and verify finds nothing wrong.
    rl.stop().expect("stop");
    let rl = Server::start(&catalog, "postgres", &[]).expect("restart");
    assert_eq!(duckdb(ANSWERS, &[&rl.dsn(), files, "read"]), written);
    rl.stop().expect("stop");
    let (code, report) =
        rocklake_tests::verify_catalog(catalog.to_str().expect("utf-8 path"), &[]).expect("verify");
    assert_eq!(code, 0, "verify: {report}");
}

/// Tables of one's own beside the lake — serial and identity columns, a composite key,
/// defaults, arrays, numerics with a typmod, bytea, dates, a sequence drawn from — made alike
/// on PostgreSQL and RockLake: `pg_dump -n app` writes the same dump of both. PostgreSQL's dump
/// (its `CREATE SEQUENCE … ; ALTER SEQUENCE … OWNED BY`, `ADD GENERATED … AS IDENTITY
/// (SEQUENCE NAME …)`, `SET DEFAULT nextval(…)`, `setval`) restores into a new RockLake that
/// dumps it back the same and goes on drawing the same values.
#[test]
fn pg_dump_of_tables_of_ones_own_matches_postgres() {
    const APP: &str = "
CREATE SCHEMA app;
CREATE TABLE app.items (id serial PRIMARY KEY, name text NOT NULL DEFAULT 'x', price numeric(10,2), tags text[], created timestamptz DEFAULT now());
CREATE TABLE app.orders (order_id bigint GENERATED ALWAYS AS IDENTITY, item_id int, qty int, PRIMARY KEY (order_id, item_id));
CREATE TABLE app.kv (k varchar(20), v bytea, d date, b boolean DEFAULT true);
INSERT INTO app.items (name, price, tags, created) VALUES ('a', 1.5, '{x,y}', '2024-01-01 00:00:00+00'), ('b''s', NULL, NULL, '2024-01-02 00:00:00+00');
INSERT INTO app.orders (item_id, qty) VALUES (1, 2), (1, 3);
INSERT INTO app.kv VALUES ('k1', '\\x0102', '2024-02-29', NULL), ('tab\there', NULL, NULL, false);
CREATE SEQUENCE app.s1 START 100 INCREMENT 5;
SELECT nextval('app.s1');
CREATE TABLE app.small (id smallint GENERATED BY DEFAULT AS IDENTITY (START WITH 10 INCREMENT BY 2 MAXVALUE 1000 CYCLE) PRIMARY KEY, b bigserial);
CREATE TABLE public.pubser (id serial PRIMARY KEY, v text);
INSERT INTO public.pubser (v) VALUES ('a');
COMMENT ON SCHEMA app IS 'the application''s schema';
COMMENT ON TABLE app.items IS 'items for sale';
COMMENT ON COLUMN app.items.price IS 'in euros';
COMMENT ON INDEX app.items_pkey IS 'by id';
COMMENT ON CONSTRAINT orders_pkey ON app.orders IS 'one row per order and item';
COMMENT ON SEQUENCE app.s1 IS 'a free sequence';
COMMENT ON COLUMN public.pubser.v IS 'a value';
CREATE INDEX ON app.items (name);
CREATE INDEX orders_lookup ON app.orders (item_id, qty DESC NULLS LAST);
COMMENT ON INDEX app.orders_lookup IS 'by item';
";
    // After a restore: each sequence goes on from where the dump left it.
    const DRAW: &str = "
INSERT INTO app.items (name) VALUES ('c') RETURNING id;
INSERT INTO app.orders (item_id, qty) VALUES (2, 1) RETURNING order_id;
INSERT INTO app.small DEFAULT VALUES RETURNING id, b;
SELECT nextval('app.s1');
";
    let pg = Postgres::start().expect("postgres");
    let dir = tempfile::tempdir().expect("tempdir");
    let rl = Server::start(&dir.path().join("catalog"), "postgres", &[]).expect("rocklake");
    let mut dumps = Vec::new();
    for dsn in [pg.dsn(), rl.dsn()] {
        client(
            "psql",
            &["-X", "-q", "-v", "ON_ERROR_STOP=1", "-d", &dsn, "-c", APP],
        );
        dumps.push(client("pg_dump", &["-d", &dsn, "-n", "app"]));
    }
    // One table by name (pg_dump's pattern query writes `OPERATOR(pg_catalog.=) ANY (…)`), in
    // public: its serial default is written qualified under pg_dump's empty search_path, or
    // the dump would not restore.
    let tables: Vec<String> = [pg.dsn(), rl.dsn()]
        .iter()
        .map(|dsn| client("pg_dump", &["-d", dsn, "-t", "pubser"]))
        .collect();
    assert!(
        tables[0].contains("SET DEFAULT nextval('public.pubser_id_seq'::regclass);")
            && tables[0].contains("COMMENT ON COLUMN public.pubser.v IS 'a value';"),
        "not the dump this test is about:\n{}",
        tables[0]
    );
    assert_eq!(comparable(&tables[1]), comparable(&tables[0]));
    // A custom-format archive (which also records the database's own properties: its
    // settings, comments and security labels) says the same as PostgreSQL's.
    let archives: Vec<String> = [pg.dsn(), rl.dsn()]
        .iter()
        .enumerate()
        .map(|(i, dsn)| {
            let file = dir.path().join(format!("app{i}.dump"));
            let file = file.to_str().expect("path");
            client("pg_dump", &["-d", dsn, "-n", "app", "-Fc", "-f", file]);
            client("pg_restore", &["-f", "-", file])
        })
        .collect();
    assert!(archives[0].contains("CREATE TABLE app.items"));
    assert_eq!(comparable(&archives[1]), comparable(&archives[0]));
    assert!(
        dumps[0].contains("CREATE SEQUENCE app.items_id_seq")
            && dumps[0].contains("ADD GENERATED ALWAYS AS IDENTITY")
            && dumps[0].contains("SELECT pg_catalog.setval('app.s1', 100, true);"),
        "not the dump this test is about:\n{}",
        dumps[0]
    );
    assert_eq!(comparable(&dumps[1]), comparable(&dumps[0]));
    // With every identifier quoted (`SET quote_all_identifiers = true` on the server, which
    // then quotes the names in types, defaults and index definitions): the same, and it
    // restores into a new RockLake.
    let quoted: Vec<String> = [pg.dsn(), rl.dsn()]
        .iter()
        .map(|dsn| {
            client(
                "pg_dump",
                &["--quote-all-identifiers", "-d", dsn, "-n", "app"],
            )
        })
        .collect();
    assert!(
        quoted[0].contains(r#"DEFAULT 'x'::"text" NOT NULL"#)
            && quoted[0].contains(r#"SET DEFAULT "nextval"('"app"."small_b_seq"'::"regclass");"#),
        "not the dump this test is about:\n{}",
        quoted[0]
    );
    assert_eq!(comparable(&quoted[1]), comparable(&quoted[0]));
    assert!(
        dumps[0].contains("ALTER SEQUENCE app.items_id_seq OWNED BY app.items.id;")
            && dumps[0].contains("SEQUENCE NAME app.small_id_seq")
            && dumps[0].contains("SET DEFAULT nextval('app.small_b_seq'::regclass);")
            && dumps[0].contains("COMMENT ON SCHEMA app IS 'the application''s schema';")
            && dumps[0].contains("COMMENT ON COLUMN app.items.price IS 'in euros';")
            && dumps[0].contains("COMMENT ON INDEX app.items_pkey IS 'by id';")
            && dumps[0].contains("CREATE INDEX items_name_idx ON app.items USING btree (name);")
            && dumps[0].contains(
                "CREATE INDEX orders_lookup ON app.orders USING btree (item_id, qty DESC NULLS LAST);"
            )
            && dumps[0].contains("COMMENT ON INDEX app.orders_lookup IS 'by item';")
            && dumps[0].contains(
                "COMMENT ON CONSTRAINT orders_pkey ON app.orders IS 'one row per order and item';"
            ),
        "not the dump this test is about:\n{}",
        dumps[0]
    );
    // PostgreSQL's dump into a new RockLake: the same dump back, the same values drawn next.
    let file = dir.path().join("app.sql");
    std::fs::write(&file, &dumps[0]).expect("write the dump");
    let rl2 = Server::start(&dir.path().join("catalog2"), "postgres", &[]).expect("rocklake");
    restore(&rl2.dsn(), file.to_str().expect("path"));
    let again = client("pg_dump", &["-d", &rl2.dsn(), "-n", "app"]);
    assert_eq!(comparable(&again), comparable(&dumps[0]));
    let rl3 = Server::start(&dir.path().join("catalog3"), "postgres", &[]).expect("rocklake");
    let file = dir.path().join("app-quoted.sql");
    std::fs::write(&file, &quoted[0]).expect("write the dump");
    restore(&rl3.dsn(), file.to_str().expect("path"));
    let again = client("pg_dump", &["-d", &rl3.dsn(), "-n", "app"]);
    assert_eq!(comparable(&again), comparable(&dumps[0]));
    rl3.stop().expect("stop");
    let draw = |dsn: &str| {
        client(
            "psql",
            &[
                "-X",
                "-q",
                "-A",
                "-t",
                "-v",
                "ON_ERROR_STOP=1",
                "-d",
                dsn,
                "-c",
                DRAW,
            ],
        )
    };
    let want = draw(&pg.dsn());
    assert_eq!(draw(&rl2.dsn()), want);
    assert_eq!(
        want.split_whitespace().collect::<Vec<_>>(),
        ["3", "3", "10|1", "105"]
    );
    rl2.stop().expect("stop");
    rl.stop().expect("stop");
}

/// Views whose names sort before what they read: pg_dump orders each after the relations it
/// reads only through `pg_depend`'s rows of the view's `_RETURN` rule (`pg_rewrite`), so
/// without them it wrote `CREATE VIEW a_v … FROM z_t` before `CREATE TABLE z_t` and the dump
/// did not restore; a relation named in a `regclass` string (`nextval('s')`) counts too, and
/// is written with its schema (pg_dump restores under an empty search_path). The rows are
/// compared with PostgreSQL's (by name), the dump's order too,
/// and RockLake's dump restores into a new PostgreSQL database and a new RockLake that answer
/// the views alike.
#[test]
fn pg_dump_orders_views_after_what_they_read() {
    const VIEWS: &str = "
CREATE SCHEMA vw;
SET search_path = vw, public;
CREATE TABLE vw.zz_t (id int PRIMARY KEY, v text, w int);
INSERT INTO vw.zz_t VALUES (1, 'one', 1), (2, 'two', 0), (3, 'three', 5);
CREATE VIEW vw.aa_v AS SELECT id, v FROM vw.zz_t WHERE w > 0;
CREATE VIEW vw.ab_v AS SELECT count(*) AS n FROM vw.aa_v;
CREATE VIEW vw.ac_v AS SELECT t.v, a.id FROM vw.zz_t t JOIN vw.aa_v a USING (id);
CREATE VIEW vw.a0 AS SELECT n + 1 AS m FROM vw.ab_v;
CREATE VIEW vw.ad_v AS SELECT 1 AS one;
CREATE VIEW vw.ae_v AS SELECT * FROM vw.zz_t NATURAL JOIN vw.aa_v;
CREATE SEQUENCE vw.zz_s;
CREATE VIEW vw.af_v AS SELECT 'zz_t'::regclass::text AS r, nextval('zz_s') > 0 AS drew;
";
    // What pg_dump reads of the rules and their dependencies, by name (a `regclass` sorts by
    // OID, which a restore gives in its own order).
    const RULES: &str = "
SELECT r.rulename, r.ev_class::regclass::text, r.ev_type, r.ev_enabled, r.is_instead, c.relhasrules FROM pg_rewrite r JOIN pg_class c ON c.oid = r.ev_class WHERE c.relnamespace = 'vw'::regnamespace ORDER BY 2;
SELECT c.relname, d.objsubid, d.refclassid::regclass, d.refobjid::regclass::text, d.refobjsubid, d.deptype FROM pg_depend d JOIN pg_rewrite r ON d.classid = 'pg_rewrite'::regclass AND d.objid = r.oid JOIN pg_class c ON c.oid = r.ev_class WHERE c.relnamespace = 'vw'::regnamespace ORDER BY 1, 4, 5, 6;
";
    const READ: &str = "
SELECT * FROM vw.aa_v ORDER BY id;
SELECT * FROM vw.ab_v;
SELECT * FROM vw.ac_v ORDER BY id;
SELECT * FROM vw.a0;
SELECT * FROM vw.ae_v ORDER BY id;
SELECT * FROM vw.af_v;
";
    let psql = |dsn: &str, sql: &str| {
        client(
            "psql",
            &[
                "-X",
                "-q",
                "-A",
                "-v",
                "ON_ERROR_STOP=1",
                "-d",
                dsn,
                "-c",
                sql,
            ],
        )
    };
    // The objects a dump creates, in its order.
    let creates = |dump: &str| -> Vec<String> {
        dump.lines()
            .filter(|l| {
                ["CREATE TABLE", "CREATE VIEW", "CREATE SEQUENCE"]
                    .iter()
                    .any(|c| l.starts_with(c))
            })
            .map(str::to_string)
            .collect()
    };
    let pg = Postgres::start().expect("postgres");
    let dir = tempfile::tempdir().expect("tempdir");
    let rl = Server::start(&dir.path().join("catalog"), "postgres", &[]).expect("rocklake");
    let mut dumps = Vec::new();
    for dsn in [pg.dsn(), rl.dsn()] {
        psql(&dsn, VIEWS);
        dumps.push(client("pg_dump", &["-d", &dsn, "-n", "vw"]));
    }
    let want = psql(&pg.dsn(), RULES);
    assert!(
        want.contains("ac_v|0|pg_class|vw.zz_t|1|n")
            && want.contains("ab_v|0|pg_class|vw.aa_v|0|n"),
        "not the rows this test is about:\n{want}"
    );
    assert_eq!(psql(&rl.dsn(), RULES), want);
    assert_eq!(
        creates(&dumps[0])[0],
        "CREATE TABLE vw.zz_t (",
        "not the dump this test is about:\n{}",
        dumps[0]
    );
    assert_eq!(creates(&dumps[1]), creates(&dumps[0]));
    let answers = psql(&pg.dsn(), READ);
    assert_eq!(psql(&rl.dsn(), READ), answers);

    // RockLake's dump restores into a new PostgreSQL database and into a new RockLake.
    let file = dir.path().join("views.sql");
    std::fs::write(&file, &dumps[1]).expect("write the dump");
    psql(&pg.dsn(), "CREATE DATABASE views2");
    let views2 = pg.dsn().replace("dbname=lake", "dbname=views2");
    restore(&views2, file.to_str().expect("path"));
    assert_eq!(psql(&views2, READ), answers);
    let rl2 = Server::start(&dir.path().join("catalog2"), "postgres", &[]).expect("rocklake");
    restore(&rl2.dsn(), file.to_str().expect("path"));
    assert_eq!(psql(&rl2.dsn(), READ), answers);
    assert_eq!(psql(&rl2.dsn(), RULES), want);
    rl2.stop().expect("stop");
    rl.stop().expect("stop");
}

/// What pg_dump runs besides catalog queries, compared with PostgreSQL: SQL-level `PREPARE` /
/// `EXECUTE` / `DEALLOCATE`, `LOCK TABLE … IN ACCESS SHARE MODE`, `acldefault`, and the
/// catalogs it reads that hold nothing of one's own here.
const TOOL_STATEMENTS: &str = r#"
import json, sys, psycopg
c = psycopg.connect(sys.argv[1], autocommit=True)
out = []
def run(sql):
    try:
        cur = c.execute(sql, prepare=False)
        res = [sql, cur.fetchall() if cur.description else cur.statusmessage]
    except psycopg.Error as e:
        res = [sql, "error", e.sqlstate, e.diag.message_primary, e.diag.message_detail, e.diag.message_hint]
    out.append(res + [c.info.transaction_status.name])
for s in [
    "CREATE TABLE pp (a int, b text)",
    "INSERT INTO pp VALUES (1, 'one'), (2, 'two')",
    "PREPARE q1(int) AS SELECT * FROM pp WHERE a = $1",
    "EXECUTE q1(2)", "EXECUTE q1('1')", "EXECUTE q1", "EXECUTE q1(1, 2)", "EXECUTE nosuch(1)",
    "PREPARE q1 AS SELECT 1",
    "PREPARE q2 AS SELECT * FROM pp WHERE b = $1 ORDER BY a", "EXECUTE q2('one')",
    "PREPARE q3(int, text) AS INSERT INTO pp VALUES ($1, $2)",
    "EXECUTE q3(3, 'three')", "EXECUTE q3(4 + 1, 'fi' || 've')",
    "SELECT * FROM pp ORDER BY a",
    "PREPARE q4 AS SELECT * FROM nosuch",
    "DEALLOCATE q1", "EXECUTE q1(1)", "DEALLOCATE q1", "DEALLOCATE PREPARE q2",
    "DEALLOCATE ALL", "EXECUTE q3(9, 'x')",
    "BEGIN", "PREPARE q6 AS SELECT 6", "ROLLBACK", "EXECUTE q6",
    "DISCARD ALL", "EXECUTE q6",
    "LOCK TABLE pp",
    "BEGIN", "LOCK TABLE pp IN ACCESS SHARE MODE", "LOCK nosuch IN ACCESS SHARE MODE", "ROLLBACK",
    "BEGIN", "LOCK pp, pg_class IN ACCESS SHARE MODE", "SELECT count(*) FROM pp", "COMMIT",
    "SELECT acldefault('r', 10), acldefault('n', 10), acldefault('T', 10), acldefault('c', 10), acldefault('s', 10)",
    "SELECT tableoid::regclass, count(*) FROM pg_namespace GROUP BY 1",
    "SELECT description FROM pg_description WHERE classoid = 'pg_namespace'::regclass ORDER BY objoid",
    "SELECT objoid::regnamespace, privtype, initprivs FROM pg_init_privs WHERE classoid = 'pg_namespace'::regclass ORDER BY 1",
    "SELECT count(*) FROM pg_proc WHERE pronamespace NOT IN ('pg_catalog'::regnamespace, 'information_schema'::regnamespace)",
    "SELECT count(*) FROM pg_trigger", "SELECT count(*) FROM pg_rewrite WHERE ev_class >= 16384",
    "SELECT 'pg_proc'::regclass::oid, 'pg_trigger'::regclass::oid, 'pg_catalog.pg_seclabels'::regclass",
    "SELECT amname, amhandler, amhandler::oid FROM pg_am ORDER BY oid",
    "SELECT 'bthandler'::regproc, 330::regproc, 0::regproc, 'nosuch'::regproc",
    "SELECT typname[0], typname[1], typname[100] FROM pg_type WHERE typname = '_int4'",
    "CREATE TABLE pk (x int, y int, PRIMARY KEY (y, x))",
    "SELECT indkey, indkey[0], indkey[1], indkey::text FROM pg_index WHERE indrelid = 'pk'::regclass",
    "SELECT array_lower(indkey, 1), array_upper(indkey, 1), array_dims(indkey) FROM pg_index WHERE indrelid = 'pk'::regclass",
    "SELECT s, indkey[s] FROM pg_index, generate_subscripts(indkey, 1) s WHERE indrelid = 'pk'::regclass ORDER BY s",
    "CREATE SEQUENCE lsq", "BEGIN", "LOCK lsq IN ACCESS SHARE MODE", "ROLLBACK", "DROP SEQUENCE lsq",
    "PREPARE \"Mixed\" AS SELECT 1", "EXECUTE \"Mixed\"", "EXECUTE mixed", "DEALLOCATE \"Mixed\"",
    "PREPARE q7 AS SELECT 7", "BEGIN", "SELECT 1/0", "DEALLOCATE ALL", "ROLLBACK", "EXECUTE q7",
    "SELECT option_name, option_value FROM pg_options_to_table('{a=1,b=x=y,c}')",
    "DROP TABLE pp, pk",
]:
    run(s)
print("RESULT", json.dumps(out, default=str))
"#;

#[test]
fn tool_statements_match_postgres() {
    let got = rocklake_tests::same_outcomes_as_postgres(TOOL_STATEMENTS);
    let text = serde_json::Value::Array(got).to_string();
    for needle in [
        "prepared statement \\\"q1\\\" already exists",
        "Expected 1 parameters but got 0.",
        "LOCK TABLE can only be used in transaction blocks",
        "[5,\"five\"]",
        "postgres=arwdDxt/postgres",
        "standard public schema",
        "bthandler",
        "\"2 1\"",
        "[0:1]",
        "cannot lock relation",
        "[[7]]",
    ] {
        assert!(text.contains(needle), "{needle} not reached: {text}");
    }
}

/// `pg_export_snapshot()` and `SET TRANSACTION SNAPSHOT`, as `pg_dump -j` uses them: an
/// importing transaction reads what the exporter reads, not what was committed since; the id
/// is gone with the exporting transaction; PostgreSQL's errors.
const SNAPSHOTS: &str = r#"
import json, re, sys, psycopg
dsn = sys.argv[1]
a, b, c = (psycopg.connect(dsn, autocommit=True) for _ in range(3))
out = []
notices = []
c.add_notice_handler(lambda d: notices.append([d.severity, d.sqlstate, d.message_primary]))
sid = None
def run(conn, sql):
    notices.clear()
    shown = sql.replace(sid, "<id>") if sid else sql
    try:
        cur = conn.execute(sql)
        res = [shown, cur.fetchall() if cur.description else cur.statusmessage]
    except psycopg.Error as e:
        res = [shown, "error", e.sqlstate, e.diag.message_primary.replace(sid or "<id>", "<id>")]
    out.append(res + [list(notices)])
    return res
run(a, "CREATE TABLE snap (x int)")
run(a, "INSERT INTO snap VALUES (1), (2)")
run(a, "BEGIN ISOLATION LEVEL REPEATABLE READ, READ ONLY")
run(a, "SELECT count(*) FROM snap")
sid = a.execute("SELECT pg_export_snapshot()").fetchone()[0]
out.append(["id looks like PostgreSQL's", bool(re.fullmatch(r"[0-9A-F]{8}-[0-9A-F]{8}-[0-9]+", sid))])
run(b, "INSERT INTO snap VALUES (3)")
run(c, "BEGIN ISOLATION LEVEL REPEATABLE READ, READ ONLY")
run(c, f"SET TRANSACTION SNAPSHOT '{sid}'")
run(c, "SELECT count(*), max(x) FROM snap")
run(c, "COMMIT")
run(c, "BEGIN ISOLATION LEVEL REPEATABLE READ")
run(c, "SELECT 1")
run(c, f"SET TRANSACTION SNAPSHOT '{sid}'")
run(c, "ROLLBACK")
run(c, "BEGIN")
run(c, f"SET TRANSACTION SNAPSHOT '{sid}'")
run(c, "ROLLBACK")
run(c, "BEGIN ISOLATION LEVEL REPEATABLE READ")
run(c, "SET TRANSACTION SNAPSHOT 'nonsense'")
run(c, "ROLLBACK")
# An import fixes the transaction's snapshot, as a first query does.
run(c, "BEGIN ISOLATION LEVEL REPEATABLE READ")
run(c, f"SET TRANSACTION SNAPSHOT '{sid}'")
run(c, f"SET TRANSACTION SNAPSHOT '{sid}'")
run(c, "ROLLBACK")
run(c, "BEGIN ISOLATION LEVEL REPEATABLE READ")
run(c, f"SET TRANSACTION SNAPSHOT '{sid}'")
run(c, "SET TRANSACTION ISOLATION LEVEL READ COMMITTED")
run(c, "ROLLBACK")
run(c, "BEGIN ISOLATION LEVEL REPEATABLE READ")
run(c, "SAVEPOINT s")
run(c, f"SET TRANSACTION SNAPSHOT '{sid}'")
run(c, "ROLLBACK")
run(c, f"SET TRANSACTION SNAPSHOT '{sid}'")
run(a, "COMMIT")
run(c, "BEGIN ISOLATION LEVEL REPEATABLE READ")
run(c, f"SET TRANSACTION SNAPSHOT '{sid}'")
run(c, "ROLLBACK")
run(c, "BEGIN")
run(c, "SAVEPOINT s")
run(c, "SELECT pg_export_snapshot()")
run(c, "ROLLBACK")
run(c, "SELECT count(*) FROM snap")
run(c, "DROP TABLE snap")
print("RESULT", json.dumps(out, default=str))
"#;

#[test]
fn snapshot_export_and_import_match_postgres() {
    let got = rocklake_tests::same_outcomes_as_postgres(SNAPSHOTS);
    let text = serde_json::Value::Array(got).to_string();
    // The importer read the exporter's two rows, not the third committed meanwhile.
    assert!(text.contains("[[2,2]]"), "{text}");
    assert!(text.contains("invalid snapshot identifier"), "{text}");
}

/// `pg_dump -j 2` (directory format: workers that import the leader's snapshot) of RockLake
/// writes what PostgreSQL's does.
#[test]
fn parallel_pg_dump_matches_postgres() {
    const APP: &str = "
CREATE SCHEMA par;
CREATE TABLE par.a (id serial PRIMARY KEY, v text);
CREATE TABLE par.b (k bigint, w numeric(8,2));
INSERT INTO par.a (v) SELECT 'v' || g FROM generate_series(1, 50) g;
INSERT INTO par.b SELECT g, g / 3.0 FROM generate_series(1, 20) g;
";
    let pg = Postgres::start().expect("postgres");
    let dir = tempfile::tempdir().expect("tempdir");
    let rl = Server::start(&dir.path().join("catalog"), "postgres", &[]).expect("rocklake");
    let mut restored = Vec::new();
    for (i, dsn) in [pg.dsn(), rl.dsn()].iter().enumerate() {
        client(
            "psql",
            &["-X", "-q", "-v", "ON_ERROR_STOP=1", "-d", dsn, "-c", APP],
        );
        let out = dir.path().join(format!("par{i}"));
        let out = out.to_str().expect("path");
        client(
            "pg_dump",
            &["-d", dsn, "-n", "par", "-Fd", "-j", "2", "-f", out],
        );
        restored.push(client("pg_restore", &["-f", "-", out]));
    }
    assert!(restored[0].contains("COPY par.a (id, v) FROM stdin;"));
    assert_eq!(comparable(&restored[1]), comparable(&restored[0]));
    rl.stop().expect("stop");
}
