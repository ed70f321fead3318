//! The in-memory ordered copy of every (non-reserved) key that answers all reads.
//!
//! The keys live in one packed, sorted run (each entry's lengths, key and value back to back
//! in one buffer, found by binary search over one offset per entry) and in `recent`: what
//! commits wrote since the run was built, deletions included. A BTreeMap of owned vectors cost
//! about four times the entries' bytes (6 M stats rows and their index entries took 4.9 GB);
//! the run costs the bytes plus 16 per entry, and a long value several entries hold (an
//! index entry holds its row's envelope) is stored once per run. When `recent` reaches a quarter of the run (and
//! [`RECENT_MIN`] entries), it is frozen (`merging`) and a thread merges it with the run into
//! a new run, while reads see recent over frozen over run and commits go on into a new
//! `recent`; only the swap takes the write lock (decision record 0015).

use std::collections::BTreeMap;
use std::ops::Bound;
use std::sync::{Arc, Mutex, PoisonError, RwLock};
use std::thread::JoinHandle;

use rocklake_core::api::{CommitBatch, KvError, KvPage, KvRead};

/// Entries `recent` holds at least before it is merged into the run.
const RECENT_MIN: usize = 65_536;

/// Values at least this long are stored once per run: a later entry holding the same bytes
/// points at the first one's. A covering index entry holds its row's own envelope (decision
/// record 0008), so without this every indexed row's value was in memory twice.
const SHARED_MIN: usize = 32;
/// Set in an entry's value length: the value is the 8-byte offset of the entry holding it.
const SHARED_FLAG: u32 = 1 << 31;

/// Sorted entries packed in one buffer: entry `i` starts at `starts[i]` with its key length
/// and value length (u32, little-endian), then the key, then the value, or (value length with
/// [`SHARED_FLAG`]) the offset (u64, little-endian) of an earlier entry with the same value.
#[derive(Default)]
struct Run {
    data: Vec<u8>,
    starts: Vec<u64>,
}

impl Run {
    fn len(&self) -> usize {
        self.starts.len()
    }

    fn u32_at(&self, at: usize) -> u32 {
        let mut b = [0u8; 4];
        b.copy_from_slice(&self.data[at..at + 4]);
        u32::from_le_bytes(b)
    }

    fn entry(&self, i: usize) -> (&[u8], &[u8]) {
        self.entry_at(self.starts[i] as usize)
    }

    /// The entry starting at byte `s`.
    fn entry_at(&self, s: usize) -> (&[u8], &[u8]) {
        let k = self.u32_at(s) as usize;
        let v = self.u32_at(s + 4);
        let key = &self.data[s + 8..s + 8 + k];
        let at = s + 8 + k;
        if v & SHARED_FLAG != 0 {
            let mut off = [0u8; 8];
            off.copy_from_slice(&self.data[at..at + 8]);
            // The entry pointed at holds its value itself (the builder only points at those).
            return (key, self.entry_at(u64::from_le_bytes(off) as usize).1);
        }
        (key, &self.data[at..at + v as usize])
    }

    /// The entries within the bounds, ascending or (`rev`) descending.
    fn range<'a>(
        &'a self,
        start: Bound<&[u8]>,
        end: Bound<&[u8]>,
        rev: bool,
    ) -> Box<dyn Iterator<Item = Entry<'a>> + 'a> {
        let from = match start {
            Bound::Included(s) => self.lower_bound(s),
            _ => 0,
        };
        let to = match end {
            Bound::Excluded(e) => self.lower_bound(e),
            _ => self.len(),
        };
        let entry = move |i| {
            let (k, v) = self.entry(i);
            (k, Some(v))
        };
        if rev {
            Box::new((from..to.max(from)).rev().map(entry))
        } else {
            Box::new((from..to.max(from)).map(entry))
        }
    }

    /// The first entry whose key is at least `key`.
    fn lower_bound(&self, key: &[u8]) -> usize {
        let (mut lo, mut hi) = (0, self.len());
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            let s = self.starts[mid] as usize;
            let k = self.u32_at(s) as usize;
            if &self.data[s + 8..s + 8 + k] < key {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        lo
    }

    fn get(&self, key: &[u8]) -> Option<&[u8]> {
        let i = self.lower_bound(key);
        (i < self.len())
            .then(|| self.entry(i))
            .and_then(|(k, v)| (k == key).then_some(v))
    }
}

/// Hashes a value's 32-bit fingerprint (already a keyed hash) for the builder's map.
#[derive(Default)]
struct Fingerprint(u64);

