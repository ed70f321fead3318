//! The core as a WebAssembly component (`wit/rocklake.wit`), run with wasmtime behind the same
//! [`Core`] trait as the native build.
//!
//! # Where the component comes from
//! 1. `$ROCKLAKE_COMPONENT` (or `--component`), when set;
//! 2. otherwise `wasm32-unknown-unknown/release/rocklake_core.wasm` in the cargo target directory
//!    the running executable was built into (found by walking up from the executable), or
//!    `rocklake_core.wasm` next to the executable (an installed layout).
//!
//! Build it with
//! `CARGO_TARGET_WASM32_UNKNOWN_UNKNOWN_LINKER=wasm-component-ld cargo build -p rocklake-core --target wasm32-unknown-unknown --release`
//! (rustc's default linker for that target emits a core module; `wasm-component-ld`, shipped with
//! the toolchain, links the same objects straight into a component).
//!
//! # Compiled-code cache
//! Compiling the component takes seconds, so the machine code is cached next to it as
//! `rocklake_core.<hash>.cwasm`, where the hash covers the component's bytes and wasmtime's
//! compatibility hash (version, target, settings). A stale or unusable cache file is replaced.
//!
//! # Traps
//! A trap (a panic in the core) loses the instance's state. The call returns `XX000`; the next
//! call that carries a store reader re-instantiates the component and re-opens the catalog from
//! the store, once no commit batch handed out by the lost instance is still awaiting its
//! `commit_finished` (re-opening earlier could reuse a commit sequence number). Sessions of the
//! lost instance get `08003` from the new one.

use std::fmt::Write as _;
use std::hash::Hash as _;
use std::path::{Path, PathBuf};
use std::ptr::NonNull;
use std::time::{Duration, Instant};

use anyhow::Context as _;
use rocklake_core::api::{
    CommitBatch, CommitFailure, CommitSeq, CopyChunks, Describe, FieldDesc, KvError, KvPage,
    KvRead, OpenedSession, Output, PgError, Reply, SessionId, SessionOptions, TextRows, TxnStatus,
};
use sha2::Digest as _;
use wasmtime::component::{Component, HasSelf, Linker};
use wasmtime::{Config, Engine, Store};

use crate::service::Core;

mod bindings {
    wasmtime::component::bindgen!({
        path: "../wit",
        world: "catalog-core",
    });
}

use bindings::rocklake::core::types as wit;
use bindings::{CatalogCore, CatalogCorePre};

/// Environment variable naming the component file.
pub const COMPONENT_ENV: &str = "ROCKLAKE_COMPONENT";
/// File name of the component as cargo builds it.
pub const COMPONENT_FILE: &str = "rocklake_core.wasm";
/// The command that builds the component (for messages).
pub const BUILD_COMMAND: &str = "CARGO_TARGET_WASM32_UNKNOWN_UNKNOWN_LINKER=wasm-component-ld cargo build -p rocklake-core --target wasm32-unknown-unknown --release";

/// Where the component is expected: `$ROCKLAKE_COMPONENT`, else the target directory the running
/// executable lives in, else next to the executable. The path is returned even if it does not
/// exist (so messages can name it); `None` only when there is no executable path either.
pub fn default_component_path() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os(COMPONENT_ENV).filter(|p| !p.is_empty()) {
        return Some(PathBuf::from(p));
    }
    let exe = std::env::current_exe().ok()?;
    let dir = exe.parent()?;
    // <target>/{debug,release}/rocklake, <target>/debug/deps/test-binary, ...
    for ancestor in dir.ancestors().take(4) {
        let p = ancestor
            .join("wasm32-unknown-unknown")
            .join("release")
            .join(COMPONENT_FILE);
        if p.is_file() {
            return Some(p);
        }
    }
    let beside = dir.join(COMPONENT_FILE);
    if beside.is_file() {
        return Some(beside);
    }
    // Not built yet: name where cargo would put it.
    let target = dir
        .ancestors()
        .find(|a| a.join("wasm32-unknown-unknown").is_dir() || a.join("CACHEDIR.TAG").is_file());
    Some(
        target
            .unwrap_or(dir)
            .join("wasm32-unknown-unknown")
            .join("release")
            .join(COMPONENT_FILE),
    )
}

