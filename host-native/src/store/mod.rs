//! The durable key/value store under the catalog: SlateDB on an object store, plus an
//! in-memory ordered mirror of every key that answers all reads.
//!
//! The store is MVCC-agnostic: the core encodes keys and decides visibility; this module only
//! makes one [`CommitBatch`] durable as one atomic SlateDB write and keeps the mirror in step.
//!
//! Writer fencing has two layers. SlateDB's own: opening a `Db` bumps the manifest's writer
//! epoch and writes a fence object at the next WAL position, so an older writer's next WAL
//! upload (a create-if-absent PUT) fails and that writer closes itself as fenced. On top of it
//! RockLake's `writer_epoch` key (prefix 0x00, see [`RESERVED_PREFIX`]), bumped durably on
//! every open: the catalog's own generation number, readable by tools and other hosts.
//!
//! Keys whose first byte is 0x00 belong to the store; batches may not write them and readers
//! never see them.
//!
//! A commit whose durability SlateDB cannot confirm leaves the store broken (SlateDB's `Db`
//! stops accepting writes after a failed WAL upload). [`Store::recover`] opens the catalog
//! again inside the same process — after checking that no other writer took over — and reloads
//! the mirror from what is durable, which also answers whether the unconfirmed commit landed.

mod instrumented;
mod journal;
mod location;
mod mirror;
mod remote_journal;

use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, AtomicU8, Ordering};
use std::sync::Arc;
use std::time::Duration;

use futures::StreamExt;
use rocklake_core::api::CommitBatch;
use slatedb::config::{
    CompactionWorkerOptions, CompactorOptions, ScanOptions, Settings, WriteOptions,
};
use slatedb::{CloseReason, Db, DbStatus, ErrorKind, WriteBatch};
use tokio::sync::watch;

pub use instrumented::{
    is_wal_upload, CrashAt, CrashPoint, Faults, Outage, OutageSwitch, WalFault, WalFaultKind,
    FAULTS_ENV,
};
pub use mirror::StoreReader;

/// First byte of every key the store reserves for itself.
pub const RESERVED_PREFIX: u8 = 0x00;

/// RockLake's writer epoch: big-endian u64, incremented durably by every writer open.
const WRITER_EPOCH_KEY: &[u8] = b"\x00writer_epoch";

/// How to open a catalog.
#[non_exhaustive]
#[derive(Debug, Clone)]
pub struct StoreOptions {
    /// Create the catalog (and, for a local path, its directory) when it does not exist.
    /// When false, opening a location without a catalog fails with [`StoreError::NotFound`].
    pub create_if_missing: bool,
    /// Replace RockLake's tuned SlateDB settings ([`Store::default_settings`]). For experiments
    /// and tests; production should leave this `None`.
    pub slatedb_settings: Option<Settings>,
    /// Count object-store requests, errors and bytes into these metrics.
    pub metrics: Option<Arc<crate::metrics::Metrics>>,
    /// Inject faults into the object store (tests and benchmarks). When `None`, a writer open
    /// reads them from [`FAULTS_ENV`] (test-only; unset in production).
    pub faults: Option<Faults>,
    /// How long a commit waits for the store to confirm its WAL upload (through the object
    /// store client's and SlateDB's retries) before its outcome is reported unknown
    /// ([`StoreError::Indeterminate`]) and the store must be reopened. Also bounds a reopen.
    pub commit_timeout: Duration,
    /// Make commits durable through RockLake's commit journal instead of a SlateDB WAL
    /// upload each: on a local directory by appending to `rocklake-journal` (decision 0009),
    /// on an object store by one create-if-absent object per commit group, several uploading
    /// at once (decision 0010). Default on; tests of the WAL upload path turn it off.
    pub commit_journal: bool,
    /// Object stores with the commit journal: commit groups uploading at most at once. More
    /// overlap for stores that scale (S3, GCS, Azure); fewer, larger groups for a server with a
    /// low PUT ceiling. At least 1.
    pub journal_uploads: usize,
}

/// Default [`StoreOptions::journal_uploads`]: 64 sessions committing against a store with
/// 50 ms PUTs reach ~1000 commits/s (bench/RESULTS.md).
pub const DEFAULT_JOURNAL_UPLOADS: usize = 32;

/// Default [`StoreOptions::commit_timeout`]: well above a healthy store's worst PUT latency,
/// well below the minutes the object store client's and SlateDB's retries can add up to on a
/// store that stopped answering.
pub const DEFAULT_COMMIT_TIMEOUT: Duration = Duration::from_secs(30);

impl Default for StoreOptions {
    fn default() -> Self {
        StoreOptions {
            create_if_missing: true,
            slatedb_settings: None,
            metrics: None,
            faults: None,
            commit_timeout: DEFAULT_COMMIT_TIMEOUT,
            commit_journal: true,
            journal_uploads: DEFAULT_JOURNAL_UPLOADS,
        }
    }
}

impl StoreOptions {
    pub fn create_if_missing(mut self, yes: bool) -> Self {
        self.create_if_missing = yes;
        self
    }
    pub fn slatedb_settings(mut self, settings: Settings) -> Self {
        self.slatedb_settings = Some(settings);
        self
    }
    pub fn commit_timeout(mut self, timeout: Duration) -> Self {
        self.commit_timeout = timeout;
        self
    }
    pub fn commit_journal(mut self, yes: bool) -> Self {
        self.commit_journal = yes;
        self
    }
}

/// Cut the journal back (after making SlateDB durable) once it holds this many bytes: about
/// a thousand typical commits, so the flush it waits for costs one commit in a thousand a few
/// milliseconds, and an open replays at most this much.
const JOURNAL_CUT_BYTES: u64 = 1024 * 1024;

/// What went wrong, phrased by what the caller should do about it.
#[non_exhaustive]
#[derive(thiserror::Error, Debug)]
pub enum StoreError {
    /// Another writer opened the catalog after this one. Nothing of the failed commit is or will
    /// become visible. This `Store` will never commit again: answer 57P04, stop accepting
    /// writes, and drop it (re-opening would fence the other writer in turn).
    #[error(
        "writer fenced: another instance opened catalog {location} as writer (our epoch {epoch})"
    )]
    Fenced { location: String, epoch: u64 },
    /// The object store or local disk failed (network, timeouts, permissions, disk full).
    /// Nothing was committed. `transient`: retrying later may succeed (for `open`, retry the
    /// open; a commit that fails this way was not started, so it may be retried).
    #[error("storage unavailable: {message}")]
    Unavailable { message: String, transient: bool },
    /// The batch was handed to SlateDB but its durability could not be confirmed: it may or
    /// may not be committed. This `Store` is now unusable (later commits return `Closed`).
    /// Tell the client the connection failed (not that the transaction rolled back), drop this
    /// `Store` and open the catalog again, which reads the truth from storage.
    #[error("commit outcome unknown: {message}")]
    Indeterminate { message: String },
    /// The request is wrong (bad URL, reserved or empty key, unsupported option). Fix the
    /// caller; retrying the same request fails the same way.
    #[error("invalid request: {message}")]
    Invalid { message: String },
    /// No catalog exists at the location and `create_if_missing` was false. Check the URL.
    #[error("no catalog at {location}")]
    NotFound { location: String },
    /// Persisted bytes are not what they should be (checksum mismatch, foreign format, a
    /// malformed reserved key). Stop and investigate; do not write to this catalog.
    #[error("catalog data corrupt: {message}")]
    Corrupt { message: String },
    /// The store was closed (or broken by an earlier `Indeterminate` commit). Open a new one.
    #[error("store is closed")]
    Closed,
    /// A bug in RockLake or SlateDB. Log it, drop the `Store`, open again.
    #[error("internal storage error: {message}")]
    Internal { message: String },
}

const OPEN: u8 = 0;
const FENCED: u8 = 1;
const BROKEN: u8 = 2;
const CLOSED: u8 = 3;

/// How long [`Store::recover`] waits for the failed SlateDB instance to close, and for the
/// manifest read that checks for a newer writer (SlateDB's admin reads retry without bound).
const RECOVERY_STEP_BOUND: Duration = Duration::from_secs(2);

/// A catalog opened as its single writer. Share it as `Arc<Store>`. Call [`Store::close`]
/// before dropping it: SlateDB's background tasks (compactor, GC) run until then.
pub struct Store {
    /// The open SlateDB instance. Its lock serializes commits (spec step 1), recovery and close.
    writer: tokio::sync::Mutex<Writer>,
    mirror: Arc<mirror::Mirror>,
    /// RockLake's writer epoch claimed by the latest open (recovery claims a new one).
    epoch: AtomicU64,
    /// Shared with the journal's SlateDB applier, which marks the store broken when SlateDB
    /// refuses a batch.
    state: Arc<AtomicU8>,
    location: String,
    /// The object store (with metrics and faults) and SlateDB's root in it, for recovery.
    object_store: Arc<dyn object_store::ObjectStore>,
    root: object_store::path::Path,
    settings: Box<Settings>,
    commit_timeout: Duration,
    /// Where and how the commit journal runs (local catalogs with the journal on).
    journal: Option<JournalPlace>,
    /// Commit through the object-store journal (object stores with the journal on).
    remote_journal: bool,
    /// The object-store journal's uploads in flight at most
    /// ([`StoreOptions::journal_uploads`]); kept across
    /// reopens, so a reopened instance waits for the failed one's uploads too.
    uploads: Arc<tokio::sync::Semaphore>,
    /// Which step of [`Store::close`] runs ([`ClosePhase`]), so a shutdown that overruns its
    /// bound can say where it stopped.
    close_phase: std::sync::Mutex<ClosePhase>,
    /// Tests: the stall file ([`Faults::stall`]) to create when the close reaches SlateDB's own
    /// close (`stall_on_close=1`).
    stall_on_close: Option<PathBuf>,
}

/// How long [`Store::close`] waits for SlateDB's own close. Everything acknowledged is durable
/// before it starts (in the commit journal, or in the WAL upload each commit waited for); it
/// only stops SlateDB's background tasks. CI saw it never return after a takeover had
/// replayed journal records, and wait past 5 s for a compaction in flight under load (that
/// compaction is redone after the next open).
const SLATEDB_CLOSE_BOUND: Duration = Duration::from_secs(5);

/// The steps of [`Store::close`], in order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ClosePhase {
    Open,
    WaitingForWriter,
    SettlingUploads,
    ApplyingJournal,
    FlushingSlateDb,
    CuttingJournal,
    ClosingSlateDb,
    Closed,
}

