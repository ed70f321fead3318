//! Session settings and roles. Differentially against PostgreSQL 15: SET / SET LOCAL / RESET /
//! SHOW / current_setting / pg_settings with PostgreSQL's validation, units and transaction
//! rules, search_path resolving unqualified names, the ParameterStatus messages a client sees
//! after each statement, a per-session statement_timeout and
//! idle_in_transaction_session_timeout, start-up `options`. Then RockLake's own: a read-only
//! role from the configuration file (DuckDB reads through it; every write and every attempt
//! at read-write mode is refused), and the settings RockLake refuses instead of ignoring.

use rocklake_tests::{duckdb_python_quiet, result_json, Postgres, Server};

const SCRIPT: &str = r#"
import sys, json, time, psycopg
dsn = sys.argv[1]
out = []
c = psycopg.connect(dsn, autocommit=True)
REPORTED = ["application_name", "DateStyle", "TimeZone", "default_transaction_read_only"]
SHOW_ALL_KEEP = ["application_name", "DateStyle", "search_path", "statement_timeout",
                 "TimeZone", "transaction_isolation", "work_mem"]
# NOTICE and WARNING messages, per statement of the first connection.
notices = []
c.add_notice_handler(lambda d: notices.append([d.severity, d.sqlstate, d.message_primary]))
def run(sql, conn=c):
    notices.clear()
    try:
        cur = conn.execute(sql)
        rows = cur.fetchall() if cur.description else cur.statusmessage
        if sql == "SHOW ALL":
            # RockLake knows fewer settings than PostgreSQL: compare those it has.
            rows = [r for r in rows if r[0] in SHOW_ALL_KEEP] + [cur.statusmessage]
        res = [sql, [d.name for d in cur.description] if cur.description else None, rows]
    except psycopg.Error as e:
        d = e.diag
        res = [sql, "error", e.sqlstate, d.message_primary, d.message_hint]
    res.append({p: conn.info.parameter_status(p) for p in REPORTED})
    res.append(list(notices))
    out.append(res)
