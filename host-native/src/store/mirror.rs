//! The in-memory ordered copy of every (non-reserved) key that answers all reads.
//!
//! The keys live in one packed, sorted run (each entry's lengths, key and value back to back
//! in one buffer, found by binary search over one offset per entry) and in `recent`: what
//! commits wrote since the run was built, deletions included. A BTreeMap of owned vectors cost
//! about four times the entries' bytes (6 M stats rows and their index entries took 4.9 GB);
//! the run costs the bytes plus 16 per entry. When `recent` passes a quarter of the run (and
//! [`RECENT_MIN`] entries), the two are merged into a new run: readers keep reading the old
//! one meanwhile, and only the swap takes the write lock (decision record 0015).

use std::collections::BTreeMap;
use std::ops::Bound;
use std::sync::{Arc, Mutex, PoisonError, RwLock};

use rocklake_core::api::{CommitBatch, KvError, KvPage, KvRead};

/// Entries `recent` holds at least before it is merged into the run.
const RECENT_MIN: usize = 65_536;

/// Sorted entries packed in one buffer: entry `i` starts at `starts[i]` with its key length
/// and value length (u32, little-endian), then the key, then the value.
#[derive(Default)]
struct Run {
    data: Vec<u8>,
    starts: Vec<u64>,
}

impl Run {
    fn len(&self) -> usize {
        self.starts.len()
    }

    fn entry(&self, i: usize) -> (&[u8], &[u8]) {
        let s = self.starts[i] as usize;
        let mut len = [0u8; 4];
        len.copy_from_slice(&self.data[s..s + 4]);
        let k = u32::from_le_bytes(len) as usize;
        len.copy_from_slice(&self.data[s + 4..s + 8]);
        let v = u32::from_le_bytes(len) as usize;
        let key = &self.data[s + 8..s + 8 + k];
        (key, &self.data[s + 8 + k..s + 8 + k + v])
    }

    /// The first entry whose key is at least `key`.
    fn lower_bound(&self, key: &[u8]) -> usize {
        let (mut lo, mut hi) = (0, self.len());
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            if self.entry(mid).0 < key {
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

    fn last_key(&self) -> Option<&[u8]> {
        self.len().checked_sub(1).map(|i| self.entry(i).0)
    }

    /// Appends an entry whose key sorts after every key in the run; false (nothing
    /// appended) for a key or value over 4 GiB.
    fn push(&mut self, key: &[u8], value: &[u8]) -> bool {
        let (Ok(k), Ok(v)) = (u32::try_from(key.len()), u32::try_from(value.len())) else {
            return false;
        };
        self.starts.push(self.data.len() as u64);
        self.data.extend_from_slice(&k.to_le_bytes());
        self.data.extend_from_slice(&v.to_le_bytes());
        self.data.extend_from_slice(key);
        self.data.extend_from_slice(value);
        true
    }
}

/// Entries written since the run was built: `None` is a deletion.
type Recent = BTreeMap<Vec<u8>, Option<Vec<u8>>>;

/// Every key: the run overlaid with `recent`.
pub(crate) struct Keys {
    run: Run,
    recent: Recent,
    /// Keys present (the run's, plus the ones `recent` adds, minus the ones it deletes).
    len: usize,
    /// Entries `recent` holds at least before a merge ([`RECENT_MIN`]; tests merge sooner).
    recent_min: usize,
}

impl Default for Keys {
    fn default() -> Self {
        Loader::default().finish()
    }
}

/// Builds [`Keys`] from a scan in ascending key order.
#[derive(Default)]
pub(crate) struct Loader {
    run: Run,
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

    pub(crate) fn finish(mut self) -> Keys {
        self.run.data.shrink_to_fit();
        self.run.starts.shrink_to_fit();
        let mut keys = Keys {
            len: self.run.len(),
            run: self.run,
            recent: Recent::new(),
            recent_min: RECENT_MIN,
        };
        for (k, v) in self.late {
            keys.put(k, v);
        }
        keys
    }
}

impl Keys {
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    fn present(&self, key: &[u8]) -> bool {
        match self.recent.get(key) {
            Some(v) => v.is_some(),
            None => self.run.get(key).is_some(),
        }
    }

    fn put(&mut self, key: Vec<u8>, value: Vec<u8>) {
        if !self.present(&key) {
            self.len += 1;
        }
        self.recent.insert(key, Some(value));
    }

    fn delete(&mut self, key: &[u8]) {
        if self.present(key) {
            self.len -= 1;
        }
        // A key the run does not hold needs no deletion marker.
        if self.run.get(key).is_some() {
            self.recent.insert(key.to_vec(), None);
        } else {
            self.recent.remove(key);
        }
    }

    pub(crate) fn get(&self, key: &[u8]) -> Option<Vec<u8>> {
        match self.recent.get(key) {
            Some(v) => v.clone(),
            None => self.run.get(key).map(<[u8]>::to_vec),
        }
    }

    /// Whether `recent` has grown enough to be merged into the run.
    fn wants_merge(&self) -> bool {
        self.recent.len() >= self.recent_min.max(self.run.len() / 4)
    }

    /// The run and `recent` merged into one run, and the entries too large for a run (over
    /// 4 GiB; none in practice) left for the next `recent`.
    fn merged(&self) -> (Run, Recent) {
        let recent_bytes: usize = self
            .recent
            .iter()
            .map(|(k, v)| 8 + k.len() + v.as_ref().map_or(0, Vec::len))
            .sum();
        let mut out = Run {
            data: Vec::with_capacity(self.run.data.len() + recent_bytes),
            starts: Vec::with_capacity(self.len),
        };
        let mut left = Recent::new();
        for (k, v) in self.entries(Bound::Unbounded, Bound::Unbounded) {
            if !out.push(k, v) {
                left.insert(k.to_vec(), Some(v.to_vec()));
            }
        }
        (out, left)
    }

    /// The present entries in `[start, end)` in ascending key order: the run's, with
    /// `recent` taking precedence.
    fn entries<'a>(
        &'a self,
        start: Bound<&'a [u8]>,
        end: Bound<&'a [u8]>,
    ) -> impl Iterator<Item = (&'a [u8], &'a [u8])> + 'a {
        let run = &self.run;
        let mut i = match start {
            Bound::Included(s) => run.lower_bound(s),
            _ => 0,
        };
        let stop = match end {
            Bound::Excluded(e) => run.lower_bound(e),
            _ => run.len(),
        };
        let mut rec = self.recent.range::<[u8], _>((start, end)).peekable();
        std::iter::from_fn(move || loop {
            let from_run = (i < stop).then(|| run.entry(i));
            match (from_run, rec.peek()) {
                (None, None) => return None,
                (Some((k, v)), Some((rk, _))) if k < rk.as_slice() => {
                    i += 1;
                    return Some((k, v));
                }
                (Some((k, v)), None) => {
                    i += 1;
                    return Some((k, v));
                }
                (from_run, Some(_)) => {
                    let (rk, rv) = rec.next()?;
                    if from_run.is_some_and(|(k, _)| k == rk.as_slice()) {
                        i += 1;
                    }
                    if let Some(v) = rv {
                        return Some((rk.as_slice(), v.as_slice()));
                    }
                }
            }
        })
    }