impl ClosePhase {
    /// What the store was doing, for a log line.
    pub fn describe(self) -> &'static str {
        match self {
            ClosePhase::Open => "not closing",
            ClosePhase::WaitingForWriter => "waiting for the commit in progress",
            ClosePhase::SettlingUploads => "settling the object-store journal's uploads",
            ClosePhase::ApplyingJournal => "handing the commit journal's batches to SlateDB",
            ClosePhase::FlushingSlateDb => "flushing SlateDB before cutting the journal",
            ClosePhase::CuttingJournal => "cutting the commit journal",
            ClosePhase::ClosingSlateDb => "closing SlateDB (final flush, compactor, collector)",
            ClosePhase::Closed => "closed",
        }
    }
}

/// Room for one more journal upload ([`Store::upload_slot`]); empty where commits do not go
/// through the object-store journal.
#[derive(Debug, Default)]
pub struct UploadSlot(Option<tokio::sync::OwnedSemaphorePermit>);

/// A local catalog's commit journal: its directory, the crash point armed on it (tests), and
/// whether commits go through it. Without `commit`, an open still replays and claims a journal
/// an earlier writer left (its acknowledged commits may be only there), then leaves it empty.
#[derive(Debug, Clone)]
struct JournalPlace {
    dir: PathBuf,
    crash: Option<CrashAt>,
    commit: bool,
}

/// One SlateDB instance opened as the writer.
struct Writer {
    db: Db,
    status: watch::Receiver<DbStatus>,
    /// SlateDB's manifest writer epoch claimed when `db` was opened.
    slatedb_epoch: u64,
    /// Reopen attempts since `db` that failed after the store answered: each may have bumped
    /// the manifest's writer epoch by one before failing (e.g. on a WAL object it could not
    /// replay), and those bumps are ours, not another writer's.
    failed_opens: u64,
    /// The commit journal claimed for this instance's epoch (see [`JournalPlace`]).
    journal: Option<JournalWriter>,
    /// The object-store journal's writer state (decision 0010).
    remote: Option<RemoteWriter>,
}

/// The commit journal and the task that hands journaled batches to SlateDB.
struct JournalWriter {
    journal: Arc<std::sync::Mutex<journal::Journal>>,
    applier: tokio::sync::mpsc::Sender<Apply>,
    /// Set when recovery replaces this instance: a late failure of its applier (writing to the
    /// SlateDB instance recovery closed) must not mark the reopened store broken.
    retired: Arc<std::sync::atomic::AtomicBool>,
}

/// The object-store journal as its writer holds it (under the writer lock).
struct RemoteWriter {
    /// Shared with every upload task of this instance.
    ctx: Arc<RemoteCtx>,
    /// The slot the next group takes.
    next_slot: u64,
    /// Settles (`true`: durable, applied and acknowledged) once the latest group handed out
    /// has; the next group's task waits for it, so acknowledgements go in slot order.
    last: Option<tokio::sync::oneshot::Receiver<bool>>,
}

/// What an upload task of the object-store journal needs.
struct RemoteCtx {
    store: Arc<dyn object_store::ObjectStore>,
    root: object_store::path::Path,
    /// This instance's RockLake epoch: the journal namespace it writes.
    epoch: u64,
    db: Db,
    applier: tokio::sync::mpsc::Sender<Apply>,
    retired: Arc<std::sync::atomic::AtomicBool>,
    state: Arc<AtomicU8>,
    mirror: Arc<mirror::Mirror>,
    location: String,
    commit_timeout: Duration,
    /// Slots up to this one are deleted (or being deleted); `None` before the first cut.
    cut_through: std::sync::Mutex<Option<u64>>,
    cutting: std::sync::atomic::AtomicBool,
}

/// Delete the object-store journal's records SlateDB holds durably every this many slots (one
/// `flush` and one bulk delete).
const REMOTE_CUT_SLOTS: u64 = 256;

/// A commit group on its way to durability (see [`Store::start_group`]).
#[must_use = "a started group's outcome must be awaited"]
pub enum GroupCommit {
    /// The outcome is known.
    Done(Result<(), StoreError>),
    /// Uploading to the object-store journal.
    Uploading(tokio::sync::oneshot::Receiver<Result<(), StoreError>>),
}

impl GroupCommit {
    /// The group's outcome, as [`Store::commit_group`] describes it: once `Ok`, the group and
    /// every group started before it are durable and visible to readers.
    pub async fn durable(self) -> Result<(), StoreError> {
        match self {
            GroupCommit::Done(r) => r,
            GroupCommit::Uploading(rx) => rx.await.unwrap_or_else(|_| {
                Err(StoreError::Indeterminate {
                    message: "the journal upload task stopped without an answer".into(),
                })
            }),
        }
    }
}

/// Hands `batches` to a new upload task at the next slot of the object-store journal.
fn start_upload(
    rw: &mut RemoteWriter,
    batches: Arc<[CommitBatch]>,
    permit: tokio::sync::OwnedSemaphorePermit,
) -> Result<tokio::sync::oneshot::Receiver<Result<(), StoreError>>, StoreError> {
    let slot = rw.next_slot;
    let object = remote_journal::record_object(rw.ctx.epoch, slot, &batches).map_err(|e| {
        StoreError::Invalid {
            message: e.to_string(),
        }
    })?;
    rw.next_slot += 1;
    let (done_tx, done_rx) = tokio::sync::oneshot::channel();
    let previous = rw.last.replace(done_rx);
    let (reply_tx, reply_rx) = tokio::sync::oneshot::channel();
    let ctx = rw.ctx.clone();
    tokio::spawn(async move {
        let outcome = upload(&ctx, slot, object, &batches, previous, permit).await;
        let ok = outcome.is_ok();
        // The next group reports only after this one: in slot order, and none after a failure.
        let _ = done_tx.send(ok);
        let _ = reply_tx.send(outcome);
        if ok && slot % REMOTE_CUT_SLOTS == REMOTE_CUT_SLOTS - 1 {
            spawn_cut(ctx, slot);
        }
    });
    Ok(reply_rx)
}

/// One group of the object-store journal: store its object, wait for the previous group, then
/// (both durable) hand it to SlateDB with its position, show it to readers and acknowledge.
async fn upload(
    ctx: &RemoteCtx,
    slot: u64,
    object: bytes::Bytes,
    batches: &[CommitBatch],
    previous: Option<tokio::sync::oneshot::Receiver<bool>>,
    permit: tokio::sync::OwnedSemaphorePermit,
) -> Result<(), StoreError> {
    let path = remote_journal::slot_path(&ctx.root, ctx.epoch, slot);
    let stored = match tokio::time::timeout(
        ctx.commit_timeout,
        remote_journal::append(ctx.store.as_ref(), &path, object),
    )
    .await
    {
        Ok(r) => r,
        Err(_) => Err(remote_journal::AppendError::Failed(format!(
            "no answer within {:?}",
            ctx.commit_timeout
        ))),
    };
    // The store is done with this group; the next one may upload.
    drop(permit);
    let previous_ok = match previous {
        Some(rx) => rx.await.unwrap_or(false),
        None => true,
    };
    let indeterminate = |why: String| StoreError::Indeterminate {
        message: format!(
            "{why} (journal slot {slot}, store {} epoch {})",
            ctx.location, ctx.epoch
        ),
    };
    let fenced = || StoreError::Fenced {
        location: ctx.location.clone(),
        epoch: ctx.epoch,
    };
    match stored {
        Ok(()) if previous_ok => {}
        // Stored after a gap (an earlier group failed): the takeover that follows ends this
        // namespace at the gap, so nothing of it counts if the gap was a newer writer's fence;
        // otherwise the reopen tells.
        Ok(()) => {
            return Err(if ctx.state.load(Ordering::SeqCst) == FENCED {
                fenced()
            } else {
                indeterminate("an earlier commit group in flight failed".into())
            });
        }
        Err(remote_journal::AppendError::Fenced) => {
            // A fence found while the store is open is another writer's. While it is broken,
            // it may be this process's own reopen fencing the old instance: nothing of the
            // group is stored either way, and the reopen's reconciliation says so.
            if ctx
                .state
                .compare_exchange(OPEN, FENCED, Ordering::SeqCst, Ordering::SeqCst)
                .is_err()
                && ctx.state.load(Ordering::SeqCst) != FENCED
            {
                return Err(indeterminate(
                    "the journal slot was fenced by a reopen".into(),
                ));
            }
            tracing::warn!(location = %ctx.location, epoch = ctx.epoch, slot,
                "commit refused: a newer writer fenced the commit journal");
            return Err(fenced());
        }
        Err(remote_journal::AppendError::Failed(why)) => {
            if !ctx.retired.load(Ordering::SeqCst) {
                let _ =
                    ctx.state
                        .compare_exchange(OPEN, BROKEN, Ordering::SeqCst, Ordering::SeqCst);
            }
            return Err(indeterminate(why));
        }
    }
    if ctx.retired.load(Ordering::SeqCst) {
        // A reopen replaced this instance meanwhile; its reload tells whether this landed.
        return Err(indeterminate(
            "the store was reopened during the upload".into(),
        ));
    }
    // Durable, and so is every earlier group: whatever SlateDB does next, a takeover replays it.
    let mut wb = write_batch(batches);
    wb.put(
        remote_journal::APPLIED_KEY,
        remote_journal::encode_position((ctx.epoch, slot)),
    );
    if ctx.applier.send(Apply::Write(wb)).await.is_err() {
        tracing::warn!(location = %ctx.location, "the SlateDB applier stopped");
        let _ = ctx
            .state
            .compare_exchange(OPEN, BROKEN, Ordering::SeqCst, Ordering::SeqCst);
    }
    for batch in batches {
        ctx.mirror.apply(batch);
    }
    Ok(())
}

/// Runs [`cut_remote`] in the background unless a cut is running.
fn spawn_cut(ctx: Arc<RemoteCtx>, through: u64) {
    if ctx.cutting.swap(true, Ordering::SeqCst) {
        return;
    }
    tokio::spawn(async move {
        cut_remote(&ctx, through).await;
        ctx.cutting.store(false, Ordering::SeqCst);
    });
}