for s in [
    "SHOW statement_timeout",
    "SET statement_timeout = 'abc'",
    "SET statement_timeout = -1",
    "SET statement_timeout = '5 parsecs'",
    "SET statement_timeout = 2147483648",
    "SET statement_timeout = 1, 2",
    "SET statement_timeout = 1500", "SHOW statement_timeout",
    "SET statement_timeout = '1.5s'", "SHOW statement_timeout",
    "SET statement_timeout TO '60s'", "SHOW statement_timeout",
    "SELECT current_setting('statement_timeout')",
    "SELECT name, setting, unit, reset_val FROM pg_settings WHERE name IN ('statement_timeout', 'work_mem') ORDER BY 1",
    "SET statement_timeout TO DEFAULT", "SHOW statement_timeout",
    "SET transaction_read_only = maybe",
    "SET default_transaction_isolation = 'bogus'",
    "SET server_version = '1'", "SET port = 1", "SET lc_collate = 'C'",
    "SET nosuch = 1", "SHOW nosuch", "SELECT current_setting('nosuch')",
    "SELECT current_setting('nosuch', true)",
    "SET extra_float_digits = 99",
    # Settings tools SET (pg_dump, ORMs, migration tools); client_min_messages filters notices.
    "SET client_min_messages = warning", "DROP TABLE IF EXISTS nope_x", "SHOW client_min_messages",
    "SET client_min_messages TO error", "COMMIT", "SET client_min_messages = 'notice'",
    "DROP TABLE IF EXISTS nope_x", "SET client_min_messages = bogus",
    "SET client_min_messages = info", "SHOW client_min_messages", "DROP TABLE IF EXISTS nope_x",
    "SET client_min_messages = debug", "SHOW client_min_messages", "RESET client_min_messages",
    "SET synchronous_commit = off", "SHOW synchronous_commit", "SET synchronous_commit = 'true'",
    "SHOW synchronous_commit", "SET synchronous_commit = local", "SET synchronous_commit = t",
    "SET jit = off", "SHOW jit", "SET row_security = off", "SET synchronize_seqscans TO off",
    "SET check_function_bodies = false", "SET enable_seqscan = off", "SHOW enable_seqscan",
    "SET random_page_cost = 1.1", "SHOW random_page_cost", "SET random_page_cost = -1",
    "SET random_page_cost = 'abc'", "SET random_page_cost = 1e10", "SHOW random_page_cost",
    "SET random_page_cost = 0.000001", "SHOW random_page_cost", "SET random_page_cost = 123456.7",
    "SHOW random_page_cost", "SET maintenance_work_mem = '1GB'", "SHOW maintenance_work_mem",
    "SET temp_buffers = '16MB'", "SHOW temp_buffers", "SET xmloption = document",
    "SET default_table_access_method = heap",
    "SELECT name, setting, unit, vartype, min_val, max_val, enumvals::text, boot_val FROM pg_settings WHERE name IN ('client_min_messages', 'synchronous_commit', 'jit', 'random_page_cost', 'maintenance_work_mem', 'temp_buffers', 'enable_seqscan', 'row_security', 'effective_cache_size', 'seq_page_cost', 'default_statistics_target', 'max_parallel_workers_per_gather', 'xmloption', 'synchronize_seqscans', 'check_function_bodies', 'default_table_access_method') ORDER BY 1",
    "RESET client_min_messages", "RESET random_page_cost", "SHOW random_page_cost",
    "SET application_name = 'x y'", "SHOW application_name",
    "SET search_path = a, \"B\", public", "SHOW search_path",
    "SET search_path = \"select\", a$b, \"user\", public", "SHOW search_path",
    "SELECT current_schemas(true), current_schema()",
    "DROP TABLE IF EXISTS ss_t", "CREATE TABLE ss_t (a int)", "INSERT INTO public.ss_t VALUES (1)",
    "SET search_path = nosuch", "SELECT current_schema()", "CREATE TABLE ss_u (a int)",
    "SELECT * FROM ss_t", "SELECT * FROM public.ss_t",
    "CREATE SCHEMA IF NOT EXISTS ss", "SET search_path = ss, public",
    "DROP TABLE IF EXISTS ss.ss_t", "CREATE TABLE ss_t (b int)", "INSERT INTO ss_t VALUES (7)",
    "SELECT * FROM ss_t", "SELECT * FROM public.ss_t", "SELECT current_schema()",
    "RESET search_path", "SELECT * FROM ss_t", "SHOW search_path",
    "SET TIME ZONE 'UTC'", "SHOW timezone", "SHOW TIME ZONE", "RESET timezone", "SHOW TimeZone",
    "SET TIME ZONE 'Europe/Paris'", "RESET TIME ZONE", "SHOW TIME ZONE",
    "SHOW SESSION AUTHORIZATION", "RESET SESSION AUTHORIZATION", "SHOW TRANSACTION ISOLATION LEVEL",
    "SHOW session", "RESET time",
    "SELECT current_role, current_catalog, current_schema, current_user, session_user, user",
    # What PostgreSQL reports and goes on from: NoticeResponse, severity NOTICE or WARNING.
    "DROP TABLE IF EXISTS nt_missing", "DROP TABLE IF EXISTS nt_missing, public.nt_other",
    "DROP TABLE IF EXISTS nt_nosch.t", "CREATE TABLE nt_t (a int)", "CREATE TABLE IF NOT EXISTS nt_t (a int)",
    "CREATE SCHEMA IF NOT EXISTS public", "ALTER TABLE nt_t ADD COLUMN IF NOT EXISTS a int",
    "ALTER TABLE nt_t DROP COLUMN IF EXISTS zz", "ALTER TABLE IF EXISTS nt_missing ADD COLUMN b int",
    "ALTER TABLE nt_t ADD COLUMN IF NOT EXISTS a int, ADD COLUMN IF NOT EXISTS b int",
    "BEGIN", "BEGIN", "COMMIT", "COMMIT", "ROLLBACK", "END", "ABORT",
    "SET LOCAL work_mem = '8MB'", "SET LOCAL TIME ZONE 'UTC'", "SET TRANSACTION READ ONLY",
    "SET TRANSACTION ISOLATION LEVEL SERIALIZABLE, READ ONLY", "RESET transaction_isolation",
    "SET transaction_isolation = 'serializable'",
    "SET LOCAL work_mem = '8MB'; SELECT 1", "SELECT 1; COMMIT", "SELECT 1; BEGIN; BEGIN; COMMIT",
    "BEGIN", "SET LOCAL work_mem = '8MB'", "SET TRANSACTION READ ONLY", "RESET transaction_isolation",
    "COMMIT", "DROP TABLE nt_t", "DROP TABLE IF EXISTS nt_t",
    # DROP SCHEMA: dependents listed, CASCADE's notice, names checked before dependents.
    "CREATE SCHEMA ds1", "CREATE TABLE ds1.a (x int)", "CREATE TABLE ds1.b (x int)", "DROP SCHEMA ds1",
    "DROP SCHEMA ds1, nosuch", "SET search_path = ds1, public", "DROP SCHEMA ds1 RESTRICT",
    "RESET search_path", "DROP SCHEMA IF EXISTS nosuch, ds1 CASCADE", "DROP SCHEMA ds1",
    "DROP SCHEMA pg_catalog", "CREATE SCHEMA ds2", "CREATE TABLE ds2.a (x int)",
    "DROP SCHEMA ds2 CASCADE", "SELECT nspname FROM pg_namespace WHERE nspname LIKE 'ds%'",
    "BEGIN", "CREATE SCHEMA ds3", "CREATE TABLE ds3.t (a int)", "SELECT * FROM t", "ROLLBACK",
    "CREATE SCHEMA ds4", "BEGIN", "DROP SCHEMA ds4", "CREATE SCHEMA ds4", "CREATE TABLE ds4.t (a int)",
    "COMMIT", "SELECT relname FROM pg_class c JOIN pg_namespace n ON n.oid = relnamespace "
    "WHERE nspname = 'ds4'", "DROP SCHEMA ds4 CASCADE",
    "SET LOCAL statement_timeout = 100", "SHOW statement_timeout",
    "BEGIN", "SET statement_timeout = 7000", "ROLLBACK", "SHOW statement_timeout",
    "BEGIN", "SET statement_timeout = 7000", "COMMIT", "SHOW statement_timeout",
    "BEGIN", "SET LOCAL statement_timeout = 9000", "SHOW statement_timeout", "COMMIT",
    "SHOW statement_timeout",
    "BEGIN", "SET statement_timeout = 1000", "SELECT 1/0", "ROLLBACK", "SHOW statement_timeout",
    "SET statement_timeout = 1000; SELECT 1/0", "SHOW statement_timeout",
    "RESET ALL", "SHOW statement_timeout",
    "SET datestyle = 'iso, dmy'", "SHOW datestyle", "SET datestyle = 'ISO'", "SHOW DateStyle",
    "RESET datestyle",
    "SET work_mem = '64MB'", "SHOW work_mem", "SET work_mem = 100", "SHOW work_mem",
    "SET default_transaction_read_only = on", "SHOW transaction_read_only", "BEGIN",
    "SHOW transaction_read_only", "CREATE TABLE ro_t (a int)", "ROLLBACK",
    "SET default_transaction_read_only = off",
    "BEGIN", "SET TRANSACTION READ ONLY", "INSERT INTO public.ss_t VALUES (2)", "ROLLBACK",
    "BEGIN ISOLATION LEVEL REPEATABLE READ", "SHOW transaction_isolation", "SELECT 1",
    "SET TRANSACTION ISOLATION LEVEL READ COMMITTED", "ROLLBACK",
    "SET default_transaction_isolation = 'repeatable read'", "BEGIN", "SHOW transaction_isolation",
    "COMMIT", "RESET default_transaction_isolation", "SHOW transaction_isolation",
    "SET SESSION CHARACTERISTICS AS TRANSACTION READ ONLY", "SHOW default_transaction_read_only",
    "RESET default_transaction_read_only",
    "SET client_encoding = 'UTF8'", "SHOW client_encoding",
    # Encoding names count only their letters and digits (asyncpg sends `'utf-8'`, quotes too).
    "SET client_encoding = 'utf-8'", "SHOW client_encoding",
    "SET client_encoding = $$'Utf_8'$$", "SHOW client_encoding", "SET client_encoding = 'unicode'",
    "SET application_name = E'a\\tb'", "SHOW application_name", "SET application_name = $q$x'y$q$",
    "SHOW application_name", "SET application_name = 'ünï'", "SHOW application_name",
    "RESET application_name",
    "SET statement_timeout = 5000", "DISCARD ALL", "SHOW statement_timeout", "SHOW application_name",
    # set_config(): SET from inside a query (psql, pg_dump and ORMs use it).
    "SELECT set_config('statement_timeout', '3s', false)", "SHOW statement_timeout",
    "SELECT set_config('application_name', 'via set_config', false) AS v",
    "SELECT set_config('work_mem', '8MB', false), current_setting('work_mem')",
    "BEGIN", "SELECT set_config('statement_timeout', '4s', true)", "SHOW statement_timeout",
    "COMMIT", "SHOW statement_timeout",
    "BEGIN", "SELECT set_config('statement_timeout', '5s', false)", "ROLLBACK",
    "SHOW statement_timeout",
    "SELECT set_config('search_path', '', false)", "SHOW search_path",
    "SELECT set_config('search_path', 'public', false)",
    "SELECT set_config('statement_timeout', '8s', false), 1/0", "SHOW statement_timeout",
    "SELECT set_config('statement_timeout', NULL, false)", "SHOW statement_timeout",
    "SELECT set_config('nosuch', '1', false)",
    "SELECT set_config('statement_timeout', 'abc', false)",
    "SELECT set_config('server_version', '1', false)",
    "SELECT set_config(NULL, '1', false)",
    # Custom placeholders (`SET myapp.x`): exist once set, kept (empty) after a rollback,
    # transactional values, SET LOCAL, set_config, case-insensitive names, name rules.
    "SHOW myapp.x", "SELECT current_setting('myapp.x', true) IS NULL",
    "SELECT current_setting('myapp.x')", "SET myapp.x = 'hello'", "SHOW myapp.x",
    "SELECT current_setting('myapp.x'), current_setting('MyApp.X')",
    "BEGIN", "SET myapp.y = 'in txn'", "SHOW myapp.y", "ROLLBACK", "SHOW myapp.y",
    "BEGIN", "SET LOCAL myapp.x = 'local'", "SHOW myapp.x", "COMMIT", "SHOW myapp.x",
    "RESET myapp.x", "SHOW myapp.x", "SET myapp.x TO 42", "SHOW myapp.x",
    "SELECT set_config('myapp.z', 'viaconfig', false), current_setting('myapp.z')",
    "SELECT set_config('myapp.q', NULL, false), current_setting('myapp.q')",
    "SELECT name FROM pg_settings WHERE name LIKE 'myapp%'",
    "SET a.b.c = 1", "SHOW a.b.c", "SET \"My App\".x = 2", "SET myapp = 1",
    "SET myapp.x = DEFAULT", "SHOW myapp.x", "SET myapp.w TO 'a', 'b'", "SHOW myapp.w",
    "SET myapp.n = 1.5", "SHOW myapp.n", "SET myapp.o = on", "SHOW myapp.o", "SET myapp.b = true", "SHOW myapp.b",
    "SELECT set_config('bad name.x', '1', false)",
    "SET myapp.x = 'v1'", "BEGIN", "SET myapp.x = 'v2'", "SAVEPOINT s", "SET myapp.x = 'v3'",
    "ROLLBACK TO SAVEPOINT s", "SHOW myapp.x", "COMMIT", "SHOW myapp.x",
    "DISCARD ALL", "SHOW myapp.x", "SET myApp.CamelCase = 'c'",
    "SELECT current_setting('myapp.camelcase')",
    "SELECT set_config('statement_timeout', '6s', NULL)", "SHOW statement_timeout",
    "RESET ALL", "SHOW ALL",
]:
    run(s)

