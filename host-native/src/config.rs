//! Server settings: a TOML file, overridden by environment variables, overridden by flags.
//!
//! Clap reads flags and their `ROCKLAKE_*` environment variables (a flag wins over its
//! variable); whatever neither gave comes from the file; whatever the file leaves out takes the
//! default. [`Settings::resolve`] validates the result once, with messages that name the key.

use std::net::{SocketAddr, ToSocketAddrs};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

/// The keys of the configuration file. Every key is optional; see `docs/configuration.md`.
#[derive(Debug, Default, Deserialize, Serialize, Clone, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct FileConfig {
    pub listen: Option<String>,
    pub catalog: Option<String>,
    pub user: Option<String>,
    pub password: Option<String>,
    pub auth: Option<String>,
    pub data_path: Option<String>,
    pub max_statement_bytes: Option<usize>,
    pub max_connections: Option<usize>,
    pub core: Option<String>,
    pub component: Option<PathBuf>,
    pub log_format: Option<String>,
    pub metrics_listen: Option<String>,
    pub slow_statement_ms: Option<u64>,
    pub read_only: Option<bool>,
    pub replica_poll_ms: Option<u64>,
    pub tls_cert: Option<PathBuf>,
    pub tls_key: Option<PathBuf>,
    pub tls_required: Option<bool>,
    pub statement_timeout_ms: Option<u64>,
    pub idle_in_transaction_timeout_ms: Option<u64>,
    pub commit_timeout_ms: Option<u64>,
    pub commit_journal: Option<bool>,
    pub journal_uploads: Option<usize>,
    pub statement_memory_limit_mb: Option<u64>,
    pub record: Option<PathBuf>,
    /// More roles (`[[users]]` tables); the file is their only source.
    pub users: Option<Vec<RoleConfig>>,
}

/// One `[[users]]` table: a role besides the main `user`.
#[derive(Debug, Default, Deserialize, Serialize, Clone, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct RoleConfig {
    pub name: String,
    /// The password itself (keep the file private), or
    pub password: Option<String>,
    /// the name of an environment variable holding it.
    pub password_env: Option<String>,
    /// Sessions of this role may only read (writes fail with 25006).
    #[serde(default)]
    pub read_only: bool,
}

/// A resolved extra role.
#[derive(Debug, Clone, Serialize)]
pub struct Role {
    pub name: String,
    #[serde(skip)]
    pub password: String,
    pub read_only: bool,
}

/// A configuration problem, naming where the bad value came from.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ConfigError {
    /// Fix the path or create the file.
    #[error("cannot read config file {path}: {message}")]
    Read { path: PathBuf, message: String },
    /// Fix the file's TOML (the message names the line and key).
    #[error("config file {path}: {message}")]
    Parse { path: PathBuf, message: String },
    /// Fix the named setting.
    #[error("invalid {key} {value:?}: {reason}")]
    Invalid {
        key: &'static str,
        value: String,
        reason: String,
    },
}

impl FileConfig {
    pub fn load(path: &Path) -> Result<FileConfig, ConfigError> {
        let text = std::fs::read_to_string(path).map_err(|e| ConfigError::Read {
            path: path.to_path_buf(),
            message: e.to_string(),
        })?;
        toml::from_str(&text).map_err(|e| ConfigError::Parse {
            path: path.to_path_buf(),
            message: e.to_string(),
        })
    }
}

pub const DEFAULT_LISTEN: &str = "127.0.0.1:6543";
pub const DEFAULT_CATALOG: &str = "./rocklake-data/catalog";
pub const DEFAULT_USER: &str = "rocklake";
pub const DEFAULT_DATA_PATH: &str = "./rocklake-data/files/";
pub const DEFAULT_MAX_STATEMENT_BYTES: usize = 64 << 20;
pub const DEFAULT_MAX_CONNECTIONS: usize = 100;
pub const DEFAULT_SLOW_STATEMENT_MS: u64 = 1000;
pub const DEFAULT_REPLICA_POLL_MS: u64 = 100;
pub const DEFAULT_COMMIT_TIMEOUT_MS: u64 = 30_000;

/// Log line format.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum LogFormat {
    /// Human-readable lines (colours on a terminal).
    Human,
    /// One JSON object per line.
    Json,
}

