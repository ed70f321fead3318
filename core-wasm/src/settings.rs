//! Session settings (PostgreSQL's GUCs): the values SET, RESET, SHOW, `current_setting()` and
//! `pg_settings` see, with PostgreSQL's rules — a SET inside a transaction that rolls back is
//! undone, SET LOCAL lasts until the transaction ends, RESET returns to the value the session
//! started with (server default or the client's start-up parameter). Values are validated and
//! shown as PostgreSQL 15 does (`5000` → `5s`). Settings whose behaviour RockLake does not
//! implement (time zones other than UTC, non-ISO date styles, encodings other than UTF8) are
//! refused rather than accepted and ignored.

use std::borrow::Cow;
use std::collections::{BTreeMap, BTreeSet};

use sqlparser::ast;

use crate::engine::{Isolation, Txn};
use crate::error::SqlError;
use crate::pgcatalog::{SERVER_VERSION, SERVER_VERSION_NUM};

pub(crate) struct Setting {
    pub(crate) name: &'static str,
    pub(crate) setting: &'static str,
    pub(crate) unit: Option<&'static str>,
    pub(crate) category: &'static str,
    pub(crate) short_desc: &'static str,
    pub(crate) context: &'static str,
    pub(crate) vartype: &'static str,
    pub(crate) min_max: Option<(&'static str, &'static str)>,
    pub(crate) enumvals: &'static [&'static str],
}

const fn s(
    name: &'static str,
    setting: &'static str,
    category: &'static str,
    short_desc: &'static str,
    context: &'static str,
    vartype: &'static str,
) -> Setting {
    Setting {
        name,
        setting,
        unit: None,
        category,
        short_desc,
        context,
        vartype,
        min_max: None,
        enumvals: &[],
    }
}

const CLIENT_LOCALE: &str = "Client Connection Defaults / Locale and Formatting";
const CLIENT_STMT: &str = "Client Connection Defaults / Statement Behavior";
const PRESET: &str = "Preset Options";
const CONN: &str = "Connections and Authentication / Connection Settings";
const PLANNER_METHOD: &str = "Query Tuning / Planner Method Configuration";
const PLANNER_COST: &str = "Query Tuning / Planner Cost Constants";
const PLANNER_OTHER: &str = "Query Tuning / Other Planner Options";
const MEMORY: &str = "Resource Usage / Memory";
const COMPAT_PREVIOUS: &str = "Version and Platform Compatibility / Previous PostgreSQL Versions";

/// A planner method switch (`enable_seqscan`, …): RockLake has no planner to steer, so its
/// answers are the same either way, as PostgreSQL's are.
const fn planner_switch(name: &'static str, short_desc: &'static str) -> Setting {
    s(name, "on", PLANNER_METHOD, short_desc, "user", "bool")
}

/// A planner cost constant (`random_page_cost`, …), with PostgreSQL's range.
const fn planner_cost(
    name: &'static str,
    setting: &'static str,
    short_desc: &'static str,
) -> Setting {
    Setting {
        min_max: Some(("0", "1.79769e+308")),
        ..s(name, setting, PLANNER_COST, short_desc, "user", "real")
    }
}

/// A realistic subset of PostgreSQL 15's settings, with the values a fresh session sees.
const ISOLATION_LEVELS: &[&str] = &[
    "serializable",
    "repeatable read",
    "read committed",
    "read uncommitted",
];