/// How a component was loaded (for logs and measurements).
#[derive(Debug, Clone)]
pub struct LoadInfo {
    pub component: PathBuf,
    pub cache: PathBuf,
    /// True when the compiled code came from the cache file.
    pub from_cache: bool,
    pub elapsed: Duration,
}

/// A compiled component, ready to instantiate (cheap; one per [`WasmCore`] and per recovery).
#[derive(Clone)]
pub struct WasmComponent {
    engine: Engine,
    pre: CatalogCorePre<HostState>,
    info: LoadInfo,
    /// The newest instance's linear memory size (an instance replaced after a trap starts
    /// over).
    memory: MemoryTracker,
}

/// How a component is loaded (beyond its path).
#[derive(Debug, Clone, Default)]
#[non_exhaustive]
pub struct LoadOptions {
    /// Write `/tmp/perf-<pid>.map` so that `perf` names the component's functions (wasmtime's
    /// perf map profiler); the server sets it from `ROCKLAKE_WASM_PERF_MAP=1`.
    pub perf_map: bool,
}

impl LoadOptions {
    /// The options the environment asks for: `ROCKLAKE_WASM_PERF_MAP=1` (docs/operations.md).
    pub fn from_env() -> LoadOptions {
        LoadOptions {
            perf_map: std::env::var("ROCKLAKE_WASM_PERF_MAP").is_ok_and(|v| v == "1"),
        }
    }

    pub fn with_perf_map(mut self, on: bool) -> LoadOptions {
        self.perf_map = on;
        self
    }
}

impl WasmComponent {
    /// Loads the component at `path`, from the compiled-code cache when possible, with the
    /// options of the environment ([`LoadOptions::from_env`]).
    pub fn load(path: &Path) -> anyhow::Result<WasmComponent> {
        WasmComponent::load_with(path, &LoadOptions::from_env())
    }

    /// [`WasmComponent::load`] with explicit options.
    pub fn load_with(path: &Path, options: &LoadOptions) -> anyhow::Result<WasmComponent> {
        let start = Instant::now();
        let mut config = Config::new();
        config.wasm_component_model(true);
        // The core recurses as deep as a statement nests (up to its limit, core-wasm's
        // `depth.rs`); it runs on the engine threads' large stacks.
        config.max_wasm_stack(crate::service::ENGINE_WASM_STACK);
        // wasmtime checks the limit against the stack of async calls too (none are made).
        config.async_stack_size(crate::service::ENGINE_WASM_STACK + (1 << 20));
        if options.perf_map {
            // Only adds symbol files for perf; the generated code is the same (the compiled
            // code cache stays valid).
            config.profiler(wasmtime::ProfilingStrategy::PerfMap);
        }
        let engine = Engine::new(&config).map_err(wt)?;
        let bytes = std::fs::read(path).with_context(|| {
            format!(
                "cannot read the core component {} (build it with `{BUILD_COMMAND}`)",
                path.display()
            )
        })?;
        check_component(path, &bytes)?;
        let cache = cache_path(&engine, path, &bytes);
        let (component, from_cache) = compile_cached(&engine, &bytes, &cache)?;
        let mut linker = Linker::<HostState>::new(&engine);
        CatalogCore::add_to_linker::<HostState, HasSelf<HostState>>(&mut linker, |s| s)
            .map_err(wt)?;
        let pre =
            CatalogCorePre::new(linker.instantiate_pre(&component).map_err(wt)?).map_err(wt)?;
        let info = LoadInfo {
            component: path.to_owned(),
            cache,
            from_cache,
            elapsed: start.elapsed(),
        };
        tracing::info!(
            component = %info.component.display(),
            from_cache = info.from_cache,
            ms = info.elapsed.as_millis() as u64,
            "core component loaded"
        );
        Ok(WasmComponent {
            engine,
            pre,
            info,
            memory: MemoryTracker::default(),
        })
    }

