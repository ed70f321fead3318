//! End-to-end tests of the `rocklake` binary: the ATTACH line, login with its credentials,
//! clean shutdown on SIGTERM, and refusing `--auth trust` off loopback.

#[path = "server_common/mod.rs"]
mod common;

use std::io::{BufRead, BufReader};
use std::net::SocketAddr;
use std::process::{Child, Command, Stdio};

use common::*;

fn rocklake(args: &[&str], dir: &std::path::Path) -> Child {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_rocklake"));
    for var in [
        "ROCKLAKE_LISTEN",
        "ROCKLAKE_CATALOG",
        "ROCKLAKE_USER",
        "ROCKLAKE_PASSWORD",
        "ROCKLAKE_AUTH",
        "ROCKLAKE_DATA_PATH",
    ] {
        cmd.env_remove(var);
    }
    cmd.args(args)
        .current_dir(dir)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn rocklake")
}

struct Attach {
    conninfo: Vec<(String, String)>,
    data_path: String,
}

impl Attach {
    fn get(&self, key: &str) -> String {
        self.conninfo
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.clone())
            .unwrap_or_else(|| panic!("no {key}"))
    }
    fn addr(&self) -> SocketAddr {
        format!("{}:{}", self.get("host"), self.get("port"))
            .parse()
            .expect("host:port")
    }
}

/// Read one SQL string literal starting at `s` (which begins with `'`); returns (value, rest).
fn sql_literal(s: &str) -> (String, &str) {
    assert!(s.starts_with('\''), "literal expected at {s:?}");
    let mut out = String::new();
    let mut chars = s[1..].char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        if c == '\'' {
            if matches!(chars.peek(), Some((_, '\''))) {
                chars.next();
                out.push('\'');
            } else {
                return (out, &s[i + 2..]);
            }
        } else {
            out.push(c);
        }
    }
    panic!("unterminated literal in {s:?}");
}

/// libpq `key=value` pairs, values optionally single-quoted with backslash escapes.
fn parse_conninfo(s: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut chars = s.chars().peekable();
    loop {
        while matches!(chars.peek(), Some(c) if c.is_whitespace()) {
            chars.next();
        }
        let key: String = std::iter::from_fn(|| chars.next_if(|c| *c != '=')).collect();
        if key.is_empty() {
            return out;
        }
        assert_eq!(chars.next(), Some('='));
        let mut value = String::new();
        if chars.peek() == Some(&'\'') {
            chars.next();
            while let Some(c) = chars.next() {
                match c {
                    '\\' => value.extend(chars.next()),
                    '\'' => break,
                    c => value.push(c),
                }
            }
        } else {
            value.extend(std::iter::from_fn(|| chars.next_if(|c| !c.is_whitespace())));
        }
        out.push((key, value));
    }
}

fn read_attach(child: &mut Child) -> Attach {
    let stdout = child.stdout.take().expect("stdout");
    let mut line = String::new();
    BufReader::new(stdout)
        .read_line(&mut line)
        .expect("read ATTACH line");
    let rest = line
        .strip_prefix("ATTACH ")
        .unwrap_or_else(|| panic!("unexpected first line {line:?}"));
    let (target, rest) = sql_literal(rest);
    let rest = rest
        .strip_prefix(" AS lake (DATA_PATH ")
        .expect("AS lake (DATA_PATH");
    let (data_path, rest) = sql_literal(rest);
    assert_eq!(rest.trim_end(), ");");
    let conninfo = target
        .strip_prefix("ducklake:postgres:")
        .expect("ducklake:postgres: prefix");
    Attach {
        conninfo: parse_conninfo(conninfo),
        data_path,
    }
}

fn terminate(child: &mut Child) -> std::process::ExitStatus {
    let status = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .expect("kill");
    assert!(status.success());
    child.wait().expect("wait")
}

#[tokio::test]
async fn server_cli_prints_attach_line_and_accepts_its_credentials() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut child = rocklake(&["--listen", "127.0.0.1:0"], dir.path());
    let attach = read_attach(&mut child);
    assert_eq!(attach.get("user"), "rocklake");
    assert_eq!(attach.get("dbname"), "lake");
    let password = attach.get("password");
    assert!(
        password.len() >= 16,
        "a generated password, not a fixed one"
    );
    assert!(std::path::Path::new(&attach.data_path).is_absolute());
    assert!(
        attach.data_path.ends_with("rocklake-data/files/"),
        "{}",
        attach.data_path
    );

    let mut c = Client::raw(attach.addr()).await;
    c.scram_login("rocklake", &password)
        .await
        .expect("login with the printed password");
    c.send(&query("SELECT 1")).await;
    assert_eq!(c.until_ready().await.last().map(|m| m.ty()), Some('Z'));

    let mut wrong = Client::raw(attach.addr()).await;
    assert_eq!(
        wrong
            .scram_login("rocklake", "guess")
            .await
            .expect_err("wrong password")
            .sqlstate(),
        "28P01"
    );

    let status = terminate(&mut child);
    assert!(status.success(), "clean exit on SIGTERM: {status:?}");
}

