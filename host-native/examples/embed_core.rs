//! A second, minimal embedder of the core component, apart from RockLake's server: wasmtime,
//! the WIT world in `wit/`, and an in-memory ordered map as the store. It uses nothing of the
//! `rocklake` library. It opens an empty catalog, runs a few statements (DDL, an insert that
//! commits, a query, a duplicate key) and prints one line per result: what a host must do, per
//! docs/embedding.md, and nothing more.
//!
//! `cargo run -p rocklake --example embed_core -- target/wasm32-unknown-unknown/release/rocklake_core.wasm`
//! (`cargo xtask embed-example` builds the component, runs this and checks what it prints.)

use std::collections::BTreeMap;
use std::path::Path;

use anyhow::{bail, Context, Result};
use wasmtime::component::{Component, HasSelf, Linker};
use wasmtime::{Config, Engine, Store};

mod bindings {
    wasmtime::component::bindgen!({
        path: "../wit",
        world: "catalog-core",
    });
}

use bindings::rocklake::core::types::{KvError, KvPage, Output, Reply};
use bindings::CatalogCore;

/// The host's side of the world: the store the core reads through `kv-get` / `kv-scan`.
#[derive(Default)]
struct MapStore {
    map: BTreeMap<Vec<u8>, Vec<u8>>,
}

impl bindings::rocklake::core::kv::Host for MapStore {
    fn kv_get(&mut self, key: Vec<u8>) -> Result<Option<Vec<u8>>, KvError> {
        Ok(self.map.get(&key).cloned())
    }

    fn kv_scan(&mut self, start: Vec<u8>, end: Vec<u8>, limit: u64) -> Result<KvPage, KvError> {
        if start >= end {
            return Ok(pack(std::iter::empty()));
        }
        let limit = usize::try_from(limit).unwrap_or(usize::MAX);
        Ok(pack(self.map.range(start..end).take(limit)))
    }

    fn kv_scan_rev(&mut self, start: Vec<u8>, end: Vec<u8>, limit: u64) -> Result<KvPage, KvError> {
        if start >= end {
            return Ok(pack(std::iter::empty()));
        }
        let limit = usize::try_from(limit).unwrap_or(usize::MAX);
        Ok(pack(self.map.range(start..end).rev().take(limit)))
    }

    /// This host never interrupts a statement (no statement timeout, no cancel).
    fn interrupted(&mut self) -> Option<String> {
        None
    }

    /// This host has no entropy source: `random()` and `gen_random_uuid()` fail with 0A000.
    fn entropy(&mut self) -> Option<u64> {
        None
    }
}

impl bindings::rocklake::core::types::Host for MapStore {}

/// A scan answer as the WIT `kv-page` lays it out: keys and values back to back in `data`,
/// and for each entry the end offsets of its key and of its value in `ends`. (A page of this
/// store stays far below the 4 GiB that u32 offsets allow.)
fn pack<'a>(entries: impl Iterator<Item = (&'a Vec<u8>, &'a Vec<u8>)>) -> KvPage {
    let mut page = KvPage {
        data: Vec::new(),
        ends: Vec::new(),
    };
    for (k, v) in entries {
        page.data.extend_from_slice(k);
        page.ends.push(page.data.len() as u32);
        page.data.extend_from_slice(v);
        page.ends.push(page.data.len() as u32);
    }
    page
}