impl std::hash::Hasher for Fingerprint {
    fn finish(&self) -> u64 {
        // Spread the bits over the whole word: the map takes its control bits from the top.
        self.0.wrapping_mul(0x9E37_79B9_7F4A_7C15)
    }

    fn write(&mut self, bytes: &[u8]) {
        for b in bytes {
            self.0 = (self.0 << 8) | u64::from(*b);
        }
    }

    fn write_u32(&mut self, n: u32) {
        self.0 = u64::from(n);
    }
}

/// Builds a [`Run`] from entries in ascending key order, storing each long value once.
struct RunBuilder {
    run: Run,
    /// A 32-bit fingerprint of each long value stored in full -> the index of its entry. A
    /// fingerprint two different values share only costs the second its sharing.
    by_value: std::collections::HashMap<u32, u32, std::hash::BuildHasherDefault<Fingerprint>>,
    /// Seeded at random per builder, so values crafted to collide cannot be chosen in advance
    /// (and a collision only costs the second value its sharing). foldhash, not SipHash: the
    /// keyed SipHash was half of a run's build (`bench_run_build_fingerprints`).
    hasher: foldhash::quality::RandomState,
}

impl RunBuilder {
    fn with_capacity(bytes: usize, entries: usize) -> Self {
        RunBuilder {
            run: Run {
                data: Vec::with_capacity(bytes),
                starts: Vec::with_capacity(entries),
            },
            by_value: Default::default(),
            hasher: Default::default(),
        }
    }

    fn last_key(&self) -> Option<&[u8]> {
        self.run.len().checked_sub(1).map(|i| self.run.entry(i).0)
    }

    /// Appends an entry whose key sorts after every key in the run; false (nothing
    /// appended) for a key or value over 2 GiB.
    fn push(&mut self, key: &[u8], value: &[u8]) -> bool {
        let (Ok(k), Ok(v)) = (u32::try_from(key.len()), u32::try_from(value.len())) else {
            return false;
        };
        if v & SHARED_FLAG != 0 {
            return false;
        }
        let start = self.run.data.len() as u64;
        let index = u32::try_from(self.run.len()).ok();
        let mut shared = None;
        if let (true, Some(index)) = (value.len() >= SHARED_MIN, index) {
            use std::hash::BuildHasher;
            let fingerprint = self.hasher.hash_one(value) as u32;
            match self.by_value.entry(fingerprint) {
                std::collections::hash_map::Entry::Occupied(e) => {
                    let first = self.run.starts[*e.get() as usize];
                    if self.run.entry_at(first as usize).1 == value {
                        shared = Some(first);
                    }
                }
                std::collections::hash_map::Entry::Vacant(e) => {
                    e.insert(index);
                }
            }
        }
        self.run.starts.push(start);
        self.run.data.extend_from_slice(&k.to_le_bytes());
        match shared {
            Some(first) => {
                self.run
                    .data
                    .extend_from_slice(&(v | SHARED_FLAG).to_le_bytes());
                self.run.data.extend_from_slice(key);
                self.run.data.extend_from_slice(&first.to_le_bytes());
            }
            None => {
                self.run.data.extend_from_slice(&v.to_le_bytes());
                self.run.data.extend_from_slice(key);
                self.run.data.extend_from_slice(value);
            }
        }
        true
    }

    fn finish(self) -> Run {
        let mut run = self.run;
        run.data.shrink_to_fit();
        run.starts.shrink_to_fit();
        run
    }
}

/// Entries written since the run was built (`None` is a deletion), with the bytes they hold
/// counted as they come and go, so the memory gauge never walks them.
#[derive(Default, Clone)]
struct Recent {
    map: BTreeMap<Vec<u8>, Option<Vec<u8>>>,
    bytes: usize,
}

impl Recent {
    /// A B-tree node's share per entry, about.
    const PER_ENTRY: usize = 48;

    fn entry_bytes(k: &[u8], v: &Option<Vec<u8>>) -> usize {
        k.len() + v.as_ref().map_or(0, Vec::len) + Self::PER_ENTRY
    }

    fn len(&self) -> usize {
        self.map.len()
    }

    fn is_empty(&self) -> bool {
        self.map.is_empty()
    }

    fn get(&self, key: &[u8]) -> Option<&Option<Vec<u8>>> {
        self.map.get(key)
    }

    fn insert(&mut self, key: Vec<u8>, value: Option<Vec<u8>>) {
        let added = Self::entry_bytes(&key, &value);
        let key_len = key.len();
        if let Some(old) = self.map.insert(key, value) {
            self.bytes -= key_len + old.as_ref().map_or(0, Vec::len) + Self::PER_ENTRY;
        }
        self.bytes += added;
    }

