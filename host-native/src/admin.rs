//! Lifecycle administration from the command line (`rocklake gc|excise|checkpoint|restore|
//! lease|status`). Each command opens the catalog with the same service the server runs and
//! calls the core's lifecycle SQL functions (`rocklake_gc_apply(…)`, …), so the CLI, psql
//! against a running server and the tests all go through one implementation and one commit
//! path.

use std::sync::Arc;

use rocklake_core::api::{Output, PgError};

use crate::service::{CatalogService, CoreKind, ServiceConfig, SystemClock};

/// A result set as text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Table {
    pub columns: Vec<String>,
    /// PostgreSQL type oid per column (int8 and bool become JSON numbers and booleans).
    pub types: Vec<u32>,
    pub rows: Vec<Vec<Option<String>>>,
}

impl Table {
    pub fn to_json(&self) -> serde_json::Value {
        serde_json::Value::Array(
            self.rows
                .iter()
                .map(|r| {
                    serde_json::Value::Object(
                        self.columns
                            .iter()
                            .zip(r)
                            .zip(&self.types)
                            .map(|((c, v), t)| (c.clone(), json_cell(v.as_deref(), *t)))
                            .collect(),
                    )
                })
                .collect(),
        )
    }

    /// psql-like aligned output.
    pub fn render(&self) -> String {
        let cell = |v: &Option<String>| v.clone().unwrap_or_default();
        let mut widths: Vec<usize> = self.columns.iter().map(|c| c.chars().count()).collect();
        for r in &self.rows {
            for (w, v) in widths.iter_mut().zip(r) {
                *w = (*w).max(cell(v).chars().count());
            }
        }
        let line = |vals: Vec<String>| {
            vals.iter()
                .zip(&widths)
                .map(|(v, w)| format!(" {v:<w$} "))
                .collect::<Vec<_>>()
                .join("|")
                .trim_end()
                .to_string()
        };
        let mut out = vec![line(self.columns.clone())];
        out.push(
            widths
                .iter()
                .map(|w| "-".repeat(w + 2))
                .collect::<Vec<_>>()
                .join("+"),
        );
        for r in &self.rows {
            out.push(line(r.iter().map(cell).collect()));
        }
        let n = self.rows.len();
        out.push(format!("({n} row{})", if n == 1 { "" } else { "s" }));
        out.join("\n")
    }

    /// The value of `column` in the first row.
    pub fn first(&self, column: &str) -> Option<&str> {
        let i = self.columns.iter().position(|c| c == column)?;
        self.rows.first()?.get(i)?.as_deref()
    }
}

const BOOL_OID: u32 = 16;
const INT8_OID: u32 = 20;

/// int8 and bool columns as JSON numbers and booleans; everything else as strings.
fn json_cell(v: Option<&str>, type_oid: u32) -> serde_json::Value {
    match (v, type_oid) {
        (None, _) => serde_json::Value::Null,
        (Some(s), BOOL_OID) => serde_json::Value::Bool(s == "t"),
        (Some(s), INT8_OID) => s
            .parse::<i64>()
            .map(serde_json::Value::from)
            .unwrap_or_else(|_| serde_json::Value::String(s.to_string())),
        (Some(s), _) => serde_json::Value::String(s.to_string()),
    }
}

/// Why an admin command failed; the CLI maps each to an exit status.
#[non_exhaustive]
#[derive(Debug, thiserror::Error)]
pub enum AdminError {
    /// The catalog refused the operation (a lifecycle rule, a bad argument): exit 1.
    #[error("{}{}", .0.message, .0.hint.as_ref().map(|h| format!("\nHINT: {h}")).unwrap_or_default())]
    Refused(Box<PgError>),
    /// The catalog could not be opened or written: exit 3.
    #[error("{0:#}")]
    Unavailable(anyhow::Error),
}

/// An open catalog with one session for administration.
pub struct Admin {
    service: Arc<CatalogService>,
    sid: rocklake_core::api::SessionId,
}

impl Admin {
    /// Opens the catalog as its writer (a running server on the same catalog is fenced).
    pub async fn open(catalog: &str, core: CoreKind) -> Result<Admin, AdminError> {
        let mut config = ServiceConfig::new(catalog);
        config.create_if_missing = false;
        let service = CatalogService::open_with_core(&config, core, Box::new(SystemClock))
            .await
            .map_err(AdminError::Unavailable)?;
        let sid = service.open_session("rocklake-admin", "lake");
        Ok(Admin { service, sid })
    }

    /// Runs one statement and returns its result set.
    pub async fn query(&self, sql: &str) -> Result<Table, AdminError> {
        let reply = self.service.query(self.sid, sql).await;
        if let Some(e) = reply.error {
            return Err(AdminError::Refused(Box::new(e)));
        }
        match reply.outputs.into_iter().last() {
            Some(Output::Rows { fields, rows, .. }) => Ok(Table {
                types: fields.iter().map(|f| f.type_oid).collect(),
                columns: fields.into_iter().map(|f| f.name).collect(),
                rows: rows.to_strings(),
            }),
            other => Err(AdminError::Unavailable(anyhow::anyhow!(
                "expected rows from {sql:?}, got {other:?}"
            ))),
        }
    }

    /// Excision in bounded batches until done, reporting (versions so far, batches so far)
    /// after each batch. No plan first: counting the total would read every version twice.
    pub async fn excise_all(
        &self,
        before: u64,
        batch: usize,
        mut progress: impl FnMut(u64, u64),
    ) -> Result<Table, AdminError> {
        let (mut versions, mut bytes, mut batches) = (0u64, 0u64, 0u64);
        let mut last;
        loop {
            last = self
                .query(&format!(
                    "SELECT * FROM rocklake_excise_apply({before}, {batch})"
                ))
                .await?;
            batches += 1;
            versions += last
                .first("versions")
                .and_then(|v| v.parse().ok())
                .unwrap_or(0);
            bytes += last
                .first("bytes")
                .and_then(|v| v.parse().ok())
                .unwrap_or(0);
            progress(versions, batches);
            if last.first("done") == Some("t") {
                break;
            }
        }
        Ok(Table {
            columns: ["before", "commit_cut", "versions", "bytes", "batches"]
                .map(String::from)
                .to_vec(),
            types: vec![INT8_OID; 5],
            rows: vec![vec![
                Some(before.to_string()),
                last.first("commit_cut").map(str::to_string),
                Some(versions.to_string()),
                Some(bytes.to_string()),
                Some(batches.to_string()),
            ]],
        })
    }

    pub async fn close(self) -> Result<(), AdminError> {
        self.service.close_session(self.sid).await;
        self.service
            .shutdown()
            .await
            .map_err(AdminError::Unavailable)
    }
}
