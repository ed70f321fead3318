//! `rocklake`: the RockLake server binary.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::Context;
use clap::{Args, Parser, Subcommand, ValueEnum};
use rocklake::server::{self, random_password, AuthConfig, AuthMethod, ServerConfig};
use rocklake::service::{CatalogService, CoreKind, ServiceConfig, SystemClock};
use tokio::net::TcpListener;

#[derive(Parser, Debug)]
#[command(
    name = "rocklake",
    version,
    about = "DuckLake catalog server: speaks the PostgreSQL protocol, stores the catalog in SlateDB",
    args_conflicts_with_subcommands = true
)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
    /// Without a subcommand, `rocklake` runs `serve` with these options.
    #[command(flatten)]
    serve: ServeArgs,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Serve a catalog to DuckDB (the default).
    Serve(ServeArgs),
}

#[derive(Clone, Copy, Debug, ValueEnum)]
enum AuthArg {
    /// SCRAM-SHA-256 (PostgreSQL's default).
    Scram,
    /// MD5 challenge-response.
    Md5,
    /// Cleartext password (use only over trusted networks).
    Password,
    /// No authentication; only allowed on a loopback address.
    Trust,
}

impl From<AuthArg> for AuthMethod {
    fn from(a: AuthArg) -> Self {
        match a {
            AuthArg::Scram => AuthMethod::Scram,
            AuthArg::Md5 => AuthMethod::Md5,
            AuthArg::Password => AuthMethod::Password,
            AuthArg::Trust => AuthMethod::Trust,
        }
    }
}

/// Which build of the catalog core to run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum CoreArg {
    /// The core linked into this binary.
    Native,
    /// The core WebAssembly component, run with wasmtime.
    Wasm,
}

#[derive(Args, Debug, Clone)]
struct ServeArgs {
    /// Build of the catalog core: `wasm` (the component) or `native`. Default: `wasm` when the
    /// component file exists, else `native` with a warning.
    #[arg(long, env = "ROCKLAKE_CORE", value_enum)]
    core: Option<CoreArg>,
    /// The core component (.wasm). Default: `wasm32-unknown-unknown/release/rocklake_core.wasm` in
    /// the cargo target directory of this executable, or `rocklake_core.wasm` beside it.
    #[arg(long, env = "ROCKLAKE_COMPONENT")]
    component: Option<PathBuf>,
    /// Address to listen on.
    #[arg(long, env = "ROCKLAKE_LISTEN", default_value = "127.0.0.1:6543")]
    listen: String,
    /// Where the catalog lives: a local directory or a file://, s3://, gs://, az:// URL.
    #[arg(
        long,
        env = "ROCKLAKE_CATALOG",
        default_value = "./rocklake-data/catalog"
    )]
    catalog: String,
    /// The role clients log in as.
    #[arg(long, env = "ROCKLAKE_USER", default_value = "rocklake")]
    user: String,
    /// The role's password; a random one is generated when absent.
    #[arg(long, env = "ROCKLAKE_PASSWORD", hide_env_values = true)]
    password: Option<String>,
    /// Authentication method.
    #[arg(long, env = "ROCKLAKE_AUTH", value_enum, default_value = "scram")]
    auth: AuthArg,
    /// DATA_PATH suggested to DuckDB for the lake's data files.
    #[arg(
        long,
        env = "ROCKLAKE_DATA_PATH",
        default_value = "./rocklake-data/files/"
    )]
    data_path: String,
    /// Largest statement (or COPY data message) accepted, in bytes; larger ones fail with 54000.
    #[arg(long, env = "ROCKLAKE_MAX_STATEMENT_BYTES", default_value_t = 64 << 20)]
    max_statement_bytes: usize,
    /// Maximum number of concurrent client connections.
    #[arg(long, env = "ROCKLAKE_MAX_CONNECTIONS", default_value_t = 100)]
    max_connections: usize,
}

