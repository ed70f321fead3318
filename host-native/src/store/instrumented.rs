//! An `ObjectStore` wrapper that counts requests, errors and bytes for `/metrics` and can
//! inject faults for tests and benchmarks ([`Faults`]). Every method forwards to the wrapped
//! store (renames and ranged reads too, so the wrapped store's own atomic or coalescing
//! implementations are kept).
//!
//! Faults are decided per request from the seed, the operation, the object's path and how often
//! that operation was already tried on that path, never from a shared random stream: SlateDB's
//! background tasks (flush timer, manifest poll, compactor) interleave their requests
//! differently in every run, but the WAL and manifest objects of a commit sequence have the same
//! names in every run, so the same seed injects the same faults into them.
//!
//! The wrapper sits below SlateDB's own retrying layer (`object_store_max_retries`), exactly
//! where a remote store's HTTP client would fail, so every injected error is seen by SlateDB's
//! retries first.

use std::collections::HashMap;
use std::fmt;
use std::ops::Range;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;
use bytes::Bytes;
use futures::stream::BoxStream;
use futures::StreamExt;
use object_store::path::Path;
use object_store::{
    CopyOptions, GetOptions, GetResult, ListResult, MultipartUpload, ObjectMeta, ObjectStore,
    PutMultipartOptions, PutOptions, PutPayload, PutResult, RenameOptions, Result,
};

use crate::metrics::Metrics;

/// The environment variable `rocklake serve` (every writer open of a catalog) reads faults
/// from when none are configured in code. Test-only: see docs/operations.md.
pub const FAULTS_ENV: &str = "ROCKLAKE_FAULTS";

/// How long an injected timeout hangs before it fails, unless `timeout_ms` says otherwise.
const DEFAULT_TIMEOUT: Duration = Duration::from_secs(2);

/// Faults to inject into the object store under a catalog.
///
/// Probabilities are fractions (0.0–1.0) of requests; at most one fault hits a request, and
/// `timeout + put_error + lost_ack + torn_put` must not exceed 1. Parsed from a spec such as
/// `seed=7,put_error=0.05,crash=after_put:13` by [`Faults::parse`]; [`fmt::Display`] prints
/// the same syntax back, so a failing run's faults can be replayed exactly.
#[derive(Debug, Clone, PartialEq)]
pub struct Faults {
    /// Added before every PUT (single and multipart start).
    pub put_latency: Duration,
    /// Seed of every random decision.
    pub seed: u64,
    /// GETs (and HEADs) that fail with a transient error (`object_store::Error::Generic`, what
    /// a 5xx or a reset connection becomes).
    pub get_error: f64,
    /// PUTs that fail with a transient error before anything is written.
    pub put_error: f64,
    /// LISTs that fail with a transient error.
    pub list_error: f64,
    /// GETs, PUTs and LISTs that hang for `timeout_after` and then fail (nothing written).
    pub timeout: f64,
    /// How long an injected timeout hangs: longer than the caller is willing to wait.
    pub timeout_after: Duration,
    /// PUTs that write the whole object and then fail, as when the response is lost.
    pub lost_ack: f64,
    /// PUTs that write a truncated object and then fail. No object store RockLake supports does
    /// this (S3, GCS, Azure and the local directory publish an object atomically); it models a
    /// store that breaks that promise.
    pub torn_put: f64,
    /// Kill the process at a named point of the commit sequence.
    pub crash: Option<CrashAt>,
    /// Fail exactly one WAL upload (the `nth` of this process) in a chosen way.
    pub wal_fault: Option<WalFault>,
    /// While it is on, every request fails at once (the store is unreachable).
    pub outage: Option<Outage>,
    /// Switch `outage` on right after the targeted `wal_fault` hits (an outcome the server
    /// cannot learn until the store is back). Spec: `outage_on_wal_fault=1`.
    pub outage_on_wal_fault: bool,
    /// While this file exists, every GET and PUT waits (the store stopped answering, as a
    /// black-holed network does) and then goes on. Spec: `stall_file=PATH`.
    pub stall: Option<PathBuf>,
    /// Create the stall file when closing the store reaches SlateDB's own close (a SlateDB
    /// that does not close). Spec: `stall_on_close=1`.
    pub stall_on_close: bool,
}

impl Default for Faults {
    fn default() -> Self {
        Faults {
            put_latency: Duration::ZERO,
            seed: 0,
            get_error: 0.0,
            put_error: 0.0,
            list_error: 0.0,
            timeout: 0.0,
            timeout_after: DEFAULT_TIMEOUT,
            lost_ack: 0.0,
            torn_put: 0.0,
            crash: None,
            wal_fault: None,
            outage: None,
            outage_on_wal_fault: false,
            stall: None,
            stall_on_close: false,
        }
    }
}