/// Runs the statements against a fresh in-memory catalog and returns what they printed.
fn run(component: &Path, statements: &[&str]) -> Result<Vec<String>> {
    let mut config = Config::new();
    config.wasm_component_model(true);
    let engine = Engine::new(&config).map_err(|e| anyhow::anyhow!("{e}"))?;
    let component = Component::from_file(&engine, component)
        .map_err(|e| anyhow::anyhow!("{e}"))
        .with_context(|| format!("load {}", component.display()))?;
    let mut linker = Linker::<MapStore>::new(&engine);
    CatalogCore::add_to_linker::<MapStore, HasSelf<MapStore>>(&mut linker, |s| s)
        .map_err(|e| anyhow::anyhow!("{e}"))?;
    let mut store = Store::new(&engine, MapStore::default());
    let core = CatalogCore::instantiate(&mut store, &component, &linker)
        .map_err(|e| anyhow::anyhow!("{e}"))?;
    let api = core.rocklake_core_engine();
    if let Err(e) = api
        .call_open(&mut store)
        .map_err(|e| anyhow::anyhow!("{e}"))?
    {
        bail!("open: {} {}", e.code, e.message);
    }
    let options = bindings::rocklake::core::types::SessionOptions {
        user: "embedder".into(),
        database: "lake".into(),
        read_only: false,
        settings: vec![],
        backend_pid: 1,
        client_addr: None,
        client_port: None,
        backend_start: 848_000_000_000_000,
    };
    let session = match api
        .call_open_session(&mut store, &options)
        .map_err(|e| anyhow::anyhow!("{e}"))?
    {
        Ok(opened) => opened.id,
        Err(e) => bail!("open-session: {} {}", e.code, e.message),
    };
    let mut printed = Vec::new();
    for (i, sql) in statements.iter().enumerate() {
        // The clock is the host's: here a fixed instant per statement (microseconds since
        // 2000-01-01, PostgreSQL's epoch), which makes the example deterministic.
        let now = 848_000_000_000_000 + i as i64 * 1_000_000;
        let mut reply: Reply = api
            .call_query(&mut store, session, sql, now)
            .map_err(|e| anyhow::anyhow!("{e}"))?;
        // A COMMIT suspends the request with a batch: make it durable (here: apply it to the
        // map, puts then deletes), then report the outcome to continue the request. Outputs
        // come from the suspended reply and from its continuations, in order.
        let mut outputs = std::mem::take(&mut reply.outputs);
        while let Some(batch) = reply.commit.take() {
            let map = &mut store.data_mut().map;
            for (k, v) in batch.puts {
                map.insert(k, v);
            }
            for k in batch.deletes {
                map.remove(&k);
            }
            reply = api
                .call_commit_finished(&mut store, session, Ok(()))
                .map_err(|e| anyhow::anyhow!("{e}"))?;
            outputs.append(&mut reply.outputs);
        }
        for output in &outputs {
            printed.push(match output {
                Output::Command(tag) => tag.clone(),
                Output::Rows(r) => {
                    let names: Vec<&str> = r.fields.iter().map(|f| f.name.as_str()).collect();
                    let rows = data_rows(&r.data, &r.ends)
                        .ok_or_else(|| anyhow::anyhow!("malformed rows from the component"))?;
                    format!("{} :: {} ({})", names.join("|"), rows.join("; "), r.tag)
                }
                Output::CopyOut(c) => format!("COPY OUT {}", c.tag),
                Output::CopyIn(_) => "COPY IN".into(),
                Output::Empty => "EMPTY".into(),
                Output::Notice(n) => format!("{} {} {}", n.severity, n.code, n.message),
                Output::Signal(s) => format!("SIGNAL {} {}", s.pid, s.terminate),
            });
        }
        if let Some(e) = &reply.error {
            printed.push(format!("ERROR {} {}", e.code, e.message));
        }
    }
    api.call_close_session(&mut store, session)
        .map_err(|e| anyhow::anyhow!("{e}"))?;
    printed.push(format!("{} keys in the host's map", store.data().map.len()));
    Ok(printed)
}

/// The rows of a `rows` output, each `|`-joined: row i is `data[ends[i-1]..ends[i]]`, the
/// body of a PostgreSQL DataRow message (an i16 column count, then per column an i32 length,
/// -1 for NULL, and the bytes; big-endian), which a server can send as it is.
fn data_rows(data: &[u8], ends: &[u32]) -> Option<Vec<String>> {
    let mut rows = Vec::new();
    let mut start = 0;
    for &end in ends {
        let mut body = data.get(start..end as usize)?;
        start = end as usize;
        let (n, rest) = body.split_first_chunk::<2>()?;
        body = rest;
        let mut cells = Vec::new();
        for _ in 0..i16::from_be_bytes(*n) {
            let (len, rest) = body.split_first_chunk::<4>()?;
            body = rest;
            cells.push(match usize::try_from(i32::from_be_bytes(*len)) {
                Err(_) => "NULL".to_string(),
                Ok(len) => {
                    let (value, rest) = body.split_at_checked(len)?;
                    body = rest;
                    String::from_utf8_lossy(value).into_owned()
                }
            });
        }
        rows.push(cells.join("|"));
    }
    Some(rows)
}

/// The statements of the example.
const STATEMENTS: &[&str] = &[
    "CREATE TABLE ducklake_snapshot (snapshot_id BIGINT PRIMARY KEY, snapshot_time TIMESTAMPTZ, schema_version BIGINT)",
    "INSERT INTO ducklake_snapshot VALUES (0, NOW(), 0), (1, NOW(), 1)",
    "SELECT snapshot_id, schema_version FROM ducklake_snapshot WHERE snapshot_id = (SELECT max(snapshot_id) FROM ducklake_snapshot)",
    "INSERT INTO ducklake_snapshot VALUES (1, NOW(), 2)",
];

fn main() -> Result<()> {
    let Some(component) = std::env::args_os().nth(1) else {
        bail!("usage: embed_core COMPONENT.wasm");
    };
    for line in run(Path::new(&component), STATEMENTS)? {
        println!("{line}");
    }
    Ok(())
}
