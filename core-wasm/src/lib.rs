//! The pure RockLake catalog core. No I/O, no clock, no threads, no randomness: storage reads
//! come in through [`api::KvRead`], time through arguments, and every commit leaves as one
//! [`api::CommitBatch`].

pub mod api;
pub mod envelope;
pub mod error;
pub mod keys;
pub mod memkv;
pub mod types;
pub mod catalog;
pub mod pgcatalog;
pub mod engine;
pub mod exec;
pub mod query;
pub mod regex;
pub mod txn;
pub mod wire;
#[cfg(target_arch = "wasm32")]
mod guest;

pub use engine::Engine;

/// What `version()` answers: DuckDB's postgres scanner reads the major version from the first
/// digits after "PostgreSQL".
pub const VERSION_STRING: &str = concat!(
    "PostgreSQL 15.18 (RockLake ",
    env!("CARGO_PKG_VERSION"),
    ") on x86_64-pc-linux-gnu, compiled by rustc, 64-bit"
);