/// A named point of the commit sequence, reached once per WAL upload (the one object-store
/// write every durable commit needs; see [`is_wal_upload`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CrashPoint {
    /// The batch was handed to SlateDB; the process dies before its WAL PUT is sent.
    BeforePut,
    /// The process dies while the WAL PUT is in progress: the object was either not written
    /// or written completely (chosen from the seed), and the PUT never returned.
    DuringPut,
    /// The WAL PUT returned success; the process dies before SlateDB, the store or the client
    /// hear of it (the client never sees COMMIT).
    AfterPut,
    /// Local commit journal (counted per journal append, not per WAL upload): the record is
    /// written but not yet `fdatasync`ed when the process dies.
    JournalBeforeSync,
    /// The journal record is durable; the process dies before the client hears COMMIT.
    JournalAfterSync,
    /// Half the journal record reaches the disk (as a power loss mid-write may leave it).
    JournalTorn,
}

impl CrashPoint {
    /// The points on the WAL upload path (commits without the local journal).
    pub const ALL: [CrashPoint; 3] = [
        CrashPoint::BeforePut,
        CrashPoint::DuringPut,
        CrashPoint::AfterPut,
    ];

    /// The points on the local journal's append path.
    pub const JOURNAL: [CrashPoint; 3] = [
        CrashPoint::JournalBeforeSync,
        CrashPoint::JournalAfterSync,
        CrashPoint::JournalTorn,
    ];

    pub fn name(self) -> &'static str {
        match self {
            CrashPoint::BeforePut => "before_put",
            CrashPoint::DuringPut => "during_put",
            CrashPoint::AfterPut => "after_put",
            CrashPoint::JournalBeforeSync => "journal_before_sync",
            CrashPoint::JournalAfterSync => "journal_after_sync",
            CrashPoint::JournalTorn => "journal_torn",
        }
    }

    /// Whether the point is on the journal's path (else on the WAL upload's).
    pub fn is_journal(self) -> bool {
        CrashPoint::JOURNAL.contains(&self)
    }

    pub fn from_name(s: &str) -> Option<CrashPoint> {
        CrashPoint::ALL
            .into_iter()
            .chain(CrashPoint::JOURNAL)
            .find(|p| p.name() == s)
    }
}

impl fmt::Display for CrashPoint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Kill the process when `point` is reached for the `nth` time (1-based) by this process.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CrashAt {
    pub point: CrashPoint,
    pub nth: u64,
}

/// One targeted failure of the `nth` WAL upload (1-based, counted like crash points).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WalFault {
    pub kind: WalFaultKind,
    pub nth: u64,
}

/// How a targeted WAL upload fails (the PUT-side [`Faults`] probabilities, applied once).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WalFaultKind {
    /// Fails before anything is written.
    Error,
    /// Hangs for `timeout_after`, then fails; nothing written.
    Timeout,
    /// Writes the whole object, then fails.
    LostAck,
    /// Writes a truncated object, then fails.
    Torn,
}

impl WalFaultKind {
    const ALL: [WalFaultKind; 4] = [
        WalFaultKind::Error,
        WalFaultKind::Timeout,
        WalFaultKind::LostAck,
        WalFaultKind::Torn,
    ];

    pub fn name(self) -> &'static str {
        match self {
            WalFaultKind::Error => "error",
            WalFaultKind::Timeout => "timeout",
            WalFaultKind::LostAck => "lost_ack",
            WalFaultKind::Torn => "torn",
        }
    }
}

/// A store outage that can be switched on and off while a server runs.
#[derive(Debug, Clone, PartialEq)]
pub enum Outage {
    /// The store is down while this file exists (for a separate server process).
    File(PathBuf),
    /// The store is down while the switch is on (for tests in the same process).
    Switch(OutageSwitch),
}

impl Outage {
    fn is_on(&self) -> bool {
        match self {
            Outage::File(p) => p.exists(),
            Outage::Switch(s) => s.is_on(),
        }
    }

    fn start(&self) {
        match self {
            Outage::File(p) => {
                if let Err(e) = std::fs::write(p, b"injected outage\n") {
                    tracing::warn!(path = %p.display(), error = %e, "cannot create the outage file");
                }
            }
            Outage::Switch(s) => s.set(true),
        }
    }
}

/// A shared on/off switch for [`Outage::Switch`].
#[derive(Debug, Clone, Default)]
pub struct OutageSwitch(Arc<AtomicBool>);

impl OutageSwitch {
    pub fn new() -> OutageSwitch {
        OutageSwitch::default()
    }
    pub fn set(&self, down: bool) {
        self.0.store(down, Ordering::SeqCst);
    }
    pub fn is_on(&self) -> bool {
        self.0.load(Ordering::SeqCst)
    }
}