/// Once SlateDB has every group through `through` and made it durable, deletes their journal
/// objects. `false` when SlateDB did not get there (the objects stay for the next takeover).
async fn cut_remote(ctx: &RemoteCtx, through: u64) -> bool {
    let (done, answer) = tokio::sync::oneshot::channel();
    if ctx.applier.send(Apply::Barrier(done)).await.is_err() || !answer.await.unwrap_or(false) {
        return false;
    }
    match tokio::time::timeout(ctx.commit_timeout, ctx.db.flush()).await {
        Ok(Ok(())) => {}
        Ok(Err(e)) => {
            tracing::warn!(location = %ctx.location, error = %e,
                "flushing SlateDB before deleting journal objects");
            return false;
        }
        Err(_) => {
            tracing::warn!(location = %ctx.location,
                "flushing SlateDB before deleting journal objects timed out");
            return false;
        }
    }
    let from = {
        let mut cut = ctx.cut_through.lock().unwrap_or_else(|p| p.into_inner());
        let from = cut.map_or(0, |c| c + 1);
        if from > through {
            return true;
        }
        *cut = Some(through);
        from
    };
    let paths = (from..=through)
        .map(|slot| remote_journal::slot_path(&ctx.root, ctx.epoch, slot))
        .collect();
    if let Err(e) = remote_journal::delete(ctx.store.as_ref(), paths).await {
        tracing::warn!(location = %ctx.location, error = %e,
            "deleting journal objects SlateDB holds (the next takeover skips them)");
    }
    true
}

/// Work for the applier, in commit order.
enum Apply {
    Write(WriteBatch),
    /// Answered once every earlier write is in SlateDB: `true` when all of them were taken.
    Barrier(tokio::sync::oneshot::Sender<bool>),
}

/// Journaled commit groups queued for SlateDB at most (then commits wait: back-pressure).
const APPLY_QUEUE: usize = 1024;

/// Writes journaled batches into SlateDB in commit order, off the commit path (a SlateDB write
/// costs about as much as the journal's `fdatasync`; the mirror already answers reads). After a
/// refused write it takes nothing more and marks the store broken: the reopen replays the
/// journal, which still holds everything (it is cut only after a successful barrier).
fn spawn_applier(
    db: Db,
    state: Arc<AtomicU8>,
    retired: Arc<std::sync::atomic::AtomicBool>,
    location: String,
) -> tokio::sync::mpsc::Sender<Apply> {
    let (tx, mut rx) = tokio::sync::mpsc::channel(APPLY_QUEUE);
    tokio::spawn(async move {
        let mut healthy = true;
        while let Some(work) = rx.recv().await {
            match work {
                Apply::Write(wb) if healthy => {
                    if let Err(e) = db.write_with_options(wb, &WriteOptions::default()).await {
                        tracing::warn!(location = %location, error = %e,
                            "SlateDB refused a journaled commit; the store reopens and replays it");
                        healthy = false;
                        if !retired.load(Ordering::SeqCst) {
                            let _ = state.compare_exchange(
                                OPEN,
                                BROKEN,
                                Ordering::SeqCst,
                                Ordering::SeqCst,
                            );
                        }
                    }
                }
                Apply::Write(_) => {}
                Apply::Barrier(done) => {
                    let _ = done.send(healthy);
                }
            }
        }
    });
    tx
}

impl Writer {
    /// The highest manifest writer epoch this process may have claimed itself.
    fn own_epoch(&self) -> u64 {
        self.slatedb_epoch + self.failed_opens
    }
}

impl std::fmt::Debug for Store {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Store")
            .field("location", &self.location)
            .field("epoch", &self.epoch.load(Ordering::Relaxed))
            .field("state", &self.state.load(Ordering::Relaxed))
            .finish_non_exhaustive()
    }
}

impl Store {
    /// SlateDB settings chosen for a catalog: tiny transactions that must each be durable
    /// before the client hears COMMIT, a working set that fits in memory, reads served from the
    /// mirror (SlateDB is read only at open).
    pub fn default_settings() -> Settings {
        Settings {
            // Every commit flushes the WAL explicitly (one PUT per commit), so the timer is
            // only a backstop; it does not add latency.
            flush_interval: Some(Duration::from_millis(100)),
            // Every commit is its own WAL file, and open replays the WAL files written since
            // the last L0 flush (one GET each on S3). SlateDB refuses to bound that count below
            // 4096 files, so bound it by size instead: a 1 MiB memtable is frozen and flushed
            // to L0 after ~1000 typical (~1 KiB) commits. Catalog data is small; the extra L0
            // files are cheap and the compactor merges them.
            l0_sst_size_bytes: 1024 * 1024,
            // Give up on a failing object store after a few retries (SlateDB's wrapper retries
            // on top of the object_store client's own HTTP retries). The default (retry
            // forever) would hang a commit, and everyone queued behind the commit lock.
            object_store_max_retries: Some(3),
            // A memtable flush to L0 waits while L0 holds `l0_max_ssts` (8) tables, and close
            // flushes the memtable. With the default 5 s polls of the compactor (schedules)
            // and of its embedded worker (claims), a close was measured stalling 4-7 s behind
            // a scheduled-but-unclaimed compaction. 1 s polls cost about two small GETs per
            // second on S3.
            compactor_options: Some(CompactorOptions {
                poll_interval: Duration::from_secs(1),
                worker: Some(CompactionWorkerOptions {
                    compactions_poll_interval: Duration::from_secs(1),
                    ..CompactionWorkerOptions::default()
                }),
                ..CompactorOptions::default()
            }),
            ..Settings::default()
        }
    }

    /// Opens (or creates) the catalog at `url` as its writer: a plain local path or
    /// `file:///dir`, `s3://bucket/prefix`, `gs://bucket/prefix`, `az://container/prefix`
    /// (credentials and endpoints from the environment: `AWS_*`, `GOOGLE_*`, `AZURE_*`).
    ///
    /// Fences any previous writer, claims a new writer epoch durably, then loads every key
    /// into the in-memory mirror.
    /// Read replicas use [`Replica::open`] instead, which never claims the epoch.
    ///
    /// Without `opts.faults`, faults are read from [`FAULTS_ENV`] (a malformed value is
    /// [`StoreError::Invalid`]).
    pub async fn open(url: &str, mut opts: StoreOptions) -> Result<Store, StoreError> {
        if opts.faults.is_none() {
            opts.faults = Faults::from_env().map_err(|message| StoreError::Invalid { message })?;
        }
        if let Some(f) = opts.faults.as_ref().filter(|f| f.is_active()) {
            tracing::warn!(faults = %f, "injecting object-store faults: for tests only");
        }
        let mut loc = location::resolve(url, opts.create_if_missing)?;
        wrap(&mut loc, &opts);
        if !opts.create_if_missing && !catalog_exists(&loc).await? {
            return Err(StoreError::NotFound {
                location: loc.display,
            });
        }
        let settings = opts
            .slatedb_settings
            .unwrap_or_else(Store::default_settings);
        let journal = loc.local_dir.clone().map(|dir| JournalPlace {
            dir,
            crash: opts.faults.as_ref().and_then(|f| f.crash),
            commit: opts.commit_journal,
        });
        let state = Arc::new(AtomicU8::new(OPEN));
        let (writer, epoch, keys) = open_writer(
            &loc.store,
            &loc.root,
            &settings,
            &loc.display,
            journal.as_ref(),
            &state,
        )
        .await?;
        let remote_journal = loc.local_dir.is_none() && opts.commit_journal;
        let store = Store {
            writer: tokio::sync::Mutex::new(writer),
            mirror: Arc::new(mirror::Mirror::from_keys(keys)),
            epoch: AtomicU64::new(epoch),
            state,
            location: loc.display,
            object_store: loc.store,
            root: loc.root,
            settings: Box::new(settings),
            commit_timeout: opts.commit_timeout,
            journal,
            remote_journal,
            uploads: Arc::new(tokio::sync::Semaphore::new(opts.journal_uploads.max(1))),
            close_phase: std::sync::Mutex::new(ClosePhase::Open),
            stall_on_close: opts
                .faults
                .as_ref()
                .filter(|f| f.stall_on_close)
                .and_then(|f| f.stall.clone()),
        };
        if remote_journal {
            let mut w = store.writer.lock().await;
            w.remote = Some(store.remote_writer(&w.db, epoch));
        }
        Ok(store)
    }

    /// Reopens the catalog after a commit failed with [`StoreError::Indeterminate`] (or
    /// SlateDB failed in the background): checks that no other writer has opened it since
    /// (else the store becomes fenced: [`StoreError::Fenced`]), stops the failed SlateDB
    /// instance, opens the catalog again — which fences that instance, so nothing it still
    /// sends can land afterwards — claims a new writer epoch and reloads the mirror from what
    /// is durable. Afterwards the mirror answers whether the unconfirmed commit landed.
    ///
    /// Does nothing on a working store. On [`StoreError::Unavailable`] the store is still
    /// broken; call again later. Waits for (and excludes) commits.
    pub async fn recover(&self) -> Result<(), StoreError> {
        let mut w = self.writer.lock().await;
        match self.state.load(Ordering::SeqCst) {
            OPEN => return Ok(()),
            FENCED => return Err(self.fenced()),
            CLOSED => return Err(StoreError::Closed),
            _ => {}
        }
        // One request without retries first, so that an attempt while the store is still down
        // fails at once instead of after SlateDB's retries.
        let probe = self.root.clone().join("manifest");
        let listing = self.object_store.list_with_delimiter(Some(&probe));
        match tokio::time::timeout(RECOVERY_STEP_BOUND, listing).await {
            Ok(Ok(_)) => {}
            Ok(Err(e)) => {
                return Err(StoreError::Unavailable {
                    message: format!("{} is still unreachable: {e}", self.location),
                    transient: true,
                })
            }
            Err(_) => {
                return Err(StoreError::Unavailable {
                    message: format!(
                        "{} is still unreachable: no answer within {RECOVERY_STEP_BOUND:?}",
                        self.location
                    ),
                    transient: true,
                })
            }
        }
        if self.superseded(w.own_epoch()).await? {
            self.state.store(FENCED, Ordering::SeqCst);
            return Err(self.fenced());
        }
        // Let the failed instance's journal uploads in flight answer first (bounded by their
        // own timeout): none of them may touch the mirror after the reload below.
        if let Some(last) = w.remote.as_mut().and_then(|rw| rw.last.take()) {
            let _ = tokio::time::timeout(self.commit_timeout, last).await;
        }
        // Stop the failed instance (its background tasks would keep running). Bounded: it may
        // be stuck on the failing store. Whatever it still writes is either durable before the
        // reopen below reads the catalog, or refused by the reopen's fence.
        match tokio::time::timeout(RECOVERY_STEP_BOUND, w.db.close()).await {
            Ok(Ok(())) => {}
            Ok(Err(e)) => tracing::debug!(error = %e, "closing the failed SlateDB instance"),
            Err(_) => tracing::warn!("the failed SlateDB instance did not close in time"),
        }
        let old_epoch = self.epoch.load(Ordering::SeqCst);
        let opening = open_writer(
            &self.object_store,
            &self.root,
            &self.settings,
            &self.location,
            self.journal.as_ref(),
            &self.state,
        );
        let opened = match tokio::time::timeout(self.commit_timeout, opening).await {
            Ok(opened) => opened,
            Err(_) => Err(StoreError::Unavailable {
                message: format!(
                    "reopening {} did not finish within {:?}",
                    self.location, self.commit_timeout
                ),
                transient: true,
            }),
        };
        let (writer, epoch, keys) = match opened {
            Ok(opened) => opened,
            Err(e) => {
                w.failed_opens += 1;
                return Err(e);
            }
        };
        self.mirror.replace(keys);
        if let Some(jw) = &w.journal {
            jw.retired.store(true, Ordering::SeqCst);
        }
        if let Some(rw) = &w.remote {
            rw.ctx.retired.store(true, Ordering::SeqCst);
        }
        let mut writer = writer;
        if self.remote_journal {
            writer.remote = Some(self.remote_writer(&writer.db, epoch));
        }
        *w = writer;
        self.epoch.store(epoch, Ordering::SeqCst);
        self.state.store(OPEN, Ordering::SeqCst);
        tracing::warn!(
            location = %self.location, old_epoch, epoch,
            "catalog store reopened after a storage failure"
        );
        Ok(())
    }