    fn remove(&mut self, key: &[u8]) {
        if let Some(old) = self.map.remove(key) {
            self.bytes -= Self::entry_bytes(key, &old);
        }
    }

    fn insert_if_absent(&mut self, key: Vec<u8>, value: Option<Vec<u8>>) {
        if !self.map.contains_key(&key) {
            self.insert(key, value);
        }
    }
}

/// A key and its value in one layer (`None`: deleted there).
type Entry<'a> = (&'a [u8], Option<&'a [u8]>);

/// The entries of `upper` over those of `lower`, both sorted in one direction (`rev`:
/// descending): for a key both hold, `upper`'s entry wins.
fn overlay<'a>(
    upper: impl Iterator<Item = Entry<'a>> + 'a,
    lower: impl Iterator<Item = Entry<'a>> + 'a,
    rev: bool,
) -> impl Iterator<Item = Entry<'a>> + 'a {
    let mut upper = upper.peekable();
    let mut lower = lower.peekable();
    std::iter::from_fn(move || {
        let u = upper.peek().map(|e| e.0);
        let l = lower.peek().map(|e| e.0);
        match (u, l) {
            (None, _) => lower.next(),
            (Some(_), None) => upper.next(),
            (Some(u), Some(l)) => {
                if (l < u) != rev && l != u {
                    lower.next()
                } else {
                    if l == u {
                        lower.next();
                    }
                    upper.next()
                }
            }
        }
    })
}

/// The entries of a map layer within the bounds, in one direction.
fn map_range<'a>(
    map: &'a Recent,
    start: Bound<&'a [u8]>,
    end: Bound<&'a [u8]>,
    rev: bool,
) -> Box<dyn Iterator<Item = Entry<'a>> + 'a> {
    let range = map
        .map
        .range::<[u8], _>((start, end))
        .map(|(k, v)| (k.as_slice(), v.as_deref()));
    if rev {
        Box::new(range.rev())
    } else {
        Box::new(range)
    }
}

/// Every key: `recent` over `merging` over the run.
pub(crate) struct Keys {
    run: Arc<Run>,
    /// Writes frozen while a thread merges them into the run.
    merging: Option<Arc<Recent>>,
    recent: Recent,
    /// Entries `recent` holds at least before a merge ([`RECENT_MIN`]; tests merge sooner).
    recent_min: usize,
    /// Counts replacements, so a merge started before one does not swap in a stale run.
    generation: u64,
}

impl Default for Loader {
    fn default() -> Self {
        Loader {
            run: RunBuilder::with_capacity(0, 0),
            late: Vec::new(),
        }
    }
}

impl Default for Keys {
    fn default() -> Self {
        Loader::default().finish()
    }
}

/// Builds [`Keys`] from a scan in ascending key order.
pub(crate) struct Loader {
    run: RunBuilder,
    /// Entries out of order or too large for the run (none from a SlateDB scan).
    late: Vec<(Vec<u8>, Vec<u8>)>,
}

impl Loader {
    pub(crate) fn push(&mut self, key: &[u8], value: &[u8]) {
        let in_order = self.run.last_key().is_none_or(|last| last < key);
        if !(in_order && self.run.push(key, value)) {
            self.late.push((key.to_vec(), value.to_vec()));
        }
    }

    pub(crate) fn finish(self) -> Keys {
        let mut keys = Keys {
            run: Arc::new(self.run.finish()),
            merging: None,
            recent: Recent::default(),
            recent_min: RECENT_MIN,
            generation: 0,
        };
        for (k, v) in self.late {
            keys.put(k, v);
        }
        keys
    }
}

impl Keys {
    /// Bytes held: the run's buffers, and the maps' keys and values with a node's share of a
    /// B-tree (about 48 bytes an entry) each, as counted when they were written.
    fn memory_bytes(&self) -> u64 {
        let run = self.run.data.capacity() + self.run.starts.capacity() * 8;
        let frozen = self.merging.as_deref().map_or(0, |m| m.bytes);
        (run + frozen + self.recent.bytes) as u64
    }

    /// Keys present. Counted when asked (diagnostics, tests), unless the run alone holds them:
    /// keeping a count would cost every written key a lookup in the commit path.
    pub(crate) fn len(&self) -> usize {
        if self.recent.is_empty() && self.merging.is_none() {
            self.run.len()
        } else {
            self.entries(Bound::Unbounded, Bound::Unbounded, false)
                .count()
        }
    }