# statement_timeout is per session: this one times out, a second session does not.
slow = "SELECT count(*) FROM generate_series(1, 3000) a, generate_series(1, 1000) b"
run("SET statement_timeout = 50")
run(slow)
other = psycopg.connect(dsn, autocommit=True)
run(slow, other)
run("SHOW statement_timeout", other)
run("RESET statement_timeout")
run(slow)

# A CancelRequest from another thread stops a running statement (one far too long to finish
# first), and the session keeps working.
import threading
endless = "SELECT count(*) FROM generate_series(1, 30000) a, generate_series(1, 10000) b"
timer = threading.Timer(0.3, c.cancel_safe)
timer.start()
run(endless)
timer.join()
run("SELECT 1")

# idle_in_transaction_session_timeout is per session too.
idle = psycopg.connect(dsn, autocommit=True)
run("SET idle_in_transaction_session_timeout = 300", idle)
run("BEGIN", idle)
time.sleep(1.0)
try:
    idle.execute("SELECT 1")
    out.append(["idle session", "still open"])
except psycopg.Error as e:
    out.append(["idle session", "error", e.sqlstate, idle.closed])
run("BEGIN", other)
time.sleep(1.0)
run("SELECT 1", other)
run("COMMIT", other)

# Start-up parameters: options=-c and application_name, as RESET's target.
opts = psycopg.connect(dsn, autocommit=True, application_name="boot",
                       options="-c statement_timeout=2s -c search_path=ss,public -c myapp.boot=yes")
