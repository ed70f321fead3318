//! The core component (wasmtime) against the native core: the same requests over the same
//! store must give identical replies, commit batches included.
//!
//! The component must have been built first; these tests fail (never skip) without it:
//! `CARGO_TARGET_WASM32_UNKNOWN_UNKNOWN_LINKER=wasm-component-ld cargo build -p rocklake-core --target wasm32-unknown-unknown --release`
//! (or point `ROCKLAKE_COMPONENT` at a built component).

use std::cell::Cell;
use std::collections::BTreeMap;
use std::ops::Bound;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use rocklake::component::{default_component_path, WasmComponent, WasmCore, BUILD_COMMAND};
use rocklake::service::Core;
use rocklake_core::api::{
    CommitFailure, Describe, KvError, KvPage, KvRead, Output, PgError, Reply, SessionId,
};
use rocklake_core::Engine;

/// A BTreeMap store that applies commit batches; counts calls to compare the traffic too.
#[derive(Default)]
struct MemKv {
    map: BTreeMap<Vec<u8>, Vec<u8>>,
    gets: Cell<u64>,
    scans: Cell<u64>,
}

impl KvRead for MemKv {
    fn scan(&self, start: &[u8], end: &[u8], limit: usize) -> Result<KvPage, KvError> {
        self.scans.set(self.scans.get() + 1);
        KvPage::try_from_iter(
            self.map
                .range::<[u8], _>((Bound::Included(start), Bound::Excluded(end)))
                .take(limit)
                .map(|(k, v)| (&k[..], &v[..])),
        )
    }

    fn get(&self, key: &[u8]) -> Result<Option<Vec<u8>>, KvError> {
        self.gets.set(self.gets.get() + 1);
        Ok(self.map.get(key).cloned())
    }
}

fn component_path() -> PathBuf {
    let path = match default_component_path() {
        Some(p) if p.is_file() => p,
        other => panic!(
            "the core component is missing (looked at {other:?}); build it first with\n    {BUILD_COMMAND}\nor set ROCKLAKE_COMPONENT"
        ),
    };
    // A component older than the core's sources would make the comparison meaningless.
    let built = modified(&path);
    let root = std::env::var_os("CARGO_MANIFEST_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")))
        .join("..");
    for dir in [
        root.join("core-wasm/src"),
        root.join("proto"),
        root.join("wit"),
    ] {
        if let Some((newest, file)) = newest_file(&dir) {
            assert!(
                newest <= built,
                "the core component {} is older than {}; rebuild it with\n    {BUILD_COMMAND}",
                path.display(),
                file.display()
            );
        }
    }
    path
}

fn modified(path: &Path) -> SystemTime {
    std::fs::metadata(path)
        .and_then(|m| m.modified())
        .unwrap_or(SystemTime::UNIX_EPOCH)
}

/// The most recently modified file under `dir`.
fn newest_file(dir: &Path) -> Option<(SystemTime, PathBuf)> {
    let mut newest: Option<(SystemTime, PathBuf)> = None;
    for entry in std::fs::read_dir(dir).ok()?.flatten() {
        let path = entry.path();
        let candidate = if path.is_dir() {
            newest_file(&path)
        } else {
            Some((modified(&path), path))
        };
        if let Some(c) = candidate {
            if newest.as_ref().is_none_or(|n| c.0 > n.0) {
                newest = Some(c);
            }
        }
    }
    newest
}

fn load_component() -> WasmComponent {
    let path = component_path();
    match WasmComponent::load(&path) {
        Ok(c) => c,
        Err(e) => panic!("cannot load the core component {}: {e:#}", path.display()),
    }
}

/// `ROCKLAKE_WASM_PERF_MAP=1` (here its option): perf can name the component's own functions,
/// the guest's Rust symbols included, and the component still runs as before.
#[test]
fn perf_map_names_the_guest_functions() {
    let path = component_path();
    let component = WasmComponent::load_with(
        &path,
        &rocklake::component::LoadOptions::default().with_perf_map(true),
    )
    .expect("load with a perf map");
    let kv = MemKv::default();
    let mut core = component.instantiate(&kv).expect("instantiate");
    let s = core.open_session("u", "d");
    let r = core.query(&kv, s, "SELECT 1", NOW);
    assert!(r.error.is_none(), "{:?}", r.error);
    let map = std::path::PathBuf::from(format!("/tmp/perf-{}.map", std::process::id()));
    let text = std::fs::read_to_string(&map).expect("wasmtime wrote the perf map");
    assert!(
        text.lines()
            .any(|l| l.contains("rocklake_core") && l.contains("rowdecode")),
        "no rocklake_core::rowdecode symbol in {}",
        map.display()
    );
    let _ = std::fs::remove_file(&map);
}