    /// True when the store is broken and [`Store::recover`] may bring it back.
    pub fn needs_recovery(&self) -> bool {
        self.state.load(Ordering::SeqCst) == BROKEN
    }

    fn fenced(&self) -> StoreError {
        StoreError::Fenced {
            location: self.location.clone(),
            epoch: self.epoch.load(Ordering::SeqCst),
        }
    }

    /// Whether another writer opened the catalog after our SlateDB instance (epoch `ours`,
    /// see [`Writer::own_epoch`]): the authoritative answer is the latest manifest's writer
    /// epoch. (Known race: another writer opening while one of our reopen attempts fails
    /// before bumping the epoch is taken for that attempt's bump, and the next attempt fences
    /// it, as restarting this server would.) SlateDB also says
    /// "fenced" when its own WAL upload was retried after landing without an acknowledgement
    /// (on stores without object attributes, e.g. a local directory, it cannot tell that the
    /// object in the slot is its own); then the epoch is still ours.
    async fn superseded(&self, ours: u64) -> Result<bool, StoreError> {
        superseded(&self.object_store, &self.root, ours, &self.location).await
    }
}

/// See [`Store::superseded`].
async fn superseded(
    store: &Arc<dyn object_store::ObjectStore>,
    root: &object_store::path::Path,
    ours: u64,
    location: &str,
) -> Result<bool, StoreError> {
    let admin = slatedb::admin::Admin::builder(root.clone(), store.clone()).build();
    match tokio::time::timeout(RECOVERY_STEP_BOUND, admin.read_manifest(None)).await {
        Ok(Ok(Some(m))) => Ok(m.writer_epoch() > ours),
        Ok(Ok(None)) => Err(StoreError::Corrupt {
            message: format!("the manifest of {location} disappeared"),
        }),
        Ok(Err(e)) => Err(from_slate(e, location, 0, "read manifest")),
        Err(_) => Err(StoreError::Unavailable {
            message: format!(
                "reading the manifest of {location} timed out after {RECOVERY_STEP_BOUND:?}"
            ),
            transient: true,
        }),
    }
}

/// Opens SlateDB as the writer, claims RockLake's writer epoch (and the commit journal,
/// replaying what it holds) and loads every key.
async fn open_writer(
    store: &Arc<dyn object_store::ObjectStore>,
    root: &object_store::path::Path,
    settings: &Settings,
    location: &str,
    journal: Option<&JournalPlace>,
    state: &Arc<AtomicU8>,
) -> Result<(Writer, u64, mirror::Keys), StoreError> {
    let db = Db::builder(root.clone(), store.clone())
        .with_settings(settings.clone())
        // Reads after open come from the mirror, so a block cache would only hold
        // duplicate bytes.
        .with_db_cache_disabled()
        .build()
        .await
        .map_err(|e| from_slate(e, location, 0, "open"))?;
    let remote = journal.is_none().then_some((store, root));
    match init(&db, location, journal, remote).await {
        Ok((epoch, keys, journal)) => Ok((
            Writer {
                remote: None,
                status: db.subscribe(),
                slatedb_epoch: db.manifest().writer_epoch(),
                failed_opens: 0,
                journal: journal.map(|j| {
                    let retired = Arc::new(std::sync::atomic::AtomicBool::new(false));
                    JournalWriter {
                        journal: Arc::new(std::sync::Mutex::new(j)),
                        applier: spawn_applier(
                            db.clone(),
                            state.clone(),
                            retired.clone(),
                            location.to_string(),
                        ),
                        retired,
                    }
                }),
                db,
            },
            epoch,
            keys,
        )),
        Err(e) => {
            // SlateDB's "fenced" may be the epoch claim's own upload, retried after its
            // acknowledgement was lost (see `Store::superseded`): then opening again works.
            let e = match e {
                StoreError::Fenced { .. }
                    if matches!(
                        superseded(store, root, db.manifest().writer_epoch(), location).await,
                        Ok(false)
                    ) =>
                {
                    StoreError::Unavailable {
                        message: format!(
                            "claiming the writer epoch of {location} failed \
                             (an upload whose acknowledgement was lost); open again"
                        ),
                        transient: true,
                    }
                }
                e => e,
            };
            // Best effort: the error that stopped the open is the one to report.
            if let Err(close_err) = db.close().await {
                tracing::warn!(error = %close_err, "closing SlateDB after a failed open");
            }
            Err(e)
        }
    }
}

type Loaded = (u64, mirror::Keys, Option<journal::Journal>);

/// Claims the next writer epoch durably, takes the commit journal over (replaying it: the
/// local one of `place`, or on an object store the one under `remote`) and loads every
/// catalog key.
async fn init(
    db: &Db,
    location: &str,
    place: Option<&JournalPlace>,
    remote: Option<(
        &Arc<dyn object_store::ObjectStore>,
        &object_store::path::Path,
    )>,
) -> Result<Loaded, StoreError> {
    {
        let slatedb_epoch = db.manifest().writer_epoch();
        let previous = match db.get(WRITER_EPOCH_KEY).await {
            Ok(None) => 0,
            Ok(Some(v)) => match <[u8; 8]>::try_from(v.as_ref()) {
                Ok(b) => u64::from_be_bytes(b),
                Err(_) => {
                    return Err(StoreError::Corrupt {
                        message: format!("writer_epoch key holds {} bytes, expected 8", v.len()),
                    });
                }
            },
            Err(e) => return Err(from_slate(e, location, 0, "read writer epoch")),
        };
        let epoch = previous + 1;
        let mut batch = WriteBatch::new();
        batch.put(WRITER_EPOCH_KEY, epoch.to_be_bytes());
        write_durably(db, batch)
            .await
            .map_err(|e| from_slate(e, location, epoch, "claim writer epoch"))?;
        let journal = match place {
            Some(place) if place.commit || place.dir.join(journal::JOURNAL_FILE).exists() => {
                let journal = take_over_journal(db, location, epoch, place).await?;
                place.commit.then_some(journal)
            }
            _ => None,
        };
        if let Some((store, root)) = remote {
            take_over_remote_journal(db, location, epoch, store.as_ref(), root).await?;
        }
        let keys = load_all(db)
            .await
            .map_err(|e| from_slate(e, location, epoch, "load catalog"))?;
        tracing::info!(
            location = %location, epoch, slatedb_epoch, keys = keys.len(),
            "catalog store opened as writer"
        );
        Ok((epoch, keys, journal))
    }
}

/// Decision 0009's takeover: after SlateDB fenced the previous writer, lock
/// the journal (an old writer's append in progress finishes first; later ones are refused),
/// make every record in it durable in SlateDB, then write our epoch into it.
async fn take_over_journal(
    db: &Db,
    location: &str,
    epoch: u64,
    place: &JournalPlace,
) -> Result<journal::Journal, StoreError> {
    let io_err = |what: &str, e: std::io::Error| StoreError::Unavailable {
        message: format!("{what} the commit journal in {}: {e}", place.dir.display()),
        transient: false,
    };
    let dir = place.dir.clone();
    let takeover = tokio::task::spawn_blocking(move || journal::Takeover::begin(&dir))
        .await
        .map_err(|e| StoreError::Internal {
            message: format!("journal takeover task: {e}"),
        })?
        .map_err(|e| io_err("cannot read", e))?;
    let batches: usize = takeover.records.iter().map(Vec::len).sum();
    if !takeover.records.is_empty() {
        for record in &takeover.records {
            db.write_with_options(write_batch(record), &WriteOptions::default())
                .await
                .map_err(|e| from_slate(e, location, epoch, "replay commit journal"))?;
        }
        db.flush()
            .await
            .map_err(|e| from_slate(e, location, epoch, "replay commit journal"))?;
    }
    tracing::info!(
        location = %location, epoch, previous = ?takeover.previous_epoch(),
        records = takeover.records.len(), batches,
        "commit journal taken over"
    );
    let crash = place.crash;
    tokio::task::spawn_blocking(move || takeover.claim(epoch, crash))
        .await
        .map_err(|e| StoreError::Internal {
            message: format!("journal claim task: {e}"),
        })?
        .map_err(|e| io_err("cannot claim", e))
}

/// The object-store journal's marks in SlateDB (see [`remote_journal::Marks`]).
async fn journal_marks(
    db: &Db,
    location: &str,
    epoch: u64,
) -> Result<remote_journal::Marks, StoreError> {
    let read = |key: &'static [u8]| async move {
        db.get(key)
            .await
            .map_err(|e| from_slate(e, location, epoch, "read journal marks"))
    };
    let applied = read(remote_journal::APPLIED_KEY).await?;
    let fenced = read(remote_journal::FENCED_KEY).await?;
    remote_journal::Marks::decode(applied.as_deref(), fenced.as_deref())
        .map_err(|message| StoreError::Corrupt { message })
}

