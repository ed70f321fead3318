//! The catalog service: runs the core for every session and drives commits through the store.
//! (Scaffolding: the real implementation lands with the core engine.)

use rocklake_core::api::{Describe, PgError, Reply, SessionId, TxnStatus};

pub struct CatalogService {}

fn not_ready() -> PgError {
    PgError::new("0A000", "catalog engine not wired yet")
}

impl CatalogService {
    pub fn open_session(&self, _user: &str, _database: &str) -> SessionId {
        SessionId(0)
    }
    pub async fn query(&self, _sid: SessionId, _sql: &str) -> Reply {
        Reply { outputs: vec![], error: Some(not_ready()), status: TxnStatus::Idle, commit: None }
    }
    pub async fn describe(&self, _sid: SessionId, _sql: &str) -> Result<Describe, PgError> {
        Err(not_ready())
    }
    pub async fn copy_in_data(&self, _sid: SessionId, _data: &[u8]) -> Result<(), PgError> {
        Err(not_ready())
    }
    pub async fn copy_in_done(&self, _sid: SessionId) -> Reply {
        Reply { outputs: vec![], error: Some(not_ready()), status: TxnStatus::Idle, commit: None }
    }
    pub async fn copy_in_fail(&self, _sid: SessionId, _message: &str) -> Reply {
        Reply { outputs: vec![], error: Some(not_ready()), status: TxnStatus::Idle, commit: None }
    }
    pub async fn close_session(&self, _sid: SessionId) {}
}