/// Settings after merging flags, environment, file and defaults.
#[derive(Debug, Clone, Serialize)]
pub struct Settings {
    pub listen: String,
    pub catalog: String,
    pub user: String,
    #[serde(skip)]
    pub password: Option<String>,
    pub auth: String,
    pub data_path: String,
    pub max_statement_bytes: usize,
    pub max_connections: usize,
    pub core: Option<String>,
    pub component: Option<PathBuf>,
    pub log_format: LogFormat,
    pub metrics_listen: Option<String>,
    pub slow_statement_ms: u64,
    pub read_only: bool,
    pub replica_poll_ms: u64,
    pub tls_cert: Option<PathBuf>,
    pub tls_key: Option<PathBuf>,
    pub tls_required: bool,
    /// Record every call into the core to a trace in this directory (`rocklake replay`).
    pub record: Option<PathBuf>,
    /// 0: off.
    pub statement_timeout_ms: u64,
    /// 0: off.
    pub idle_in_transaction_timeout_ms: u64,
    pub commit_timeout_ms: u64,
    /// Commits are durable through RockLake's commit journal (decisions 0009, 0010) instead
    /// of one SlateDB WAL upload each.
    pub commit_journal: bool,
    /// Object-store journal uploads in flight at most (`StoreOptions::journal_uploads`).
    pub journal_uploads: usize,
    /// MiB of memory one statement may use before it fails with 53200; 0: no limit.
    pub statement_memory_limit_mb: u64,
    /// Roles besides `user`.
    pub users: Vec<Role>,
}

/// What flags and environment gave (clap's view), each `None` when neither did: the same
/// keys as the file.
pub type Overrides = FileConfig;

fn one_of(key: &'static str, value: &str, allowed: &[&str]) -> Result<String, ConfigError> {
    let v = value.to_ascii_lowercase();
    if allowed.contains(&v.as_str()) {
        Ok(v)
    } else {
        Err(ConfigError::Invalid {
            key,
            value: value.to_string(),
            reason: format!("expected one of {}", allowed.join(", ")),
        })
    }
}

fn address(key: &'static str, value: &str) -> Result<(), ConfigError> {
    let mut addrs = value.to_socket_addrs().map_err(|e| ConfigError::Invalid {
        key,
        value: value.to_string(),
        reason: format!("not a HOST:PORT address ({e})"),
    })?;
    match addrs.next() {
        Some(_) => Ok(()),
        None => Err(ConfigError::Invalid {
            key,
            value: value.to_string(),
            reason: "resolves to no address".into(),
        }),
    }
}

/// The `[[users]]` tables with their passwords looked up.
fn roles(config: Vec<RoleConfig>) -> Result<Vec<Role>, ConfigError> {
    config
        .into_iter()
        .map(|r| {
            if r.name.is_empty() {
                return Err(ConfigError::Invalid {
                    key: "users.name",
                    value: String::new(),
                    reason: "must not be empty".into(),
                });
            }
            let password = match (r.password, &r.password_env) {
                (Some(p), None) => p,
                (None, Some(var)) => std::env::var(var).map_err(|_| ConfigError::Invalid {
                    key: "users.password_env",
                    value: var.clone(),
                    reason: format!("environment variable for role {:?} is not set", r.name),
                })?,
                _ => {
                    return Err(ConfigError::Invalid {
                        key: "users.password",
                        value: r.name.clone(),
                        reason: "give exactly one of password and password_env".into(),
                    })
                }
            };
            if password.is_empty() {
                return Err(ConfigError::Invalid {
                    key: "users.password",
                    value: r.name,
                    reason: "must not be empty".into(),
                });
            }
            Ok(Role {
                name: r.name,
                password,
                read_only: r.read_only,
            })
        })
        .collect()
}

