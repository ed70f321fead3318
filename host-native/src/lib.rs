//! RockLake's native host: storage (SlateDB over object_store), the PostgreSQL front (pgwire),
//! the catalog service that runs the pure core, and the CLI.

pub mod server;
pub mod service;
pub mod store;