impl PartialEq for OutageSwitch {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

impl Faults {
    /// Whether any fault is configured.
    pub fn is_active(&self) -> bool {
        *self
            != Faults {
                seed: self.seed,
                timeout_after: self.timeout_after,
                ..Faults::default()
            }
    }

    /// Parses `key=value` pairs separated by commas: `seed=N`, `get_error=P`, `put_error=P`,
    /// `list_error=P`, `error=P` (GET, PUT and LIST alike), `timeout=P`, `timeout_ms=N`,
    /// `lost_ack=P`, `torn_put=P`, `put_latency_ms=N`, `crash=POINT:N` (POINT one of
    /// `before_put`, `during_put`, `after_put`; N ≥ 1), `wal_fault=KIND:N` (KIND one of
    /// `error`, `timeout`, `lost_ack`, `torn`), `outage_file=PATH`, `stall_file=PATH`,
    /// `stall_on_close=1`.
    pub fn parse(spec: &str) -> std::result::Result<Faults, String> {
        let mut f = Faults::default();
        for item in spec.split(',').map(str::trim).filter(|s| !s.is_empty()) {
            let (key, value) = item
                .split_once('=')
                .ok_or_else(|| format!("{item:?}: expected key=value"))?;
            let (key, value) = (key.trim(), value.trim());
            let prob = || -> std::result::Result<f64, String> {
                match value.parse::<f64>() {
                    Ok(p) if (0.0..=1.0).contains(&p) => Ok(p),
                    _ => Err(format!("{key}={value}: expected a fraction from 0 to 1")),
                }
            };
            let int = || -> std::result::Result<u64, String> {
                value
                    .parse::<u64>()
                    .map_err(|_| format!("{key}={value}: expected a non-negative integer"))
            };
            match key {
                "seed" => f.seed = int()?,
                "get_error" => f.get_error = prob()?,
                "put_error" => f.put_error = prob()?,
                "list_error" => f.list_error = prob()?,
                "error" => {
                    let p = prob()?;
                    (f.get_error, f.put_error, f.list_error) = (p, p, p);
                }
                "timeout" => f.timeout = prob()?,
                "timeout_ms" => f.timeout_after = Duration::from_millis(int()?),
                "lost_ack" => f.lost_ack = prob()?,
                "torn_put" => f.torn_put = prob()?,
                "put_latency_ms" => f.put_latency = Duration::from_millis(int()?),
                "crash" | "wal_fault" => {
                    let (name, nth) = value
                        .split_once(':')
                        .ok_or_else(|| format!("{key}={value}: expected NAME:N"))?;
                    let nth = nth
                        .parse::<u64>()
                        .ok()
                        .filter(|n| *n >= 1)
                        .ok_or_else(|| format!("{key}={value}: N must be an integer >= 1"))?;
                    if key == "crash" {
                        let point = CrashPoint::from_name(name).ok_or_else(|| {
                            format!(
                                "crash={value}: unknown point {name:?} (before_put, during_put, after_put)"
                            )
                        })?;
                        f.crash = Some(CrashAt { point, nth });
                    } else {
                        let kind = WalFaultKind::ALL
                            .into_iter()
                            .find(|k| k.name() == name)
                            .ok_or_else(|| {
                                format!(
                                    "wal_fault={value}: unknown kind {name:?} (error, timeout, lost_ack, torn)"
                                )
                            })?;
                        f.wal_fault = Some(WalFault { kind, nth });
                    }
                }
                "outage_file" => f.outage = Some(Outage::File(PathBuf::from(value))),
                "outage_on_wal_fault" => f.outage_on_wal_fault = int()? != 0,
                "stall_file" => f.stall = Some(PathBuf::from(value)),
                "stall_on_close" => f.stall_on_close = int()? != 0,
                other => return Err(format!("unknown fault {other:?}")),
            }
        }
        if f.timeout + f.put_error + f.lost_ack + f.torn_put > 1.0 {
            return Err("timeout + put_error + lost_ack + torn_put exceed 1".into());
        }
        if f.timeout + f.get_error > 1.0 || f.timeout + f.list_error > 1.0 {
            return Err("timeout + get_error (or list_error) exceed 1".into());
        }
        Ok(f)
    }