impl Settings {
    /// Merges `o` (flags and environment) over `file` over the defaults and validates.
    pub fn resolve(o: Overrides, file: FileConfig) -> Result<Settings, ConfigError> {
        let auth = match o.auth.or(file.auth) {
            Some(a) => one_of("auth", &a, &["scram", "md5", "password", "trust"])?,
            None => "scram".into(),
        };
        let core = match o.core.or(file.core) {
            Some(c) => Some(one_of("core", &c, &["native", "wasm"])?),
            None => None,
        };
        let log_format = match o.log_format.or(file.log_format) {
            Some(f) => match one_of("log_format", &f, &["human", "json"])?.as_str() {
                "json" => LogFormat::Json,
                _ => LogFormat::Human,
            },
            None => LogFormat::Human,
        };
        let s = Settings {
            listen: o
                .listen
                .or(file.listen)
                .unwrap_or_else(|| DEFAULT_LISTEN.into()),
            catalog: o
                .catalog
                .or(file.catalog)
                .unwrap_or_else(|| DEFAULT_CATALOG.into()),
            user: o.user.or(file.user).unwrap_or_else(|| DEFAULT_USER.into()),
            password: o.password.or(file.password),
            auth,
            data_path: o
                .data_path
                .or(file.data_path)
                .unwrap_or_else(|| DEFAULT_DATA_PATH.into()),
            max_statement_bytes: o
                .max_statement_bytes
                .or(file.max_statement_bytes)
                .unwrap_or(DEFAULT_MAX_STATEMENT_BYTES),
            max_connections: o
                .max_connections
                .or(file.max_connections)
                .unwrap_or(DEFAULT_MAX_CONNECTIONS),
            core,
            component: o.component.or(file.component),
            log_format,
            metrics_listen: o.metrics_listen.or(file.metrics_listen),
            slow_statement_ms: o
                .slow_statement_ms
                .or(file.slow_statement_ms)
                .unwrap_or(DEFAULT_SLOW_STATEMENT_MS),
            read_only: o.read_only.or(file.read_only).unwrap_or(false),
            replica_poll_ms: o
                .replica_poll_ms
                .or(file.replica_poll_ms)
                .unwrap_or(DEFAULT_REPLICA_POLL_MS),
            tls_cert: o.tls_cert.or(file.tls_cert),
            tls_key: o.tls_key.or(file.tls_key),
            tls_required: o.tls_required.or(file.tls_required).unwrap_or(false),
            record: o.record.or(file.record),
            statement_timeout_ms: o
                .statement_timeout_ms
                .or(file.statement_timeout_ms)
                .unwrap_or(0),
            idle_in_transaction_timeout_ms: o
                .idle_in_transaction_timeout_ms
                .or(file.idle_in_transaction_timeout_ms)
                .unwrap_or(0),
            commit_timeout_ms: o
                .commit_timeout_ms
                .or(file.commit_timeout_ms)
                .unwrap_or(DEFAULT_COMMIT_TIMEOUT_MS),
            commit_journal: o.commit_journal.or(file.commit_journal).unwrap_or(true),
            journal_uploads: o
                .journal_uploads
                .or(file.journal_uploads)
                .unwrap_or(crate::store::DEFAULT_JOURNAL_UPLOADS),
            statement_memory_limit_mb: o
                .statement_memory_limit_mb
                .or(file.statement_memory_limit_mb)
                .unwrap_or(rocklake_core::mem::DEFAULT_STATEMENT_MEMORY_LIMIT >> 20),
            users: roles(file.users.unwrap_or_default())?,
        };
        s.validate()?;
        Ok(s)
    }

