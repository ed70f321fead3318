//! The in-memory ordered copy of every (non-reserved) key that answers all reads.

use std::collections::BTreeMap;
use std::ops::Bound;
use std::sync::{Arc, PoisonError, RwLock};

use rocklake_core::api::{CommitBatch, KvError, KvPage, KvRead};

type Map = BTreeMap<Vec<u8>, Vec<u8>>;

/// Shared between the store (the only writer) and its readers.
#[derive(Default)]
pub(crate) struct Mirror {
    map: RwLock<Map>,
}

impl Mirror {
    pub(crate) fn from_map(map: Map) -> Self {
        Mirror {
            map: RwLock::new(map),
        }
    }

    /// Applies a durable batch under one write lock, so every read call sees all of it or
    /// none of it. Order matches the SlateDB batch: puts in order, then deletes (a key both
    /// put and deleted ends up deleted, in both places).
    pub(crate) fn apply(&self, batch: &CommitBatch) {
        // Nothing below can panic halfway (only inserts/removes), so a poisoned lock still
        // holds a consistent map; recover it instead of failing every later read.
        let mut map = self.map.write().unwrap_or_else(PoisonError::into_inner);
        for (k, v) in &batch.puts {
            map.insert(k.clone(), v.clone());
        }
        for k in &batch.deletes {
            map.remove(k);
        }
    }

    /// Swaps in a whole new copy (a read replica's reload), under one write lock.
    pub(crate) fn replace(&self, fresh: Map) {
        *self.map.write().unwrap_or_else(PoisonError::into_inner) = fresh;
    }

    pub(crate) fn len(&self) -> usize {
        self.map
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
        // BTreeMap::range panics on an inverted range; an empty answer is the right one.
        if limit == 0 || start >= end {
            return Ok(KvPage::new());
        }
        let map = self
            .mirror
            .map
            .read()
            .unwrap_or_else(PoisonError::into_inner);
        let range = map.range::<[u8], _>((Bound::Included(start), Bound::Excluded(end)));
        if rev {
            KvPage::try_from_iter(range.rev().take(limit).map(|(k, v)| (&k[..], &v[..])))
        } else {
            KvPage::try_from_iter(range.take(limit).map(|(k, v)| (&k[..], &v[..])))
        }
    }
}

impl KvRead for StoreReader {
    fn scan(&self, start: &[u8], end: &[u8], limit: usize) -> Result<KvPage, KvError> {
        self.range(start, end, limit, false)
    }

    fn get(&self, key: &[u8]) -> Result<Option<Vec<u8>>, KvError> {
        let map = self
            .mirror
            .map
            .read()
            .unwrap_or_else(PoisonError::into_inner);
        Ok(map.get(key).cloned())
    }

    fn scan_rev(&self, start: &[u8], end: &[u8], limit: usize) -> Result<KvPage, KvError> {
        self.range(start, end, limit, true)
    }
}