/// Decision 0010's takeover on an object store: after SlateDB fenced the previous writer and
/// our epoch is claimed, fence every older epoch's journal namespace at its first empty slot,
/// replay the records SlateDB lacks (with their positions), record that every epoch below ours
/// is fenced, make it durable, then delete the replayed objects.
async fn take_over_remote_journal(
    db: &Db,
    location: &str,
    epoch: u64,
    store: &dyn object_store::ObjectStore,
    root: &object_store::path::Path,
) -> Result<(), StoreError> {
    let marks = journal_marks(db, location, epoch).await?;
    let fenced_through = marks.fenced_through;
    if fenced_through + 1 >= epoch {
        return Ok(());
    }
    let takeover = remote_journal::take_over(store, root, epoch, marks)
        .await
        .map_err(|e| StoreError::Unavailable {
            message: format!("taking over the commit journal of {location}: {e}"),
            transient: true,
        })?;
    let batches: usize = takeover.records.iter().map(|(_, r)| r.len()).sum();
    for (position, record) in &takeover.records {
        let mut wb = write_batch(record);
        wb.put(
            remote_journal::APPLIED_KEY,
            remote_journal::encode_position(*position),
        );
        db.write_with_options(wb, &WriteOptions::default())
            .await
            .map_err(|e| from_slate(e, location, epoch, "replay commit journal"))?;
    }
    let mut wb = WriteBatch::new();
    wb.put(remote_journal::FENCED_KEY, (epoch - 1).to_be_bytes());
    write_durably(db, wb)
        .await
        .map_err(|e| from_slate(e, location, epoch, "replay commit journal"))?;
    tracing::info!(
        location = %location, epoch, fenced_from = fenced_through + 1,
        records = takeover.records.len(), batches,
        "object-store commit journal taken over"
    );
    if let Err(e) = remote_journal::delete(store, takeover.obsolete).await {
        tracing::warn!(location = %location, error = %e,
            "deleting replayed commit journal objects (they stay behind, ignored)");
    }
    Ok(())
}

impl Store {
    /// A reader over the mirror. See [`StoreReader`] for its consistency guarantee.
    pub fn reader(&self) -> StoreReader {
        StoreReader {
            mirror: self.mirror.clone(),
        }
    }

    /// The writer epoch this store claimed at open (or at its latest recovery).
    pub fn epoch(&self) -> u64 {
        self.epoch.load(Ordering::SeqCst)
    }

    /// Applies `batch` atomically and durably; returns once it is durable in the object store
    /// and visible to readers. Puts are applied in order, then deletes.
    ///
    /// On [`StoreError::Fenced`], [`StoreError::Invalid`], [`StoreError::Unavailable`] and
    /// [`StoreError::Closed`] nothing of the batch was written. On
    /// [`StoreError::Indeterminate`] the outcome is unknown and the store is unusable until
    /// [`Store::recover`] succeeds.
    ///
    /// Known gap (SlateDB's, not closable through its public API): if SlateDB's background
    /// manifest poll closes the `Db` as fenced in the microseconds between our WAL upload
    /// succeeding and its acknowledgement, the error is `Fenced` although the new writer will
    /// have replayed the batch.
    pub async fn commit(&self, batch: &CommitBatch) -> Result<(), StoreError> {
        self.commit_group(std::slice::from_ref(batch)).await
    }

    /// Group commit: several batches (in commit-sequence order) as ONE atomic SlateDB write and
    /// one durable WAL upload. Either all of them are durable and visible afterwards or none
    /// is; the same error then applies to each. Later batches' values win for a key written by
    /// several (only the counters are).
    pub async fn commit_group(&self, batches: &[CommitBatch]) -> Result<(), StoreError> {
        let slot = self.upload_slot().await;
        self.start_group(batches.into(), slot)
            .await?
            .durable()
            .await
    }

    /// Waits until one more group may upload to the object-store journal (at once elsewhere).
    /// A group-commit leader takes its slot before it takes the queued batches: the commits that
    /// arrive while every upload is busy then join its group instead of waiting for the next.
    pub async fn upload_slot(&self) -> UploadSlot {
        if !self.remote_journal {
            return UploadSlot(None);
        }
        // The semaphore is never closed.
        UploadSlot(self.uploads.clone().acquire_owned().await.ok())
    }

    /// Starts [`Store::commit_group`] and returns once the group has its place in commit
    /// order: groups started later are acknowledged after this one. With the object-store
    /// journal the group is then still uploading, and the next group can start at once (its
    /// upload overlaps this one's); [`GroupCommit::durable`] waits for the outcome. On the
    /// other paths the group is already durable (or failed) when this returns. `slot` comes from
    /// [`Store::upload_slot`]; an empty one is taken here.
    pub async fn start_group(
        &self,
        batches: Arc<[CommitBatch]>,
        slot: UploadSlot,
    ) -> Result<GroupCommit, StoreError> {
        for batch in batches.iter() {
            validate(batch)?;
        }
        // Wait for upload room before the writer lock, never while holding it.
        let slot = match slot.0 {
            Some(_) => slot,
            None => self.upload_slot().await,
        };
        let mut w = self.writer.lock().await;
        self.check_writable(&w).await?;
        if batches
            .iter()
            .all(|b| b.puts.is_empty() && b.deletes.is_empty())
        {
            return Ok(GroupCommit::Done(Ok(())));
        }
        if let Some(rw) = w.remote.as_mut() {
            let permit = slot.0.ok_or_else(|| StoreError::Internal {
                message: "no journal upload slot for an object-store commit group".into(),
            })?;
            return Ok(GroupCommit::Uploading(start_upload(rw, batches, permit)?));
        }
        Ok(GroupCommit::Done(self.commit_locked(&w, &batches).await))
    }

    /// The SlateDB WAL and local journal paths of [`Store::commit_group`], under the writer
    /// lock.
    async fn commit_locked(&self, w: &Writer, batches: &[CommitBatch]) -> Result<(), StoreError> {
        if let Some(jw) = &w.journal {
            return self.commit_journaled(&w.db, jw, batches).await;
        }
        let wb = write_batch(batches);
        let written =
            match tokio::time::timeout(self.commit_timeout, write_durably(&w.db, wb)).await {
                Ok(written) => written,
                Err(_) => {
                    // SlateDB may still upload the batch; the reopen that follows fences this
                    // instance first, so the batch is durable before the reopen reads, or never.
                    self.state.store(BROKEN, Ordering::SeqCst);
                    return Err(StoreError::Indeterminate {
                        message: format!(
                            "the store did not confirm the commit within {:?} (store {} epoch {})",
                            self.commit_timeout,
                            self.location,
                            self.epoch()
                        ),
                    });
                }
            };
        if let Err(e) = written {
            let epoch = self.epoch();
            let err = from_slate(e, &self.location, epoch, "commit");
            let indeterminate = |why: String| StoreError::Indeterminate {
                message: format!("{why} (store {} epoch {epoch})", self.location),
            };
            match err {
                // SlateDB's WAL upload is create-if-absent: it fails when a newer writer's
                // fence occupies the slot, so the batch never reached storage. Unless the
                // object in the slot is our own upload, retried after its acknowledgement was
                // lost: then no newer writer exists and the batch may well be durable.
                StoreError::Fenced { .. } => match self.superseded(w.own_epoch()).await {
                    Ok(true) => self.state.store(FENCED, Ordering::SeqCst),
                    Ok(false) | Err(_) => {
                        self.state.store(BROKEN, Ordering::SeqCst);
                        return Err(indeterminate(format!(
                            "SlateDB found the WAL slot taken but no other writer opened the \
                             catalog (an upload whose acknowledgement was lost?): {err}"
                        )));
                    }
                },
                StoreError::Closed => {}
                _ => {
                    self.state.store(BROKEN, Ordering::SeqCst);
                    return Err(indeterminate(err.to_string()));
                }
            }
            return Err(err);
        }
        for batch in batches {
            self.mirror.apply(batch);
        }
        Ok(())
    }

    /// The object-store journal's writer state for a freshly opened SlateDB instance `db`
    /// claimed with `epoch` (its namespace starts empty: the epoch is new).
    fn remote_writer(&self, db: &Db, epoch: u64) -> RemoteWriter {
        let retired = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let applier = spawn_applier(
            db.clone(),
            self.state.clone(),
            retired.clone(),
            self.location.clone(),
        );
        RemoteWriter {
            ctx: Arc::new(RemoteCtx {
                store: self.object_store.clone(),
                root: self.root.clone(),
                epoch,
                db: db.clone(),
                applier,
                retired,
                state: self.state.clone(),
                mirror: self.mirror.clone(),
                location: self.location.clone(),
                commit_timeout: self.commit_timeout,
                cut_through: std::sync::Mutex::new(None),
                cutting: std::sync::atomic::AtomicBool::new(false),
            }),
            next_slot: 0,
            last: None,
        }
    }

    /// Waits until every group handed to the object-store journal has settled, then until
    /// SlateDB has them all and made them durable, and deletes their journal objects. `false`
    /// when a group failed or SlateDB did not take them (the store is broken then; the reopen
    /// replays the journal).
    async fn settle_remote(&self, rw: &mut RemoteWriter) -> bool {
        if let Some(last) = rw.last.take() {
            if !last.await.unwrap_or(false) {
                return false;
            }
        }
        match rw.next_slot.checked_sub(1) {
            Some(through) => cut_remote(&rw.ctx, through).await,
            None => true,
        }
    }

    /// [`Store::commit_group`] on a local catalog with the journal (decision 0009): durable
    /// once the group's record is appended and `fdatasync`ed; SlateDB gets the batches
    /// without waiting for its WAL (it writes them within `flush_interval`).
    async fn commit_journaled(
        &self,
        db: &Db,
        jw: &JournalWriter,
        batches: &[CommitBatch],
    ) -> Result<(), StoreError> {
        let framed = journal::frame(batches).map_err(|e| StoreError::Invalid {
            message: e.to_string(),
        })?;
        let appending = jw.journal.clone();
        let appended = tokio::task::spawn_blocking(move || {
            appending
                .lock()
                .map_err(|_| journal::AppendError::Io(std::io::Error::other("journal poisoned")))?
                .append(&framed)
        })
        .await;
        let pending = match appended {
            Ok(Ok(pending)) => pending,
            Ok(Err(journal::AppendError::Superseded { theirs })) => {
                // Checked under the journal's lock before writing: nothing of this group is
                // anywhere, and the newer writer replays everything we acknowledged.
                tracing::warn!(location = %self.location, ours = self.epoch(), theirs,
                    "commit refused: another writer took the commit journal over");
                self.state.store(FENCED, Ordering::SeqCst);
                return Err(self.fenced());
            }
            Ok(Err(journal::AppendError::Io(e))) => {
                // Part of the record may be on disk, and a replay may find it whole.
                self.state.store(BROKEN, Ordering::SeqCst);
                return Err(StoreError::Indeterminate {
                    message: format!(
                        "appending to the commit journal of {} failed: {e}",
                        self.location
                    ),
                });
            }
            Err(e) => {
                self.state.store(BROKEN, Ordering::SeqCst);
                return Err(StoreError::Indeterminate {
                    message: format!("the commit journal task failed: {e}"),
                });
            }
        };
        // Durable now: whatever SlateDB does next, the next open replays the record.
        if jw
            .applier
            .send(Apply::Write(write_batch(batches)))
            .await
            .is_err()
        {
            tracing::warn!(location = %self.location, "the SlateDB applier stopped");
            self.state.store(BROKEN, Ordering::SeqCst);
        }
        for batch in batches {
            self.mirror.apply(batch);
        }
        if pending >= JOURNAL_CUT_BYTES && self.state.load(Ordering::SeqCst) == OPEN {
            self.cut_journal(db, jw).await;
        }
        Ok(())
    }

