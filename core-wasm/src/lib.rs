//! The pure RockLake catalog core. No I/O, no clock, no threads, no randomness: storage reads
//! come in through [`api::KvRead`], time through arguments, and every commit leaves as one
//! [`api::CommitBatch`].

pub mod api;
pub mod envelope;
pub mod error;
pub mod keys;
pub mod types;