    /// The linear memory size of the instance in use.
    pub fn memory(&self) -> MemoryTracker {
        self.memory.clone()
    }

    pub fn info(&self) -> &LoadInfo {
        &self.info
    }

    /// The component's imports (`rocklake:core/kv@0.10.0` and nothing else: no WASI).
    pub fn imports(&self) -> Vec<String> {
        let ty = self.pre.instance_pre().component().component_type();
        ty.imports(&self.engine)
            .map(|(name, _)| name.to_string())
            .collect()
    }

    /// A new instance with the catalog opened over `kv`.
    pub fn instantiate(&self, kv: &dyn KvRead) -> anyhow::Result<WasmCore> {
        let (store, bindings) = self.new_instance()?;
        let mut core = WasmCore {
            component: self.clone(),
            store,
            bindings,
            latest: 0,
            broken: None,
            unfinished: 0,
            read_only: false,
            statement_memory_limit: None,
        };
        core.open(kv)
            .map_err(|e| anyhow::anyhow!("cannot load catalog: {e}"))?;
        Ok(core)
    }

    fn new_instance(&self) -> anyhow::Result<(Store<HostState>, CatalogCore)> {
        let mut store = Store::new(
            &self.engine,
            HostState {
                kv: None,
                memory: self.memory.clone(),
            },
        );
        store.limiter(|s| &mut s.memory);
        let bindings = self.pre.instantiate(&mut store).map_err(wt)?;
        Ok((store, bindings))
    }
}

/// wasmtime has its own error type; keep its full chain in the message.
fn wt(e: wasmtime::Error) -> anyhow::Error {
    anyhow::anyhow!("{e:?}")
}

/// Rejects a core module (what rustc's default wasm32 linker emits) with a message naming the fix.
fn check_component(path: &Path, bytes: &[u8]) -> anyhow::Result<()> {
    match bytes.get(..8) {
        Some([0, b'a', b's', b'm', _, _, 1, 0]) => Ok(()),
        Some([0, b'a', b's', b'm', 1, 0, 0, 0]) => anyhow::bail!(
            "{} is a core wasm module, not a component: build it with `{BUILD_COMMAND}`",
            path.display()
        ),
        _ => anyhow::bail!("{} is not a WebAssembly component", path.display()),
    }
}

/// Feeds `Hash` values into SHA-256 (for wasmtime's compatibility hash).
struct ShaHasher(sha2::Sha256);

impl std::hash::Hasher for ShaHasher {
    fn write(&mut self, bytes: &[u8]) {
        self.0.update(bytes);
    }
    fn finish(&self) -> u64 {
        0
    }
}

fn cache_path(engine: &Engine, component: &Path, bytes: &[u8]) -> PathBuf {
    let mut h = ShaHasher(sha2::Sha256::new());
    engine.precompile_compatibility_hash().hash(&mut h);
    h.0.update(bytes);
    let digest = h.0.finalize();
    let mut hex = String::new();
    for b in digest.iter().take(16) {
        let _ = write!(hex, "{b:02x}");
    }
    let stem = component
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| "component".into());
    component.with_file_name(format!("{stem}.{hex}.cwasm"))
}