    /// Waits until SlateDB has every journaled batch and has made them durable, then empties
    /// the journal. A failure leaves the journal as it is (the next open replays it); the
    /// store's state or SlateDB's status shows a broken store at the next commit.
    async fn cut_journal(&self, db: &Db, jw: &JournalWriter) {
        self.closing_step(ClosePhase::ApplyingJournal);
        if !self.sync_applier(jw).await {
            return;
        }
        self.closing_step(ClosePhase::FlushingSlateDb);
        match tokio::time::timeout(self.commit_timeout, db.flush()).await {
            Ok(Ok(())) => {}
            Ok(Err(e)) => {
                tracing::warn!(location = %self.location, error = %e,
                    "flushing SlateDB before cutting the commit journal");
                return;
            }
            Err(_) => {
                tracing::warn!(location = %self.location,
                    "flushing SlateDB before cutting the commit journal timed out");
                return;
            }
        }
        self.closing_step(ClosePhase::CuttingJournal);
        let cutting = jw.journal.clone();
        let cut = tokio::task::spawn_blocking(move || match cutting.lock() {
            Ok(mut j) => j.truncate(),
            Err(_) => Err(journal::AppendError::Io(std::io::Error::other(
                "journal poisoned",
            ))),
        })
        .await;
        match cut {
            Ok(Ok(())) => {}
            Ok(Err(journal::AppendError::Superseded { theirs })) => {
                tracing::warn!(location = %self.location, theirs,
                    "another writer took the commit journal over");
                self.state.store(FENCED, Ordering::SeqCst);
            }
            Ok(Err(journal::AppendError::Io(e))) => {
                tracing::warn!(location = %self.location, error = %e, "cutting the commit journal");
            }
            Err(e) => tracing::warn!(error = %e, "the journal cut task failed"),
        }
    }

    /// Waits until the applier has handed every queued batch to SlateDB; `false` when one was
    /// refused (or the applier is gone).
    async fn sync_applier(&self, jw: &JournalWriter) -> bool {
        let (done, answer) = tokio::sync::oneshot::channel();
        if jw.applier.send(Apply::Barrier(done)).await.is_err() {
            return false;
        }
        answer.await.unwrap_or(false)
    }

    /// Spec step 2: is our claim on the catalog still valid? SlateDB closes the `Db` as fenced
    /// when its manifest poll sees a newer writer epoch; the authoritative check is the WAL
    /// upload itself (see [`Store::commit`]). A `Db` that failed in the background (a WAL or
    /// memtable upload that kept failing) leaves the store broken: nothing of this batch was
    /// written ([`StoreError::Unavailable`]) and [`Store::recover`] can reopen it.
    async fn check_writable(&self, w: &Writer) -> Result<(), StoreError> {
        match self.state.load(Ordering::SeqCst) {
            OPEN => {}
            FENCED => return Err(self.fenced()),
            BROKEN => {
                // SlateDB refusing a write because a newer writer opened the catalog breaks
                // the store before any commit sees the fence; the caller must hear "fenced"
                // (stop, do not retry) rather than "reopen".
                if matches!(self.superseded(w.own_epoch()).await, Ok(true)) {
                    self.state.store(FENCED, Ordering::SeqCst);
                    return Err(self.fenced());
                }
                return Err(StoreError::Unavailable {
                    message: format!(
                        "the store of {} failed earlier and is not reopened yet",
                        self.location
                    ),
                    transient: true,
                });
            }
            _ => return Err(StoreError::Closed),
        }
        let (epoch_moved, close_reason) = {
            let status = w.status.borrow();
            (
                status.current_manifest.writer_epoch() != w.slatedb_epoch,
                status.close_reason,
            )
        };
        if epoch_moved {
            self.state.store(FENCED, Ordering::SeqCst);
            return Err(self.fenced());
        }
        let Some(reason) = close_reason else {
            return Ok(());
        };
        // "Fenced" may be our own unacknowledged upload (see `superseded`).
        if reason == CloseReason::Fenced && matches!(self.superseded(w.own_epoch()).await, Ok(true))
        {
            self.state.store(FENCED, Ordering::SeqCst);
            return Err(self.fenced());
        }
        self.state.store(BROKEN, Ordering::SeqCst);
        Err(StoreError::Unavailable {
            message: format!(
                "SlateDB stopped ({reason:?}) on {}; the store must be reopened",
                self.location
            ),
            transient: true,
        })
    }

    /// Backs RockLake checkpoint `id` with a SlateDB checkpoint named
    /// [`store_checkpoint_name`]: the files of everything committed so far (the checkpoint's
    /// snapshot included) stay in the object store until [`Store::unpin_checkpoint`], whatever
    /// excision, compaction and SlateDB's garbage collector do. Idempotent.
    pub async fn pin_checkpoint(&self, id: u64) -> Result<(), StoreError> {
        let name = store_checkpoint_name(id);
        if !self.store_checkpoints(Some(&name)).await?.is_empty() {
            return Ok(());
        }
        let mut w = self.writer.lock().await;
        self.check_writable(&w).await?;
        if let Some(rw) = w.remote.as_mut() {
            // As below: SlateDB must hold every acknowledged group durably first.
            if !self.settle_remote(rw).await {
                return Err(StoreError::Unavailable {
                    message: format!(
                        "the commit journal of {} could not be settled into SlateDB; the store \
                         must be reopened",
                        self.location
                    ),
                    transient: true,
                });
            }
        }
        if let Some(jw) = &w.journal {
            // A durable-scope checkpoint covers only what SlateDB made durable; journaled
            // commits may not be there yet.
            if !self.sync_applier(jw).await {
                return Err(StoreError::Unavailable {
                    message: format!(
                        "SlateDB refused a journaled commit of {}; the store must be reopened",
                        self.location
                    ),
                    transient: true,
                });
            }
            w.db.flush().await.map_err(|e| {
                from_slate(
                    e,
                    &self.location,
                    self.epoch(),
                    "flush before store checkpoint",
                )
            })?;
        }
        let options = slatedb::config::CheckpointOptions {
            name: Some(name),
            ..Default::default()
        };
        w.db.create_checkpoint(slatedb::config::CheckpointScope::Durable, &options)
            .await
            .map(|_| ())
            .map_err(|e| from_slate(e, &self.location, self.epoch(), "create store checkpoint"))
    }

    /// Drops the SlateDB checkpoint(s) backing RockLake checkpoint `id`; their files become
    /// garbage for SlateDB's collector once nothing else references them.
    pub async fn unpin_checkpoint(&self, id: u64) -> Result<(), StoreError> {
        let admin =
            slatedb::admin::Admin::builder(self.root.clone(), self.object_store.clone()).build();
        for cp in self
            .store_checkpoints(Some(&store_checkpoint_name(id)))
            .await?
        {
            admin
                .delete_checkpoint(cp.id)
                .await
                .map_err(|e| from_slate(e, &self.location, 0, "delete store checkpoint"))?;
        }
        Ok(())
    }

    /// SlateDB's checkpoints of this store (all, or those named `name`).
    pub async fn store_checkpoints(
        &self,
        name: Option<&str>,
    ) -> Result<Vec<slatedb::Checkpoint>, StoreError> {
        let admin =
            slatedb::admin::Admin::builder(self.root.clone(), self.object_store.clone()).build();
        admin
            .list_checkpoints(name)
            .await
            .map_err(|e| from_slate(e, &self.location, 0, "list store checkpoints"))
    }

    /// Makes the SlateDB checkpoints match RockLake's checkpoints `ids`: pins the missing
    /// (a crash between a checkpoint's commit and its pin), unpins those whose RockLake
    /// checkpoint is gone. SlateDB checkpoints of others (readers' own) are left alone.
    /// Returns how many were pinned and unpinned.
    pub async fn reconcile_checkpoints(&self, ids: &[u64]) -> Result<(usize, usize), StoreError> {
        let have: Vec<u64> = self
            .store_checkpoints(None)
            .await?
            .iter()
            .filter_map(|c| c.name.as_deref().and_then(checkpoint_id_of))
            .collect();
        let mut pinned = 0;
        for id in ids.iter().filter(|id| !have.contains(id)) {
            self.pin_checkpoint(*id).await?;
            pinned += 1;
        }
        let mut unpinned = 0;
        for id in have.iter().filter(|id| !ids.contains(id)) {
            self.unpin_checkpoint(*id).await?;
            unpinned += 1;
        }
        Ok((pinned, unpinned))
    }

    /// Closes SlateDB (with the commit journal: after making SlateDB durable and emptying the
    /// journal; otherwise every commit is already durable in SlateDB). Waits for an
    /// in-flight commit. Readers keep answering from the mirror. Idempotent.
    pub async fn close(&self) -> Result<(), StoreError> {
        self.enter(ClosePhase::WaitingForWriter);
        let mut w = self.writer.lock().await;
        if let Some(rw) = w.remote.as_mut() {
            // Every group handed out is answered before SlateDB closes; when SlateDB has them
            // all durably, their journal objects go.
            self.enter(ClosePhase::SettlingUploads);
            self.settle_remote(rw).await;
        }
        if self.state.load(Ordering::SeqCst) == OPEN {
            if let Some(jw) = &w.journal {
                // Leave an empty journal behind when SlateDB can take everything now (the
                // next open then replays nothing); otherwise the next open replays it.
                self.cut_journal(&w.db, jw).await;
            }
        }
        if self.state.swap(CLOSED, Ordering::SeqCst) == CLOSED {
            self.enter(ClosePhase::Closed);
            return Ok(());
        }
        self.enter(ClosePhase::ClosingSlateDb);
        if let Some(stall) = &self.stall_on_close {
            if let Err(e) = std::fs::write(stall, b"stalled at close\n") {
                tracing::warn!(path = %stall.display(), error = %e, "cannot create the stall file");
            }
        }
        let closed = match tokio::time::timeout(SLATEDB_CLOSE_BOUND, w.db.close()).await {
            Err(_) => {
                tracing::warn!(location = %self.location,
                    "SlateDB did not close within {} s (a background task did not stop); \
                     everything acknowledged is durable, so the store counts as closed",
                    SLATEDB_CLOSE_BOUND.as_secs());
                Ok(())
            }
            Ok(Ok(())) => Ok(()),
            Ok(Err(e)) => match e.kind() {
                // A fenced or already-failed Db has nothing left to flush; that is a close.
                ErrorKind::Closed(_) => Ok(()),
                _ => Err(from_slate(e, &self.location, self.epoch(), "close")),
            },
        };
        self.enter(ClosePhase::Closed);
        closed
    }