    /// The key's value below `recent`: in `merging`, else in the run.
    fn below_recent(&self, key: &[u8]) -> Option<&[u8]> {
        match self.merging.as_ref().and_then(|m| m.get(key)) {
            Some(v) => v.as_deref(),
            None => self.run.get(key),
        }
    }

    fn lookup(&self, key: &[u8]) -> Option<&[u8]> {
        match self.recent.get(key) {
            Some(v) => v.as_deref(),
            None => self.below_recent(key),
        }
    }

    fn put(&mut self, key: Vec<u8>, value: Vec<u8>) {
        self.recent.insert(key, Some(value));
    }

    fn delete(&mut self, key: &[u8]) {
        // A key the layers below do not show needs no deletion marker.
        if self.below_recent(key).is_some() {
            self.recent.insert(key.to_vec(), None);
        } else {
            self.recent.remove(key);
        }
    }

    pub(crate) fn get(&self, key: &[u8]) -> Option<Vec<u8>> {
        self.lookup(key).map(<[u8]>::to_vec)
    }

    /// Freezes `recent` for a merge when it has grown enough and no merge is running:
    /// returns what the merge needs.
    fn start_merge(&mut self) -> Option<MergeJob> {
        if self.merging.is_some() || self.recent.len() < self.recent_min.max(self.run.len() / 4) {
            return None;
        }
        let frozen = Arc::new(std::mem::take(&mut self.recent));
        self.merging = Some(frozen.clone());
        Some(MergeJob {
            run: self.run.clone(),
            frozen,
            generation: self.generation,
        })
    }

    /// Swaps in the run a merge built, unless the keys were replaced since it started. The
    /// entries too large for a run go back under the writes made since.
    fn finish_merge(&mut self, job_generation: u64, run: Run, left: Recent) {
        if self.generation != job_generation {
            return;
        }
        self.run = Arc::new(run);
        self.merging = None;
        for (k, v) in left.map {
            self.recent.insert_if_absent(k, v);
        }
    }

    /// The present entries within the bounds, ascending or (`rev`) descending.
    fn entries<'a>(
        &'a self,
        start: Bound<&'a [u8]>,
        end: Bound<&'a [u8]>,
        rev: bool,
    ) -> impl Iterator<Item = (&'a [u8], &'a [u8])> + 'a {
        let below = self.run.range(start, end, rev);
        let below: Box<dyn Iterator<Item = Entry<'a>> + 'a> = match &self.merging {
            Some(m) => Box::new(overlay(map_range(m, start, end, rev), below, rev)),
            None => below,
        };
        overlay(map_range(&self.recent, start, end, rev), below, rev)
            .filter_map(|(k, v)| Some((k, v?)))
    }
}

/// A frozen `recent` to merge into the run it was written over.
struct MergeJob {
    run: Arc<Run>,
    frozen: Arc<Recent>,
    generation: u64,
}

impl MergeJob {
    /// The merged run, and the entries too large for a run (over 4 GiB; none in practice).
    fn merge(&self) -> (Run, Recent) {
        let frozen_bytes: usize = self
            .frozen
            .map
            .iter()
            .map(|(k, v)| 8 + k.len() + v.as_ref().map_or(0, Vec::len))
            .sum();
        let mut out = RunBuilder::with_capacity(
            self.run.data.len() + frozen_bytes,
            self.run.len() + self.frozen.len(),
        );
        let mut left = Recent::default();
        let all = overlay(
            map_range(&self.frozen, Bound::Unbounded, Bound::Unbounded, false),
            self.run.range(Bound::Unbounded, Bound::Unbounded, false),
            false,
        );
        for (k, v) in all {
            if let Some(v) = v {
                if !out.push(k, v) {
                    left.insert(k.to_vec(), Some(v.to_vec()));
                }
            }
        }
        (out.finish(), left)
    }
}

/// Shared between the store (the only writer) and its readers.
#[derive(Default)]
pub(crate) struct Mirror {
    keys: RwLock<Keys>,
    /// The running merge, if any.
    merger: Mutex<Option<JoinHandle<()>>>,
}

impl Mirror {
    pub(crate) fn from_keys(keys: Keys) -> Self {
        Mirror {
            keys: RwLock::new(keys),
            merger: Mutex::new(None),
        }
    }