    /// The faults in [`FAULTS_ENV`], if it is set and not empty.
    pub fn from_env() -> std::result::Result<Option<Faults>, String> {
        match std::env::var(FAULTS_ENV) {
            Ok(s) if !s.trim().is_empty() => Faults::parse(&s)
                .map(Some)
                .map_err(|e| format!("{FAULTS_ENV}: {e}")),
            _ => Ok(None),
        }
    }
}

impl fmt::Display for Faults {
    /// The spec [`Faults::parse`] reads (an in-process [`Outage::Switch`] is not printable and
    /// shows as `outage=switch`).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "seed={}", self.seed)?;
        for (name, p) in [
            ("get_error", self.get_error),
            ("put_error", self.put_error),
            ("list_error", self.list_error),
            ("timeout", self.timeout),
            ("lost_ack", self.lost_ack),
            ("torn_put", self.torn_put),
        ] {
            if p > 0.0 {
                write!(f, ",{name}={p}")?;
            }
        }
        let timeout_wal_fault = self
            .wal_fault
            .is_some_and(|w| w.kind == WalFaultKind::Timeout);
        if self.timeout > 0.0 || timeout_wal_fault {
            write!(f, ",timeout_ms={}", self.timeout_after.as_millis())?;
        }
        if !self.put_latency.is_zero() {
            write!(f, ",put_latency_ms={}", self.put_latency.as_millis())?;
        }
        if let Some(c) = self.crash {
            write!(f, ",crash={}:{}", c.point, c.nth)?;
        }
        if let Some(w) = self.wal_fault {
            write!(f, ",wal_fault={}:{}", w.kind.name(), w.nth)?;
        }
        match &self.outage {
            Some(Outage::File(p)) => write!(f, ",outage_file={}", p.display())?,
            Some(Outage::Switch(_)) => write!(f, ",outage=switch")?,
            None => {}
        }
        if self.outage_on_wal_fault {
            write!(f, ",outage_on_wal_fault=1")?;
        }
        if let Some(p) = &self.stall {
            write!(f, ",stall_file={}", p.display())?;
        }
        if self.stall_on_close {
            write!(f, ",stall_on_close=1")?;
        }
        Ok(())
    }
}

/// Whether a PUT is a WAL upload carrying data: SlateDB writes every durable batch as one
/// object `…/wal/<id>.sst`; a zero-byte object there is a writer's fence, not a batch.
pub fn is_wal_upload(location: &Path, len: usize) -> bool {
    len > 0 && location.extension() == Some("sst") && location.parts().any(|p| p.as_ref() == "wal")
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Op {
    Get,
    Put,
    List,
}

/// What happens to one request.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Fate {
    Pass,
    Error,
    Timeout,
    LostAck,
    /// Write this fraction of the payload, then fail.
    Torn(f64),
}

/// splitmix64: a well-mixed 64-bit hash step.
fn mix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

fn hash_str(seed: u64, s: &str) -> u64 {
    s.bytes().fold(mix(seed), |h, b| mix(h ^ u64::from(b)))
}

/// A uniform number in [0, 1) from a hash.
fn unit(h: u64) -> f64 {
    (h >> 11) as f64 / (1u64 << 53) as f64
}

fn injected(what: &str) -> object_store::Error {
    object_store::Error::Generic {
        store: "fault-injection",
        source: what.to_string().into(),
    }
}

/// Runtime state of the injected faults.
#[derive(Debug, Default)]
struct FaultState {
    /// How often each operation was tried on each path (the "attempt" part of a decision).
    attempts: Mutex<HashMap<(Op, String), u64>>,
    /// WAL uploads started by this process (the crash points' counter).
    wal_uploads: AtomicU64,
}

#[derive(Debug)]
pub struct Instrumented {
    inner: Arc<dyn ObjectStore>,
    metrics: Arc<Metrics>,
    faults: Faults,
    state: FaultState,
    /// False when the wrapped store refuses PUTs with attributes (SlateDB then repeats the
    /// PUT without them): such a refused attempt is passed through untouched, so that a fault
    /// or crash point hits the PUT that really writes the object.
    attributes: bool,
}

impl Instrumented {
    pub fn new(inner: Arc<dyn ObjectStore>, metrics: Arc<Metrics>, faults: Faults) -> Instrumented {
        Instrumented {
            inner,
            metrics,
            faults,
            state: FaultState::default(),
            attributes: true,
        }
    }

    /// Declares whether the wrapped store accepts object attributes on PUT.
    pub fn attributes_supported(mut self, yes: bool) -> Instrumented {
        self.attributes = yes;
        self
    }

    async fn before_put(&self) {
        if !self.faults.put_latency.is_zero() {
            tokio::time::sleep(self.faults.put_latency).await;
        }
    }

    fn count<T>(&self, op: &'static str, r: Result<T>) -> Result<T> {
        self.metrics.store_op(op, r.as_ref().err().map(error_kind));
        r
    }