run("SHOW statement_timeout", opts)
run("SHOW myapp.boot", opts)
run("SET myapp.boot = 'changed'", opts)
run("RESET myapp.boot", opts)
run("SHOW myapp.boot", opts)
run("SELECT * FROM ss_t", opts)
run("SET application_name = 'later'", opts)
run("RESET ALL", opts)
run("SHOW application_name", opts)
run("SHOW statement_timeout", opts)
try:
    psycopg.connect(dsn, options="-c nosuch=1")
    out.append(["bad startup setting", "accepted"])
except psycopg.Error as e:
    out.append(["bad startup setting", str(e).split("FATAL:")[-1].strip()])
print("RESULT", json.dumps(out))
"#;

fn run(dsn: &str) -> serde_json::Value {
    let (ok, out) = duckdb_python_quiet("155", SCRIPT, &[dsn]).expect("python");
    assert!(ok, "script failed: {out}");
    result_json(&out)
}

#[test]
fn settings_match_postgres() {
    let pg = Postgres::start().expect("postgres");
    let expected = run(&pg.dsn());
    let dir = tempfile::tempdir().expect("tempdir");
    // PostgreSQL's user, so that current_user and SHOW SESSION AUTHORIZATION compare.
    let server = Server::start(&dir.path().join("catalog"), "postgres", &[]).expect("server");
    let got = run(&server.dsn());
    let (e, g) = (
        expected.as_array().expect("array"),
        got.as_array().expect("array"),
    );
    assert_eq!(e.len(), g.len());
    let mismatches: Vec<String> = e
        .iter()
        .zip(g)
        .filter(|(a, b)| a != b)
        .map(|(a, b)| format!("PostgreSQL: {a}\nRockLake:   {b}"))
        .collect();
    assert!(mismatches.is_empty(), "{}", mismatches.join("\n\n"));
    // The script must have seen the behaviours it is about, not only agreement.
    let text = got.to_string();
    for needle in [
        "57014",
        "canceling statement due to user request",
        "25P03",
        "1500ms",
        "\"x y\"",
        "3F000",
        "25006",
        "25001",
        "42704",
        "viaconfig",
        "42602",
    ] {
        assert!(text.contains(needle), "{needle} never seen: {text}");
    }
    println!(
        "session settings: {} statements identical to PostgreSQL",
        e.len()
    );
    server.stop().expect("stop");
}

