//! The pure RockLake catalog core. No I/O, no clock, no threads, no randomness: storage reads
//! come in through [`api::KvRead`], time through arguments, and every commit leaves as one
//! [`api::CommitBatch`].

// PgError is the protocol's ErrorResponse; it crosses the WIT boundary by value, so it is not boxed.
#![allow(clippy::result_large_err)]

pub mod activity;
pub mod aggregate;
pub mod api;
pub mod catalog;
pub mod comment;
pub mod copycache;
pub mod copyformat;
pub mod copyparse;
pub mod cursor;
pub mod datefn;
pub mod datetime;
pub mod depth;
pub mod engine;
pub mod envelope;
pub mod error;
pub mod errpos;
pub mod exec;
pub mod format;
#[cfg(target_arch = "wasm32")]
mod guest;
pub mod inet;
pub mod json;
pub mod keyhash;
pub mod keys;
pub mod keywords;
pub mod lifecycle;
pub mod locks;
mod longtext;
pub mod maintenance;
pub mod mem;
pub mod memkv;
pub mod numeric;
pub mod params;
pub mod parsecache;
pub mod pgcatalog;
pub mod plancache;
pub mod precedence;
pub mod prepared;
pub mod prng;
pub mod query;
pub mod regex;
pub mod rowdecode;
pub mod scancache;
pub mod seqparse;
pub mod sequence;
pub mod settings;
pub mod tochar;
pub mod txn;
pub mod types;
pub mod tz;
pub mod tzabbrev;
pub mod verify;
pub mod view;
pub mod window;
pub mod wire;
pub mod writer;

pub use engine::Engine;

/// The component counts its heap for the statement memory budget ([`mem`]); so do the unit
/// tests. A native host installs [`mem::CountingAlloc`] in its own binary.
#[cfg(any(target_arch = "wasm32", test))]
#[global_allocator]
static ALLOC: mem::CountingAlloc<std::alloc::System> = mem::CountingAlloc(std::alloc::System);

/// What `version()` answers: DuckDB's postgres scanner reads the major version from the first
/// digits after "PostgreSQL".
pub const VERSION_STRING: &str = concat!(
    "PostgreSQL 15.18 (RockLake ",
    env!("CARGO_PKG_VERSION"),
    ") on x86_64-pc-linux-gnu, compiled by rustc, 64-bit"
);