const NOW: i64 = 820_000_000_000_000;

/// Everything one step produced, in order.
#[derive(Debug, Clone, PartialEq)]
enum Step {
    Reply(Reply),
    Describe(Result<Describe, PgError>),
    CopyData(Result<(), PgError>),
    Session(SessionId),
    Latest(u64),
}

struct Driver<'a> {
    core: &'a mut dyn Core,
    kv: &'a mut MemKv,
    trace: Vec<(String, Step)>,
}

impl Driver<'_> {
    fn record(&mut self, label: &str, step: Step) {
        self.trace.push((label.to_string(), step));
    }

    /// Applies every commit batch the reply carries (or fails it) and records each reply.
    fn drive(
        &mut self,
        label: &str,
        sid: SessionId,
        mut reply: Reply,
        fail: Option<CommitFailure>,
    ) {
        loop {
            self.record(label, Step::Reply(reply.clone()));
            let Some(batch) = reply.commit.take() else {
                break;
            };
            let outcome = match &fail {
                Some(f) => Err(f.clone()),
                None => {
                    for (k, v) in batch.puts {
                        self.kv.map.insert(k, v);
                    }
                    for k in batch.deletes {
                        self.kv.map.remove(&k);
                    }
                    Ok(())
                }
            };
            reply = self.core.commit_finished(&*self.kv, sid, outcome);
        }
        let latest = self.core.latest();
        self.record(label, Step::Latest(latest));
    }

    fn query(&mut self, sid: SessionId, sql: &str) {
        let r = self.core.query(&*self.kv, sid, sql, NOW);
        self.drive(sql, sid, r, None);
    }

    fn query_commit_fails(&mut self, sid: SessionId, sql: &str, failure: CommitFailure) {
        let r = self.core.query(&*self.kv, sid, sql, NOW);
        self.drive(sql, sid, r, Some(failure));
    }
}

/// The scenario: DDL, DML, reads, COPY both ways, errors, a failed commit, describe.
fn scenario(d: &mut Driver<'_>) {
    let s = d.core.open_session("rocklake", "lake");
    d.record("open_session", Step::Session(s));
    d.query(s, "SELECT 1");
    d.query(
        s,
        "CREATE TABLE t (id BIGINT PRIMARY KEY, name VARCHAR, v DOUBLE PRECISION, ok BOOLEAN)",
    );
    d.query(
        s,
        "INSERT INTO t VALUES (1, 'a', 1.5, true), (2, 'b', NULL, false)",
    );
    d.query(s, "SELECT * FROM t ORDER BY id");
    // 23505: duplicate primary key.
    d.query(s, "INSERT INTO t VALUES (1, 'dup', 0, NULL)");
    // 42P01: no such table.
    d.query(s, "SELECT * FROM missing");
    // An error inside a block: aborted (25P02) until ROLLBACK.
    d.query(s, "BEGIN");
    d.query(s, "INSERT INTO t VALUES (3, 'c', 3.25, NULL)");
    d.query(s, "SELECT * FROM missing");
    d.query(s, "SELECT 1");
    d.query(s, "ROLLBACK");
    // A block that commits, several statements in one string.
    d.query(s, "BEGIN; INSERT INTO t VALUES (4, 'd', -1, true); UPDATE t SET name = 'bb' WHERE id = 2; COMMIT");
    // COPY FROM STDIN, text format.
    let r = d.core.query(&*d.kv, s, "COPY t FROM STDIN", NOW);
    d.drive("COPY t FROM STDIN", s, r, None);
    let r = d.core.copy_in_data(s, b"10\tx\t0.5\tt\n11\ty\t\\N\tf\n");
    d.record("copy_in_data", Step::CopyData(r));
    let r = d.core.copy_in_done(&*d.kv, s, NOW);
    d.drive("copy_in_done", s, r, None);
    // COPY FROM STDIN abandoned by the client.
    let r = d.core.query(&*d.kv, s, "COPY t FROM STDIN", NOW);
    d.drive("COPY t FROM STDIN (fails)", s, r, None);
    let r = d.core.copy_in_fail(s, "client gave up");
    d.drive("copy_in_fail", s, r, None);
    // Extended-protocol Executes: one transaction until Sync, committed there; an error in
    // it leaves nothing of the statements before it.
    for (sql, label) in [
        ("INSERT INTO t VALUES (30, 'p', 0, NULL)", "execute"),
        ("INSERT INTO t VALUES (31, 'q', 0, NULL)", "execute"),
    ] {
        let r = d.core.execute(&*d.kv, s, sql, NOW);
        d.drive(label, s, r, None);
    }
    let r = d.core.sync(&*d.kv, s, NOW, false);
    d.drive("sync", s, r, None);
    let r = d
        .core
        .execute(&*d.kv, s, "INSERT INTO t VALUES (32, 'r', 0, NULL)", NOW);
    d.drive("execute", s, r, None);
    let r = d.core.execute(&*d.kv, s, "SELECT 1/0", NOW);
    d.drive("execute (fails)", s, r, None);
    let r = d.core.sync(&*d.kv, s, NOW, false);
    d.drive("sync (after the error)", s, r, None);
    d.query(s, "SELECT id FROM t WHERE id >= 30 ORDER BY id");
    // COPY TO STDOUT, binary and text.
    d.query(
        s,
        "COPY (SELECT id, name, v, ok FROM t ORDER BY id) TO STDOUT (FORMAT BINARY)",
    );
    d.query(s, "COPY t TO STDOUT");
    // A commit the store refuses (fenced): 57P04, nothing becomes visible.
    d.query_commit_fails(
        s,
        "INSERT INTO t VALUES (20, 'lost', 0, NULL)",
        CommitFailure {
            fenced: true,
            transient: false,
            message: "fenced by a newer writer".into(),
        },
    );
    d.query(s, "SELECT count(*) FROM t");
    let r = d
        .core
        .describe(&*d.kv, s, "SELECT id, name FROM t WHERE id = $1");
    d.record("describe", Step::Describe(r));
    let r = d.core.describe(&*d.kv, s, "SELECT * FROM missing");
    d.record("describe missing", Step::Describe(r));
    d.query(s, "");
    d.core.close_session(s);
    // A closed session is gone.
    d.query(s, "SELECT 1");
    let s2 = d.core.open_session("rocklake", "lake");
    d.record("open_session 2", Step::Session(s2));
    d.query(s2, "SELECT id, name FROM t ORDER BY id DESC");
    // A client's connection facts cross the boundary into pg_stat_activity, and a signal
    // for another backend comes back as an output.
    let connected = d
        .core
        .open_session_with(&rocklake_core::api::SessionOptions {
            backend_pid: 4242,
            client_addr: Some("2001:db8::7".into()),
            client_port: Some(5555),
            backend_start: NOW - 1_000_000,
            ..rocklake_core::api::SessionOptions::plain("rocklake", "lake")
        })
        .expect("open a connected session");
    d.record("open_session 3", Step::Session(connected.id));
    d.query(
        s2,
        "SELECT pid, client_addr, client_port, backend_start, state FROM pg_stat_activity ORDER BY pid",
    );
    d.query(
        s2,
        "SELECT pg_terminate_backend(4242), pg_cancel_backend(7)",
    );
}