pub(crate) const SETTINGS: &[Setting] = &[
    s(
        "application_name",
        "",
        "Reporting and Logging / What to Log",
        "Sets the application name to be reported in statistics and logs.",
        "user",
        "string",
    ),
    Setting {
        min_max: Some(("8192", "8192")),
        ..s(
            "block_size",
            "8192",
            PRESET,
            "Shows the size of a disk block.",
            "internal",
            "integer",
        )
    },
    Setting {
        enumvals: &["escape", "hex"],
        ..s(
            "bytea_output",
            "hex",
            CLIENT_STMT,
            "Sets the output format for bytea.",
            "user",
            "enum",
        )
    },
    s(
        "check_function_bodies",
        "on",
        CLIENT_STMT,
        "Check routine bodies during CREATE FUNCTION and CREATE PROCEDURE.",
        "user",
        "bool",
    ),
    Setting {
        enumvals: &[
            "debug5", "debug4", "debug3", "debug2", "debug1", "log", "notice", "warning", "error",
        ],
        ..s(
            "client_min_messages",
            "notice",
            CLIENT_STMT,
            "Sets the message levels that are sent to the client.",
            "user",
            "enum",
        )
    },
    s(
        "client_encoding",
        "UTF8",
        CLIENT_LOCALE,
        "Sets the client's character set encoding.",
        "user",
        "string",
    ),
    s(
        "DateStyle",
        "ISO, MDY",
        CLIENT_LOCALE,
        "Sets the display format for date and time values.",
        "user",
        "string",
    ),
    Setting {
        unit: Some("ms"),
        min_max: Some(("1", "2147483647")),
        ..s(
            "deadlock_timeout",
            "1000",
            "Lock Management",
            "Sets the time to wait on a lock before checking for deadlock.",
            "superuser",
            "integer",
        )
    },
    Setting {
        min_max: Some(("1", "10000")),
        ..s(
            "default_statistics_target",
            "100",
            PLANNER_OTHER,
            "Sets the default statistics target.",
            "user",
            "integer",
        )
    },
    s(
        "default_table_access_method",
        "heap",
        CLIENT_STMT,
        "Sets the default table access method for new tables.",
        "user",
        "string",
    ),
    s(
        "default_tablespace",
        "",
        CLIENT_STMT,
        "Sets the default tablespace to create tables and indexes in.",
        "user",
        "string",
    ),
    Setting {
        enumvals: ISOLATION_LEVELS,
        ..s(
            "default_transaction_isolation",
            "read committed",
            CLIENT_STMT,
            "Sets the transaction isolation level of each new transaction.",
            "user",
            "enum",
        )
    },
    s(
        "default_transaction_read_only",
        "off",
        CLIENT_STMT,
        "Sets the default read-only status of new transactions.",
        "user",
        "bool",
    ),
    Setting {
        unit: Some("8kB"),
        min_max: Some(("1", "2147483647")),
        ..s(
            "effective_cache_size",
            "524288",
            PLANNER_COST,
            "Sets the planner's assumption about the total size of the data caches.",
            "user",
            "integer",
        )
    },
    planner_switch("enable_bitmapscan", "Enables the planner's use of bitmap-scan plans."),
    planner_switch("enable_hashagg", "Enables the planner's use of hashed aggregation plans."),
    planner_switch("enable_hashjoin", "Enables the planner's use of hash join plans."),
    planner_switch("enable_indexonlyscan", "Enables the planner's use of index-only-scan plans."),
    planner_switch("enable_indexscan", "Enables the planner's use of index-scan plans."),
    planner_switch("enable_mergejoin", "Enables the planner's use of merge join plans."),
    planner_switch("enable_nestloop", "Enables the planner's use of nested-loop join plans."),
    planner_switch("enable_seqscan", "Enables the planner's use of sequential-scan plans."),
    planner_switch("enable_sort", "Enables the planner's use of explicit sort steps."),
    Setting {
        min_max: Some(("-15", "3")),
        ..s(
            "extra_float_digits",
            "1",
            CLIENT_LOCALE,
            "Sets the number of digits displayed for floating-point values.",
            "user",
            "integer",
        )
    },
    Setting {
        unit: Some("ms"),
        min_max: Some(("0", "2147483647")),
        ..s(
            "idle_in_transaction_session_timeout",
            "0",
            CLIENT_STMT,
            "Sets the maximum allowed idle time between queries, when in a transaction.",
            "user",
            "integer",
        )
    },
    s(
        "in_hot_standby",
        "off",
        PRESET,
        "Shows whether hot standby is currently active.",
        "internal",
        "bool",
    ),
    s(
        "integer_datetimes",
        "on",
        PRESET,
        "Shows whether datetimes are integer based.",
        "internal",
        "bool",
    ),
    Setting {
        enumvals: &["postgres", "postgres_verbose", "sql_standard", "iso_8601"],
        ..s(
            "IntervalStyle",
            "postgres",
            CLIENT_LOCALE,
            "Sets the display format for interval values.",
            "user",
            "enum",
        )
    },
    s(
        "is_superuser",
        "on",
        PRESET,
        "Shows whether the current user is a superuser.",
        "internal",
        "bool",
    ),
    s(
        "jit",
        "on",
        PLANNER_OTHER,
        "Allow JIT compilation.",
        "user",
        "bool",
    ),
    s(
        "lc_collate",
        "C.UTF-8",
        PRESET,
        "Shows the collation order locale.",
        "internal",
        "string",
    ),
    s(
        "lc_ctype",
        "C.UTF-8",
        PRESET,
        "Shows the character classification and case conversion locale.",
        "internal",
        "string",
    ),
    s(
        "listen_addresses",
        "*",
        CONN,
        "Sets the host name or IP address(es) to listen to.",
        "postmaster",
        "string",
    ),
    Setting {
        unit: Some("ms"),
        min_max: Some(("0", "2147483647")),
        ..s(
            "lock_timeout",
            "0",
            CLIENT_STMT,
            "Sets the maximum allowed duration of any wait for a lock.",
            "user",
            "integer",
        )
    },
    Setting {
        unit: Some("kB"),
        min_max: Some(("1024", "2147483647")),
        ..s(
            "maintenance_work_mem",
            "65536",
            MEMORY,
            "Sets the maximum memory to be used for maintenance operations.",
            "user",
            "integer",
        )
    },
    Setting {
        min_max: Some(("1", "262143")),
        ..s(
            "max_connections",
            "100",
            CONN,
            "Sets the maximum number of concurrent connections.",
            "postmaster",
            "integer",
        )
    },
    Setting {
        min_max: Some(("63", "63")),
        ..s(
            "max_identifier_length",
            "63",
            PRESET,
            "Shows the maximum identifier length.",
            "internal",
            "integer",
        )
    },
    Setting {
        min_max: Some(("32", "32")),
        ..s(
            "max_index_keys",
            "32",
            PRESET,
            "Shows the maximum number of index keys.",
            "internal",
            "integer",
        )
    },
    Setting {
        min_max: Some(("0", "1024")),
        ..s(
            "max_parallel_workers_per_gather",
            "2",
            "Resource Usage / Asynchronous Behavior",
            "Sets the maximum number of parallel processes per executor node.",
            "user",
            "integer",
        )
    },
    Setting {
        enumvals: &["md5", "scram-sha-256"],
        ..s(
            "password_encryption",
            "scram-sha-256",
            "Connections and Authentication / Authentication",
            "Chooses the algorithm for encrypting passwords.",
            "user",
            "enum",
        )
    },
    Setting {
        min_max: Some(("1", "65535")),
        ..s(
            "port",
            "5432",
            CONN,
            "Sets the TCP port the server listens on.",
            "postmaster",
            "integer",
        )
    },
    s(
        "quote_all_identifiers",
        "off",
        COMPAT_PREVIOUS,
        "When generating SQL fragments, quote all identifiers.",
        "user",
        "bool",
    ),
    planner_cost(
        "random_page_cost",
        "4",
        "Sets the planner's estimate of the cost of a nonsequentially fetched disk page.",
    ),
    s(
        "row_security",
        "on",
        CLIENT_STMT,
        "Enable row security.",
        "user",
        "bool",
    ),
    s(
        "search_path",
        "\"$user\", public",
        CLIENT_STMT,
        "Sets the schema search order for names that are not schema-qualified.",
        "user",
        "string",
    ),
    planner_cost(
        "seq_page_cost",
        "1",
        "Sets the planner's estimate of the cost of a sequentially fetched disk page.",
    ),
    s(
        "server_encoding",
        "UTF8",
        PRESET,
        "Shows the server (database) character set encoding.",
        "internal",
        "string",
    ),
    s(
        "server_version",
        SERVER_VERSION,
        PRESET,
        "Shows the server version.",
        "internal",
        "string",
    ),
    Setting {
        min_max: Some(("150018", "150018")),
        ..s(
            "server_version_num",
            SERVER_VERSION_NUM,
            PRESET,
            "Shows the server version as an integer.",
            "internal",
            "integer",
        )
    },
    s(
        "session_authorization",
        "",
        "Developer Options",
        "Sets the session user name.",
        "user",
        "string",
    ),
    Setting {
        unit: Some("8kB"),
        min_max: Some(("16", "1073741823")),
        ..s(
            "shared_buffers",
            "16384",
            "Resource Usage / Memory",
            "Sets the number of shared memory buffers used by the server.",
            "postmaster",
            "integer",
        )
    },
    s(
        "ssl",
        "off",
        "Connections and Authentication / SSL",
        "Enables SSL connections.",
        "sighup",
        "bool",
    ),
    s(
        "standard_conforming_strings",
        "on",
        "Version and Platform Compatibility / Previous PostgreSQL Versions",
        "Causes '...' strings to treat backslashes literally.",
        "user",
        "bool",
    ),
    // RockLake makes every commit durable before it is acknowledged: `off` and the other
    // levels are accepted and commits stay synchronous (never weaker than asked).
    Setting {
        enumvals: &["local", "remote_write", "remote_apply", "on", "off"],
        ..s(
            "synchronous_commit",
            "on",
            "Write-Ahead Log / Settings",
            "Sets the current transaction's synchronization level.",
            "user",
            "enum",
        )
    },
    s(
        "synchronize_seqscans",
        "on",
        COMPAT_PREVIOUS,
        "Enable synchronized sequential scans.",
        "user",
        "bool",
    ),
    Setting {
        unit: Some("ms"),
        min_max: Some(("0", "2147483647")),
        ..s(
            "statement_timeout",
            "0",
            CLIENT_STMT,
            "Sets the maximum allowed duration of any statement.",
            "user",
            "integer",
        )
    },
    Setting {
        unit: Some("8kB"),
        min_max: Some(("100", "1073741823")),
        ..s(
            "temp_buffers",
            "1024",
            MEMORY,
            "Sets the maximum number of temporary buffers used by each session.",
            "user",
            "integer",
        )
    },
    s(
        "TimeZone",
        "Etc/UTC",
        CLIENT_LOCALE,
        "Sets the time zone for displaying and interpreting time stamps.",
        "user",
        "string",
    ),
    s(
        "timezone_abbreviations",
        "Default",
        CLIENT_LOCALE,
        "Selects a file of time zone abbreviations.",
        "user",
        "string",
    ),
    Setting {
        enumvals: ISOLATION_LEVELS,
        ..s(
            "transaction_isolation",
            "read committed",
            CLIENT_STMT,
            "Sets the current transaction's isolation level.",
            "user",
            "enum",
        )
    },
    s(
        "transaction_read_only",
        "off",
        CLIENT_STMT,
        "Sets the current transaction's read-only status.",
        "user",
        "bool",
    ),
    Setting {
        enumvals: &["minimal", "replica", "logical"],
        ..s(
            "wal_level",
            "replica",
            "Write-Ahead Log / Settings",
            "Sets the level of information written to the WAL.",
            "postmaster",
            "enum",
        )
    },
    Setting {
        unit: Some("kB"),
        min_max: Some(("64", "2147483647")),
        ..s(
            "work_mem",
            "4096",
            MEMORY,
            "Sets the maximum memory to be used for query workspaces.",
            "user",
            "integer",
        )
    },
    Setting {
        enumvals: &["content", "document"],
        ..s(
            "xmloption",
            "content",
            CLIENT_STMT,
            "Sets whether XML data in implicit parsing and serialization operations is to be considered as documents or content fragments.",
            "user",
            "enum",
        )
    },
];

