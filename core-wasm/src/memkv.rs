//! An in-memory key/value store for embedders and tests: answers [`KvRead`] and applies
//! [`CommitBatch`]es atomically. Durable hosts use their own store; this one is for the example
//! host, replay and unit tests.

use std::collections::BTreeMap;

use crate::api::{CommitBatch, KvError, KvPairs, KvRead};

#[derive(Debug, Default, Clone)]
pub struct MemKv {
    map: BTreeMap<Vec<u8>, Vec<u8>>,
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
    fn range(&self, start: &[u8], end: &[u8], limit: usize, rev: bool) -> KvPairs {
        if start >= end {
            return vec![];
        }
        let range = self.map.range(start.to_vec()..end.to_vec());
        let copy = |(k, v): (&Vec<u8>, &Vec<u8>)| (k.clone(), v.clone());
        if rev {
            range.rev().take(limit).map(copy).collect()
        } else {
            range.take(limit).map(copy).collect()
        }
    }
}

impl KvRead for MemKv {
    fn scan(&self, start: &[u8], end: &[u8], limit: usize) -> Result<KvPairs, KvError> {
        Ok(self.range(start, end, limit, false))
    }

    fn get(&self, key: &[u8]) -> Result<Option<Vec<u8>>, KvError> {
        Ok(self.map.get(key).cloned())
    }

    fn scan_rev(&self, start: &[u8], end: &[u8], limit: usize) -> Result<KvPairs, KvError> {
        Ok(self.range(start, end, limit, true))
    }
}