const ROLE_SCRIPT: &str = r#"
import sys, json, duckdb, psycopg
port, data, writer_pw = sys.argv[1], sys.argv[2], sys.argv[3]
out = []
def attach(user, pw, read_only):
    c = duckdb.connect()
    ro = ", READ_ONLY" if read_only else ""
    c.execute(f"ATTACH 'ducklake:postgres:host=127.0.0.1 port={port} dbname=lake user={user} password={pw}' AS lake (DATA_PATH '{data}'{ro})")
    return c
w = attach("rocklake", writer_pw, False)
w.execute("CREATE TABLE lake.items AS SELECT range AS id FROM range(5)")
r = attach("reader", "readerpw", True)
out.append(["reader count", r.execute("SELECT count(*) FROM lake.items").fetchall()[0][0]])
w.execute("INSERT INTO lake.items VALUES (5)")
r2 = attach("reader", "readerpw", True)
out.append(["reader sees new commit", r2.execute("SELECT count(*) FROM lake.items").fetchall()[0][0]])
rw = attach("reader", "readerpw", False)
try:
    rw.execute("INSERT INTO lake.items VALUES (6)")
    out.append(["reader insert", "committed"])
except Exception as e:
    out.append(["reader insert", "refused", "read-only transaction" in str(e)])