/// Settings PostgreSQL 15 reports with ParameterStatus (GUC_REPORT), in the order it sends them
/// at start-up.
pub const REPORTED: &[&str] = &[
    "application_name",
    "client_encoding",
    "DateStyle",
    "default_transaction_read_only",
    "in_hot_standby",
    "integer_datetimes",
    "IntervalStyle",
    "is_superuser",
    "server_encoding",
    "server_version",
    "session_authorization",
    "standard_conforming_strings",
    "TimeZone",
];

/// Settings the host enforces with its own timers; their changes are reported to it as well.
pub const HOST_ENFORCED: &[&str] = &["statement_timeout", "idle_in_transaction_session_timeout"];

/// Setting name → stored value (in the setting's base unit, as `pg_settings.setting` shows it);
/// a custom placeholder's by its name in lower case.
type Values = BTreeMap<Cow<'static, str>, String>;

/// What a custom placeholder (`myapp.x`) is: a string any role may set, which SHOW ALL and
/// `pg_settings` do not list (PostgreSQL's `GUC_NO_SHOW_ALL` placeholders).
const CUSTOM: Setting = s("", "", "Customized Options", "", "user", "string");

/// A setting a statement names: one RockLake knows, or a custom placeholder.
#[derive(Clone)]
pub(crate) struct Param {
    def: &'static Setting,
    /// Where its values are kept: the built-in's name, or the placeholder's in lower case.
    key: Cow<'static, str>,
}

impl Param {
    fn known(def: &'static Setting) -> Param {
        Param {
            def,
            key: Cow::Borrowed(def.name),
        }
    }

    fn is_custom(&self) -> bool {
        std::ptr::eq(self.def, &CUSTOM)
    }

    /// The name SHOW heads its column with.
    pub(crate) fn name(&self) -> &str {
        &self.key
    }
}

/// PostgreSQL's `valid_custom_variable_name`: two or more simple identifiers joined by dots.
fn valid_custom_name(name: &str) -> bool {
    let parts: Vec<&str> = name.split('.').collect();
    parts.len() >= 2
        && parts.iter().all(|p| {
            let mut chars = p.chars();
            chars
                .next()
                .is_some_and(|c| c.is_alphabetic() || c == '_' || !c.is_ascii())
                && chars.all(|c| c.is_alphanumeric() || c == '_' || c == '$' || !c.is_ascii())
        })
}

/// The setting `name` names for reading: a built-in, or a custom name (which exists only
/// once the session has set it).
fn resolve(name: &str) -> Result<Param, SqlError> {
    match find(name) {
        Some(def) => Ok(Param::known(def)),
        None if valid_custom_name(name) => Ok(Param {
            def: &CUSTOM,
            key: Cow::Owned(name.to_lowercase()),
        }),
        None => Err(SqlError::UndefinedParameter {
            name: name.to_ascii_lowercase(),
        }),
    }
}

/// As [`resolve`], for SET, RESET and `set_config`: a dotted name that is not a valid custom
/// name is 42602.
fn resolve_for_set(name: &str) -> Result<Param, SqlError> {
    resolve(name).map_err(|e| {
        if name.contains('.') {
            SqlError::InvalidCustomParameterName {
                name: name.to_string(),
            }
        } else {
            e
        }
    })
}

/// The definition of `name` (case-insensitive).
pub(crate) fn find(name: &str) -> Option<&'static Setting> {
    SETTINGS.iter().find(|s| s.name.eq_ignore_ascii_case(name))
}

/// The setting SHOW's multi-word spellings (`SHOW TIME ZONE`) name; PostgreSQL's grammar
/// knows them, `current_setting('time zone')` does not.
pub fn multi_word_name(words: &str) -> Option<&'static str> {
    match words.to_ascii_lowercase().as_str() {
        "time zone" => Some("TimeZone"),
        "transaction isolation level" => Some("transaction_isolation"),
        "session authorization" => Some("session_authorization"),
        _ => None,
    }
}

fn lookup(name: &str) -> Result<&'static Setting, SqlError> {
    find(name).ok_or_else(|| SqlError::UndefinedParameter {
        name: name.to_ascii_lowercase(),
    })
}

/// The settings of one session.
#[derive(Debug, Default)]
pub struct SessionSettings {
    /// What RESET returns to: the server's defaults, then the client's start-up parameters.
    reset: Values,
    /// Values of committed SETs.
    values: Values,
    /// The values of [`REPORTED`] and [`HOST_ENFORCED`] the host last heard.
    reported: BTreeMap<&'static str, String>,
    /// A SET ran since the last report, or its transaction is still open.
    touched: bool,
    /// The role may only read: writes fail with 25006 whatever the session sets.
    pub read_only_role: bool,
    /// Custom placeholders the session has set: they exist from then on (a rolled-back SET
    /// leaves one with the empty string), as in PostgreSQL.
    placeholders: BTreeSet<String>,
}

/// SETs made inside a transaction: kept or dropped with it (and returned to a savepoint's by
/// `ROLLBACK TO SAVEPOINT`).
#[derive(Debug, Default, Clone)]
pub struct TxnSettings {
    /// The session values as this transaction changed them (`None`: unchanged).
    values: Option<Values>,
    /// SET LOCAL values, dropped when the transaction ends.
    local: Values,
}

impl SessionSettings {
    /// A session's settings from `given` (server defaults, then the client's start-up
    /// parameters, later ones winning), each checked as SET would check it.
    pub fn new(given: &[(String, String)], read_only_role: bool) -> Result<Self, SqlError> {
        let mut s = SessionSettings {
            read_only_role,
            ..Default::default()
        };
        for (name, value) in given {
            let p = resolve_for_set(name)?;
            if p.is_custom() {
                s.placeholders.insert(p.key.to_string());
                s.reset.insert(p.key, value.clone());
                continue;
            }
            let def = p.def;
            check_changeable(def)?;
            if def.name == "default_transaction_read_only" && read_only_role {
                continue;
            }
            let current = s.reset.get(def.name).map_or(def.setting, String::as_str);
            let stored = parse_value(def, value, current)?;
            s.reset.insert(p.key, stored);
        }
        Ok(s)
    }

    /// Keeps the SETs of a committed transaction.
    pub fn commit(&mut self, t: TxnSettings) {
        if let Some(v) = t.values {
            self.values = v;
        }
    }

    /// The changed values of [`REPORTED`] and [`HOST_ENFORCED`] settings since the last call
    /// (all of them on the first call).
    pub fn report(
        &mut self,
        view_txn: Option<&Txn>,
        user: &str,
        hot_standby: bool,
    ) -> Vec<(String, String)> {
        if !self.touched && !self.reported.is_empty() {
            return Vec::new();
        }
        let mut changed = Vec::new();
        let mut now = Vec::new();
        {
            let view = View {
                sess: self,
                txn: view_txn,
                user,
                hot_standby,
            };
            for name in REPORTED.iter().chain(HOST_ENFORCED) {
                if let Some(def) = find(name) {
                    now.push((def.name, view.display(def)));
                }
            }
        }
        for (name, value) in now {
            if self.reported.get(name) != Some(&value) {
                changed.push((name.to_string(), value.clone()));
                self.reported.insert(name, value);
            }
        }
        // Keep looking while a transaction holding SETs is open: its end changes the values.
        self.touched =
            view_txn.is_some_and(|t| t.settings.values.is_some() || !t.settings.local.is_empty());
        changed
    }
}