    /// Applies a durable batch under one write lock, so every read call sees all of it or
    /// none of it. Order matches the SlateDB batch: puts in order, then deletes (a key both
    /// put and deleted ends up deleted, in both places). May start a merge in the background.
    pub(crate) fn apply(self: &Arc<Self>, batch: &CommitBatch) {
        // Nothing below can panic halfway (only inserts/removes), so a poisoned lock still
        // holds consistent keys; recover them instead of failing every later read.
        let job = {
            let mut keys = self.keys.write().unwrap_or_else(PoisonError::into_inner);
            for (k, v) in &batch.puts {
                keys.put(k.clone(), v.clone());
            }
            for k in &batch.deletes {
                keys.delete(k);
            }
            keys.start_merge()
        };
        let Some(job) = job else {
            return;
        };
        let mirror = Arc::clone(self);
        let run = move || {
            let (merged, left) = job.merge();
            mirror
                .keys
                .write()
                .unwrap_or_else(PoisonError::into_inner)
                .finish_merge(job.generation, merged, left);
        };
        let mut merger = self.merger.lock().unwrap_or_else(PoisonError::into_inner);
        match std::thread::Builder::new()
            .name("rocklake-mirror-merge".into())
            .spawn(run)
        {
            Ok(handle) => *merger = Some(handle),
            Err(e) => {
                // Reads stay right with the frozen layer in place; the next batch over the
                // threshold cannot start another merge until this one is undone.
                tracing::warn!(error = %e, "could not start a mirror merge");
                let mut keys = self.keys.write().unwrap_or_else(PoisonError::into_inner);
                if let Some(frozen) = keys.merging.take() {
                    let newer = std::mem::take(&mut keys.recent);
                    keys.recent = Arc::unwrap_or_clone(frozen);
                    for (k, v) in newer.map {
                        keys.recent.insert(k, v);
                    }
                }
            }
        }
    }

    /// Waits for a running merge (tests).
    #[cfg(test)]
    fn settle(&self) {
        let handle = self
            .merger
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take();
        if let Some(h) = handle {
            let _ = h.join();
        }
    }

    /// Swaps in a whole new copy (a read replica's reload), under one write lock. A merge
    /// still running finds the generation changed and drops its result.
    pub(crate) fn replace(&self, mut fresh: Keys) {
        let mut keys = self.keys.write().unwrap_or_else(PoisonError::into_inner);
        fresh.generation = keys.generation + 1;
        *keys = fresh;
    }

    pub(crate) fn len(&self) -> usize {
        self.keys
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .len()
    }

    pub(crate) fn memory_bytes(&self) -> u64 {
        self.keys
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .memory_bytes()
    }
}

/// Read access to the store's mirror; cheap to clone and share across threads.
///
/// Each call reads under one lock acquisition, so it observes a state between two commits,
/// never half of one. Successive calls may observe different commits (the core's MVCC keys
/// make that harmless: commits only add versions).
#[derive(Clone)]
pub struct StoreReader {
    pub(crate) mirror: Arc<Mirror>,
}

impl std::fmt::Debug for StoreReader {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StoreReader").finish_non_exhaustive()
    }
}

impl StoreReader {
    /// Number of keys currently visible (diagnostics, tests).
    pub fn len(&self) -> usize {
        self.mirror.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Bytes the mirror holds (the `rocklake_mirror_bytes` gauge), kept as writes come.
    pub fn memory_bytes(&self) -> u64 {
        self.mirror.memory_bytes()
    }
}

impl StoreReader {
    /// `start <= key < end`, ascending or (`rev`) descending, at most `limit`.
    fn range(&self, start: &[u8], end: &[u8], limit: usize, rev: bool) -> Result<KvPage, KvError> {
        if limit == 0 || start >= end {
            return Ok(KvPage::new());
        }
        let keys = self
            .mirror
            .keys
            .read()
            .unwrap_or_else(PoisonError::into_inner);
        let entries = keys.entries(Bound::Included(start), Bound::Excluded(end), rev);
        KvPage::try_from_iter(entries.take(limit))
    }
}

impl KvRead for StoreReader {
    fn scan(&self, start: &[u8], end: &[u8], limit: usize) -> Result<KvPage, KvError> {
        self.range(start, end, limit, false)
    }

    fn get(&self, key: &[u8]) -> Result<Option<Vec<u8>>, KvError> {
        let keys = self
            .mirror
            .keys
            .read()
            .unwrap_or_else(PoisonError::into_inner);
        Ok(keys.get(key))
    }