    fn enter(&self, phase: ClosePhase) {
        *self.phase() = phase;
    }

    fn phase(&self) -> std::sync::MutexGuard<'_, ClosePhase> {
        self.close_phase
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// [`Store::enter`] for steps that also run outside a close (the periodic journal cut).
    fn closing_step(&self, phase: ClosePhase) {
        let mut now = self.phase();
        if *now != ClosePhase::Open {
            *now = phase;
        }
    }

    /// Where [`Store::close`] is (for a shutdown that overran its bound).
    pub fn close_phase(&self) -> ClosePhase {
        *self.phase()
    }
}

/// What [`reclaim`] did.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct ReclaimReport {
    /// Bytes and objects under the catalog's root before and after.
    pub bytes_before: u64,
    pub bytes_after: u64,
    pub objects_before: u64,
    pub objects_after: u64,
    /// L0 tables and sorted runs merged into one sorted run.
    pub merged_l0: usize,
    pub merged_runs: usize,
}

/// Offline maintenance after excision: flushes the memtable, merges every L0 table and
/// sorted run into one sorted run (deleted and superseded versions drop out instead of
/// waiting for the size-tiered compactor to bring them together), then runs SlateDB's garbage
/// collector once with no minimum age, which is safe only because nothing else has the
/// catalog open: the catalog is opened as its writer (a server on it is fenced — stop it
/// first). Files a store checkpoint (`rocklake-checkpoint-<id>`) or a reader's checkpoint
/// still references stay.
pub async fn reclaim(url: &str) -> Result<ReclaimReport, StoreError> {
    let loc = location::resolve(url, false)?;
    let (bytes_before, objects_before) = usage(&loc).await?;
    let store = Store::open(url, StoreOptions::default().create_if_missing(false)).await?;
    let merged = compact_fully(&store).await;
    let closed = store.close().await;
    let (merged_l0, merged_runs) = merged?;
    closed?;
    let dir = |min_age| slatedb::config::GarbageCollectorDirectoryOptions {
        interval: None,
        min_age,
        dry_run: false,
    };
    let gc = slatedb::config::GarbageCollectorOptions {
        manifest_options: Some(dir(Duration::ZERO)),
        wal_options: Some(dir(Duration::ZERO)),
        wal_fence_options: None,
        compacted_options: Some(dir(Duration::ZERO)),
        compactions_options: Some(dir(Duration::ZERO)),
        detach_options: None,
        // The local directory has no conditional overwrites (SlateDB's advice for it).
        boundary_files_enabled: loc.attributes,
        ..Default::default()
    };
    slatedb::admin::Admin::builder(loc.root.clone(), loc.store.clone())
        .build()
        .run_gc_once(gc)
        .await
        .map_err(|e| from_slate(e, &loc.display, 0, "garbage collection"))?;
    let (bytes_after, objects_after) = usage(&loc).await?;
    Ok(ReclaimReport {
        bytes_before,
        bytes_after,
        objects_before,
        objects_after,
        merged_l0,
        merged_runs,
    })
}

/// Flushes the memtable and merges all L0 tables and sorted runs into one sorted run through
/// the writer's own compactor; waits until the manifest shows the result.
async fn compact_fully(store: &Store) -> Result<(usize, usize), StoreError> {
    use slatedb::compactor::{CompactionSpec, SourceId};
    {
        let w = store.writer.lock().await;
        w.db.flush_with_options(slatedb::config::FlushOptions {
            flush_type: slatedb::config::FlushType::MemTable,
        })
        .await
        .map_err(|e| from_slate(e, &store.location, store.epoch(), "flush memtable"))?;
    }
    let admin =
        slatedb::admin::Admin::builder(store.root.clone(), store.object_store.clone()).build();
    let manifest = |what: &'static str| {
        let admin = &admin;
        let location = store.location.clone();
        async move {
            admin
                .read_manifest(None)
                .await
                .map_err(|e| from_slate(e, &location, 0, what))?
                .ok_or_else(|| StoreError::Corrupt {
                    message: format!("{location} has no manifest"),
                })
        }
    };
    let m = manifest("read manifest").await?;
    let l0: Vec<_> = m.l0().iter().map(|v| v.id).collect();
    let runs: Vec<u32> = m.compacted().iter().map(|sr| sr.id).collect();
    if l0.len() + runs.len() <= 1 {
        return Ok((l0.len(), runs.len()));
    }
    let destination = runs.iter().copied().min().unwrap_or(0);
    let sources: Vec<SourceId> = l0
        .iter()
        .map(|id| SourceId::SstView(*id))
        .chain(runs.iter().map(|id| SourceId::SortedRun(*id)))
        .collect();
    admin
        .submit_compaction(CompactionSpec::new(sources, destination))
        .await
        .map_err(|e| from_slate(e, &store.location, 0, "submit compaction"))?;
    let deadline = tokio::time::Instant::now() + Duration::from_secs(300);
    loop {
        tokio::time::sleep(Duration::from_millis(200)).await;
        let m = manifest("read manifest").await?;
        let l0_left = m.l0().iter().any(|v| l0.contains(&v.id));
        let runs_left = m
            .compacted()
            .iter()
            .any(|sr| sr.id != destination && runs.contains(&sr.id));
        if !l0_left && !runs_left {
            return Ok((l0.len(), runs.len()));
        }
        if tokio::time::Instant::now() > deadline {
            return Err(StoreError::Unavailable {
                message: format!(
                    "the full compaction of {} did not finish within 300 s",
                    store.location
                ),
                transient: true,
            });
        }
    }
}

/// Bytes and objects under the catalog's root.
async fn usage(loc: &location::Location) -> Result<(u64, u64), StoreError> {
    let mut listing = loc.store.list(Some(&loc.root));
    let (mut bytes, mut objects) = (0, 0);
    while let Some(meta) = listing.next().await {
        let meta = meta.map_err(|e| StoreError::Unavailable {
            message: format!("listing {}: {e}", loc.display),
            transient: true,
        })?;
        bytes += meta.size;
        objects += 1;
    }
    Ok((bytes, objects))
}

/// The name of the SlateDB checkpoint backing RockLake checkpoint `id`.
pub fn store_checkpoint_name(id: u64) -> String {
    format!("rocklake-checkpoint-{id}")
}

fn checkpoint_id_of(name: &str) -> Option<u64> {
    name.strip_prefix("rocklake-checkpoint-")?.parse().ok()
}

fn validate(batch: &CommitBatch) -> Result<(), StoreError> {
    let keys = batch
        .puts
        .iter()
        .map(|(k, _)| k)
        .chain(batch.deletes.iter());
    for k in keys {
        match k.first() {
            None => {
                return Err(StoreError::Invalid {
                    message: "empty key in commit batch".into(),
                })
            }
            Some(&RESERVED_PREFIX) => {
                return Err(StoreError::Invalid {
                    message: format!("commit batch writes reserved key {k:02x?} (prefix 0x00)"),
                })
            }
            Some(_) => {}
        }
    }
    Ok(())
}

/// The SlateDB write of a commit group: puts then deletes of each batch, in order.
fn write_batch(batches: &[CommitBatch]) -> WriteBatch {
    let mut wb = WriteBatch::new();
    for batch in batches {
        for (k, v) in &batch.puts {
            wb.put(k, v);
        }
        for k in &batch.deletes {
            wb.delete(k);
        }
    }
    wb
}

/// One atomic SlateDB write, returned only once durable: the batch lands in the in-memory WAL
/// buffer, `flush` uploads that buffer now (instead of at the next `flush_interval` tick) as a
/// single object, and `await_durable` confirms it covered this batch.
async fn write_durably(db: &Db, batch: WriteBatch) -> Result<(), slatedb::Error> {
    let handle = db
        .write_with_options(batch, &WriteOptions::default())
        .await?;
    db.flush().await?;
    handle.await_durable().await
}

async fn load_all(db: &Db) -> Result<mirror::Keys, slatedb::Error> {
    let opts = ScanOptions::default()
        .with_read_ahead_bytes(1024 * 1024)
        .with_max_fetch_tasks(4);
    // Everything from the first non-reserved key on.
    let mut iter = db
        .scan_with_options(vec![RESERVED_PREFIX + 1].., &opts)
        .await?;
    load_keys(&mut iter).await
}

/// Every entry of a scan, in its (ascending) order, as the mirror's keys.
async fn load_keys(iter: &mut slatedb::DbIterator) -> Result<mirror::Keys, slatedb::Error> {
    let mut keys = mirror::Loader::default();
    while let Some(kv) = iter.next().await? {
        keys.push(&kv.key, &kv.value);
    }
    Ok(keys.finish())
}

/// A catalog opened as a read replica: SlateDB's `DbReader` follows the writer's WAL and
/// manifest (polling every `poll`), and the mirror is reloaded whenever the writer's
/// `commit_seq` key moves. Never fences the writer, never writes catalog keys.
pub struct Replica {
    reader: slatedb::DbReader,
    mirror: Arc<mirror::Mirror>,
    /// `commit_seq` value of the copy in the mirror.
    seen: tokio::sync::Mutex<Option<Vec<u8>>>,
    closed: std::sync::atomic::AtomicBool,
    location: String,
}

impl std::fmt::Debug for Replica {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Replica")
            .field("location", &self.location)
            .finish_non_exhaustive()
    }
}

impl Replica {
    pub async fn open(
        url: &str,
        poll: Duration,
        opts: StoreOptions,
    ) -> Result<Replica, StoreError> {
        let mut loc = location::resolve(url, false)?;
        wrap(&mut loc, &opts);
        if !catalog_exists(&loc).await? {
            return Err(StoreError::NotFound {
                location: loc.display,
            });
        }
        let options = slatedb::config::DbReaderOptions {
            manifest_poll_interval: poll,
            ..Default::default()
        };
        let reader = slatedb::DbReader::builder(loc.root.clone(), loc.store.clone())
            .with_options(options)
            .with_db_cache_disabled()
            .build()
            .await
            .map_err(|e| from_slate(e, &loc.display, 0, "open replica"))?;
        let replica = Replica {
            reader,
            mirror: Arc::new(mirror::Mirror::default()),
            seen: tokio::sync::Mutex::new(None),
            closed: std::sync::atomic::AtomicBool::new(false),
            location: loc.display,
        };
        replica.refresh().await?;
        tracing::info!(location = %replica.location, keys = replica.mirror.len(), "catalog opened as a read replica");
        Ok(replica)
    }