    /// Waits while the stall file exists ([`Faults::stall`]).
    async fn stalled(&self) {
        if let Some(p) = &self.faults.stall {
            while p.exists() {
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
        }
    }

    fn outage(&self) -> Option<object_store::Error> {
        self.faults
            .outage
            .as_ref()
            .filter(|o| o.is_on())
            .map(|_| injected("object store unreachable (injected outage)"))
    }

    /// The seeded decision for this attempt of `op` on `path`.
    fn fate(&self, op: Op, path: &str) -> Fate {
        let f = &self.faults;
        let error = match op {
            Op::Get => f.get_error,
            Op::Put => f.put_error,
            Op::List => f.list_error,
        };
        let (lost_ack, torn) = match op {
            Op::Put => (f.lost_ack, f.torn_put),
            _ => (0.0, 0.0),
        };
        if f.timeout + error + lost_ack + torn <= 0.0 {
            return Fate::Pass;
        }
        let attempt = {
            let mut attempts = self
                .state
                .attempts
                .lock()
                .unwrap_or_else(|p| p.into_inner());
            let n = attempts.entry((op, path.to_string())).or_insert(0);
            *n += 1;
            *n
        };
        let h = mix(hash_str(f.seed ^ (op as u64).wrapping_mul(0x1000_0001), path) ^ attempt);
        let x = unit(h);
        let mut edge = f.timeout;
        if x < edge {
            return Fate::Timeout;
        }
        edge += error;
        if x < edge {
            return Fate::Error;
        }
        edge += lost_ack;
        if x < edge {
            return Fate::LostAck;
        }
        edge += torn;
        if x < edge {
            return Fate::Torn(unit(mix(h)));
        }
        Fate::Pass
    }

    /// Counts a WAL upload (when crash points or targeted WAL faults are configured) and
    /// returns its number.
    fn count_wal_upload(&self, location: &Path, len: usize) -> Option<u64> {
        if self.faults.crash.is_none() && self.faults.wal_fault.is_none() {
            return None;
        }
        if !is_wal_upload(location, len) {
            return None;
        }
        Some(self.state.wal_uploads.fetch_add(1, Ordering::SeqCst) + 1)
    }

    async fn timeout(&self, what: &str) -> object_store::Error {
        tokio::time::sleep(self.faults.timeout_after).await;
        injected(&format!("{what} timed out (injected)"))
    }
}

/// Ends the process the way a crash does: SIGKILL, so nothing runs after this point (no
/// destructors, no flushing, no exit handlers).
fn die(point: CrashPoint, location: &Path, nth: u64) -> ! {
    die_at(point, location, nth)
}

/// See [`die`]; `nth` counts WAL uploads or journal appends, as `point` does.
pub(crate) fn die_at(point: CrashPoint, location: &dyn fmt::Display, nth: u64) -> ! {
    let what = if point.is_journal() {
        "journal append"
    } else {
        "WAL upload"
    };
    eprintln!(
        "rocklake: {FAULTS_ENV}: crash point {point} reached ({what} #{nth}, {location}); killing the process"
    );
    #[cfg(unix)]
    {
        // SAFETY: kill(2) on our own pid with a valid signal number has no memory effects.
        #[allow(unsafe_code)]
        unsafe {
            libc::kill(libc::getpid(), libc::SIGKILL);
        }
    }
    std::process::abort()
}

/// Error kinds for `/metrics`. SlateDB meets some of them as part of its protocol (probing
/// for objects that may not exist, conditional PUTs, retrying a PUT without attributes on
/// stores that do not support them); only `other` means the store itself is failing.
fn error_kind(e: &object_store::Error) -> &'static str {
    match e {
        object_store::Error::NotFound { .. } => "not_found",
        object_store::Error::AlreadyExists { .. } => "already_exists",
        object_store::Error::Precondition { .. } => "precondition",
        object_store::Error::NotModified { .. } => "not_modified",
        object_store::Error::NotImplemented { .. } => "not_implemented",
        _ => "other",
    }
}

impl std::fmt::Display for Instrumented {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Instrumented({})", self.inner)
    }
}