/// Loads the compiled code from `cache`, or compiles `bytes` and writes the cache (atomically,
/// best effort: a read-only directory only costs the compile at every start).
fn compile_cached(
    engine: &Engine,
    bytes: &[u8],
    cache: &Path,
) -> anyhow::Result<(Component, bool)> {
    if cache.is_file() {
        // SAFETY: `deserialize_file` trusts the file to be wasmtime's own output: it maps the
        // machine code in it and runs it. This file is ours: it is only ever written below, by
        // `precompile_component` of this same wasmtime, renamed into place atomically (never seen
        // half-written), and its name carries the SHA-256 of the component's bytes together with
        // wasmtime's compatibility hash, so it is the compiled form of exactly the component we
        // just read. wasmtime still checks the header (version, target, settings) and errors
        // on a mismatch, which we handle by recompiling. Anyone able to replace it could
        // equally replace the component next to it.
        #[allow(unsafe_code)]
        let loaded = unsafe { Component::deserialize_file(engine, cache) };
        match loaded {
            Ok(c) => return Ok((c, true)),
            Err(e) => {
                tracing::warn!(cache = %cache.display(), "ignoring unusable compiled-code cache: {e}")
            }
        }
    }
    let compiled = engine
        .precompile_component(bytes)
        .map_err(wt)
        .context("cannot compile the core component")?;
    if let Err(e) = write_atomically(cache, &compiled) {
        tracing::warn!(cache = %cache.display(), "cannot write the compiled-code cache: {e}");
    } else {
        remove_stale_caches(cache);
    }
    // SAFETY: `compiled` was produced a moment ago by `precompile_component` of this engine.
    #[allow(unsafe_code)]
    let component = unsafe { Component::deserialize(engine, &compiled) }.map_err(wt)?;
    Ok((component, false))
}

fn write_atomically(path: &Path, data: &[u8]) -> std::io::Result<()> {
    let mut tmp = path.as_os_str().to_owned();
    tmp.push(format!(".tmp{}", std::process::id()));
    let tmp = PathBuf::from(tmp);
    std::fs::write(&tmp, data)?;
    std::fs::rename(&tmp, path).inspect_err(|_| {
        let _ = std::fs::remove_file(&tmp);
    })
}

/// Removes `<stem>.*.cwasm` files of earlier builds next to the current cache file.
fn remove_stale_caches(current: &Path) {
    let (Some(dir), Some(name)) = (
        current.parent(),
        current.file_name().and_then(|n| n.to_str()),
    ) else {
        return;
    };
    let Some(stem) = name.split('.').next() else {
        return;
    };
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let n = entry.file_name();
        let Some(n) = n.to_str() else { continue };
        if n != name
            && n.starts_with(&format!("{stem}."))
            && n.ends_with(".cwasm")
            && n.split('.').count() == 3
        {
            let _ = std::fs::remove_file(entry.path());
        }
    }
}

/// The store's data: the [`KvRead`] of the current call, if a call is running.
struct HostState {
    kv: Option<KvPtr>,
    /// Tracks the linear memory's size (`rocklake_core_memory_bytes`).
    memory: MemoryTracker,
}

/// Records the size the core's linear memory grows to; refuses nothing (the core stops a
/// statement itself before its heap fills the 4 GiB, see `rocklake_core::mem`).
#[derive(Clone, Default)]
pub struct MemoryTracker(std::sync::Arc<std::sync::atomic::AtomicU64>);

impl MemoryTracker {
    /// Bytes of linear memory now.
    pub fn bytes(&self) -> u64 {
        self.0.load(std::sync::atomic::Ordering::Relaxed)
    }
}

impl wasmtime::ResourceLimiter for MemoryTracker {
    fn memory_growing(
        &mut self,
        _current: usize,
        desired: usize,
        _maximum: Option<usize>,
    ) -> wasmtime::Result<bool> {
        self.0
            .store(desired as u64, std::sync::atomic::Ordering::Relaxed);
        Ok(true)
    }

    fn table_growing(
        &mut self,
        _current: usize,
        _desired: usize,
        _maximum: Option<usize>,
    ) -> wasmtime::Result<bool> {
        Ok(true)
    }
}