/// Reads settings as one statement of a session sees them.
#[derive(Clone, Copy)]
pub struct View<'a> {
    pub sess: &'a SessionSettings,
    pub txn: Option<&'a Txn>,
    pub user: &'a str,
    /// A read replica: PostgreSQL's hot standby.
    pub hot_standby: bool,
}

fn on_off(b: bool) -> String {
    if b { "on" } else { "off" }.to_string()
}

impl View<'_> {
    /// The stored value (base units), as `pg_settings.setting` shows it.
    pub(crate) fn stored(&self, def: &'static Setting) -> String {
        let role_ro = self.sess.read_only_role;
        match def.name {
            "session_authorization" => return self.user.to_string(),
            "in_hot_standby" => return on_off(self.hot_standby),
            "is_superuser" => return on_off(!role_ro),
            "default_transaction_read_only" if role_ro => return on_off(true),
            "transaction_read_only" => {
                let ro = match self.txn {
                    Some(t) => t.read_only,
                    None => self.value("default_transaction_read_only") == "on",
                };
                return on_off(ro || role_ro || self.hot_standby);
            }
            "transaction_isolation" => {
                return match self.txn {
                    Some(t) => isolation_name(t.isolation).to_string(),
                    None => self.value("default_transaction_isolation"),
                }
            }
            _ => {}
        }
        self.plain(def)
    }

    fn plain(&self, def: &'static Setting) -> String {
        self.value_of(def.name)
            .unwrap_or_else(|| def.setting.to_string())
    }

    /// [`Self::value_of`] without a copy.
    fn value_ref(&self, key: &str) -> Option<&str> {
        if let Some(v) = self.txn.and_then(|t| t.settings.local.get(key)) {
            return Some(v);
        }
        let values = self
            .txn
            .and_then(|t| t.settings.values.as_ref())
            .unwrap_or(&self.sess.values);
        values
            .get(key)
            .or_else(|| self.sess.reset.get(key))
            .map(String::as_str)
    }

    /// The value SET, SET LOCAL or the start-up parameters gave `key`, if any.
    fn value_of(&self, key: &str) -> Option<String> {
        self.value_ref(key).map(str::to_string)
    }

    /// The session's time zone (`SET LOCAL` included).
    pub fn time_zone(&self) -> Result<std::rc::Rc<crate::tz::Zone>, SqlError> {
        crate::tz::for_setting(&self.plain(lookup("TimeZone")?))
    }

    /// What RESET would return to (`pg_settings.reset_val`).
    pub(crate) fn reset_value(&self, def: &'static Setting) -> String {
        self.sess
            .reset
            .get(def.name)
            .cloned()
            .unwrap_or_else(|| def.setting.to_string())
    }

    /// The stored value of a setting known to exist.
    fn value(&self, name: &str) -> String {
        find(name).map(|d| self.stored(d)).unwrap_or_default()
    }

    /// The value as SHOW and `current_setting()` show it.
    pub(crate) fn display(&self, def: &'static Setting) -> String {
        display(def, &self.stored(def))
    }

    /// SHOW / `current_setting(name)`: the setting's name as SHOW heads it, and its value. A
    /// custom placeholder the session never set is 42704.
    pub fn show(&self, name: &str) -> Result<(Cow<'static, str>, String), SqlError> {
        let p = resolve(name)?;
        if !p.is_custom() {
            return Ok((p.key, self.display(p.def)));
        }
        match self.value_of(&p.key) {
            Some(v) => Ok((p.key, v)),
            None if self.sess.placeholders.contains(p.key.as_ref()) => Ok((p.key, String::new())),
            None => Err(SqlError::UndefinedParameter {
                name: p.key.into_owned(),
            }),
        }
    }

    /// `quote_all_identifiers` (`SET LOCAL` included): every identifier the server writes is
    /// quoted (`pgcatalog::quote_ident`).
    pub fn quote_all_identifiers(&self) -> bool {
        // Read on every statement: no lookup in the table of settings, no copy.
        self.value_ref("quote_all_identifiers") == Some("on")
    }

    /// The isolation level and access mode a new transaction gets.
    pub fn transaction_defaults(&self) -> (Isolation, bool) {
        let isolation = match self.value("default_transaction_isolation").as_str() {
            "repeatable read" => Isolation::RepeatableRead,
            "serializable" => Isolation::Serializable,
            _ => Isolation::ReadCommitted,
        };
        (
            isolation,
            self.value("default_transaction_read_only") == "on",
        )
    }

    /// The schemas of `search_path` in order (`$user` replaced by the user name), whether
    /// they exist or not.
    pub fn search_path(&self) -> Vec<String> {
        split_list(&self.value("search_path"))
            .into_iter()
            .map(|s| {
                if s == "$user" {
                    self.user.to_string()
                } else {
                    s
                }
            })
            .collect()
    }
}

pub fn isolation_name(i: Isolation) -> &'static str {
    match i {
        Isolation::ReadCommitted => "read committed",
        Isolation::RepeatableRead => "repeatable read",
        Isolation::Serializable => "serializable",
    }
}

/// Splits a list setting (`"$user", public`) into names: unquoted ones lowercased, quoted ones
/// unescaped.
fn split_list(s: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut chars = s.chars().peekable();
    loop {
        while chars.next_if(|c| c.is_whitespace()).is_some() {}
        let Some(&c) = chars.peek() else { break };
        let mut name = String::new();
        if c == '"' {
            chars.next();
            while let Some(c) = chars.next() {
                if c == '"' {
                    if chars.next_if_eq(&'"').is_some() {
                        name.push('"');
                    } else {
                        break;
                    }
                } else {
                    name.push(c);
                }
            }
            while chars.next_if(|c| *c != ',').is_some() {}
        } else {
            while let Some(c) = chars.next_if(|c| *c != ',') {
                name.push(c);
            }
            // Unquoted names fold like identifiers: ASCII letters only.
            name = name.trim().to_ascii_lowercase();
        }
        out.push(name);
        if chars.next().is_none() {
            break;
        }
    }
    out
}

fn check_changeable(def: &Setting) -> Result<(), SqlError> {
    let message = match def.context {
        "user" | "superuser" => return Ok(()),
        "postmaster" => format!(
            "parameter \"{}\" cannot be changed without restarting the server",
            def.name
        ),
        "sighup" => format!("parameter \"{}\" cannot be changed now", def.name),
        _ => format!("parameter \"{}\" cannot be changed", def.name),
    };
    Err(SqlError::CantChangeParameter { message })
}

fn invalid(def: &Setting, raw: &str, hint: Option<&str>) -> SqlError {
    SqlError::BadParameterValue {
        message: format!("invalid value for parameter \"{}\": \"{raw}\"", def.name),
        hint: hint.map(str::to_string),
    }
}

const TIME_UNITS: &[(&str, f64)] = &[
    ("us", 0.001),
    ("ms", 1.0),
    ("s", 1000.0),
    ("min", 60_000.0),
    ("h", 3_600_000.0),
    ("d", 86_400_000.0),
];
const MEMORY_UNITS: &[(&str, f64)] = &[
    ("B", 1.0 / 1024.0),
    ("kB", 1.0),
    ("MB", 1024.0),
    ("GB", 1024.0 * 1024.0),
    ("TB", 1024.0 * 1024.0 * 1024.0),
];

