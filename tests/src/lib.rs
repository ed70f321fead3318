//! Helpers for the end-to-end suites: start a real `rocklake` process, find the DuckDB venvs
//! made by `scripts/setup.sh`, start a throw-away PostgreSQL through `tests/e2e/pgctl.py`, and
//! run the Python harnesses. Nothing here skips: a missing prerequisite is a test failure that
//! names the command that installs it.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};

pub mod azurite;

/// The repository root (the parent of this crate).
pub fn repo_root() -> PathBuf {
    std::env::var_os("CARGO_MANIFEST_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")))
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_default()
}

/// `../shared` beside the checkout, or `ROCKLAKE_SHARED`.
pub fn shared_dir() -> PathBuf {
    std::env::var_os("ROCKLAKE_SHARED")
        .map(PathBuf::from)
        .unwrap_or_else(|| repo_root().join("..").join("shared"))
}

/// The `node_modules` folder with node-postgres that `scripts/setup.sh` installs.
pub fn node_clients_modules() -> Result<PathBuf> {
    let p = cache_dir().join("node-clients/node_modules");
    if !p.join("pg/package.json").exists() {
        bail!(
            "node-postgres is missing ({}): run `bash scripts/setup.sh` (or `cargo xtask ci`) first",
            p.display()
        );
    }
    Ok(p)
}

fn cache_dir() -> PathBuf {
    std::env::var_os("ROCKLAKE_CACHE")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(std::env::var("HOME").unwrap_or_else(|_| "/root".into()))
                .join(".cache/rocklake")
        })
}

/// The Python of the venv for a DuckDB version ("155" or "144").
pub fn venv_python(version: &str) -> Result<PathBuf> {
    let p = cache_dir()
        .join(format!("venv-{version}"))
        .join("bin/python");
    if !p.exists() {
        bail!(
            "{} is missing: run `bash scripts/setup.sh` (or `cargo xtask ci`) first",
            p.display()
        );
    }
    Ok(p)
}

/// Every thread's backtrace of a live process, by `gdb` in batch mode (bounded to 60 s), or
/// why there is none.
pub fn thread_backtraces(pid: u32) -> String {
    let out = Command::new("timeout")
        .args(["60", "gdb", "-p", &pid.to_string(), "-batch", "-nx"])
        .args(["-ex", "set pagination off", "-ex", "thread apply all bt 40"])
        .stdin(Stdio::null())
        .output();
    match out {
        Ok(o) if o.status.success() => format!(
            "--- backtraces of process {pid} ---\n{}",
            String::from_utf8_lossy(&o.stdout)
        ),
        Ok(o) => format!(
            "no backtraces of process {pid} (gdb: {}): {}",
            o.status,
            String::from_utf8_lossy(&o.stderr)
        ),
        Err(e) => format!("no backtraces of process {pid}: cannot run gdb: {e}"),
    }
}

/// The `rocklake` binary: `ROCKLAKE_BIN`, else the debug build in the target directory.
pub fn rocklake_bin() -> Result<PathBuf> {
    if let Some(p) = std::env::var_os("ROCKLAKE_BIN") {
        return Ok(PathBuf::from(p));
    }
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| repo_root().join("target"));
    let p = target.join("debug/rocklake");
    if !p.exists() {
        bail!(
            "{} is missing: build it with `cargo build -p rocklake` (cargo xtask ci does)",
            p.display()
        );
    }
    Ok(p)
}

/// A running RockLake server process.
pub struct Server {
    child: Child,
    pub port: u16,
    pub user: String,
    pub password: String,
    pub attach: String,
    pub catalog: PathBuf,
}

impl Server {
    /// Starts `rocklake serve` on a free loopback port over `catalog` and waits for the ATTACH line.
    /// [`Server::start`] with its Prometheus endpoint on a free loopback port (returned).
    pub fn start_with_metrics(catalog: &Path, user: &str) -> Result<(Server, u16)> {
        let port = free_port()?;
        let addr = format!("127.0.0.1:{port}");
        Ok((
            Server::start(catalog, user, &["--metrics-listen", &addr])?,
            port,
        ))
    }

    pub fn start(catalog: &Path, user: &str, extra: &[&str]) -> Result<Server> {
        Server::start_at(
            catalog.as_os_str(),
            &catalog.with_extension("files"),
            user,
            extra,
            &[],
            Stdio::inherit(),
        )
    }