    pub fn reader(&self) -> StoreReader {
        StoreReader {
            mirror: self.mirror.clone(),
        }
    }

    /// Reloads the mirror when the writer committed since the last call; true when it did.
    pub async fn refresh(&self) -> Result<bool, StoreError> {
        if self.closed.load(Ordering::SeqCst) {
            return Err(StoreError::Closed);
        }
        let mut seen = self.seen.lock().await;
        let key = rocklake_core::keys::meta_key(rocklake_core::engine::META_COMMIT_SEQ);
        let now = self
            .reader
            .get(&key)
            .await
            .map_err(|e| from_slate(e, &self.location, 0, "poll replica"))?
            .map(|b| b.to_vec());
        if seen.is_some() && *seen == now {
            return Ok(false);
        }
        // The copy is read from one DbReader state; keys of later commits that slip into the
        // scan are invisible anyway (their sequence is above the commit_seq the engine loads).
        let opts = ScanOptions::default()
            .with_read_ahead_bytes(1024 * 1024)
            .with_max_fetch_tasks(4);
        let mut iter = self
            .reader
            .scan_with_options(vec![RESERVED_PREFIX + 1].., &opts)
            .await
            .map_err(|e| from_slate(e, &self.location, 0, "reload replica"))?;
        let keys = load_keys(&mut iter)
            .await
            .map_err(|e| from_slate(e, &self.location, 0, "reload replica"))?;
        // Take commit_seq from the copy itself, so engine and mirror agree exactly.
        let copied = keys.get(&key);
        self.mirror.replace(keys);
        *seen = copied;
        Ok(true)
    }

    pub async fn close(&self) -> Result<(), StoreError> {
        if self.closed.swap(true, Ordering::SeqCst) {
            return Ok(());
        }
        self.reader
            .close()
            .await
            .map_err(|e| from_slate(e, &self.location, 0, "close replica"))
    }
}

/// A consistent copy of every catalog key, read without becoming the writer: SlateDB's
/// `DbReader` on a checkpoint of its own, so a running server is neither fenced nor disturbed
/// (for `rocklake verify` and other offline tools).
///
/// On a local catalog the commit journal's records are applied on top, so the copy has every
/// acknowledged commit even when the writer died before SlateDB made them durable. The journal
/// is read before and after SlateDB: when no cut or takeover came between (same header),
/// SlateDB's copy holds everything before the journal's first record, and the records after.
pub async fn read_snapshot(url: &str) -> Result<rocklake_core::memkv::MemKv, StoreError> {
    let loc = location::resolve(url, false)?;
    if !catalog_exists(&loc).await? {
        return Err(StoreError::NotFound {
            location: loc.display,
        });
    }
    const ATTEMPTS: u32 = 5;
    for attempt in 0..ATTEMPTS {
        if attempt > 0 {
            // The writer cut or took over the journal between two reads: give it time to
            // finish (100, 200, 400, 800 ms) rather than racing it again at once.
            tokio::time::sleep(Duration::from_millis(100 << (attempt - 1))).await;
        }
        if loc.local_dir.is_none() {
            // The object-store journal: SlateDB's marks say which records to put on top.
            let SlateCopy {
                mut kv,
                marks,
                marks_stable,
            } = read_slatedb(&loc).await?;
            if !marks_stable {
                // The writer applied groups to SlateDB while this read: read again.
                continue;
            }
            let pending = remote_journal::pending(loc.store.as_ref(), &loc.root, marks)
                .await
                .map_err(|e| StoreError::Unavailable {
                    message: format!("cannot read the commit journal of {}: {e}", loc.display),
                    transient: true,
                })?;
            if let Some(records) = pending {
                for batch in records.iter().flatten() {
                    kv.apply(batch);
                }
                return Ok(kv);
            }
            continue;
        }
        let before = read_journal(&loc).await?;
        let kv = read_slatedb(&loc).await?.kv;
        let after = read_journal(&loc).await?;
        if let Some(kv) = overlay(kv, before, after) {
            return Ok(kv);
        }
    }
    Err(StoreError::Unavailable {
        message: format!(
            "the commit journal of {} changed under {ATTEMPTS} reads in a row; try again",
            loc.display
        ),
        transient: true,
    })
}

type JournalView = Option<(journal::Header, Vec<journal::Record>)>;

async fn read_journal(loc: &location::Location) -> Result<JournalView, StoreError> {
    let Some(dir) = loc.local_dir.clone() else {
        return Ok(None);
    };
    tokio::task::spawn_blocking(move || journal::read(&dir))
        .await
        .map_err(|e| StoreError::Internal {
            message: format!("journal read task: {e}"),
        })?
        .map_err(|e| StoreError::Unavailable {
            message: format!("cannot read the commit journal of {}: {e}", loc.display),
            transient: true,
        })
}

/// SlateDB's copy with the journal's records on top, or `None` when the journal was cut or
/// taken over between the two reads (then the copy may miss commits the journal dropped).
fn overlay(
    mut kv: rocklake_core::memkv::MemKv,
    before: JournalView,
    after: JournalView,
) -> Option<rocklake_core::memkv::MemKv> {
    match (before, after) {
        (None, None) => Some(kv),
        (Some((b, _)), Some((a, records))) if a == b => {
            for batch in records.iter().flatten() {
                kv.apply(batch);
            }
            Some(kv)
        }
        _ => None,
    }
}

/// SlateDB's copy of the catalog keys, and the object-store journal's marks in it.
struct SlateCopy {
    kv: rocklake_core::memkv::MemKv,
    marks: remote_journal::Marks,
    /// The marks read before the scan equal those read after it. A reader follows the
    /// writer while it reads: marks newer than the scanned keys would leave the groups between
    /// out of both (the journal is replayed only after the marks).
    marks_stable: bool,
}

async fn read_slatedb(loc: &location::Location) -> Result<SlateCopy, StoreError> {
    let reader = slatedb::DbReader::builder(loc.root.clone(), loc.store.clone())
        .with_db_cache_disabled()
        .build()
        .await
        .map_err(|e| from_slate(e, &loc.display, 0, "open reader"))?;
    let loaded = async {
        let opts = ScanOptions::default()
            .with_read_ahead_bytes(1024 * 1024)
            .with_max_fetch_tasks(4);
        let marks_before = (
            reader.get(remote_journal::APPLIED_KEY).await?,
            reader.get(remote_journal::FENCED_KEY).await?,
        );
        let mut iter = reader
            .scan_with_options(vec![RESERVED_PREFIX + 1].., &opts)
            .await?;
        let mut puts = Vec::new();
        while let Some(kv) = iter.next().await? {
            puts.push((kv.key.to_vec(), kv.value.to_vec()));
        }
        let applied = reader.get(remote_journal::APPLIED_KEY).await?;
        let fenced = reader.get(remote_journal::FENCED_KEY).await?;
        let stable = marks_before.0 == applied && marks_before.1 == fenced;
        Ok::<_, slatedb::Error>((puts, applied, fenced, stable))
    }
    .await;
    if let Err(e) = reader.close().await {
        tracing::warn!(error = %e, "closing the catalog reader");
    }
    let (puts, applied, fenced, marks_stable) =
        loaded.map_err(|e| from_slate(e, &loc.display, 0, "read catalog"))?;
    let mut kv = rocklake_core::memkv::MemKv::new();
    kv.apply(&CommitBatch {
        seq: rocklake_core::api::CommitSeq(0),
        puts,
        deletes: vec![],
    });
    let marks = remote_journal::Marks::decode(applied.as_deref(), fenced.as_deref()).map_err(
        |message| StoreError::Corrupt {
            message: format!("{}: {message}", loc.display),
        },
    )?;
    Ok(SlateCopy {
        kv,
        marks,
        marks_stable,
    })
}

/// Whether `url` names a local directory (where the commit journal applies).
pub fn is_local(url: &str) -> Result<bool, StoreError> {
    Ok(location::resolve(url, true)?.local_dir.is_some())
}

/// Metrics and injected faults around the resolved object store.
fn wrap(loc: &mut location::Location, opts: &StoreOptions) {
    if opts.metrics.is_none() && opts.faults.is_none() {
        return;
    }
    loc.store = Arc::new(
        instrumented::Instrumented::new(
            loc.store.clone(),
            opts.metrics.clone().unwrap_or_default(),
            opts.faults.clone().unwrap_or_default(),
        )
        .attributes_supported(loc.attributes),
    );
}

/// The object store and root path a catalog URL names (with optional injected faults), for
/// tools and benchmarks that talk to the store directly.
pub fn resolve_object_store(
    url: &str,
    faults: Option<Faults>,
) -> Result<(Arc<dyn object_store::ObjectStore>, object_store::path::Path), StoreError> {
    let mut loc = location::resolve(url, true)?;
    wrap(
        &mut loc,
        &StoreOptions {
            faults,
            ..StoreOptions::default()
        },
    );
    Ok((loc.store, loc.root))
}

/// Whether a catalog exists at `url`, found without opening or creating anything (a local
/// path that does not exist holds none). For tools that must never write into a catalog.
pub async fn catalog_exists_at(url: &str) -> Result<bool, StoreError> {
    match location::resolve(url, false) {
        Ok(loc) => catalog_exists(&loc).await,
        Err(StoreError::NotFound { .. }) => Ok(false),
        Err(e) => Err(e),
    }
}

/// Whether SlateDB has ever written a manifest under the location's root.
async fn catalog_exists(loc: &location::Location) -> Result<bool, StoreError> {
    let prefix = loc.root.clone().join("manifest");
    let mut listing = loc.store.list(Some(&prefix));
    match listing.next().await {
        None => Ok(false),
        Some(Ok(_)) => Ok(true),
        Some(Err(e)) => Err(StoreError::Unavailable {
            message: format!("cannot list {}: {e}", loc.display),
            transient: true,
        }),
    }
}

fn from_slate(e: slatedb::Error, location: &str, epoch: u64, what: &str) -> StoreError {
    let message = format!("{what} on {location}: {e}");
    match e.kind() {
        ErrorKind::Closed(CloseReason::Fenced) => StoreError::Fenced {
            location: location.to_string(),
            epoch,
        },
        ErrorKind::Closed(CloseReason::Clean) => StoreError::Closed,
        ErrorKind::Closed(_) => StoreError::Internal { message },
        ErrorKind::Unavailable => StoreError::Unavailable {
            message,
            transient: true,
        },
        ErrorKind::Invalid => StoreError::Invalid { message },
        ErrorKind::Data => StoreError::Corrupt { message },
        _ => StoreError::Internal { message },
    }
}