struct Run {
    trace: Vec<(String, Step)>,
    kv: MemKv,
}

fn run(make: &dyn Fn(&MemKv) -> Box<dyn Core>) -> Run {
    let mut kv = MemKv::default();
    let mut core = make(&kv);
    let mut d = Driver {
        core: core.as_mut(),
        kv: &mut kv,
        trace: Vec::new(),
    };
    scenario(&mut d);
    let mut trace = d.trace;
    // Re-open over the store the scenario left behind and read it back.
    let mut core = make(&kv);
    let mut d = Driver {
        core: core.as_mut(),
        kv: &mut kv,
        trace: Vec::new(),
    };
    let latest = d.core.latest();
    d.record("reopened latest", Step::Latest(latest));
    let s = d.core.open_session("rocklake", "lake");
    d.query(s, "SELECT * FROM t ORDER BY id");
    d.query(s, "INSERT INTO t VALUES (30, 'after reopen', 1, true)");
    d.query(
        s,
        "COPY (SELECT id FROM t ORDER BY id) TO STDOUT (FORMAT BINARY)",
    );
    trace.append(&mut d.trace);
    Run { trace, kv }
}

fn native(kv: &MemKv) -> Box<dyn Core> {
    match Engine::open(kv) {
        Ok(e) => Box::new(e),
        Err(e) => panic!("native open: {e}"),
    }
}