    /// Starts `rocklake serve` over a catalog URL (`s3://…`) with extra environment (the store's
    /// credentials and endpoint); DuckDB's data files go to `data_path`.
    pub fn start_url(
        catalog: &str,
        data_path: &Path,
        env: &[(String, String)],
        extra: &[&str],
    ) -> Result<Server> {
        Server::start_at(
            catalog.as_ref(),
            data_path,
            "rocklake",
            extra,
            env,
            Stdio::inherit(),
        )
    }

    /// [`Server::start_url`] with the server's log (stderr) written to `log`.
    pub fn start_logged(
        catalog: &str,
        data_path: &Path,
        env: &[(String, String)],
        log: &Path,
    ) -> Result<Server> {
        let file =
            std::fs::File::create(log).with_context(|| format!("create {}", log.display()))?;
        Server::start_at(
            catalog.as_ref(),
            data_path,
            "rocklake",
            &[],
            env,
            file.into(),
        )
    }

    fn start_at(
        catalog: &std::ffi::OsStr,
        data_path: &Path,
        user: &str,
        extra: &[&str],
        env: &[(String, String)],
        stderr: Stdio,
    ) -> Result<Server> {
        let password = "test-secret-pw";
        let mut cmd = Command::new(rocklake_bin()?);
        cmd.arg("serve")
            .arg("--listen")
            .arg("127.0.0.1:0")
            .arg("--catalog")
            .arg(catalog)
            .arg("--user")
            .arg(user)
            .arg("--password")
            .arg(password)
            .arg("--data-path")
            .arg(data_path)
            .args(extra)
            .envs(env.iter().map(|(k, v)| (k, v)))
            // Which build of the core to run: `ROCKLAKE_CORE=wasm` runs the suites on the
            // component (cargo xtask ci does both); the default is the native build.
            .env(
                "ROCKLAKE_CORE",
                std::env::var("ROCKLAKE_CORE").unwrap_or_else(|_| "native".into()),
            )
            .env(
                "RUST_LOG",
                std::env::var("RUST_LOG").unwrap_or_else(|_| "warn".into()),
            )
            .stdout(Stdio::piped())
            .stderr(stderr);
        let mut child = cmd.spawn().context("spawn rocklake")?;
        let stdout = child.stdout.take().context("no stdout")?;
        let mut line = String::new();
        BufReader::new(stdout)
            .read_line(&mut line)
            .context("read ATTACH line")?;
        let attach = line.trim().to_string();
        let port = attach
            .split("port=")
            .nth(1)
            .and_then(|r| r.split_whitespace().next())
            .and_then(|p| p.parse().ok())
            .with_context(|| format!("no port in {attach:?}"))?;
        Ok(Server {
            child,
            port,
            user: user.into(),
            password: password.into(),
            attach,
            catalog: PathBuf::from(catalog),
        })
    }