fn main() -> anyhow::Result<()> {
    let cli = Cli::parse();
    // Logs go to stderr: stdout carries only the ATTACH line that scripts parse.
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info")),
        )
        .with_writer(std::io::stderr)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .init();
    let args = match cli.command {
        Some(Command::Serve(args)) => args,
        None => cli.serve,
    };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    runtime.block_on(serve(args))
}

/// The core to run. An explicit `--core wasm` requires the component; without `--core` the
/// component is used when it exists, so a checkout without a wasm build still serves (natively).
fn core_kind(core: Option<CoreArg>, component: Option<PathBuf>) -> anyhow::Result<CoreKind> {
    let path = component.or_else(rocklake::component::default_component_path);
    match (core, path) {
        (Some(CoreArg::Native), _) => Ok(CoreKind::Native),
        (Some(CoreArg::Wasm), Some(path)) => Ok(CoreKind::Wasm(path)),
        (Some(CoreArg::Wasm), None) => anyhow::bail!(
            "--core wasm: no component found; set --component or ROCKLAKE_COMPONENT (build it with `{}`)",
            rocklake::component::BUILD_COMMAND
        ),
        (None, Some(path)) if path.is_file() => Ok(CoreKind::Wasm(path)),
        (None, path) => {
            let at = path.map(|p| p.display().to_string()).unwrap_or_else(|| "(unknown)".into());
            tracing::warn!(
                "core component not found at {at}: running the native core (build the component with `{}`)",
                rocklake::component::BUILD_COMMAND
            );
            Ok(CoreKind::Native)
        }
    }
}

/// Where the catalog is stored, normalised to a URL (plain paths become absolute file:// URLs).
fn catalog_url(raw: &str) -> anyhow::Result<url::Url> {
    if raw.contains("://") {
        let url = url::Url::parse(raw).with_context(|| format!("invalid catalog URL {raw:?}"))?;
        match url.scheme() {
            "file" | "s3" | "gs" | "az" | "azure" => Ok(url),
            other => anyhow::bail!("unsupported catalog URL scheme {other:?} (use a path, file://, s3://, gs:// or az://)"),
        }
    } else {
        let path =
            std::path::absolute(raw).with_context(|| format!("invalid catalog path {raw:?}"))?;
        url::Url::from_directory_path(&path)
            .map_err(|()| anyhow::anyhow!("cannot turn {} into a file URL", path.display()))
    }
}

/// The DATA_PATH to suggest: URLs as given, local paths absolute with a trailing slash.
fn data_path(raw: &str) -> anyhow::Result<String> {
    if raw.contains("://") {
        return Ok(raw.to_owned());
    }
    let path: PathBuf = std::path::absolute(Path::new(raw))
        .with_context(|| format!("invalid data path {raw:?}"))?;
    let mut s = path.to_string_lossy().into_owned();
    if !s.ends_with(std::path::MAIN_SEPARATOR) {
        s.push(std::path::MAIN_SEPARATOR);
    }
    Ok(s)
}

/// A libpq connection-string value, quoted when needed (`'…'` with `\` escapes).
fn conninfo_value(v: &str) -> String {
    if !v.is_empty()
        && !v
            .chars()
            .any(|c| c.is_whitespace() || c == '\'' || c == '\\')
    {
        return v.to_owned();
    }
    let mut out = String::from("'");
    for c in v.chars() {
        if c == '\'' || c == '\\' {
            out.push('\\');
        }
        out.push(c);
    }
    out.push('\'');
    out
}

fn sql_literal(v: &str) -> String {
    format!("'{}'", v.replace('\'', "''"))
}

/// The host clients should connect to: the bound address, or loopback when bound to all.
fn advertised_host(addr: SocketAddr) -> IpAddr {
    match addr.ip() {
        IpAddr::V4(ip) if ip.is_unspecified() => IpAddr::V4(Ipv4Addr::LOCALHOST),
        IpAddr::V6(ip) if ip.is_unspecified() => IpAddr::V6(Ipv6Addr::LOCALHOST),
        ip => ip,
    }
}