out.append(["writer count", w.execute("SELECT count(*) FROM lake.items").fetchall()[0][0]])
def pg(sql, user="reader", pw="readerpw"):
    try:
        conn = psycopg.connect(f"host=127.0.0.1 port={port} dbname=lake user={user} password={pw}", autocommit=True)
    except psycopg.Error as e:
        return ["connect", str(e).split("FATAL:")[-1].strip()]
    try:
        cur = conn.execute(sql)
        return [sql, cur.fetchall() if cur.description else cur.statusmessage,
                conn.info.parameter_status("default_transaction_read_only")]
    except psycopg.Error as e:
        return [sql, "error", e.sqlstate, e.diag.message_primary]
for sql in [
    "SHOW transaction_read_only",
    "SHOW default_transaction_read_only",
    "CREATE TABLE public.x (a int)",
    "DELETE FROM public.ducklake_snapshot",
    "SET default_transaction_read_only = off",
    "SET transaction_read_only = off",
    "BEGIN READ WRITE",
    "SET SESSION CHARACTERISTICS AS TRANSACTION READ WRITE",
    "SELECT count(*) > 0 FROM public.ducklake_snapshot",
]:
    out.append(pg(sql))
out.append(pg("SELECT 1", pw="wrong"))
out.append(pg("SELECT 1", user="nobody"))
out.append(pg("SHOW transaction_read_only", user="rocklake", pw=writer_pw))
print("RESULT", json.dumps(out))
"#;

#[test]
fn read_only_role_reads_and_never_writes() {
    let dir = tempfile::tempdir().expect("tempdir");
    let config = dir.path().join("rocklake.toml");
    std::fs::write(
        &config,
        "[[users]]\nname = \"reader\"\npassword_env = \"RL_TEST_READER_PASSWORD\"\nread_only = true\n",
    )
    .expect("config");
    std::env::set_var("RL_TEST_READER_PASSWORD", "readerpw");
    let server = Server::start(
        &dir.path().join("catalog"),
        "rocklake",
        &["--config", config.to_str().expect("utf8")],
    )
    .expect("server");
    let data = dir.path().join("files");
    let (ok, out) = duckdb_python_quiet(
        "155",
        ROLE_SCRIPT,
        &[
            &server.port.to_string(),
            &format!("{}/", data.display()),
            &server.password,
        ],
    )
    .expect("python");
    assert!(ok, "script failed: {out}");
    let got = result_json(&out);
    println!("{}", serde_json::to_string_pretty(&got).expect("json"));
    let expected = serde_json::json!([
        ["reader count", 5],
        ["reader sees new commit", 6],
        ["reader insert", "refused", true],
        ["writer count", 6],
        ["SHOW transaction_read_only", [["on"]], "on"],
        ["SHOW default_transaction_read_only", [["on"]], "on"],
        [
            "CREATE TABLE public.x (a int)",
            "error",
            "25006",
            "cannot execute CREATE TABLE in a read-only transaction"
        ],
        [
            "DELETE FROM public.ducklake_snapshot",
            "error",
            "25006",
            "cannot execute DELETE in a read-only transaction"
        ],
        [
            "SET default_transaction_read_only = off",
            "error",
            "42501",
            "permission denied to set transaction read-write mode: role \"reader\" is read-only"
        ],
        [
            "SET transaction_read_only = off",
            "error",
            "42501",
            "permission denied to set transaction read-write mode: role \"reader\" is read-only"
        ],
        [
            "BEGIN READ WRITE",
            "error",
            "42501",
            "permission denied to set transaction read-write mode: role \"reader\" is read-only"
        ],
        [
            "SET SESSION CHARACTERISTICS AS TRANSACTION READ WRITE",
            "error",
            "42501",
            "permission denied to set transaction read-write mode: role \"reader\" is read-only"
        ],
        [
            "SELECT count(*) > 0 FROM public.ducklake_snapshot",
            [[true]],
            "on"
        ],
        [
            "connect",
            "password authentication failed for user \"reader\""
        ],
        [
            "connect",
            "password authentication failed for user \"nobody\""
        ],
        ["SHOW transaction_read_only", [["off"]], "off"],
    ]);
    assert_eq!(got, expected);
    server.stop().expect("stop");
}