/// A `&dyn KvRead` with its lifetime erased, valid only while [`WasmCore::call`] runs.
#[derive(Clone, Copy)]
struct KvPtr(NonNull<dyn KvRead + 'static>);

impl KvPtr {
    fn erase(kv: &dyn KvRead) -> KvPtr {
        let p: NonNull<dyn KvRead + '_> = NonNull::from(kv);
        // SAFETY: this changes only the trait object's lifetime bound; the layout is identical.
        // The pointer is dereferenced only while the borrow it came from is alive (see
        // `WasmCore::call`, which clears it before returning, also when unwinding).
        #[allow(unsafe_code)]
        let p = unsafe {
            std::mem::transmute::<NonNull<dyn KvRead + '_>, NonNull<dyn KvRead + 'static>>(p)
        };
        KvPtr(p)
    }
}

// SAFETY: `HostState` is `Send` so that the `Store` (and so `WasmCore`, which the service keeps
// behind a mutex) can move between threads. Its only non-`Send` part is `kv`, which is `Some`
// only during `WasmCore::call`: then the store is mutably borrowed by that call, so it cannot
// move, and the pointer is dereferenced only by host functions that wasmtime runs synchronously
// on the calling thread, the thread holding the `&dyn KvRead` borrow.
#[allow(unsafe_code)]
unsafe impl Send for HostState {}

impl HostState {
    fn kv(&self) -> Result<&dyn KvRead, wit::KvError> {
        match self.kv {
            // SAFETY: set by `WasmCore::call` from a borrow that outlives the running call, and
            // cleared when that call returns; see `KvPtr::erase`.
            #[allow(unsafe_code)]
            Some(p) => Ok(unsafe { p.0.as_ref() }),
            None => Err(wit::KvError {
                message: "no store is bound to this call".into(),
                transient: false,
            }),
        }
    }
}

impl bindings::rocklake::core::kv::Host for HostState {
    fn kv_get(&mut self, key: Vec<u8>) -> Result<Option<Vec<u8>>, wit::KvError> {
        self.kv()?.get(&key).map_err(kv_error)
    }

    fn kv_scan(
        &mut self,
        start: Vec<u8>,
        end: Vec<u8>,
        limit: u64,
    ) -> Result<wit::KvPage, wit::KvError> {
        let limit = usize::try_from(limit).unwrap_or(usize::MAX);
        wit_page(self.kv()?.scan(&start, &end, limit))
    }

    fn kv_scan_rev(
        &mut self,
        start: Vec<u8>,
        end: Vec<u8>,
        limit: u64,
    ) -> Result<wit::KvPage, wit::KvError> {
        let limit = usize::try_from(limit).unwrap_or(usize::MAX);
        wit_page(self.kv()?.scan_rev(&start, &end, limit))
    }

    fn interrupted(&mut self) -> Option<String> {
        self.kv().ok().and_then(|kv| kv.interrupted())
    }

    fn entropy(&mut self) -> Option<u64> {
        self.kv().ok().and_then(|kv| kv.entropy())
    }
}

impl bindings::rocklake::core::types::Host for HostState {}

/// A scan's answer as it crosses into the component: the page's two lists, moved.
fn wit_page(answer: Result<KvPage, KvError>) -> Result<wit::KvPage, wit::KvError> {
    let (data, ends) = answer.map_err(kv_error)?.into_parts();
    Ok(wit::KvPage { data, ends })
}

fn kv_error(e: KvError) -> wit::KvError {
    wit::KvError {
        message: e.message,
        transient: e.transient,
    }
}

/// Clears the store's `kv` when dropped, so the erased pointer never outlives its call.
struct Bound<'s> {
    store: &'s mut Store<HostState>,
}

impl Drop for Bound<'_> {
    fn drop(&mut self) {
        self.store.data_mut().kv = None;
    }
}

/// The core component behind [`Core`].
pub struct WasmCore {
    component: WasmComponent,
    store: Store<HostState>,
    bindings: CatalogCore,
    /// `Engine::latest` after the last call that can change it (`open`, `commit_finished`).
    latest: u64,
    /// Why the instance is unusable (it trapped), until it is replaced.
    broken: Option<String>,
    /// Commit batches handed to the host and not yet reported through `commit_finished`.
    unfinished: u64,
    /// Read-replica mode, re-applied when a broken instance is replaced.
    read_only: bool,
    /// The statement memory limit, re-applied likewise (`None`: the core's default).
    statement_memory_limit: Option<u64>,
}

/// A failed call: the instance trapped (or could not be re-created).
type CallResult<R> = Result<R, String>;