async fn shutdown_signal() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{signal, SignalKind};
        match signal(SignalKind::terminate()) {
            Ok(mut term) => {
                tokio::select! {
                    _ = tokio::signal::ctrl_c() => {}
                    _ = term.recv() => {}
                }
            }
            Err(e) => {
                tracing::warn!("cannot listen for SIGTERM: {e}");
                let _ = tokio::signal::ctrl_c().await;
            }
        }
    }
    #[cfg(not(unix))]
    {
        let _ = tokio::signal::ctrl_c().await;
    }
    tracing::info!("shutdown requested");
}

async fn serve(args: ServeArgs) -> anyhow::Result<()> {
    let method = AuthMethod::from(args.auth);
    let catalog = catalog_url(&args.catalog)?;
    let data_path = data_path(&args.data_path)?;
    let password = match args.password.clone() {
        Some(p) => p,
        None => {
            tracing::info!("no --password given: generated a random one (see the ATTACH line)");
            random_password(24)?
        }
    };
    let listener = TcpListener::bind(&args.listen)
        .await
        .with_context(|| format!("cannot listen on {}", args.listen))?;
    let local = listener.local_addr()?;
    if method == AuthMethod::Trust && !local.ip().is_loopback() {
        anyhow::bail!("refusing --auth trust on non-loopback address {local}: anyone who can reach it could use the catalog");
    }

    // ---- SERVICE CONSTRUCTION: the single call site. ----
    let core = core_kind(args.core, args.component.clone())?;
    tracing::info!(%catalog, %data_path, ?core, "opening catalog");
    let service: Arc<CatalogService> = CatalogService::open_with_core(
        &ServiceConfig {
            catalog: catalog.to_string(),
        },
        core,
        Box::new(SystemClock),
    )
    .await
    .with_context(|| format!("cannot open catalog {catalog}"))?;
    tracing::info!(
        epoch = service.epoch(),
        "catalog open; this instance is the writer"
    );
    // ---- end of service construction ----

    let mut config = ServerConfig::new(AuthConfig::new(
        method,
        args.user.clone(),
        password.clone(),
    )?);
    config.max_message_bytes = args.max_statement_bytes;
    config.max_connections = args.max_connections;

    let host = advertised_host(local);
    let conninfo = format!(
        "ducklake:postgres:host={} port={} dbname=lake user={} password={}",
        host,
        local.port(),
        conninfo_value(&args.user),
        conninfo_value(&password),
    );
    {
        use std::io::Write;
        let mut stdout = std::io::stdout().lock();
        writeln!(
            stdout,
            "ATTACH {} AS lake (DATA_PATH {});",
            sql_literal(&conninfo),
            sql_literal(&data_path)
        )?;
        stdout.flush()?;
    }
    tracing::info!(listen = %local, auth = ?method, user = %args.user, "RockLake listening");

    server::serve_backend(listener, service.clone(), config, shutdown_signal()).await?;
    // All sessions are closed by now: flush and close the store.
    service.shutdown().await?;
    drop(service);
    tracing::info!("stopped");
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn conninfo_quoting() {
        assert_eq!(conninfo_value("abc"), "abc");
        assert_eq!(conninfo_value("a b"), "'a b'");
        assert_eq!(conninfo_value("it's\\"), "'it\\'s\\\\'");
        assert_eq!(conninfo_value(""), "''");
        assert_eq!(sql_literal("a'b"), "'a''b'");
    }

    #[test]
    fn catalog_urls() {
        assert_eq!(
            catalog_url("s3://bucket/cat")
                .map(|u| u.scheme().to_owned())
                .ok()
                .as_deref(),
            Some("s3")
        );
        assert!(catalog_url("ftp://x/y").is_err());
        let local = catalog_url("./x").map(|u| u.scheme().to_owned()).ok();
        assert_eq!(local.as_deref(), Some("file"));
    }
}