/// What RockLake refuses rather than accepting and ignoring: zone names that do not exist,
/// non-ISO date styles, encodings other than UTF8, extra_float_digits below 1, set_config()
/// inside INSERT/UPDATE/DELETE/COPY.
#[test]
fn unsupported_settings_are_refused_not_ignored() {
    let dir = tempfile::tempdir().expect("tempdir");
    let server = Server::start(&dir.path().join("catalog"), "rocklake", &[]).expect("server");
    let script = r#"
import sys, json, psycopg
c = psycopg.connect(sys.argv[1], autocommit=True)
out = []
for s in ["SET TimeZone = 'Europe/Pariss'", "SET DateStyle = 'German'", "SET client_encoding = 'LATIN1'",
          "SET extra_float_digits = 0", "SET IntervalStyle = 'iso_8601'", "SET bytea_output = 'escape'",
          "SET TimeZone = 'Etc/UTC'", "SHOW TimeZone", "SET extra_float_digits = 3", "SHOW extra_float_digits",
          "CREATE TABLE sc_t (v TEXT)",
          "INSERT INTO sc_t SELECT set_config('work_mem', '8MB', false)", "SHOW work_mem"]:
    try:
        cur = c.execute(s)
        out.append([s, cur.fetchall() if cur.description else "ok"])
    except psycopg.Error as e:
        out.append([s, e.sqlstate, e.diag.message_hint is not None])
print("RESULT", json.dumps(out))
"#;
    let (ok, out) = duckdb_python_quiet("155", script, &[&server.dsn()]).expect("python");
    assert!(ok, "script failed: {out}");
    let got = result_json(&out);
    let expected = serde_json::json!([
        ["SET TimeZone = 'Europe/Pariss'", "22023", false],
        ["SET DateStyle = 'German'", "22023", true],
        ["SET client_encoding = 'LATIN1'", "22023", true],
        ["SET extra_float_digits = 0", "22023", true],
        ["SET IntervalStyle = 'iso_8601'", "22023", true],
        ["SET bytea_output = 'escape'", "22023", true],
        ["SET TimeZone = 'Etc/UTC'", "ok"],
        ["SHOW TimeZone", [["Etc/UTC"]]],
        ["SET extra_float_digits = 3", "ok"],
        ["SHOW extra_float_digits", [["3"]]],
        ["CREATE TABLE sc_t (v TEXT)", "ok"],
        // set_config in a statement that cannot apply it: refused, never silently dropped.
        [
            "INSERT INTO sc_t SELECT set_config('work_mem', '8MB', false)",
            "0A000",
            false
        ],
        ["SHOW work_mem", [["4MB"]]],
    ]);
    assert_eq!(got, expected);
    server.stop().expect("stop");
}

/// `quote_all_identifiers`, as `pg_dump --quote-all-identifiers` sets it: every identifier
/// the server writes is quoted — `quote_ident()`, `format('%I')`, `regclass`, `regtype`,
/// `regnamespace` and `regproc` output, `format_type` (types printed by their name, not those
/// SQL spells as keywords), `pg_get_expr` of defaults (function and type names, a `regclass`
/// constant's names), `pg_get_constraintdef`, `pg_get_indexdef`, a key's detail, a hint —
/// with `SET`, `SET LOCAL`, `RESET`, `SHOW` and `pg_settings` as PostgreSQL's, and the same
/// query answered before and after the switch (no kept result crosses it).
const QUOTE_ALL: &str = r#"
CAT = ("SELECT a.attname, format_type(a.atttypid, a.atttypmod), pg_get_expr(d.adbin, d.adrelid) "
       "FROM pg_attribute a LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum "
       "WHERE a.attrelid = '\"Sch\".tab'::regclass AND a.attnum > 0 ORDER BY a.attnum")
KEYS = ("SELECT conname, pg_get_constraintdef(oid), pg_get_indexdef(conindid) FROM pg_constraint "
        "WHERE conrelid IN ('\"Sch\".tab'::regclass, 'plain'::regclass) ORDER BY conname")
NAMES = ("SELECT '\"Sch\".tab'::regclass, 'plain'::regclass, 'text'::regtype, 'int4'::regtype, "
         "'varchar'::regtype, '_text'::regtype, 'uuid'::regtype, '\"char\"'::regtype, "
         "'public'::regnamespace, '\"Sch\"'::regnamespace, "
         "quote_ident('abc'), quote_ident('Abc'), format('%I.%I', 'abc', 'select'), "
         "format_type('numeric'::regtype, 655366), format_type('bpchar'::regtype, 7), "
         "format_type('timestamptz'::regtype, -1), format_type('bool'::regtype, -1), "
         "format_type('date'::regtype, -1), format_type('_int4'::regtype, -1)")