impl WasmCore {
    /// Loads the component at `path` and opens the catalog over `kv`.
    pub fn open_path(path: &Path, kv: &dyn KvRead) -> anyhow::Result<WasmCore> {
        WasmComponent::load(path)?.instantiate(kv)
    }

    pub fn component(&self) -> &WasmComponent {
        &self.component
    }

    fn open(&mut self, kv: &dyn KvRead) -> Result<(), PgError> {
        let opened = self.call(Some(kv), |b, s| b.rocklake_core_engine().call_open(s));
        match opened {
            Ok(Ok(())) => {}
            Ok(Err(e)) => return Err(pg_error(e)),
            Err(trap) => return Err(PgError::new("XX000", trap)),
        }
        if self.read_only {
            let on = self.call(None, |b, s| {
                b.rocklake_core_engine().call_set_read_only(s, true)
            });
            if let Err(trap) = on {
                return Err(PgError::new("XX000", trap));
            }
        }
        if let Some(bytes) = self.statement_memory_limit {
            let set = self.call(None, |b, s| {
                b.rocklake_core_engine()
                    .call_set_statement_memory_limit(s, bytes)
            });
            if let Err(trap) = set {
                return Err(PgError::new("XX000", trap));
            }
        }
        self.refresh_latest();
        Ok(())
    }

    /// Runs one export with `kv` bound for its imports. A trap marks the instance broken.
    fn call<R>(
        &mut self,
        kv: Option<&dyn KvRead>,
        f: impl FnOnce(&CatalogCore, &mut Store<HostState>) -> wasmtime::Result<R>,
    ) -> CallResult<R> {
        if let Some(why) = &self.broken {
            return Err(why.clone());
        }
        self.store.data_mut().kv = kv.map(KvPtr::erase);
        let bound = Bound {
            store: &mut self.store,
        };
        let result = f(&self.bindings, bound.store);
        drop(bound);
        result.map_err(|e| {
            let why = format!("the catalog core failed: {e:?}");
            tracing::error!("{why}");
            self.broken = Some(why.clone());
            why
        })
    }

    /// Replaces a broken instance when it is safe to re-open the catalog from the store.
    fn recover(&mut self, kv: &dyn KvRead) {
        if self.broken.is_none() || self.unfinished > 0 {
            return;
        }
        let fresh = self.component.new_instance();
        match fresh {
            Ok((store, bindings)) => {
                self.store = store;
                self.bindings = bindings;
                self.broken = None;
                if let Err(e) = self.open(kv) {
                    self.broken = Some(format!(
                        "cannot re-open the catalog in a new core instance: {e}"
                    ));
                } else {
                    tracing::warn!(
                        latest = self.latest,
                        "catalog core re-instantiated after a failure"
                    );
                }
            }
            Err(e) => self.broken = Some(format!("cannot re-instantiate the catalog core: {e}")),
        }
    }

    fn refresh_latest(&mut self) {
        if let Ok(latest) = self.call(None, |b, s| b.rocklake_core_engine().call_latest(s)) {
            self.latest = latest;
        }
    }

    fn reply(&mut self, r: CallResult<wit::Reply>) -> Reply {
        match r {
            Ok(r) => {
                let r = reply(r);
                if r.commit.is_some() {
                    self.unfinished += 1;
                }
                r
            }
            Err(why) => Reply {
                // A trapped instance is replaced with its lock table: sessions that waited
                // for its locks must look again.
                locks_released: true,
                ..internal_reply(why)
            },
        }
    }
}

fn internal_reply(message: String) -> Reply {
    Reply {
        outputs: vec![],
        error: Some(PgError::new("XX000", message)),
        status: TxnStatus::Idle,
        commit: None,
        settings: Vec::new(),
        wait: None,
        locks_released: false,
    }
}

impl Core for WasmCore {
    fn latest(&self) -> u64 {
        self.latest
    }