/// Checks `raw` for `def` as PostgreSQL's SET does and returns the stored form. `current` is
/// the stored value now (DateStyle keeps the part not given).
pub(crate) fn parse_value(def: &Setting, raw: &str, current: &str) -> Result<String, SqlError> {
    match def.name {
        "TimeZone" => return parse_time_zone(def, raw),
        "client_encoding" => {
            // PostgreSQL's clean_encoding_name: only letters and digits count, so asyncpg's
            // `'utf-8'` (quotes included) names UTF8.
            let name: String = raw
                .chars()
                .filter(char::is_ascii_alphanumeric)
                .map(|c| c.to_ascii_lowercase())
                .collect();
            return match name.as_str() {
                "utf8" | "unicode" => Ok("UTF8".into()),
                _ => Err(invalid(def, raw, Some("RockLake speaks UTF8 only."))),
            };
        }
        // PostgreSQL 15's pg_clean_ascii: every byte outside printable ASCII becomes `?`.
        "application_name" => {
            return Ok(raw
                .bytes()
                .map(|b| {
                    if (32..=126).contains(&b) {
                        b as char
                    } else {
                        '?'
                    }
                })
                .collect())
        }
        "DateStyle" => return parse_date_style(def, raw, current),
        "IntervalStyle" if !raw.eq_ignore_ascii_case("postgres") => {
            return Err(invalid(
                def,
                raw,
                Some("RockLake formats intervals in the postgres style only."),
            ))
        }
        // Hidden values: `info` (above `log`), `debug` (is `debug2`).
        "client_min_messages" => match raw.trim().to_ascii_lowercase().as_str() {
            "info" => return Ok("info".into()),
            "debug" => return Ok("debug2".into()),
            _ => {}
        },
        // Its boolean spellings are on and off (hidden enum values in PostgreSQL).
        "synchronous_commit" => match raw.trim().to_ascii_lowercase().as_str() {
            "true" | "yes" | "1" => return Ok(on_off(true)),
            "false" | "no" | "0" => return Ok(on_off(false)),
            _ => {}
        },
        "bytea_output" if !raw.eq_ignore_ascii_case("hex") => {
            return Err(invalid(def, raw, Some("RockLake sends bytea in hex only.")))
        }
        _ => {}
    }
    match def.vartype {
        "bool" => parse_bool(raw)
            .map(on_off)
            .ok_or_else(|| SqlError::BadParameterValue {
                message: format!("parameter \"{}\" requires a Boolean value", def.name),
                hint: None,
            }),
        "enum" => def
            .enumvals
            .iter()
            .find(|v| v.eq_ignore_ascii_case(raw.trim()))
            .map(|v| v.to_string())
            .ok_or_else(|| {
                invalid(
                    def,
                    raw,
                    Some(&format!("Available values: {}.", def.enumvals.join(", "))),
                )
            }),
        "integer" => {
            let v = parse_int(def, raw)?;
            if def.name == "extra_float_digits" && v < 1 {
                return Err(invalid(
                    def,
                    raw,
                    Some("RockLake prints floating-point values in their shortest exact form (extra_float_digits 1 to 3)."),
                ));
            }
            Ok(v.to_string())
        }
        "real" => {
            let v: f64 = raw.trim().parse().map_err(|_| invalid(def, raw, None))?;
            let (lo, hi) = def.min_max.unwrap_or(("0", "0"));
            let in_range = lo.parse::<f64>().is_ok_and(|lo| v >= lo)
                && hi.parse::<f64>().is_ok_and(|hi| v <= hi);
            if !in_range {
                return Err(SqlError::BadParameterValue {
                    message: format!(
                        "{v} is outside the valid range for parameter \"{}\" ({lo} .. {hi})",
                        def.name
                    ),
                    hint: None,
                });
            }
            Ok(format_g(v))
        }
        _ => Ok(raw.to_string()),
    }
}