    fn scan_rev(&self, start: &[u8], end: &[u8], limit: usize) -> Result<KvPage, KvError> {
        self.range(start, end, limit, true)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use rocklake_core::api::CommitSeq;

    fn key() -> impl Strategy<Value = Vec<u8>> {
        prop::collection::vec(0u8..4, 0..4)
    }

    /// Short values, and a few long ones many entries share (stored once per run).
    fn value() -> impl Strategy<Value = Vec<u8>> {
        prop_oneof![
            prop::collection::vec(any::<u8>(), 0..6),
            (0u8..3, SHARED_MIN - 1..SHARED_MIN + 2).prop_map(|(b, n)| vec![b; n]),
        ]
    }

    /// A commit batch's puts and deletes.
    type Batch = (Vec<(Vec<u8>, Vec<u8>)>, Vec<Vec<u8>>);

    fn batches() -> impl Strategy<Value = Vec<Batch>> {
        prop::collection::vec(
            (
                prop::collection::vec((key(), value()), 0..8),
                prop::collection::vec(key(), 0..4),
            ),
            0..12,
        )
    }

    fn reader(keys: Keys) -> StoreReader {
        StoreReader {
            mirror: Arc::new(Mirror::from_keys(keys)),
        }
    }

    fn model_range(
        model: &BTreeMap<Vec<u8>, Vec<u8>>,
        start: &[u8],
        end: &[u8],
        limit: usize,
        rev: bool,
    ) -> Vec<(Vec<u8>, Vec<u8>)> {
        if start >= end {
            return vec![];
        }
        let range = model.range::<[u8], _>((Bound::Included(start), Bound::Excluded(end)));
        let all: Vec<_> = if rev {
            range.rev().map(|(k, v)| (k.clone(), v.clone())).collect()
        } else {
            range.map(|(k, v)| (k.clone(), v.clone())).collect()
        };
        all.into_iter().take(limit).collect()
    }

    fn page(p: KvPage) -> Vec<(Vec<u8>, Vec<u8>)> {
        p.iter().map(|(k, v)| (k.to_vec(), v.to_vec())).collect()
    }

    proptest! {
        /// The run plus `recent`, merged often, answers every read as one ordered map would.
        #[test]
        fn reads_match_an_ordered_map(
            initial in prop::collection::btree_map(key(), value(), 0..10),
            batches in batches(),
            ranges in prop::collection::vec((key(), key(), 0usize..6, any::<bool>()), 1..6),
            recent_min in 1usize..6,
        ) {
            let mut loader = Loader::default();
            for (k, v) in &initial {
                loader.push(k, v);
            }
            let mut keys = loader.finish();
            keys.recent_min = recent_min;
            let r = reader(keys);
            let mut model = initial;
            for (seq, (puts, deletes)) in batches.into_iter().enumerate() {
                let batch = CommitBatch { seq: CommitSeq(seq as u64), puts: puts.clone(), deletes: deletes.clone() };
                r.mirror.apply(&batch);
                for (k, v) in puts {
                    model.insert(k, v);
                }
                for k in deletes {
                    model.remove(&k);
                }
                prop_assert_eq!(r.len(), model.len());
                for k in model.keys() {
                    prop_assert_eq!(r.get(k).expect("mirror read"), model.get(k).cloned());
                }
                prop_assert_eq!(r.get(&[9]).expect("mirror read"), None);
                for (start, end, limit, rev) in &ranges {
                    let got = if *rev { r.scan_rev(start, end, *limit) } else { r.scan(start, end, *limit) };
                    prop_assert_eq!(page(got.expect("mirror read")), model_range(&model, start, end, *limit, *rev));
                }
                let all = page(r.scan(&[], &[9], usize::MAX).expect("mirror read"));
                prop_assert_eq!(all, model_range(&model, &[], &[9], usize::MAX, false));
                // The byte counts kept as writes came are what a walk finds.
                let keys = r.mirror.keys.read().expect("lock");
                let walked = |m: &Recent| -> usize {
                    m.map.iter().map(|(k, v)| Recent::entry_bytes(k, v)).sum()
                };
                prop_assert_eq!(keys.recent.bytes, walked(&keys.recent));
                if let Some(frozen) = &keys.merging {
                    prop_assert_eq!(frozen.bytes, walked(frozen));
                }
            }
        }
    }

    #[test]
    fn keys_out_of_order_while_loading_still_land() {
        let mut loader = Loader::default();
        for k in [b"b".as_slice(), b"a", b"c", b"b"] {
            loader.push(k, k);
        }
        let r = reader(loader.finish());
        assert_eq!(r.len(), 3);
        assert_eq!(
            page(r.scan(b"", b"z", 10).expect("mirror read")),
            vec![
                (b"a".to_vec(), b"a".to_vec()),
                (b"b".to_vec(), b"b".to_vec()),
                (b"c".to_vec(), b"c".to_vec()),
            ]
        );
    }

    #[test]
    fn a_long_value_many_entries_hold_is_stored_once_per_run() {
        // Rows and their covering index entries: the same 60-byte envelope under two keys.
        let envelope = |i: u8| {
            let mut v = vec![i; 60];
            v[0] = 0xEE;
            v
        };
        let mut loader = Loader::default();
        for i in 0u8..50 {
            loader.push(&[0x10, i], &envelope(i));
        }
        for i in 0u8..50 {
            loader.push(&[0x11, i], &envelope(i));
        }
        let keys = loader.finish();
        // 100 entries of 2-byte keys: 50 values in full, 50 offsets of 8 bytes.
        assert_eq!(keys.run.data.len(), 100 * (8 + 2) + 50 * 60 + 50 * 8);
        let r = reader(Keys {
            recent_min: 3,
            ..keys
        });
        for i in 0u8..50 {
            assert_eq!(r.get(&[0x11, i]).expect("read"), Some(envelope(i)));
        }
        // A merge rebuilds the run: still stored once, and new entries share too.
        // (Enough writes for a merge: a quarter of the run; the 25 fillers hold 1-byte values.)
        let mut puts = vec![
            (vec![0x10, 200], envelope(200)),
            (vec![0x11, 200], envelope(200)),
            (vec![0x12], envelope(7)),
            (vec![0x10, 3], envelope(33)),
        ];
        puts.extend((0u8..25).map(|j| (vec![0x13, j], vec![j])));
        r.mirror.apply(&CommitBatch {
            seq: CommitSeq(1),
            puts,
            deletes: vec![vec![0x10, 7]],
        });
        r.mirror.settle();
        let keys = r.mirror.keys.read().expect("lock");
        assert!(keys.merging.is_none() && keys.recent.is_empty());
        // 126 two-byte keys and [0x12]; in full: 49 envelopes under 0x10 (envelope 33 twice:
        // [0x10, 3] now holds it) and, under 0x11, those of 3 and 7 (their rows no longer hold
        // them); 51 offsets; 25 one-byte values.
        assert_eq!(
            keys.run.data.len(),
            127 * 8 + 126 * 2 + 1 + 51 * 60 + 51 * 8 + 25
        );
        drop(keys);
        assert_eq!(r.get(&[0x12]).expect("read"), Some(envelope(7)));
        assert_eq!(r.get(&[0x11, 7]).expect("read"), Some(envelope(7)));
        assert_eq!(r.get(&[0x10, 7]).expect("read"), None);
        assert_eq!(r.get(&[0x10, 3]).expect("read"), Some(envelope(33)));
        assert_eq!(r.get(&[0x11, 3]).expect("read"), Some(envelope(3)));
        assert_eq!(r.get(&[0x11, 200]).expect("read"), Some(envelope(200)));
    }

    #[test]
    fn a_merge_leaves_nothing_recent_and_the_same_keys() {
        let r = reader(Keys {
            recent_min: 3,
            ..Keys::default()
        });
        let puts: Vec<(Vec<u8>, Vec<u8>)> = (0u8..5).map(|i| (vec![i], vec![i; 3])).collect();
        r.mirror.apply(&CommitBatch {
            seq: CommitSeq(1),
            puts,
            deletes: vec![vec![2]],
        });
        r.mirror.settle();
        let keys = r.mirror.keys.read().expect("lock");
        assert!(keys.recent.is_empty(), "merged into the run");
        assert!(keys.merging.is_none(), "the merge finished");
        assert_eq!(keys.run.len(), 4);
        assert_eq!(keys.len(), 4);
    }

    #[test]
    fn writes_during_a_merge_stay_over_the_merged_run() {
        let r = reader(Keys {
            recent_min: 2,
            ..Keys::default()
        });
        let mirror = &r.mirror;
        let batch = |seq, puts: &[(u8, u8)], deletes: &[u8]| CommitBatch {
            seq: CommitSeq(seq),
            puts: puts.iter().map(|(k, v)| (vec![*k], vec![*v])).collect(),
            deletes: deletes.iter().map(|k| vec![*k]).collect(),
        };
        mirror.apply(&batch(1, &[(1, 1), (2, 2), (3, 3)], &[]));
        // Whether or not that merge has finished, these land over it.
        mirror.apply(&batch(2, &[(2, 20)], &[3]));
        mirror.apply(&batch(3, &[(4, 4)], &[]));
        let want = vec![(vec![1], vec![1]), (vec![2], vec![20]), (vec![4], vec![4])];
        assert_eq!(page(r.scan(&[], &[9], 10).expect("scan")), want);
        mirror.settle();
        assert_eq!(page(r.scan(&[], &[9], 10).expect("scan")), want);
        assert_eq!(r.len(), 3);
        mirror.settle();
        assert_eq!(page(r.scan(&[], &[9], 10).expect("scan")), want);
        assert_eq!(r.get(&[3]).expect("get"), None);
    }

    #[test]
    fn a_merge_started_before_a_replace_is_dropped() {
        let keys = Keys {
            recent_min: 1,
            ..Keys::default()
        };
        let r = reader(keys);
        // The merge is run by hand, so that the replace lands between its start and its swap.
        let job = {
            let mut keys = r.mirror.keys.write().expect("lock");
            keys.put(vec![1], vec![1]);
            keys.start_merge().expect("a merge starts")
        };
        let mut fresh = Loader::default();
        fresh.push(&[7], &[7]);
        r.mirror.replace(fresh.finish());
        let (run, left) = job.merge();
        r.mirror
            .keys
            .write()
            .expect("lock")
            .finish_merge(job.generation, run, left);
        assert_eq!(
            page(r.scan(&[], &[9], 10).expect("scan")),
            vec![(vec![7], vec![7])]
        );
    }

    /// `cargo xtask bench store` runs this (ignored in the test suite): what storing each long
    /// value once costs a run's build. 1,000,000 entries shaped like the file-column stats rows
    /// and their covering index entries (22- and 41-byte keys alternating, 60-byte values, each
    /// value twice in a row), built with the real builder, against the fingerprint work alone
    /// (the keyed hash and the map probe of every long value) and a plain copy of the same bytes.
    #[test]
    #[ignore = "benchmark: cargo xtask bench store"]
    fn bench_run_build_fingerprints() {
        use std::hash::BuildHasher;
        use std::time::Instant;
        let n: usize = 1_000_000;
        let entries: Vec<(Vec<u8>, Vec<u8>)> = (0..n)
            .map(|i| {
                let row = (i / 2) as u64;
                let mut key = if i % 2 == 0 {
                    vec![1u8; 14]
                } else {
                    vec![2u8; 33]
                };
                key.extend_from_slice(&(i as u64).to_be_bytes());
                let mut value = vec![0x5au8; 52];
                value.extend_from_slice(&row.to_le_bytes());
                (key, value)
            })
            .collect();
        let bytes: usize = entries.iter().map(|(k, v)| 8 + k.len() + v.len()).sum();
        let best = |f: &mut dyn FnMut() -> usize| {
            let mut best = f64::MAX;
            let mut out = 0;
            for _ in 0..5 {
                let t = Instant::now();
                out = std::hint::black_box(f());
                best = best.min(t.elapsed().as_secs_f64());
            }
            (best * 1e9 / n as f64, out)
        };
        let (build_ns, run_bytes) = best(&mut || {
            let mut b = RunBuilder::with_capacity(bytes, n);
            for (k, v) in &entries {
                assert!(b.push(k, v));
            }
            b.finish().data.len()
        });
        let (fingerprint_ns, distinct) = best(&mut || {
            let mut b = RunBuilder::with_capacity(0, 0);
            for (i, (_, v)) in entries.iter().enumerate() {
                let fingerprint = b.hasher.hash_one(v) as u32;
                b.by_value.entry(fingerprint).or_insert(i as u32);
            }
            b.by_value.len()
        });
        let (copy_ns, copied) = best(&mut || {
            let mut data = Vec::with_capacity(bytes);
            let mut starts = Vec::with_capacity(n);
            for (k, v) in &entries {
                starts.push(data.len() as u64);
                data.extend_from_slice(&(k.len() as u32).to_le_bytes());
                data.extend_from_slice(&(v.len() as u32).to_le_bytes());
                data.extend_from_slice(k);
                data.extend_from_slice(v);
            }
            std::hint::black_box(&starts);
            data.len()
        });
        println!(
            "mirror run build, {n} entries (22/41-byte keys, 60-byte values, each value twice): \
             {build_ns:.1} ns per entry with values stored once ({:.1} MB), of which keyed hash + \
             map probe {fingerprint_ns:.1} ns ({:.0} %, {distinct} fingerprints); a plain copy \
             of every value {copy_ns:.1} ns per entry ({:.1} MB)",
            run_bytes as f64 / 1e6,
            100.0 * fingerprint_ns / build_ns,
            copied as f64 / 1e6,
        );
        // 500,000 distinct values in 32 bits: a few dozen share a fingerprint.
        assert!(
            distinct <= n / 2 && distinct > n / 2 - 1_000,
            "{distinct} fingerprints"
        );
        assert!(run_bytes < copied, "sharing stores less than copying");
    }
}