    fn open_session_with(&mut self, options: &SessionOptions) -> Result<OpenedSession, PgError> {
        let wit_options = wit::SessionOptions {
            user: options.user.clone(),
            database: options.database.clone(),
            read_only: options.read_only,
            settings: options.settings.clone(),
            backend_pid: options.backend_pid,
            client_addr: options.client_addr.clone(),
            client_port: options.client_port,
            backend_start: options.backend_start,
        };
        let r = self.call(None, |b, s| {
            b.rocklake_core_engine().call_open_session(s, &wit_options)
        });
        match r {
            Ok(Ok(o)) => Ok(OpenedSession {
                id: SessionId(o.id),
                settings: o.settings,
            }),
            Ok(Err(e)) => Err(pg_error(e)),
            Err(why) => Err(PgError::new("XX000", why)),
        }
    }

    fn query(&mut self, kv: &dyn KvRead, sid: SessionId, sql: &str, now: i64) -> Reply {
        self.recover(kv);
        let r = self.call(Some(kv), |b, s| {
            b.rocklake_core_engine().call_query(s, sid.0, sql, now)
        });
        self.reply(r)
    }

    fn execute(&mut self, kv: &dyn KvRead, sid: SessionId, sql: &str, now: i64) -> Reply {
        self.recover(kv);
        let r = self.call(Some(kv), |b, s| {
            b.rocklake_core_engine().call_execute(s, sid.0, sql, now)
        });
        self.reply(r)
    }

    fn sync(&mut self, kv: &dyn KvRead, sid: SessionId, now: i64, abort: bool) -> Reply {
        self.recover(kv);
        let r = self.call(Some(kv), |b, s| {
            b.rocklake_core_engine().call_sync(s, sid.0, now, abort)
        });
        self.reply(r)
    }

    fn describe(
        &mut self,
        kv: &dyn KvRead,
        sid: SessionId,
        sql: &str,
    ) -> Result<Describe, PgError> {
        self.recover(kv);
        match self.call(Some(kv), |b, s| {
            b.rocklake_core_engine().call_describe(s, sid.0, sql)
        }) {
            Ok(Ok(d)) => Ok(Describe {
                param_types: d.param_types,
                fields: d.fields.map(|fs| fs.into_iter().map(field).collect()),
            }),
            Ok(Err(e)) => Err(pg_error(e)),
            Err(why) => Err(PgError::new("XX000", why)),
        }
    }

    fn copy_in_data(&mut self, sid: SessionId, data: &[u8]) -> Result<(), PgError> {
        match self.call(None, |b, s| {
            b.rocklake_core_engine().call_copy_in_data(s, sid.0, data)
        }) {
            Ok(r) => r.map_err(pg_error),
            Err(why) => Err(PgError::new("XX000", why)),
        }
    }

    fn copy_in_done(&mut self, kv: &dyn KvRead, sid: SessionId, now: i64) -> Reply {
        self.recover(kv);
        let r = self.call(Some(kv), |b, s| {
            b.rocklake_core_engine().call_copy_in_done(s, sid.0, now)
        });
        self.reply(r)
    }

    fn copy_in_fail(&mut self, sid: SessionId, message: &str) -> Reply {
        let r = self.call(None, |b, s| {
            b.rocklake_core_engine()
                .call_copy_in_fail(s, sid.0, message)
        });
        self.reply(r)
    }

    fn commit_finished(
        &mut self,
        kv: &dyn KvRead,
        sid: SessionId,
        outcome: Result<(), CommitFailure>,
    ) -> Reply {
        self.unfinished = self.unfinished.saturating_sub(1);
        let outcome = outcome.map_err(|f| wit::CommitFailure {
            fenced: f.fenced,
            transient: f.transient,
            message: f.message,
        });
        let r = self.call(Some(kv), |b, s| {
            b.rocklake_core_engine()
                .call_commit_finished(s, sid.0, outcome.as_ref().map(|_| ()))
        });
        let reply = self.reply(r);
        self.refresh_latest();
        reply
    }

    fn wake(&mut self, kv: &dyn KvRead, sid: SessionId, now: i64) -> Reply {
        self.recover(kv);
        let r = self.call(Some(kv), |b, s| {
            b.rocklake_core_engine().call_wake(s, sid.0, now)
        });
        self.reply(r)
    }

