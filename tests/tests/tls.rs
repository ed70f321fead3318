//! TLS: with a certificate and key, `sslmode=require` works for psql, psycopg and DuckDB,
//! `prefer` upgrades, wrong passwords fail as on PostgreSQL, and `--tls-required` refuses
//! plaintext with PostgreSQL's 28000 message.

use std::path::Path;
use std::process::Command;

use rocklake_tests::{duckdb_python, Server};

/// A self-signed certificate for 127.0.0.1 / localhost, made with the openssl CLI.
fn self_signed(dir: &Path) -> (String, String) {
    let cert = dir.join("server.crt");
    let key = dir.join("server.key");
    let ok = Command::new("openssl")
        .args([
            "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj",
        ])
        .arg("/CN=localhost")
        .args(["-addext", "subjectAltName=IP:127.0.0.1,DNS:localhost"])
        .arg("-keyout")
        .arg(&key)
        .arg("-out")
        .arg(&cert)
        .output()
        .expect("run openssl");
    assert!(
        ok.status.success(),
        "openssl: {}",
        String::from_utf8_lossy(&ok.stderr)
    );
    (cert.display().to_string(), key.display().to_string())
}

fn psql(server: &Server, sslmode: &str, password: &str, sql: &str) -> (bool, String, String) {
    let out = Command::new("psql")
        .arg(format!(
            "host=127.0.0.1 port={} user={} dbname=lake sslmode={sslmode}",
            server.port, server.user
        ))
        .args(["-X", "-At", "-c", sql])
        .env("PGPASSWORD", password)
        .env("PGCONNECT_TIMEOUT", "10")
        .output()
        .expect("run psql");
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).trim().to_string(),
        String::from_utf8_lossy(&out.stderr).trim().to_string(),
    )
}

const SSL_IN_USE: &str = r#"
import sys, psycopg
with psycopg.connect(sys.argv[1]) as c:
    print("SSL", c.pgconn.ssl_in_use, c.execute("SELECT 41 + 1").fetchone()[0])
"#;

const DUCKDB: &str = r#"
import sys, dlconn
con = dlconn.connect(exts=("ducklake", "postgres"))
con.execute(sys.argv[1])
con.execute("CREATE TABLE lake.t AS SELECT range AS id FROM range(5)")
print("SUM", con.execute("SELECT sum(id) FROM lake.t").fetchone()[0])
"#;

#[test]
fn tls_require_prefer_and_required() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (cert, key) = self_signed(dir.path());
    let server = Server::start(
        &dir.path().join("catalog"),
        "rocklake",
        &["--tls-cert", &cert, "--tls-key", &key],
    )
    .expect("start with TLS");

    let (ok, out, err) = psql(&server, "require", &server.password, "SELECT 1");
    assert!(ok && out == "1", "psql sslmode=require: {out} {err}");
    let (ok, _, err) = psql(&server, "require", "wrong", "SELECT 1");
    assert!(!ok);
    assert!(
        err.contains("FATAL:  password authentication failed for user \"rocklake\""),
        "{err}"
    );
    let (ok, out, _) = psql(&server, "disable", &server.password, "SELECT 2");
    assert!(
        ok && out == "2",
        "plaintext still allowed without --tls-required"
    );

    for (mode, want) in [
        ("require", "SSL True 42"),
        ("prefer", "SSL True 42"),
        ("disable", "SSL False 42"),
    ] {
        let dsn = format!("{} sslmode={mode}", server.dsn());
        let (ok, out) = duckdb_python("155", SSL_IN_USE, &[&dsn]).expect("psycopg");
        assert!(ok && out.contains(want), "sslmode={mode}: {out}");
    }

    let attach = server.attach.replace(" user=", " sslmode=require user=");
    let (ok, out) = duckdb_python("155", DUCKDB, &[&attach]).expect("duckdb");
    assert!(ok && out.contains("SUM 10"), "DuckDB over TLS: {out}");
    server.stop().expect("stop");

    let strict = Server::start(
        &dir.path().join("catalog"),
        "rocklake",
        &["--tls-cert", &cert, "--tls-key", &key, "--tls-required"],
    )
    .expect("start with --tls-required");
    let (ok, _, err) = psql(&strict, "disable", &strict.password, "SELECT 1");
    assert!(!ok);
    assert!(
        err.contains("no pg_hba.conf entry for host \"127.0.0.1\", user \"rocklake\", database \"lake\", no encryption"),
        "{err}"
    );
    let (ok, out, err) = psql(&strict, "require", &strict.password, "SELECT 3");
    assert!(ok && out == "3", "{err}");
    strict.stop().expect("stop");
}