    fn validate(&self) -> Result<(), ConfigError> {
        address("listen", &self.listen)?;
        if let Some(m) = &self.metrics_listen {
            address("metrics_listen", m)?;
        }
        if self.user.is_empty() {
            return Err(ConfigError::Invalid {
                key: "user",
                value: String::new(),
                reason: "must not be empty".into(),
            });
        }
        if self.password.as_deref() == Some("") {
            return Err(ConfigError::Invalid {
                key: "password",
                value: String::new(),
                reason: "must not be empty (leave it out for a random one)".into(),
            });
        }
        if self.max_connections == 0 {
            return Err(ConfigError::Invalid {
                key: "max_connections",
                value: "0".into(),
                reason: "must be at least 1".into(),
            });
        }
        if self.statement_memory_limit_mb > u64::MAX >> 20 {
            return Err(ConfigError::Invalid {
                key: "statement_memory_limit_mb",
                value: self.statement_memory_limit_mb.to_string(),
                reason: "is more memory than a 64-bit address space holds".into(),
            });
        }
        if self.journal_uploads == 0 {
            return Err(ConfigError::Invalid {
                key: "journal_uploads",
                value: "0".into(),
                reason: "must be at least 1".into(),
            });
        }
        if self.max_statement_bytes < 1024 {
            return Err(ConfigError::Invalid {
                key: "max_statement_bytes",
                value: self.max_statement_bytes.to_string(),
                reason: "must be at least 1024".into(),
            });
        }
        match (&self.tls_cert, &self.tls_key) {
            (Some(_), None) | (None, Some(_)) => {
                return Err(ConfigError::Invalid {
                    key: if self.tls_cert.is_some() {
                        "tls_key"
                    } else {
                        "tls_cert"
                    },
                    value: String::new(),
                    reason: "tls_cert and tls_key must be given together".into(),
                })
            }
            (None, None) if self.tls_required => {
                return Err(ConfigError::Invalid {
                    key: "tls_required",
                    value: "true".into(),
                    reason: "needs tls_cert and tls_key".into(),
                })
            }
            _ => {}
        }
        if self.replica_poll_ms == 0 {
            return Err(ConfigError::Invalid {
                key: "replica_poll_ms",
                value: "0".into(),
                reason: "must be at least 1".into(),
            });
        }
        if self.commit_timeout_ms == 0 {
            return Err(ConfigError::Invalid {
                key: "commit_timeout_ms",
                value: "0".into(),
                reason: "must be at least 1".into(),
            });
        }
        let mut names = vec![self.user.as_str()];
        for r in &self.users {
            if names.contains(&r.name.as_str()) {
                return Err(ConfigError::Invalid {
                    key: "users.name",
                    value: r.name.clone(),
                    reason: "names a role twice (the main user included)".into(),
                });
            }
            names.push(&r.name);
        }
        if self.catalog.is_empty() {
            return Err(ConfigError::Invalid {
                key: "catalog",
                value: String::new(),
                reason: "must not be empty".into(),
            });
        }
        Ok(())
    }

    /// The listen address when it is a literal socket address (for the loopback checks).
    pub fn listen_addr(&self) -> Option<SocketAddr> {
        self.listen.parse().ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn precedence_is_flag_env_then_file_then_default() {
        let file: FileConfig = toml::from_str(
            "listen = \"127.0.0.1:7000\"\nuser = \"from_file\"\nmax_connections = 7\n",
        )
        .expect("toml");
        let o = Overrides {
            user: Some("from_flag".into()),
            ..Overrides::default()
        };
        let s = Settings::resolve(o, file).expect("valid");
        assert_eq!(s.user, "from_flag");
        assert_eq!(s.listen, "127.0.0.1:7000");
        assert_eq!(s.max_connections, 7);
        assert_eq!(s.catalog, DEFAULT_CATALOG);
        assert_eq!(s.auth, "scram");
        assert_eq!(s.journal_uploads, crate::store::DEFAULT_JOURNAL_UPLOADS);
        let file: FileConfig = toml::from_str("journal_uploads = 4\n").expect("toml");
        let s = Settings::resolve(Overrides::default(), file).expect("valid");
        assert_eq!(s.journal_uploads, 4);
        assert_eq!(s.statement_memory_limit_mb, 4096);
        let file: FileConfig = toml::from_str("statement_memory_limit_mb = 64\n").expect("toml");
        let s = Settings::resolve(Overrides::default(), file).expect("valid");
        assert_eq!(s.statement_memory_limit_mb, 64);
    }

    #[test]
    fn bad_values_name_their_key() {
        let bad = |file: &str| {
            let f: FileConfig = toml::from_str(file).expect("toml");
            Settings::resolve(Overrides::default(), f)
                .expect_err("must be rejected")
                .to_string()
        };
        assert!(bad("auth = \"kerberos\"").contains("invalid auth"));
        assert!(bad("listen = \"nowhere\"").contains("invalid listen"));
        assert!(bad("max_connections = 0").contains("invalid max_connections"));
        assert!(bad("journal_uploads = 0").contains("invalid journal_uploads"));
        assert!(bad("statement_memory_limit_mb = 17592186044416")
            .contains("invalid statement_memory_limit_mb"));
        assert!(bad("log_format = \"xml\"").contains("invalid log_format"));
        assert!(toml::from_str::<FileConfig>("no_such_key = 1").is_err());
    }
}