    fn close_session(&mut self, sid: SessionId) {
        let _ = self.call(None, |b, s| {
            b.rocklake_core_engine().call_close_session(s, sid.0)
        });
    }

    fn set_read_only(&mut self, on: bool) {
        self.read_only = on;
        let _ = self.call(None, |b, s| {
            b.rocklake_core_engine().call_set_read_only(s, on)
        });
    }

    fn set_statement_memory_limit(&mut self, bytes: u64) {
        self.statement_memory_limit = Some(bytes);
        let _ = self.call(None, |b, s| {
            b.rocklake_core_engine()
                .call_set_statement_memory_limit(s, bytes)
        });
    }

    fn refresh(&mut self, kv: &dyn KvRead) -> Result<(), PgError> {
        self.recover(kv);
        let r = self.call(Some(kv), |b, s| b.rocklake_core_engine().call_refresh(s));
        let out = match r {
            Ok(Ok(())) => Ok(()),
            Ok(Err(e)) => Err(pg_error(e)),
            Err(trap) => Err(PgError::new("XX000", trap)),
        };
        self.refresh_latest();
        out
    }
}

fn field(f: wit::FieldDesc) -> FieldDesc {
    FieldDesc {
        name: f.name,
        table_oid: f.table_oid,
        column_id: f.column_id,
        type_oid: f.type_oid,
        type_len: f.type_len,
        type_mod: f.type_mod,
    }
}

/// `None` for rows or a COPY stream whose offsets do not fit their buffer, or a row body that
/// is not a whole DataRow body (a broken guest).
fn output(o: wit::Output) -> Option<Output> {
    Some(match o {
        wit::Output::Rows(r) => Output::Rows {
            fields: r.fields.into_iter().map(field).collect(),
            rows: TextRows::from_parts(r.data, r.ends)?,
            tag: r.tag,
        },
        wit::Output::Command(tag) => Output::Command { tag },
        wit::Output::CopyOut(c) => Output::CopyOut {
            binary: c.binary,
            columns: c.columns,
            chunks: CopyChunks::from_parts(c.data, c.ends)?,
            tag: c.tag,
        },
        wit::Output::CopyIn(c) => Output::CopyIn {
            binary: c.binary,
            columns: c.columns,
        },
        wit::Output::Empty => Output::Empty,
        wit::Output::Notice(e) => Output::Notice(pg_error(e)),
        wit::Output::Signal(s) => Output::Signal {
            pid: s.pid,
            terminate: s.terminate,
        },
    })
}

fn pg_error(e: wit::PgError) -> PgError {
    PgError {
        severity: e.severity,
        code: e.code,
        message: e.message,
        detail: e.detail,
        hint: e.hint,
        schema: e.schema,
        table: e.table,
        column: e.column,
        constraint: e.constraint,
        context: e.context,
        position: e.position,
    }
}

fn reply(r: wit::Reply) -> Reply {
    let mut outputs = Vec::with_capacity(r.outputs.len());
    let mut error = r.error.map(pg_error);
    for o in r.outputs {
        match output(o) {
            Some(o) => outputs.push(o),
            None => {
                // The statements before it completed; report this one as failed.
                error = Some(PgError::new(
                    "XX000",
                    "the catalog core returned a malformed result (rows or COPY stream)",
                ));
                break;
            }
        }
    }
    Reply {
        outputs,
        error,
        status: match r.status {
            wit::TxnStatus::Idle => TxnStatus::Idle,
            wit::TxnStatus::InBlock => TxnStatus::InBlock,
            wit::TxnStatus::Failed => TxnStatus::Failed,
        },
        commit: r.commit.map(|b| CommitBatch {
            seq: CommitSeq(b.seq),
            puts: b.puts,
            deletes: b.deletes,
        }),
        settings: r.settings,
        wait: r.wait.map(|w| rocklake_core::api::Wait { until: w.until }),
        locks_released: r.locks_released,
    }
}
