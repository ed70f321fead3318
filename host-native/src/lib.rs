//! RockLake's native host: storage (SlateDB over object_store), the PostgreSQL front (pgwire),
//! the catalog service that runs the pure core, and the CLI.

// PgError is PostgreSQL's ErrorResponse, passed by value across the core boundary (see core).
#![allow(clippy::result_large_err)]

pub mod admin;
pub mod bench;
pub mod catalog_store;
pub mod component;
pub mod config;
pub mod heap;
pub mod http;
pub mod metrics;
pub mod server;
pub mod service;
pub mod store;
pub mod trace;