impl Instrumented {
    async fn put_faulty(
        &self,
        location: &Path,
        payload: PutPayload,
        opts: PutOptions,
    ) -> Result<PutResult> {
        self.stalled().await;
        if let Some(e) = self.outage() {
            return Err(e);
        }
        if !self.attributes && !opts.attributes.is_empty() {
            // Refused without writing anything; not an upload.
            return self.inner.put_opts(location, payload, opts).await;
        }
        let len = payload.content_length();
        let upload = self.count_wal_upload(location, len);
        let nth = upload.unwrap_or(0);
        let crash = self
            .faults
            .crash
            .filter(|c| !c.point.is_journal() && upload == Some(c.nth))
            .map(|c| c.point);
        match crash {
            Some(CrashPoint::BeforePut) => die(CrashPoint::BeforePut, location, nth),
            Some(CrashPoint::DuringPut) => {
                // An atomic store holds nothing or everything when the uploader dies.
                let key = format!("during_put {location}");
                if unit(hash_str(self.faults.seed, &key)) < 0.5 {
                    let _ = self.inner.put_opts(location, payload, opts).await;
                }
                die(CrashPoint::DuringPut, location, nth)
            }
            _ => {}
        }
        let targeted = self.faults.wal_fault.filter(|w| upload == Some(w.nth));
        let fate = match targeted.map(|w| w.kind) {
            Some(WalFaultKind::Error) => Fate::Error,
            Some(WalFaultKind::Timeout) => Fate::Timeout,
            Some(WalFaultKind::LostAck) => Fate::LostAck,
            Some(WalFaultKind::Torn) => Fate::Torn(unit(mix(self.faults.seed ^ nth))),
            None => self.fate(Op::Put, location.as_ref()),
        };
        let r = match fate {
            Fate::Pass => self.inner.put_opts(location, payload, opts).await,
            Fate::Error => Err(injected("PUT failed with 503 Slow Down (injected)")),
            Fate::Timeout => Err(self.timeout("PUT").await),
            Fate::LostAck => match self.inner.put_opts(location, payload, opts).await {
                Ok(_) => Err(injected(
                    "connection reset after the PUT was sent (injected lost acknowledgement)",
                )),
                Err(e) => Err(e),
            },
            Fate::Torn(fraction) => {
                let whole = Bytes::from(payload);
                let keep =
                    ((whole.len() as f64 * fraction) as usize).min(whole.len().saturating_sub(1));
                let torn = PutPayload::from_bytes(whole.slice(..keep));
                let _ = self.inner.put_opts(location, torn, opts).await;
                Err(injected(&format!(
                    "PUT broke off after {keep} of {} bytes, leaving a truncated object (injected)",
                    whole.len()
                )))
            }
        };
        if r.is_ok() && crash == Some(CrashPoint::AfterPut) {
            die(CrashPoint::AfterPut, location, nth);
        }
        if targeted.is_some() && self.faults.outage_on_wal_fault {
            if let Some(o) = &self.faults.outage {
                o.start();
            }
        }
        r
    }

    async fn get_faulty(&self, location: &Path, options: GetOptions) -> Result<GetResult> {
        self.stalled().await;
        if let Some(e) = self.outage() {
            return Err(e);
        }
        match self.fate(Op::Get, location.as_ref()) {
            Fate::Error => Err(injected("GET failed with 500 Internal Error (injected)")),
            Fate::Timeout => Err(self.timeout("GET").await),
            _ => self.inner.get_opts(location, options).await,
        }
    }

    async fn get_ranges_faulty(
        &self,
        location: &Path,
        ranges: &[Range<u64>],
    ) -> Result<Vec<Bytes>> {
        self.stalled().await;
        if let Some(e) = self.outage() {
            return Err(e);
        }
        match self.fate(Op::Get, location.as_ref()) {
            Fate::Error => Err(injected("GET failed with 500 Internal Error (injected)")),
            Fate::Timeout => Err(self.timeout("GET").await),
            _ => self.inner.get_ranges(location, ranges).await,
        }
    }

    /// A listing that fails (at once, or after hanging), or `None` to list normally.
    fn list_fault(&self, prefix: Option<&Path>) -> Option<BoxStream<'static, Result<ObjectMeta>>> {
        if let Some(e) = self.outage() {
            return Some(futures::stream::once(async move { Err(e) }).boxed());
        }
        let key = prefix.map(|p| p.to_string()).unwrap_or_default();
        match self.fate(Op::List, &key) {
            Fate::Error => Some(
                futures::stream::once(async {
                    Err(injected(
                        "LIST failed with 503 Service Unavailable (injected)",
                    ))
                })
                .boxed(),
            ),
            Fate::Timeout => {
                let after = self.faults.timeout_after;
                Some(
                    futures::stream::once(async move {
                        tokio::time::sleep(after).await;
                        Err(injected("LIST timed out (injected)"))
                    })
                    .boxed(),
                )
            }
            _ => None,
        }
    }
}

#[async_trait]
impl ObjectStore for Instrumented {
    async fn put_opts(
        &self,
        location: &Path,
        payload: PutPayload,
        opts: PutOptions,
    ) -> Result<PutResult> {
        let len = payload.content_length() as u64;
        self.before_put().await;
        let r = self.put_faulty(location, payload, opts).await;
        if r.is_ok() {
            self.metrics.store_bytes_written.inc_by(len);
        }
        self.count("put", r)
    }

