//! Giving freed heap memory back to the operating system (decision record 0017).
//!
//! glibc keeps what a thread frees in that thread's arena (one arena per busy thread, up to
//! eight per core) and by itself returns only the free memory at an arena's top. The server
//! frees in bulk from many threads — the recent layer of the mirror after a merge, commit
//! batches, a large result of the native core — so freed pages stayed resident: after `bench
//! scale`'s build, 1.7 GB of a 3.8 GB resident set was free heap, and `malloc_trim(0)` gave it
//! back in one call. The [`Reclaimer`] watches the resident set beyond the heap in use and
//! trims when it has grown by [`RECLAIM_AFTER`] since the last trim, so the scan of the free lists that a trim
//! costs is paid only after bulk frees.

use std::sync::{Arc, Weak};
use std::time::{Duration, Instant};

use crate::metrics::Metrics;

/// Growth of the free heap that triggers a trim.
pub const RECLAIM_AFTER: u64 = 64 << 20;

/// How often the reclaimer thread looks.
pub const RECLAIM_INTERVAL: Duration = Duration::from_secs(1);

/// Least time between two trims. A trim walks every free chunk of every arena, holding each
/// arena's lock meanwhile: 100–300 ms on a heap with gigabytes free (measured during `bench
/// scale`'s build, where frees passed the threshold every few seconds and the trimmed pages
/// were soon reused). At most one per half minute bounds that cost to about 1%
/// of a core and still returns memory freed in bulk within half a minute.
pub const MIN_TRIM_GAP: Duration = Duration::from_secs(30);

/// glibc's view of the heap (all arenas).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HeapStats {
    /// Allocated and not freed (mmapped chunks included).
    pub in_use: u64,
    /// Freed and kept by the allocator; trimmed pages stay counted here (their address range
    /// is still the allocator's), so this only says how much *could* be resident.
    pub free: u64,
}

/// The heap's counters; `None` where the allocator is not glibc's.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
pub fn stats() -> Option<HeapStats> {
    #[allow(unsafe_code)]
    // SAFETY: mallinfo2 only reads the allocator's counters (under its own locks).
    let info = unsafe { libc::mallinfo2() };
    Some(HeapStats {
        in_use: (info.uordblks + info.hblkhd) as u64,
        free: info.fordblks as u64,
    })
}

#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
pub fn stats() -> Option<HeapStats> {
    None
}

/// Returns every whole free page of every arena to the kernel.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
fn trim() {
    #[allow(unsafe_code)]
    // SAFETY: malloc_trim takes the allocator's locks itself and frees nothing in use.
    unsafe {
        libc::malloc_trim(0);
    }
}

#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
fn trim() {}

/// The process's resident set in bytes (Linux's `/proc/self/statm`); `None` elsewhere.
pub fn resident_bytes() -> Option<u64> {
    let statm = std::fs::read_to_string("/proc/self/statm").ok()?;
    let pages: u64 = statm.split_whitespace().nth(1)?.parse().ok()?;
    #[allow(unsafe_code)]
    // SAFETY: sysconf only reads a system constant.
    let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    Some(pages * u64::try_from(page).ok()?)
}

/// One trim: how long it took and what it gave back.
#[derive(Debug, Clone, Copy)]
pub struct Trimmed {
    pub took: Duration,
    /// Drop of the resident set across the trim (0 if it did not shrink).
    pub released: u64,
}

/// Decides when to trim: when the resident set beyond the heap in use (`excess`: free heap
/// still resident, plus the component's memory, code and stacks) has grown by `threshold` over
/// the lowest it has been since the last trim, and the last trim is at least `min_gap` ago.
/// glibc's free count alone would miss trimmed pages that were reused and freed again.
#[derive(Debug)]
pub struct Reclaimer {
    threshold: u64,
    min_gap: Duration,
    floor: Option<u64>,
    last_trim: Option<Instant>,
}

impl Reclaimer {
    pub fn new(threshold: u64, min_gap: Duration) -> Self {
        Reclaimer {
            threshold,
            min_gap,
            floor: None,
            last_trim: None,
        }
    }

    /// Looks at the heap once and trims if enough has been freed since the last trim.
    pub fn tick(&mut self) -> Option<Trimmed> {
        let excess = resident_beyond_heap()?;
        let floor = self.floor.map_or(excess, |f| f.min(excess));
        self.floor = Some(floor);
        if excess.saturating_sub(floor) < self.threshold
            || self.last_trim.is_some_and(|t| t.elapsed() < self.min_gap)
        {
            return None;
        }
        let trimmed = trim_now();
        self.last_trim = Some(Instant::now());
        self.floor = resident_beyond_heap();
        Some(trimmed)
    }
}

/// Resident bytes beyond the heap in use.
fn resident_beyond_heap() -> Option<u64> {
    let in_use = stats()?.in_use;
    Some(resident_bytes()?.saturating_sub(in_use))
}

/// Trims now, timing it and measuring the resident set around it.
pub fn trim_now() -> Trimmed {
    let before = resident_bytes().unwrap_or(0);
    let start = Instant::now();
    trim();
    let took = start.elapsed();
    let after = resident_bytes().unwrap_or(before);
    Trimmed {
        took,
        released: before.saturating_sub(after),
    }
}

/// Starts the thread that trims the heap after bulk frees, for as long as `metrics` (the
/// service's) lives. A process needs one.
pub fn spawn_reclaimer(metrics: &Arc<Metrics>) -> std::io::Result<()> {
    let metrics: Weak<Metrics> = Arc::downgrade(metrics);
    std::thread::Builder::new()
        .name("heap-reclaim".into())
        .spawn(move || {
            let mut reclaimer = Reclaimer::new(RECLAIM_AFTER, MIN_TRIM_GAP);
            loop {
                std::thread::sleep(RECLAIM_INTERVAL);
                let Some(metrics) = metrics.upgrade() else {
                    return;
                };
                if let Some(t) = reclaimer.tick() {
                    metrics.record_heap_trim(t.took, t.released);
                    tracing::debug!(
                        ms = t.took.as_secs_f64() * 1000.0,
                        released_mb = t.released >> 20,
                        "freed heap returned to the OS"
                    );
                }
            }
        })
        .map(|_| ())
}