    pub fn dsn(&self) -> String {
        format!(
            "host=127.0.0.1 port={} dbname=lake user={} password={}",
            self.port, self.user, self.password
        )
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Graceful stop (SIGTERM) and wait: the server must exit 0 within its own bounds (10 s
    /// for running statements, 15 s for closing the store).
    pub fn stop(self) -> Result<()> {
        let (status, _) = self.terminate()?;
        if !status.success() {
            bail!("rocklake exited with {status} after SIGTERM (its log says why)");
        }
        Ok(())
    }

    /// Sends SIGTERM and waits up to 40 s for the process to exit: its exit status and how
    /// long it took. One still running after 20 s has its threads' backtraces printed, for
    /// the log of a hang.
    pub fn terminate(mut self) -> Result<(std::process::ExitStatus, Duration)> {
        let _ = Command::new("kill")
            .arg("-TERM")
            .arg(self.child.id().to_string())
            .status();
        let started = Instant::now();
        let mut traced = false;
        while started.elapsed() < Duration::from_secs(40) {
            if let Some(status) = self.child.try_wait()? {
                return Ok((status, started.elapsed()));
            }
            if !traced && started.elapsed() > Duration::from_secs(20) {
                eprintln!("{}", thread_backtraces(self.child.id()));
                traced = true;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        self.child.kill()?;
        bail!("rocklake did not stop within 40 s of SIGTERM (thread backtraces above)")
    }

    /// Hard stop (SIGKILL), as a crash.
    pub fn kill(mut self) -> Result<()> {
        self.child.kill()?;
        self.child.wait()?;
        Ok(())
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A throw-away PostgreSQL 15 cluster (tests/e2e/pgctl.py).
pub struct Postgres {
    pub port: u16,
    pid: u32,
}

impl Postgres {
    pub fn start() -> Result<Postgres> {
        let out = Command::new("python3")
            .arg(repo_root().join("tests/e2e/pgctl.py"))
            .arg("start")
            .arg("--no-autovacuum")
            .output()
            .context("run pgctl.py")?;
        if !out.status.success() {
            bail!(
                "pgctl.py start failed: {}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).context("pgctl output")?;
        let port = v["port"].as_u64().context("port")? as u16;
        let pid = v["pid"].as_u64().context("pid")? as u32;
        Ok(Postgres { port, pid })
    }

    pub fn dsn(&self) -> String {
        format!(
            "host=127.0.0.1 port={} dbname=lake user=postgres password=postgres",
            self.port
        )
    }
}

/// A fresh PostgreSQL and a fresh RockLake side by side, for differential tests. RockLake's
/// role is `postgres` too, so `current_user` and `session_authorization` answer alike.
pub struct Differential {
    pub postgres: Postgres,
    pub rocklake: Server,
    /// RockLake's catalog; scratch files (reports) may go here too.
    pub dir: tempfile::TempDir,
}

impl Differential {
    pub fn start() -> Result<Differential> {
        let postgres = Postgres::start()?;
        let dir = tempfile::tempdir().context("tempdir")?;
        let rocklake = Server::start(&dir.path().join("catalog"), "postgres", &[])?;
        Ok(Differential {
            postgres,
            rocklake,
            dir,
        })
    }

    /// Runs a differential tool of tests/e2e with `python`: `tool ARGS --a <PostgreSQL> --b
    /// <RockLake> --report FILE`, echoing its output. Returns its stdout and the report.
    pub fn run_tool(
        &self,
        python: &Path,
        tool: &str,
        args: &[&str],
    ) -> Result<(String, serde_json::Value)> {
        let report = self.dir.path().join("report.json");
        let (_, out) = run_echo(
            Command::new(python)
                .arg(repo_root().join("tests/e2e").join(tool))
                .args(args)
                .arg("--a")
                .arg(self.postgres.dsn())
                .arg("--b")
                .arg(self.rocklake.dsn())
                .arg("--report")
                .arg(&report),
        )?;
        let text = std::fs::read(&report).with_context(|| format!("{tool} wrote no report"))?;
        Ok((
            out,
            serde_json::from_slice(&text).context("parse the report")?,
        ))
    }
}

impl Drop for Postgres {
    fn drop(&mut self) {
        let _ = Command::new("python3")
            .arg(repo_root().join("tests/e2e/pgctl.py"))
            .arg("stop")
            .arg("--pid")
            .arg(self.pid.to_string())
            .status();
    }
}

/// Runs a command, echoing its output, and returns (success, stdout).
pub fn run_echo(cmd: &mut Command) -> Result<(bool, String)> {
    let out = cmd.output().with_context(|| format!("run {cmd:?}"))?;
    let stdout = String::from_utf8_lossy(&out.stdout).to_string();
    print!("{stdout}");
    eprint!("{}", String::from_utf8_lossy(&out.stderr));
    Ok((out.status.success(), stdout))
}

/// A Python script run in a DuckDB venv with `dlconn` importable.
pub fn duckdb_python(version: &str, script: &str, args: &[&str]) -> Result<(bool, String)> {
    let py = venv_python(version)?;
    let tools = shared_dir().join("tools");
    run_echo(
        Command::new(py)
            .arg("-c")
            .arg(script)
            .args(args)
            .env("PYTHONPATH", tools),
    )
}

/// Like [`duckdb_python`], without echoing the output (for large machine-read results).
pub fn duckdb_python_quiet(version: &str, script: &str, args: &[&str]) -> Result<(bool, String)> {
    let py = venv_python(version)?;
    let out = Command::new(py)
        .arg("-c")
        .arg(script)
        .args(args)
        .env("PYTHONPATH", shared_dir().join("tools"))
        .output()
        .context("run python")?;
    eprint!("{}", String::from_utf8_lossy(&out.stderr));
    Ok((
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).to_string(),
    ))
}

/// A real S3-compatible server (moto, from the venv `scripts/setup.sh` makes) on a free loopback
/// port, with one bucket; stopped on drop.
pub struct S3Server {
    child: Child,
    pub endpoint: String,
    pub bucket: String,
}

impl S3Server {
    pub fn start() -> Result<S3Server> {
        let py = venv_python("s3")?;
        let port = free_port()?;
        let endpoint = format!("http://127.0.0.1:{port}");
        let child = Command::new(py.with_file_name("moto_server"))
            .args(["-H", "127.0.0.1", "-p", &port.to_string()])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .context("start moto_server")?;
        let server = S3Server {
            child,
            endpoint,
            bucket: "lake".into(),
        };
        let deadline = Instant::now() + Duration::from_secs(60);
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            if Instant::now() > deadline {
                bail!("moto_server did not listen on {port} within 60 s");
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        let made = Command::new(&py)
            .args([
                "-c",
                "import sys, boto3; boto3.client('s3', endpoint_url=sys.argv[1], \
                 aws_access_key_id='test', aws_secret_access_key='test', \
                 region_name='us-east-1').create_bucket(Bucket=sys.argv[2])",
                &server.endpoint,
                &server.bucket,
            ])
            .status()
            .context("create bucket")?;
        if !made.success() {
            bail!("could not create bucket {} on moto", server.bucket);
        }
        Ok(server)
    }

    /// The environment `object_store` reads for this server.
    pub fn env(&self) -> Vec<(String, String)> {
        [
            ("AWS_ENDPOINT", self.endpoint.as_str()),
            ("AWS_ALLOW_HTTP", "true"),
            ("AWS_ACCESS_KEY_ID", "test"),
            ("AWS_SECRET_ACCESS_KEY", "test"),
            ("AWS_REGION", "us-east-1"),
        ]
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
    }

    /// `s3://bucket/prefix`.
    pub fn url(&self, prefix: &str) -> String {
        format!("s3://{}/{prefix}", self.bucket)
    }
}

impl Drop for S3Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A loopback port that was free a moment ago.
pub fn free_port() -> Result<u16> {
    let l = std::net::TcpListener::bind("127.0.0.1:0").context("bind")?;
    Ok(l.local_addr()?.port())
}

/// `GET path` over HTTP/1.1 on loopback: (status code, body).
pub fn http_get(port: u16, path: &str) -> Result<(u16, String)> {
    use std::io::{Read, Write};
    let mut s = std::net::TcpStream::connect(("127.0.0.1", port)).context("connect")?;
    s.set_read_timeout(Some(Duration::from_secs(10)))?;
    write!(
        s,
        "GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"
    )?;
    let mut text = String::new();
    s.read_to_string(&mut text)?;
    let status = text
        .split_whitespace()
        .nth(1)
        .and_then(|c| c.parse().ok())
        .with_context(|| format!("no status in {text:?}"))?;
    let body = text
        .split_once("\r\n\r\n")
        .map(|(_, b)| b.to_string())
        .unwrap_or_default();
    Ok((status, body))
}

/// The value of an unlabelled (or exactly labelled) sample in Prometheus text, e.g.
/// `metric_value(text, "rocklake_commits_total")`.
pub fn metric_value(text: &str, sample: &str) -> Option<f64> {
    text.lines().filter(|l| !l.starts_with('#')).find_map(|l| {
        l.strip_prefix(sample)?
            .strip_prefix(' ')?
            .trim()
            .parse()
            .ok()
    })
}

/// `rocklake verify --catalog <catalog> --json` with extra environment: (exit code, report).
pub fn verify_catalog(catalog: &str, env: &[(String, String)]) -> Result<(i32, serde_json::Value)> {
    let out = Command::new(rocklake_bin()?)
        .args(["verify", "--json", "--catalog", catalog])
        .envs(env.iter().map(|(k, v)| (k, v)))
        .env("RUST_LOG", "warn")
        .output()
        .context("run rocklake verify")?;
    let code = out.status.code().unwrap_or(-1);
    let report = serde_json::from_slice(&out.stdout).unwrap_or(serde_json::Value::Null);
    if report.is_null() {
        bail!(
            "rocklake verify exited {code} without a report: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    Ok((code, report))
}

/// The JSON a test script printed on its `RESULT …` line.
pub fn result_json(out: &str) -> serde_json::Value {
    let line = out
        .lines()
        .find_map(|l| l.strip_prefix("RESULT "))
        .unwrap_or_else(|| panic!("no RESULT line in:\n{out}"));
    serde_json::from_str(line).unwrap_or_else(|e| panic!("RESULT is not JSON ({e}): {line}"))
}

/// A psycopg script's start for [`same_outcomes_as_postgres`]: two autocommit connections,
/// and `run`, which records a statement's columns and rows (or its error) with the notices
/// it raised.
pub const PSYCOPG_HARNESS: &str = r#"
import sys, json, psycopg
dsn = sys.argv[1]
out = []
notices = []
a = psycopg.connect(dsn, autocommit=True)
b = psycopg.connect(dsn, autocommit=True)
for c in (a, b):
    c.add_notice_handler(lambda d: notices.append([d.severity, d.sqlstate, d.message_primary, d.message_detail]))

def run(sql, conn=a):
    notices.clear()
    try:
        cur = conn.execute(sql)
        rows = cur.fetchall() if cur.description else cur.statusmessage
        res = [sql, [(d.name, d.type_code) for d in cur.description] if cur.description else None,
               [[str(v) if v is not None else None for v in r] for r in rows]
               if isinstance(rows, list) else rows]
    except psycopg.Error as e:
        res = [sql, "error", e.sqlstate, e.diag.message_primary, e.diag.message_detail,
               e.diag.message_hint]
    res.append(list(notices))
    out.append(res)
"#;

/// Runs a Python script (DuckDB 1.5's venv, which has psycopg) against a fresh PostgreSQL 15
/// and a fresh RockLake, its DSN as the one argument, and asserts that both printed the same
/// `RESULT` list, item by item. Returns RockLake's list, for checks that the comparison
/// compared something.
pub fn same_outcomes_as_postgres(script: &str) -> Vec<serde_json::Value> {
    let pg = Postgres::start().expect("start PostgreSQL");
    let dir = tempfile::tempdir().expect("tempdir");
    let rl = Server::start(&dir.path().join("catalog"), "postgres", &[]).expect("start RockLake");
    let run = |dsn: &str| -> Vec<serde_json::Value> {
        let (ok, out) = duckdb_python("155", script, &[dsn]).expect("run the script");
        assert!(ok, "the script failed against {dsn}");
        match result_json(&out) {
            serde_json::Value::Array(items) => items,
            other => panic!("RESULT is not a list: {other}"),
        }
    };
    let (want, got) = (run(&pg.dsn()), run(&rl.dsn()));
    assert_eq!(want.len(), got.len(), "different numbers of outcomes");
    let differ: Vec<String> = want
        .iter()
        .zip(&got)
        .filter(|(w, g)| w != g)
        .map(|(w, g)| format!("postgres: {w}\nrocklake: {g}"))
        .collect();
    assert!(differ.is_empty(), "{}", differ.join("\n\n"));
    rl.stop().expect("stop RockLake");
    got
}

const SQL_CLIENT: &str = r#"
import sys, psycopg
dsn, sql = sys.argv[1], sys.argv[2]
try:
    with psycopg.connect(dsn, autocommit=True) as c:
        cur = c.execute(sql)
        print("OK", cur.fetchall() if cur.description else cur.statusmessage)
except psycopg.Error as e:
    print("ERR", e.sqlstate, str(e).splitlines()[0])
"#;

/// Runs one statement through psycopg: `OK <rows or status>` or `ERR <sqlstate> <message>`.
pub fn sql_line(server: &Server, q: &str) -> String {
    let (_, out) = duckdb_python("155", SQL_CLIENT, &[&server.dsn(), q]).expect("client");
    out.lines().last().unwrap_or("").to_string()
}

/// Split brain on one catalog: `start` opens a server on it; a second one fences the first,
/// whose commits then fail with 57P04 and never become visible, also after a reopen.
pub fn split_brain(start: &dyn Fn() -> Result<Server>) {
    let sql = sql_line;
    let a = start().expect("start A");
    assert!(sql(&a, "CREATE TABLE t (id BIGINT PRIMARY KEY)").starts_with("OK"));
    assert!(sql(&a, "INSERT INTO t VALUES (1)").starts_with("OK"));

    let b = start().expect("start B on the same catalog");
    let fenced = sql(&a, "INSERT INTO t VALUES (2)");
    assert!(
        fenced.starts_with("ERR 57P04"),
        "old writer must be fenced: {fenced}"
    );
    assert!(fenced.contains("Writer has been fenced"), "{fenced}");
    // Still fenced on retry: a fenced writer never commits again.
    assert!(sql(&a, "INSERT INTO t VALUES (3)").starts_with("ERR 57P04"));

    assert_eq!(
        sql(&b, "SELECT id FROM t ORDER BY id"),
        "OK [(1,)]",
        "the fenced writes are absent"
    );
    assert!(
        sql(&b, "INSERT INTO t VALUES (4)").starts_with("OK"),
        "the new writer commits"
    );
    drop(a);
    b.stop().expect("stop B");

    let c = start().expect("reopen");
    assert_eq!(
        sql(&c, "SELECT id FROM t ORDER BY id"),
        "OK [(1,), (4,)]",
        "after reopen only 1 and 4 exist"
    );
    c.stop().expect("stop");
}