    async fn put_multipart_opts(
        &self,
        location: &Path,
        opts: PutMultipartOptions,
    ) -> Result<Box<dyn MultipartUpload>> {
        self.before_put().await;
        self.stalled().await;
        let r = match self.outage() {
            Some(e) => Err(e),
            None => match self.fate(Op::Put, location.as_ref()) {
                Fate::Pass => self.inner.put_multipart_opts(location, opts).await,
                Fate::Timeout => Err(self.timeout("multipart upload").await),
                _ => Err(injected(
                    "starting a multipart upload failed with 503 (injected)",
                )),
            },
        };
        self.count("put_multipart", r)
    }

    async fn get_opts(&self, location: &Path, options: GetOptions) -> Result<GetResult> {
        let r = self.get_faulty(location, options).await;
        if let Ok(g) = &r {
            self.metrics
                .store_bytes_read
                .inc_by(g.range.end.saturating_sub(g.range.start));
        }
        self.count("get", r)
    }

    async fn get_ranges(&self, location: &Path, ranges: &[Range<u64>]) -> Result<Vec<Bytes>> {
        let r = self.get_ranges_faulty(location, ranges).await;
        if let Ok(parts) = &r {
            let n: usize = parts.iter().map(Bytes::len).sum();
            self.metrics.store_bytes_read.inc_by(n as u64);
        }
        self.count("get", r)
    }