#[test]
fn wasm_and_native_replies_are_identical() {
    let component = load_component();
    let wasm = |kv: &MemKv| -> Box<dyn Core> {
        match component.instantiate(kv) {
            Ok(c) => Box::new(c),
            Err(e) => panic!("wasm open: {e:#}"),
        }
    };
    let n = run(&native);
    let w = run(&wasm);
    assert_eq!(n.trace.len(), w.trace.len(), "different number of steps");
    for ((label, a), (_, b)) in n.trace.iter().zip(&w.trace) {
        assert_eq!(a, b, "native and wasm differ at {label:?}");
    }
    assert!(n.kv.map == w.kv.map, "the stores differ after the scenario");
    assert_eq!(
        (n.kv.gets.get(), n.kv.scans.get()),
        (w.kv.gets.get(), w.kv.scans.get()),
        "KV traffic differs"
    );

    // The scenario really exercised what it claims.
    let has_code = |code: &str| {
        n.trace.iter().any(|(_, s)| matches!(s, Step::Reply(r) if r.error.as_ref().is_some_and(|e| e.code == code)))
    };
    for code in ["23505", "42P01", "25P02", "57P04", "08003"] {
        assert!(has_code(code), "scenario produced no {code}");
    }
    assert!(n.trace.iter().any(|(_, s)| matches!(s, Step::Reply(r)
        if r.outputs.iter().any(|o| matches!(o, Output::CopyOut { binary: true, chunks, .. } if !chunks.is_empty())))));
    assert!(n
        .trace
        .iter()
        .any(|(_, s)| matches!(s, Step::Reply(r) if r.commit.is_some())));
    // The first Sync committed both Executes; the second, after the error, nothing.
    let piped = n
        .trace
        .iter()
        .find_map(|(label, s)| match s {
            Step::Reply(r) if label.starts_with("SELECT id FROM t WHERE id >= 30") => {
                r.outputs.iter().find_map(|o| match o {
                    Output::Rows { rows, .. } => Some(rows.to_vecs()),
                    _ => None,
                })
            }
            _ => None,
        })
        .expect("the pipeline's rows");
    assert_eq!(
        piped,
        vec![vec![Some(b"30".to_vec())], vec![Some(b"31".to_vec())]]
    );
    assert!(n
        .trace
        .iter()
        .any(|(label, s)| label == "sync" && matches!(s, Step::Reply(r) if r.commit.is_some())));
}

#[test]
fn component_imports_only_the_kv_interface() {
    let component = load_component();
    // `types` holds only type definitions (kv's signatures use them); `kv` is the only one
    // with functions. No WASI: no clock, no randomness, no environment.
    let mut imports = component.imports();
    imports.sort();
    assert_eq!(
        imports,
        ["rocklake:core/kv@0.10.0", "rocklake:core/types@0.10.0"],
        "unexpected imports"
    );
}

#[test]
fn compiled_code_is_cached_next_to_the_component() {
    // Start from the cache of the built component (one compile per build, not per test run).
    let base = load_component();
    assert!(
        base.info().cache.is_file(),
        "no cache file written next to {}",
        base.info().component.display()
    );
    let dir = tempfile::tempdir().expect("tempdir");
    let copy = dir.path().join("rocklake_core.wasm");
    std::fs::copy(&base.info().component, &copy).expect("copy component");
    let cache_name = base.info().cache.file_name().expect("cache file name");
    std::fs::copy(&base.info().cache, dir.path().join(cache_name)).expect("copy cache");
    let stale = dir
        .path()
        .join("rocklake_core.00000000000000000000000000000000.cwasm");
    std::fs::write(&stale, b"an earlier build").expect("stale cache");

    let cached = WasmComponent::load(&copy).expect("load");
    assert!(
        cached.info().from_cache,
        "the cache next to the component was not used"
    );
    assert_eq!(cached.info().cache, dir.path().join(cache_name));

    // A corrupt cache file is recompiled and replaced, not trusted. (Unmap it first: truncating
    // a file that a live component maps is a SIGBUS, so the host only replaces it by rename.)
    let cache = cached.info().cache.clone();
    drop(cached);
    std::fs::write(&cache, b"garbage").expect("corrupt cache");
    let rebuilt = WasmComponent::load(&copy).expect("load over a corrupt cache");
    assert!(!rebuilt.info().from_cache);
    assert!(
        !stale.exists(),
        "the cache of an earlier build was not removed"
    );
    let again = WasmComponent::load(&copy).expect("load from the rewritten cache");
    assert!(again.info().from_cache, "the rewritten cache was not used");

    let kv = MemKv::default();
    let mut core = again.instantiate(&kv).expect("instantiate");
    let s = core.open_session("u", "d");
    let r = core.query(&kv, s, "SELECT 1", NOW);
    assert_eq!(r.error, None);
}

#[test]
fn a_core_module_is_rejected_with_the_build_command() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("rocklake_core.wasm");
    std::fs::write(&path, b"\0asm\x01\0\0\0").expect("write");
    let err = match WasmCore::open_path(&path, &MemKv::default()) {
        Ok(_) => panic!("a core module was accepted"),
        Err(e) => format!("{e:#}"),
    };
    assert!(
        err.contains("core wasm module") && err.contains("wasm-component-ld"),
        "{err}"
    );
}