/// A real setting as PostgreSQL shows it: C's `%g` (six significant digits, an exponent
/// below 1e-4 and from 1e6 on).
fn format_g(v: f64) -> String {
    if v == 0.0 || !v.is_finite() {
        return v.to_string();
    }
    let sci = format!("{v:.5e}");
    let (mantissa, exp) = sci.split_once('e').unwrap_or((&sci, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let trim = |m: &str| {
        if m.contains('.') {
            m.trim_end_matches('0').trim_end_matches('.').to_string()
        } else {
            m.to_string()
        }
    };
    if !(-4..6).contains(&exp) {
        let sign = if exp < 0 { '-' } else { '+' };
        format!("{}e{sign}{:02}", trim(mantissa), exp.abs())
    } else {
        let decimals = usize::try_from(5 - exp).unwrap_or(0);
        trim(&format!("{v:.decimals$}"))
    }
}

fn parse_bool(raw: &str) -> Option<bool> {
    let v = raw.trim().to_ascii_lowercase();
    let prefix_of = |word: &str| !v.is_empty() && word.starts_with(v.as_str());
    match v.as_str() {
        "1" => Some(true),
        "0" => Some(false),
        "on" => Some(true),
        "of" | "off" => Some(false),
        _ if prefix_of("true") || prefix_of("yes") => Some(true),
        _ if prefix_of("false") || prefix_of("no") => Some(false),
        _ => None,
    }
}

/// An integer setting: a number with an optional unit (PostgreSQL's `parse_int`), converted to
/// the setting's base unit, rounded, and checked against its range.
fn parse_int(def: &Setting, raw: &str) -> Result<i64, SqlError> {
    let text = raw.trim();
    let split = text
        .find(|c: char| !(c.is_ascii_digit() || matches!(c, '.' | '-' | '+' | 'e' | 'E')))
        .unwrap_or(text.len());
    let (num, unit) = (&text[..split], text[split..].trim());
    let (units, hint) = match def.unit {
        Some("ms") => (
            TIME_UNITS,
            "Valid units for this parameter are \"us\", \"ms\", \"s\", \"min\", \"h\", and \"d\".",
        ),
        Some("kB") | Some("8kB") => (
            MEMORY_UNITS,
            "Valid units for this parameter are \"B\", \"kB\", \"MB\", \"GB\", and \"TB\".",
        ),
        _ => (&[][..], ""),
    };
    let number: f64 = num.parse().map_err(|_| invalid(def, raw, None))?;
    let value = if unit.is_empty() {
        if !num.contains(['.', 'e', 'E']) && num.parse::<i32>().is_err() {
            return Err(invalid(def, raw, Some("Value exceeds integer range.")));
        }
        number
    } else {
        let (_, factor) = units
            .iter()
            .find(|(u, _)| *u == unit)
            .ok_or_else(|| invalid(def, raw, (!hint.is_empty()).then_some(hint)))?;
        let base = if def.unit == Some("8kB") { 8.0 } else { 1.0 };
        number * factor / base
    };
    let value = value.round();
    let (min, max) = def
        .min_max
        .and_then(|(a, z)| Some((a.parse::<i64>().ok()?, z.parse::<i64>().ok()?)))
        .unwrap_or((i32::MIN.into(), i32::MAX.into()));
    if !(min as f64..=max as f64).contains(&value) {
        let unit = def.unit.map(|u| format!(" {u}")).unwrap_or_default();
        return Err(SqlError::BadParameterValue {
            message: format!(
                "{value}{unit} is outside the valid range for parameter \"{}\" ({min} .. {max})",
                def.name
            ),
            hint: None,
        });
    }
    Ok(value as i64)
}

/// `TimeZone` as PostgreSQL's `check_timezone` reads it: a number of hours east of UTC, an
/// `INTERVAL '…'` (from `SET TIME ZONE INTERVAL …`), or a zone name ([`crate::tz::by_name`]).
/// The stored form is the zone's name as `SHOW` prints it.
fn parse_time_zone(def: &Setting, raw: &str) -> Result<String, SqlError> {
    let out_of_range = || SqlError::BadParameterDetail {
        message: format!("invalid value for parameter \"{}\": \"{raw}\"", def.name),
        detail: "UTC timezone offset is out of range.".into(),
    };
    // `strtod` skips leading white space.
    if let Some(hours) = raw
        .trim_start()
        .parse::<f64>()
        .ok()
        .filter(|h| h.is_finite())
    {
        // Seconds east, truncated as PostgreSQL's conversion to a whole number of seconds.
        let east = (hours * 3600.0) as i64;
        let east = i32::try_from(east).map_err(|_| out_of_range())?;
        return crate::tz::fixed(east)
            .map(|z| z.name().to_string())
            .map_err(|_| out_of_range());
    }
    if let Some(text) = raw
        .get(..10)
        .filter(|p| p.eq_ignore_ascii_case("interval '"))
        .and_then(|_| raw[10..].strip_suffix('\''))
    {
        let iv = crate::types::parse_interval(text).ok_or_else(|| invalid(def, raw, None))?;
        let unit = if iv.months != 0 {
            Some("months")
        } else if iv.days != 0 {
            Some("days")
        } else {
            None
        };
        if let Some(unit) = unit {
            return Err(SqlError::BadParameterDetail {
                message: format!("invalid value for parameter \"{}\": \"{raw}\"", def.name),
                detail: format!("Cannot specify {unit} in time zone interval."),
            });
        }
        let east = i32::try_from(iv.micros / 1_000_000).map_err(|_| out_of_range())?;
        return crate::tz::fixed(east)
            .map(|z| z.name().to_string())
            .map_err(|_| out_of_range());
    }
    crate::tz::by_name(raw)
        .map(|z| z.name().to_string())
        .map_err(|_| invalid(def, raw, None))
}

/// `SET TIME ZONE INTERVAL '…' [qualifier]` as PostgreSQL flattens it: `INTERVAL '<value>'`,
/// the value cut to the qualifier's last field.
fn time_zone_interval(iv: &ast::Interval) -> Result<String, SqlError> {
    let text = match iv.value.as_ref() {
        ast::Expr::Value(v) => match &v.value {
            ast::Value::SingleQuotedString(s) => s.clone(),
            _ => return Err(set_syntax(&iv.value)),
        },
        other => return Err(set_syntax(other)),
    };
    let unit =
        |f: &Option<ast::DateTimeField>| f.as_ref().map(|f| f.to_string().to_ascii_lowercase());
    let text = match unit(&iv.leading_field) {
        Some(u) if text.trim().parse::<f64>().is_ok() => format!("{text} {u}"),
        _ => text,
    };
    let bad = || SqlError::InvalidDatetimeText {
        type_name: "interval".into(),
        input: text.clone(),
    };
    let mut value = crate::types::parse_interval(&text).ok_or_else(bad)?;
    let step = match unit(&iv.last_field)
        .or_else(|| unit(&iv.leading_field))
        .as_deref()
    {
        Some("hour") => 3_600_000_000,
        Some("minute") => 60_000_000,
        _ => 1,
    };
    value.micros -= value.micros % step;
    let shown = crate::types::format_text(
        &crate::types::Value::Interval(value),
        crate::types::PgType::Interval,
    )
    .unwrap_or_default();
    Ok(format!("INTERVAL '{shown}'"))
}

/// `ISO, MDY`: only the ISO output style; any field order.
fn parse_date_style(def: &Setting, raw: &str, current: &str) -> Result<String, SqlError> {
    let mut order = current
        .split(',')
        .nth(1)
        .map(str::trim)
        .unwrap_or("MDY")
        .to_string();
    for part in raw.split(',').map(|p| p.trim().to_ascii_lowercase()) {
        match part.as_str() {
            "iso" => {}
            "mdy" | "us" | "noneuropean" | "non-european" => order = "MDY".into(),
            "dmy" | "euro" | "european" => order = "DMY".into(),
            "ymd" => order = "YMD".into(),
            "postgres" | "sql" | "german" => {
                return Err(invalid(
                    def,
                    raw,
                    Some("RockLake formats dates in the ISO style only."),
                ))
            }
            _ => return Err(invalid(def, raw, None)),
        }
    }
    Ok(format!("ISO, {order}"))
}

/// A stored value as SHOW shows it (`5000` ms → `5s`, `4096` kB → `4MB`).
pub(crate) fn display(def: &Setting, stored: &str) -> String {
    let Ok(v) = stored.parse::<i64>() else {
        return stored.to_string();
    };
    let (units, factor): (&[(&str, i64)], i64) = match def.unit {
        Some("ms") => (
            &[
                ("d", 86_400_000),
                ("h", 3_600_000),
                ("min", 60_000),
                ("s", 1000),
                ("ms", 1),
            ],
            1,
        ),
        Some("kB") => (
            &[("TB", 1 << 30), ("GB", 1 << 20), ("MB", 1 << 10), ("kB", 1)],
            1,
        ),
        Some("8kB") => (
            &[("TB", 1 << 30), ("GB", 1 << 20), ("MB", 1 << 10), ("kB", 1)],
            8,
        ),
        _ => return stored.to_string(),
    };
    let v = v * factor;
    if v == 0 {
        return "0".into();
    }
    units
        .iter()
        .find(|(_, f)| v % f == 0)
        .map(|(u, f)| format!("{}{u}", v / f))
        .unwrap_or_else(|| stored.to_string())
}

/// A host-enforced timeout's shown value (`5s`, `0`) in milliseconds; `None` when off or
/// unreadable.
pub fn timeout_millis(shown: &str) -> Option<u64> {
    let text = shown.trim();
    let split = text
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(text.len());
    let n: u64 = text[..split].parse().ok()?;
    let factor = match &text[split..] {
        "" | "ms" => 1,
        "s" => 1000,
        "min" => 60_000,
        "h" => 3_600_000,
        "d" => 86_400_000,
        _ => return None,
    };
    (n > 0).then_some(n * factor)
}

// ------------------------------------------------------------------ SET / RESET

/// The text of SET's value list as PostgreSQL flattens it; `None` for DEFAULT.
fn flatten(p: &Param, values: &[ast::Expr]) -> Result<Option<String>, SqlError> {
    let mut parts = Vec::with_capacity(values.len());
    for e in values {
        let text = match e {
            ast::Expr::Identifier(id)
                if id.quote_style.is_none()
                    && id.value.eq_ignore_ascii_case("default")
                    && values.len() == 1 =>
            {
                return Ok(None);
            }
            ast::Expr::Identifier(id) => crate::query::ident(id),
            ast::Expr::Value(v) => match &v.value {
                ast::Value::SingleQuotedString(s)
                | ast::Value::DoubleQuotedString(s)
                | ast::Value::EscapedStringLiteral(s) => s.clone(),
                // Any string constant, as in PostgreSQL's grammar: `SET x = $$…$$`.
                ast::Value::DollarQuotedString(d) => d.value.clone(),
                ast::Value::Number(n, _) => n.to_string(),
                // A placeholder keeps the word as written; a built-in reads it as on/off.
                ast::Value::Boolean(b) if p.is_custom() => b.to_string(),
                ast::Value::Boolean(b) => on_off(*b),
                _ => return Err(set_syntax(e)),
            },
            ast::Expr::UnaryOp {
                op: ast::UnaryOperator::Minus,
                expr,
            } => match expr.as_ref() {
                ast::Expr::Value(v) => match &v.value {
                    ast::Value::Number(n, _) => format!("-{n}"),
                    _ => return Err(set_syntax(e)),
                },
                _ => return Err(set_syntax(e)),
            },
            _ => return Err(set_syntax(e)),
        };
        parts.push(text);
    }
    match p.def.name {
        "search_path" => Ok(Some(
            parts
                .iter()
                // Kept as SET writes it: under quote_all_identifiers every name is quoted,
                // as PostgreSQL's flatten_set_variable_args quotes them.
                .map(|p| crate::pgcatalog::quote_ident(p))
                .collect::<Vec<_>>()
                .join(", "),
        )),
        "DateStyle" => Ok(Some(parts.join(", "))),
        _ if parts.len() == 1 => Ok(parts.pop()),
        _ => Err(SqlError::BadParameterValue {
            message: format!("SET {} takes only one argument", p.key),
            hint: None,
        }),
    }
}

fn set_syntax(e: &ast::Expr) -> SqlError {
    SqlError::Syntax {
        message: format!("syntax error at or near \"{e}\""),
    }
}

/// Where a SET puts its value.
#[derive(Clone, Copy, PartialEq)]
enum Scope {
    Session,
    Local,
}

/// Runs SET (every PostgreSQL form RockLake supports).
pub(crate) fn set(cx: &mut crate::exec::Cx<'_>, set: &ast::Set) -> Result<(), SqlError> {
    match set {
        ast::Set::SingleAssignment {
            scope,
            hivevar: false,
            variable,
            values,
        } => {
            let scope = match scope {
                Some(ast::ContextModifier::Local) => Scope::Local,
                _ => Scope::Session,
            };
            warn_outside_block(cx, scope == Scope::Local, "SET LOCAL");
            let name = crate::query::object_name(variable).join(".");
            let p = resolve_for_set(&name)?;
            let value = flatten(&p, values)?;
            assign(cx, &p, value, scope)
        }
        ast::Set::SetTimeZone { local, value } => {
            let p = Param::known(lookup("TimeZone")?);
            let scope = if *local { Scope::Local } else { Scope::Session };
            warn_outside_block(cx, *local, "SET LOCAL");
            let value = match value {
                ast::Expr::Identifier(id)
                    if id.quote_style.is_none()
                        && (id.value.eq_ignore_ascii_case("local")
                            || id.value.eq_ignore_ascii_case("default")) =>
                {
                    None
                }
                ast::Expr::Interval(iv) => Some(time_zone_interval(iv)?),
                e => flatten(&p, std::slice::from_ref(e))?,
            };
            assign(cx, &p, value, scope)
        }
        ast::Set::SetNames { charset_name, .. } => {
            let p = Param::known(lookup("client_encoding")?);
            assign(cx, &p, Some(charset_name.value.clone()), Scope::Session)
        }
        ast::Set::SetTransaction {
            modes,
            snapshot: None,
            session,
        } => {
            let prefix = if *session { "default_" } else { "" };
            warn_outside_block(cx, !*session, "SET TRANSACTION");
            for m in modes {
                let (name, value) = match m {
                    ast::TransactionMode::IsolationLevel(l) => (
                        "transaction_isolation",
                        match l {
                            ast::TransactionIsolationLevel::ReadUncommitted => "read uncommitted",
                            ast::TransactionIsolationLevel::ReadCommitted => "read committed",
                            ast::TransactionIsolationLevel::RepeatableRead => "repeatable read",
                            _ => "serializable",
                        },
                    ),
                    ast::TransactionMode::AccessMode(a) => (
                        "transaction_read_only",
                        if matches!(a, ast::TransactionAccessMode::ReadOnly) {
                            "on"
                        } else {
                            "off"
                        },
                    ),
                };
                let p = Param::known(lookup(&format!("{prefix}{name}"))?);
                assign(cx, &p, Some(value.to_string()), Scope::Session)?;
            }
            Ok(())
        }
        ast::Set::SetTransaction {
            modes,
            snapshot: Some(id),
            session: false,
        } if modes.is_empty() => {
            // Outside a block PostgreSQL warns, then imports into the statement's own
            // transaction (refused when that is READ COMMITTED).
            warn_outside_block(cx, true, "SET TRANSACTION");
            crate::exec::import_snapshot(cx, id)
        }
        ast::Set::SetRole { role_name, .. } => match role_name {
            Some(r) if r.value != cx.sess.user => Err(SqlError::InsufficientPrivilege {
                message: format!("permission denied to set role \"{}\"", r.value),
            }),
            _ => Ok(()),
        },
        ast::Set::SetSessionAuthorization(_) => Err(SqlError::FeatureNotSupported {
            what: "SET SESSION AUTHORIZATION".into(),
        }),
        other => Err(SqlError::Syntax {
            message: format!("syntax error at or near \"{other}\""),
        }),
    }
}

/// RESET name / RESET ALL.
pub(crate) fn reset(cx: &mut crate::exec::Cx<'_>, name: Option<&str>) -> Result<(), SqlError> {
    let Some(name) = name else {
        cx.ensure_txn();
        let sess = &mut *cx.sess;
        if let Some(t) = sess.txn.as_mut() {
            t.settings.values = Some(Values::new());
            t.settings.local.clear();
        }
        sess.settings.touched = true;
        return Ok(());
    };
    let p = resolve_for_set(name)?;
    warn_outside_block(cx, p.key == "transaction_isolation", "RESET TRANSACTION");
    assign(cx, &p, None, Scope::Session)
}

/// PostgreSQL's `WarnNoTransactionBlock`: `what` (when `applies`) lasts only until its
/// transaction ends, which outside a block is at once.
fn warn_outside_block(cx: &mut crate::exec::Cx<'_>, applies: bool, what: &'static str) {
    if applies && !cx.sess.in_transaction_block() {
        cx.sess
            .notice(crate::error::Notice::OutsideTransactionBlock { what });
    }
}

/// Sets (`Some`) or resets (`None`) one setting in the session's current transaction.
fn assign(
    cx: &mut crate::exec::Cx<'_>,
    p: &Param,
    value: Option<String>,
    scope: Scope,
) -> Result<(), SqlError> {
    let def = p.def;
    check_changeable(def)?;
    let hot_standby = cx.st.read_only;
    cx.ensure_txn();
    let sess = &mut *cx.sess;
    let role_ro = sess.settings.read_only_role;
    let Some(txn) = sess.txn.as_mut() else {
        return Err(SqlError::Internal {
            message: "SET outside a transaction".into(),
        });
    };
    let current = if p.is_custom() {
        String::new()
    } else {
        View {
            sess: &sess.settings,
            txn: Some(txn),
            user: &sess.user,
            hot_standby,
        }
        .stored(def)
    };
    let stored = match value {
        Some(v) => Some(parse_value(def, &v, &current)?),
        None => None,
    };
    let wants_read_write = stored.as_deref() == Some("off");
    match def.name {
        // Properties of the running transaction, not saved values.
        "transaction_read_only" => {
            if wants_read_write {
                refuse_read_write(hot_standby, role_ro, &sess.user)?;
                if txn.read_only && !txn.savepoints.is_empty() {
                    return Err(SqlError::ActiveTransaction {
                        message:
                            "cannot set transaction read-write mode inside a read-only transaction"
                                .into(),
                    });
                }
                if txn.read_only && txn.queried {
                    return Err(SqlError::ActiveTransaction {
                        message: "transaction read-write mode must be set before any query".into(),
                    });
                }
            }
            txn.read_only = stored.as_deref() == Some("on");
            return Ok(());
        }
        "transaction_isolation" => {
            let level = stored.unwrap_or_else(|| "read committed".into());
            let isolation = match level.as_str() {
                "repeatable read" => Isolation::RepeatableRead,
                "serializable" => Isolation::Serializable,
                _ => Isolation::ReadCommitted,
            };
            if txn.queried && isolation != txn.isolation {
                return Err(SqlError::ActiveTransaction {
                    message: "SET TRANSACTION ISOLATION LEVEL must be called before any query"
                        .into(),
                });
            }
            if !txn.savepoints.is_empty() && isolation != txn.isolation {
                return Err(SqlError::ActiveTransaction {
                    message:
                        "SET TRANSACTION ISOLATION LEVEL must not be called in a subtransaction"
                            .into(),
                });
            }
            txn.isolation = isolation;
            return Ok(());
        }
        "default_transaction_read_only" if wants_read_write && role_ro => {
            refuse_read_write(false, true, &sess.user)?;
        }
        _ => {}
    }
    let settings = &mut sess.settings;
    if p.is_custom() {
        settings.placeholders.insert(p.key.to_string());
    }
    let key = p.key.clone();
    match scope {
        Scope::Local => {
            let v = match stored {
                Some(v) => v,
                None => settings
                    .reset
                    .get(key.as_ref())
                    .cloned()
                    .unwrap_or_else(|| def.setting.to_string()),
            };
            txn.settings.local.insert(key, v);
        }
        Scope::Session => {
            let values = txn
                .settings
                .values
                .get_or_insert_with(|| settings.values.clone());
            txn.settings.local.remove(key.as_ref());
            match stored {
                Some(v) => values.insert(key, v),
                None => values.remove(key.as_ref()),
            };
        }
    }
    settings.touched = true;
    Ok(())
}

/// A `set_config(name, value, is_local)` met while a query is evaluated. The query only reads
/// the session, so the call is checked (like SET) and answered at once, and
/// [`apply_set_config`] makes it take effect when the statement's rows are complete.
#[derive(Clone)]
pub(crate) struct SetConfig {
    param: Param,
    value: Option<String>,
    local: bool,
    /// The value as SHOW shows it once applied (what `current_setting` answers for the rest
    /// of the statement).
    pub(crate) shown: String,
}

impl SetConfig {
    pub(crate) fn name(&self) -> &str {
        self.param.name()
    }
}

impl SetConfig {
    /// Checks the call and returns it with the value `set_config` answers: the new value as
    /// SHOW will show it (a NULL value resets, answering the value RESET returns to).
    pub(crate) fn check(
        view: &View<'_>,
        name: &str,
        value: Option<String>,
        local: bool,
    ) -> Result<(SetConfig, String), SqlError> {
        let param = resolve_for_set(name)?;
        let def = param.def;
        check_changeable(def)?;
        let shown = match (&value, param.is_custom()) {
            (Some(v), true) => v.clone(),
            (None, true) => view
                .sess
                .reset
                .get(param.key.as_ref())
                .cloned()
                .unwrap_or_default(),
            (Some(v), false) => display(def, &parse_value(def, v, &view.stored(def))?),
            (None, false) => display(def, &view.reset_value(def)),
        };
        let call = SetConfig {
            param,
            value,
            local,
            shown: shown.clone(),
        };
        Ok((call, shown))
    }
}

/// Makes a checked `set_config` call take effect, as SET (`is_local` false) or SET LOCAL.
pub(crate) fn apply_set_config(
    cx: &mut crate::exec::Cx<'_>,
    call: SetConfig,
) -> Result<(), SqlError> {
    let scope = if call.local {
        Scope::Local
    } else {
        Scope::Session
    };
    assign(cx, &call.param, call.value, scope)
}

/// SHOW ALL: every setting RockLake knows, by name as PostgreSQL sorts them (ignoring case),
/// with its value as SHOW shows it and its description.
pub(crate) fn show_all(view: &View<'_>) -> Vec<[String; 3]> {
    let mut all: Vec<&'static Setting> = SETTINGS.iter().collect();
    all.sort_by_key(|d| d.name.to_ascii_lowercase());
    all.into_iter()
        .map(|d| {
            [
                d.name.to_string(),
                view.display(d),
                d.short_desc.to_string(),
            ]
        })
        .collect()
}

/// A read replica or a read-only role asking for read-write mode.
pub(crate) fn refuse_read_write(
    hot_standby: bool,
    role_ro: bool,
    user: &str,
) -> Result<(), SqlError> {
    if hot_standby {
        return Err(SqlError::FeatureNotSupported {
            what: "transaction read-write mode on a read replica".into(),
        });
    }
    if role_ro {
        return Err(SqlError::InsufficientPrivilege {
            message: format!("permission denied to set transaction read-write mode: role \"{user}\" is read-only"),
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn encoding_names_count_only_letters_and_digits() {
        let def = find("client_encoding").expect("known");
        for name in ["UTF8", "utf-8", "'utf-8'", "Utf_8", "unicode", " UTF 8 "] {
            assert_eq!(
                parse_value(def, name, "UTF8").expect(name),
                "UTF8",
                "{name}"
            );
        }
        for bad in ["LATIN1", "utf16", "", "u"] {
            assert!(parse_value(def, bad, "UTF8").is_err(), "{bad}");
        }
    }

    #[test]
    fn time_values_parse_and_show_as_postgresql() {
        let def = find("statement_timeout").expect("known");
        let shown = |raw: &str| display(def, &parse_value(def, raw, "0").expect(raw));
        assert_eq!(shown("1500"), "1500ms");
        assert_eq!(shown("1.5s"), "1500ms");
        assert_eq!(shown("60s"), "1min");
        assert_eq!(shown("3600000"), "1h");
        assert_eq!(shown("100us"), "0");
        assert_eq!(shown("1d"), "1d");
        assert_eq!(timeout_millis("1min"), Some(60_000));
        assert_eq!(timeout_millis("0"), None);
        for bad in ["abc", "5 parsecs", "-1", "2147483648"] {
            assert!(parse_value(def, bad, "0").is_err(), "{bad}");
        }
        let work_mem = find("work_mem").expect("known");
        assert_eq!(
            display(
                work_mem,
                &parse_value(work_mem, "64MB", "4096").expect("64MB")
            ),
            "64MB"
        );
        assert_eq!(
            display(find("shared_buffers").expect("known"), "16384"),
            "128MB"
        );
    }

    #[test]
    fn time_zones_are_read_as_postgres_reads_them() {
        let def = find("TimeZone").expect("known");
        let stored = |raw: &str| parse_value(def, raw, "Etc/UTC");
        assert_eq!(stored("etc/utc").expect("utc"), "Etc/UTC");
        assert_eq!(stored("europe/berlin").expect("zone"), "Europe/Berlin");
        assert_eq!(stored("-8").expect("hours"), "<-08>+08");
        assert_eq!(stored("5.5").expect("hours"), "<+05:30>-05:30");
        assert_eq!(stored("1e1").expect("hours"), "<+10>-10");
        assert_eq!(
            stored("INTERVAL '-07:00:01'").expect("interval"),
            "<-07:00:01>+07:00:01"
        );
        let e = stored("INTERVAL '1 day'").expect_err("days").to_pg();
        assert_eq!(
            (e.code.as_str(), e.detail.as_deref()),
            ("22023", Some("Cannot specify days in time zone interval."))
        );
        let e = stored("170").expect_err("a week").to_pg();
        assert_eq!(
            e.detail.as_deref(),
            Some("UTC timezone offset is out of range.")
        );
        let e = stored("Mars/Olympus").expect_err("unknown").to_pg();
        assert_eq!(
            (e.code.as_str(), e.message.as_str(), e.hint),
            (
                "22023",
                "invalid value for parameter \"TimeZone\": \"Mars/Olympus\"",
                None
            )
        );
    }

    #[test]
    fn search_path_lists_round_trip() {
        assert_eq!(split_list("\"$user\", public"), ["$user", "public"]);
        assert_eq!(split_list("a, \"x y\", \"Q\""), ["a", "x y", "Q"]);
        let quote_ident = crate::pgcatalog::quote_ident;
        assert_eq!(quote_ident("a,b"), "\"a,b\"");
        assert_eq!(quote_ident("a$b"), "\"a$b\"");
        assert_eq!(quote_ident("select"), "\"select\"");
        assert_eq!(quote_ident("public"), "public");
    }

    #[test]
    fn bools_accept_postgresql_spellings() {
        for (raw, v) in [
            ("on", true),
            ("OFF", false),
            ("t", true),
            ("ye", true),
            ("0", false),
            ("n", false),
        ] {
            assert_eq!(parse_bool(raw), Some(v), "{raw}");
        }
        assert_eq!(parse_bool("maybe"), None);
        assert_eq!(parse_bool("o"), None);
    }
}