    fn delete_stream(
        &self,
        locations: BoxStream<'static, Result<Path>>,
    ) -> BoxStream<'static, Result<Path>> {
        let metrics = self.metrics.clone();
        if let Some(e) = self.outage() {
            let message = e.to_string();
            return locations
                .map(move |_| Err(injected(&message)))
                .inspect(move |r| metrics.store_op("delete", r.as_ref().err().map(error_kind)))
                .boxed();
        }
        self.inner
            .delete_stream(locations)
            .inspect(move |r| metrics.store_op("delete", r.as_ref().err().map(error_kind)))
            .boxed()
    }

    fn list(&self, prefix: Option<&Path>) -> BoxStream<'static, Result<ObjectMeta>> {
        let fault = self.list_fault(prefix);
        self.metrics
            .store_op("list", fault.as_ref().map(|_| "other"));
        fault.unwrap_or_else(|| self.inner.list(prefix))
    }

    fn list_with_offset(
        &self,
        prefix: Option<&Path>,
        offset: &Path,
    ) -> BoxStream<'static, Result<ObjectMeta>> {
        let fault = self.list_fault(prefix);
        self.metrics
            .store_op("list", fault.as_ref().map(|_| "other"));
        fault.unwrap_or_else(|| self.inner.list_with_offset(prefix, offset))
    }

    async fn list_with_delimiter(&self, prefix: Option<&Path>) -> Result<ListResult> {
        let r = match self.list_fault(prefix) {
            Some(mut failing) => match failing.next().await {
                Some(Err(e)) => Err(e),
                _ => Err(injected("LIST failed (injected)")),
            },
            None => self.inner.list_with_delimiter(prefix).await,
        };
        self.count("list", r)
    }

    async fn copy_opts(&self, from: &Path, to: &Path, options: CopyOptions) -> Result<()> {
        let r = match self.outage() {
            Some(e) => Err(e),
            None => self.inner.copy_opts(from, to, options).await,
        };
        self.count("copy", r)
    }

    async fn rename_opts(&self, from: &Path, to: &Path, options: RenameOptions) -> Result<()> {
        let r = match self.outage() {
            Some(e) => Err(e),
            None => self.inner.rename_opts(from, to, options).await,
        };
        self.count("rename", r)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use object_store::ObjectStoreExt;

    #[test]
    fn spec_round_trips_and_rejects_nonsense() {
        let f = Faults::parse(
            "seed=7, put_error=0.05,get_error=0.02,list_error=0.01,timeout=0.01,timeout_ms=300,\
             lost_ack=0.02,torn_put=0.01,put_latency_ms=5,crash=after_put:13,outage_file=/tmp/x,\
             wal_fault=torn:4,outage_on_wal_fault=1,stall_file=/tmp/y,stall_on_close=1",
        )
        .expect("parse");
        assert_eq!(f.stall.as_deref(), Some(std::path::Path::new("/tmp/y")));
        assert_eq!(f.seed, 7);
        assert_eq!(f.put_error, 0.05);
        assert_eq!(f.timeout_after, Duration::from_millis(300));
        assert_eq!(
            f.crash,
            Some(CrashAt {
                point: CrashPoint::AfterPut,
                nth: 13
            })
        );
        assert_eq!(Faults::parse(&f.to_string()).expect("reparse"), f);
        assert!(f.is_active());
        assert!(!Faults::parse("seed=9").expect("seed only").is_active());
        assert_eq!(Faults::parse("").expect("empty"), Faults::default());
        for bad in [
            "put_error=2",
            "seed=-1",
            "crash=after_put",
            "crash=after_put:0",
            "crash=sideways:3",
            "wal_fault=melt:3",
            "wal_fault=torn:0",
            "bogus=1",
            "put_error",
            "put_error=0.6,lost_ack=0.6",
        ] {
            assert!(Faults::parse(bad).is_err(), "{bad} accepted");
        }
    }

    #[test]
    fn decisions_depend_on_seed_path_and_attempt_only() {
        let store: Arc<dyn ObjectStore> = Arc::new(object_store::memory::InMemory::new());
        let faults = Faults::parse("seed=42,put_error=0.3,timeout=0.1,lost_ack=0.1").expect("p");
        let run = |faults: &Faults, order: &[&str]| {
            let s = Instrumented::new(store.clone(), Arc::default(), faults.clone());
            let mut out: HashMap<String, Vec<Fate>> = HashMap::new();
            for p in order {
                out.entry(p.to_string())
                    .or_default()
                    .push(s.fate(Op::Put, p));
            }
            out
        };
        let paths = ["wal/1.sst", "wal/2.sst", "manifest/3.manifest", "wal/1.sst"];
        let mut reordered = paths;
        reordered.swap(1, 2);
        let a = run(&faults, &paths);
        assert_eq!(
            a,
            run(&faults, &reordered),
            "interleaving changed decisions"
        );
        let many: Vec<String> = (0..2000).map(|i| format!("wal/{i}.sst")).collect();
        let s = Instrumented::new(store.clone(), Arc::default(), faults.clone());
        let fates: Vec<Fate> = many.iter().map(|p| s.fate(Op::Put, p)).collect();
        let share = |f: Fate| fates.iter().filter(|x| **x == f).count() as f64 / 2000.0;
        assert!(
            (share(Fate::Error) - 0.3).abs() < 0.05,
            "{}",
            share(Fate::Error)
        );
        assert!((share(Fate::Timeout) - 0.1).abs() < 0.03);
        assert!((share(Fate::LostAck) - 0.1).abs() < 0.03);
        let other = Faults {
            seed: 43,
            ..faults.clone()
        };
        let s2 = Instrumented::new(store, Arc::default(), other);
        let fates2: Vec<Fate> = many.iter().map(|p| s2.fate(Op::Put, p)).collect();
        assert_ne!(fates, fates2, "the seed has no effect");
    }

    #[test]
    fn only_wal_data_uploads_count_for_crash_points() {
        assert!(is_wal_upload(
            &Path::from("wal/00000000000000000007.sst"),
            10
        ));
        assert!(is_wal_upload(
            &Path::from("cat/wal/00000000000000000007.sst"),
            10
        ));
        assert!(!is_wal_upload(
            &Path::from("wal/00000000000000000007.sst"),
            0
        ));
        assert!(!is_wal_upload(&Path::from("compacted/01J.sst"), 10));
        assert!(!is_wal_upload(
            &Path::from("manifest/00000000000000000003.manifest"),
            10
        ));
    }

    #[tokio::test]
    async fn injected_faults_fail_or_tear_puts_and_the_outage_switch_stops_everything() {
        let mem: Arc<dyn ObjectStore> = Arc::new(object_store::memory::InMemory::new());
        let switch = OutageSwitch::new();
        let faults = Faults {
            lost_ack: 0.5,
            torn_put: 0.5,
            outage: Some(Outage::Switch(switch.clone())),
            ..Faults::default()
        };
        let s = Instrumented::new(mem.clone(), Arc::default(), faults);
        let mut torn = 0;
        let mut complete = 0;
        for i in 0..40 {
            let p = Path::from(format!("o/{i}"));
            let r = s
                .put_opts(&p, PutPayload::from(vec![7u8; 100]), PutOptions::default())
                .await;
            assert!(r.is_err(), "a faulty PUT reported success");
            let stored = mem
                .get(&p)
                .await
                .expect("written")
                .bytes()
                .await
                .expect("b");
            if stored.len() == 100 {
                complete += 1;
            } else {
                assert!(stored.len() < 100);
                torn += 1;
            }
        }
        assert!(torn > 0 && complete > 0, "torn {torn} complete {complete}");
        switch.set(true);
        let p = Path::from("o/0");
        assert!(s.get_opts(&p, GetOptions::default()).await.is_err());
        assert!(s.list(None).next().await.is_some_and(|r| r.is_err()));
        switch.set(false);
        assert!(s.get_opts(&p, GetOptions::default()).await.is_ok());
    }
}