#[tokio::test]
async fn server_cli_serve_subcommand_with_env_password() {
    let dir = tempfile::tempdir().expect("tempdir");
    let secret = "it's a secret";
    let mut child = Command::new(env!("CARGO_BIN_EXE_rocklake"))
        .args([
            "serve",
            "--listen",
            "127.0.0.1:0",
            "--user",
            "duck",
            "--data-path",
            "s3://bucket/lake/",
        ])
        .env("ROCKLAKE_PASSWORD", secret)
        .current_dir(dir.path())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn");
    let attach = read_attach(&mut child);
    assert_eq!(attach.get("password"), secret);
    assert_eq!(attach.data_path, "s3://bucket/lake/");
    let mut c = Client::raw(attach.addr()).await;
    c.scram_login("duck", secret).await.expect("login");
    assert!(terminate(&mut child).success());
}

#[test]
fn server_cli_refuses_trust_on_non_loopback() {
    let dir = tempfile::tempdir().expect("tempdir");
    let child = rocklake(&["--listen", "0.0.0.0:0", "--auth", "trust"], dir.path());
    let out = child.wait_with_output().expect("wait");
    assert!(!out.status.success());
    assert!(out.stdout.is_empty(), "no ATTACH line when refusing");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("refusing --auth trust"), "{stderr}");
}

/// `rocklake config check`: file < environment < flag, and invalid settings exit 2 naming the key.
#[test]
fn config_precedence_and_errors() {
    let dir = tempfile::tempdir().expect("tempdir");
    let file = dir.path().join("rocklake.toml");
    std::fs::write(
        &file,
        "listen = \"127.0.0.1:7001\"\nuser = \"from_file\"\nmax_connections = 5\n\
         slow_statement_ms = 250\nlog_format = \"json\"\n",
    )
    .expect("write config");
    let check = |env: &[(&str, &str)], args: &[&str]| {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_rocklake"));
        cmd.env_clear()
            .envs(env.iter().copied())
            .args(["config", "check", "--json", "--config"])
            .arg(&file)
            .args(args);
        let out = cmd.output().expect("run config check");
        let v: serde_json::Value = if out.status.success() {
            serde_json::from_slice(&out.stdout).expect("json")
        } else {
            serde_json::Value::Null
        };
        (
            out.status.code(),
            v,
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    let (code, v, _) = check(&[], &[]);
    assert_eq!(code, Some(0));
    assert_eq!(v["user"], "from_file");
    assert_eq!(v["listen"], "127.0.0.1:7001");
    assert_eq!(v["max_connections"], 5);
    assert_eq!(v["slow_statement_ms"], 250);
    assert_eq!(v["log_format"], "json");
    assert_eq!(v["catalog"], "./rocklake-data/catalog", "default");
    assert_eq!(v["password"], "(random at start)");

    let (_, v, _) = check(&[("ROCKLAKE_USER", "from_env")], &[]);
    assert_eq!(v["user"], "from_env", "environment beats the file");
    let (_, v, _) = check(&[("ROCKLAKE_USER", "from_env")], &["--user", "from_flag"]);
    assert_eq!(v["user"], "from_flag", "a flag beats the environment");
    let (_, v, _) = check(&[("ROCKLAKE_PASSWORD", "s3cret")], &[]);
    assert_eq!(v["password"], "(set)", "the password is never printed");

    let (code, _, err) = check(&[], &["--listen", "not-an-address"]);
    assert_eq!(code, Some(2));
    assert!(err.contains("invalid listen"), "{err}");
    let (code, _, err) = check(&[("ROCKLAKE_MAX_CONNECTIONS", "0")], &[]);
    assert_eq!(code, Some(2));
    assert!(err.contains("invalid max_connections"), "{err}");
    std::fs::write(&file, "listen = 5\n").expect("write");
    let (code, _, err) = check(&[], &[]);
    assert_eq!(code, Some(2));
    assert!(
        err.contains("config file") && err.contains("listen"),
        "{err}"
    );
}