INDEXES = "SELECT indexname, indexdef FROM pg_indexes WHERE schemaname IN ('Sch', 'public') ORDER BY 1"
KW = ("SELECT a.attname, pg_get_expr(d.adbin, d.adrelid), column_default FROM pg_attribute a "
      "JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum "
      "JOIN information_schema.columns c ON c.table_name = 'kw' AND c.column_name = a.attname "
      "WHERE a.attrelid = 'kw'::regclass ORDER BY a.attnum")
for sql in [
    'CREATE SCHEMA "Sch"',
    'CREATE SEQUENCE "Sch".s',
    'CREATE TABLE "Sch".tab (id bigint PRIMARY KEY, "Name" text DEFAULT \'x\', v varchar(10) DEFAULT \'y\', '
    "at timestamptz DEFAULT now(), n int DEFAULT nextval('\"Sch\".s'), tags text[], "
    "u uuid DEFAULT gen_random_uuid(), d date DEFAULT '2024-01-02', ok boolean DEFAULT true, "
    "num numeric(10,2) DEFAULT 1.5, c char(3), ser serial)",
    "CREATE TABLE plain (a int, b int, CONSTRAINT plain_key PRIMARY KEY (a, b))",
    "CREATE TABLE h (x int)",
    "CREATE SEQUENCE \"MySeq\"",
    "CREATE TABLE kw (a timestamptz DEFAULT current_timestamp, b text DEFAULT current_user, "
    "c int DEFAULT coalesce(1, 2), d int DEFAULT greatest(1, 2), e timestamptz DEFAULT current_timestamp(3), "
    "f bigint DEFAULT nextval('\"MySeq\"'), g int DEFAULT nullif(1, 2))",
    "INSERT INTO plain VALUES (1, 2)",
    "SHOW quote_all_identifiers",
    "SELECT name, setting, category, short_desc, context, vartype, boot_val, reset_val FROM pg_settings WHERE name = 'quote_all_identifiers'",
    CAT, KEYS, NAMES, INDEXES, KW,
    "SET quote_all_identifiers = on",
    "SHOW quote_all_identifiers",
    "SELECT current_setting('quote_all_identifiers'), setting FROM pg_settings WHERE name = 'quote_all_identifiers'",
    CAT, KEYS, NAMES, INDEXES, KW,
    "CREATE TABLE kw2 (id serial, t text DEFAULT 'x'::text)",
    "SET search_path = \"Sch\", public", "SHOW search_path",
    "SET LOCAL search_path = public", "RESET search_path", "SHOW search_path",
    "RESET quote_all_identifiers",
    "SELECT column_name, column_default FROM information_schema.columns WHERE table_name = 'kw2' ORDER BY 1",
    "SET quote_all_identifiers = on",
    "INSERT INTO plain VALUES (1, 2)",
    "ALTER TABLE h ALTER COLUMN x TYPE uuid",
    "SELECT to_regclass('nosuch.tab'), to_regclass('\"Sch\".nosuch')",
    "RESET quote_all_identifiers",
    CAT, NAMES,
    "BEGIN",
    "SET LOCAL quote_all_identifiers TO true",
    NAMES,
    "COMMIT",
    NAMES,
    "SET quote_all_identifiers = 'maybe'",
    "SELECT 'nosuch.tab'::regclass",
    "SELECT '\"Sch\".nosuch'::regclass",
]:
    run(sql)
print("RESULT " + json.dumps(out))
"#;

#[test]
fn quote_all_identifiers_quotes_as_postgres() {
    let got = rocklake_tests::same_outcomes_as_postgres(&format!(
        "{}{QUOTE_ALL}",
        rocklake_tests::PSYCOPG_HARNESS
    ));
    // The switch changed what the same query shows: the comparison compared quoting.
    let shown: Vec<String> = got
        .iter()
        .filter(|o| {
            o[0].as_str()
                .is_some_and(|s| s.starts_with("SELECT '\"Sch\".tab'"))
        })
        .map(|o| o[2].to_string())
        .collect();
    assert_eq!(shown.len(), 5, "{shown:?}");
    assert_ne!(shown[0], shown[1]);
    assert!(shown[1].contains(r#"\"text\""#), "{}", shown[1]);
    assert_eq!(shown[0], shown[2]);
}