    /// The present entries in `[start, end)` in descending key order.
    fn entries_rev<'a>(
        &'a self,
        start: &'a [u8],
        end: &'a [u8],
    ) -> impl Iterator<Item = (&'a [u8], &'a [u8])> + 'a {
        let run = &self.run;
        let first = run.lower_bound(start);
        let mut i = run.lower_bound(end);
        let mut rec = self
            .recent
            .range::<[u8], _>((Bound::Included(start), Bound::Excluded(end)))
            .rev()
            .peekable();
        std::iter::from_fn(move || loop {
            let from_run = (i > first).then(|| run.entry(i - 1));
            match (from_run, rec.peek()) {
                (None, None) => return None,
                (Some((k, v)), Some((rk, _))) if k > rk.as_slice() => {
                    i -= 1;
                    return Some((k, v));
                }
                (Some((k, v)), None) => {
                    i -= 1;
                    return Some((k, v));
                }
                (from_run, Some(_)) => {
                    let (rk, rv) = rec.next()?;
                    if from_run.is_some_and(|(k, _)| k == rk.as_slice()) {
                        i -= 1;
                    }
                    if let Some(v) = rv {
                        return Some((rk.as_slice(), v.as_slice()));
                    }
                }
            }
        })
    }
}

/// Shared between the store (the only writer) and its readers.
#[derive(Default)]
pub(crate) struct Mirror {
    keys: RwLock<Keys>,
    /// Serialises `apply`, so a merge built outside the write lock still sees every entry.
    applying: Mutex<()>,
}

impl Mirror {
    pub(crate) fn from_keys(keys: Keys) -> Self {
        Mirror {
            keys: RwLock::new(keys),
            applying: Mutex::new(()),
        }
    }

    /// Applies a durable batch under one write lock, so every read call sees all of it or
    /// none of it. Order matches the SlateDB batch: puts in order, then deletes (a key both
    /// put and deleted ends up deleted, in both places).
    pub(crate) fn apply(&self, batch: &CommitBatch) {
        let _applying = self.applying.lock().unwrap_or_else(PoisonError::into_inner);
        // Nothing below can panic halfway (only inserts/removes), so a poisoned lock still
        // holds consistent keys; recover them instead of failing every later read.
        let wants_merge = {
            let mut keys = self.keys.write().unwrap_or_else(PoisonError::into_inner);
            for (k, v) in &batch.puts {
                keys.put(k.clone(), v.clone());
            }
            for k in &batch.deletes {
                keys.delete(k);
            }
            keys.wants_merge()
        };
        if wants_merge {
            // Built under the read lock (readers go on); nothing else changes the keys
            // meanwhile, since `applying` is held.
            let (run, left) = self
                .keys
                .read()
                .unwrap_or_else(PoisonError::into_inner)
                .merged();
            let mut keys = self.keys.write().unwrap_or_else(PoisonError::into_inner);
            keys.run = run;
            keys.recent = left;
        }
    }

    /// Swaps in a whole new copy (a read replica's reload), under one write lock.
    pub(crate) fn replace(&self, fresh: Keys) {
        *self.keys.write().unwrap_or_else(PoisonError::into_inner) = fresh;
    }

    pub(crate) fn len(&self) -> usize {
        self.keys
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .len()
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
        if rev {
            KvPage::try_from_iter(keys.entries_rev(start, end).take(limit))
        } else {
            let entries = keys.entries(Bound::Included(start), Bound::Excluded(end));
            KvPage::try_from_iter(entries.take(limit))
        }
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

    /// A commit batch's puts and deletes.
    type Batch = (Vec<(Vec<u8>, Vec<u8>)>, Vec<Vec<u8>>);

    fn batches() -> impl Strategy<Value = Vec<Batch>> {
        prop::collection::vec(
            (
                prop::collection::vec((key(), prop::collection::vec(any::<u8>(), 0..6)), 0..8),
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
            initial in prop::collection::btree_map(key(), prop::collection::vec(any::<u8>(), 0..6), 0..10),
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
        let keys = r.mirror.keys.read().expect("lock");
        assert!(keys.recent.is_empty(), "merged into the run");
        assert_eq!(keys.run.len(), 4);
        assert_eq!(keys.len(), 4);
    }
}
