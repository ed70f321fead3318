//! An in-memory key/value store for embedders and tests: answers [`KvRead`] and applies
//! [`CommitBatch`]es atomically. Durable hosts use their own store; this one is for the example
//! host, replay and unit tests.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};

use crate::api::{CommitBatch, KvError, KvPage, KvRead};

#[derive(Debug, Default)]
pub struct MemKv {
    map: BTreeMap<Vec<u8>, Vec<u8>>,
    /// Draws of [`KvRead::entropy`] so far: a fixed sequence, so tests and replays over this
    /// store repeat themselves. Atomic so that the store stays shareable between threads.
    draws: AtomicU64,
}

impl Clone for MemKv {
    fn clone(&self) -> Self {
        MemKv {
            map: self.map.clone(),
            draws: AtomicU64::new(self.draws.load(Ordering::Relaxed)),
        }
    }
}

impl MemKv {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn apply(&mut self, batch: &CommitBatch) {
        for (k, v) in &batch.puts {
            self.map.insert(k.clone(), v.clone());
        }
        for k in &batch.deletes {
            self.map.remove(k);
        }
    }

    pub fn len(&self) -> usize {
        self.map.len()
    }

    pub fn is_empty(&self) -> bool {
        self.map.is_empty()
    }
}

impl MemKv {
    /// `start <= key < end`, ascending or (`rev`) descending, at most `limit`.
    fn range(&self, start: &[u8], end: &[u8], limit: usize, rev: bool) -> Result<KvPage, KvError> {
        if start >= end {
            return Ok(KvPage::new());
        }
        let range = self.map.range(start.to_vec()..end.to_vec());
        if rev {
            KvPage::try_from_iter(range.rev().take(limit).map(|(k, v)| (&k[..], &v[..])))
        } else {
            KvPage::try_from_iter(range.take(limit).map(|(k, v)| (&k[..], &v[..])))
        }
    }
}

impl KvRead for MemKv {
    fn scan(&self, start: &[u8], end: &[u8], limit: usize) -> Result<KvPage, KvError> {
        self.range(start, end, limit, false)
    }

    fn get(&self, key: &[u8]) -> Result<Option<Vec<u8>>, KvError> {
        Ok(self.map.get(key).cloned())
    }

    fn scan_rev(&self, start: &[u8], end: &[u8], limit: usize) -> Result<KvPage, KvError> {
        self.range(start, end, limit, true)
    }

    fn entropy(&self) -> Option<u64> {
        let n = self.draws.fetch_add(1, Ordering::Relaxed).wrapping_add(1);
        Some(crate::prng::Prng::from_seed(n).next_u64())
    }
}
