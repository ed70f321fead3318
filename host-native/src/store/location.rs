//! Turning a catalog URL into an object store plus the SlateDB root path inside it.

use std::path::{Path as FsPath, PathBuf};
use std::sync::Arc;

use object_store::local::LocalFileSystem;
use object_store::path::Path;
use object_store::ObjectStore;
use url::Url;

use super::StoreError;

/// Where a catalog lives, resolved.
pub(crate) struct Location {
    pub(crate) store: Arc<dyn ObjectStore>,
    /// SlateDB's root inside `store`.
    pub(crate) root: Path,
    /// The URL as given, for messages.
    pub(crate) display: String,
    /// Whether PUTs may carry object attributes (the local directory refuses them with
    /// `NotImplemented`, and SlateDB then repeats the PUT without them).
    pub(crate) attributes: bool,
    /// The catalog's directory when the store is the local filesystem (where the commit
    /// journal lives).
    pub(crate) local_dir: Option<PathBuf>,
}

/// Resolves `url`: a plain filesystem path or `file:///dir` (local), or `s3://bucket/prefix`,
/// `gs://bucket/prefix`, `az://container/prefix` (also the other spellings object_store parses).
/// Remote stores are configured from the environment the way object_store's `from_env`
/// builders are (`AWS_*`, `GOOGLE_*`, `AZURE_*`), so e.g. `AWS_ENDPOINT` and
/// `AWS_ALLOW_HTTP=true` point S3 at MinIO.
pub(crate) fn resolve(url: &str, create_if_missing: bool) -> Result<Location, StoreError> {
    let display = url.to_string();
    let invalid = |message: String| StoreError::Invalid { message };
    if url.is_empty() {
        return Err(invalid("empty catalog location".into()));
    }
    // A Windows drive letter or a bare path has no "scheme://"; treat it as a local directory.
    if !url.contains("://") {
        return local(FsPath::new(url), create_if_missing, display);
    }
    let parsed = Url::parse(url).map_err(|e| invalid(format!("bad catalog URL {url:?}: {e}")))?;
    if parsed.scheme() == "file" {
        let dir = parsed
            .to_file_path()
            .map_err(|()| invalid(format!("bad file URL {url:?}: not an absolute local path")))?;
        return local(&dir, create_if_missing, display);
    }
    if parsed.scheme() == "memory" {
        // Handy for tests of callers; never durable, so say so in the name. One store per
        // host name in this process, so a test can open a catalog twice (two writers, a
        // reopen) without a server.
        return Ok(Location {
            store: memory_store(parsed.host_str().unwrap_or_default()),
            root: Path::from(parsed.path().trim_start_matches('/')),
            display,
            attributes: true,
            local_dir: None,
        });
    }
    let prefixes: &[&str] = match parsed.scheme() {
        "s3" | "s3a" => &["AWS_"],
        "gs" => &["GOOGLE_", "GCS_"],
        "az" | "adl" | "azure" | "abfs" | "abfss" => &["AZURE_"],
        // https:// URLs may name any of the three; let the builder ignore what it does not know.
        "http" | "https" => &["AWS_", "GOOGLE_", "GCS_", "AZURE_"],
        other => {
            return Err(invalid(format!(
                "unsupported catalog URL scheme {other:?} in {url:?}"
            )))
        }
    };
    // Only pass variables of the store's own family: parse_url_opts matches keys loosely
    // (e.g. a generic `ENDPOINT` variable would otherwise configure S3).
    let env = std::env::vars()
        .filter(|(k, _)| prefixes.iter().any(|p| k.starts_with(p)))
        .map(|(k, v)| (k.to_ascii_lowercase(), v));
    let (store, root) = object_store::parse_url_opts(&parsed, env)
        .map_err(|e| invalid(format!("cannot configure object store for {url:?}: {e}")))?;
    Ok(Location {
        store: Arc::from(store),
        root,
        display,
        attributes: true,
        local_dir: None,
    })
}

/// A local directory. object_store's `LocalFileSystem` does not fsync by default (neither the
/// file nor the directory after its atomic rename/link), so a power loss could lose a commit
/// that was acknowledged. Since 0.14 it can: `with_fsync(true)` makes every put `sync_all` the
/// staged file, publish it by rename (overwrite) or hard link (create-if-absent, which SlateDB
/// uses for WAL fencing), and then fsync the parent directory (plus any directories it had to
/// create). We always enable it; `parse_url_opts` would build an unsynced store for `file://`.
fn local(dir: &FsPath, create_if_missing: bool, display: String) -> Result<Location, StoreError> {
    let dir: PathBuf = dir.to_path_buf();
    if !dir.exists() {
        if !create_if_missing {
            return Err(StoreError::NotFound { location: display });
        }
        std::fs::create_dir_all(&dir).map_err(|e| StoreError::Unavailable {
            message: format!("cannot create catalog directory {}: {e}", dir.display()),
            transient: false,
        })?;
        // Make the new directory entry itself durable.
        if let Some(parent) = dir.parent().filter(|p| !p.as_os_str().is_empty()) {
            sync_dir(parent).map_err(|e| StoreError::Unavailable {
                message: format!("cannot fsync {}: {e}", parent.display()),
                transient: false,
            })?;
        }
    } else if !dir.is_dir() {
        return Err(StoreError::Invalid {
            message: format!("catalog location {} is not a directory", dir.display()),
        });
    }
    let fs = LocalFileSystem::new_with_prefix(&dir)
        .map_err(|e| StoreError::Invalid {
            message: format!("cannot use {} as catalog directory: {e}", dir.display()),
        })?
        .with_fsync(true);
    Ok(Location {
        store: Arc::new(fs),
        root: Path::default(),
        display,
        attributes: false,
        local_dir: Some(dir),
    })
}

#[cfg(unix)]
fn sync_dir(dir: &FsPath) -> std::io::Result<()> {
    std::fs::File::open(dir)?.sync_all()
}

#[cfg(not(unix))]
fn sync_dir(_dir: &FsPath) -> std::io::Result<()> {
    Ok(())
}

/// The process-wide in-memory object store named `name` (`memory://name/...`).
fn memory_store(name: &str) -> Arc<dyn ObjectStore> {
    static STORES: std::sync::OnceLock<
        std::sync::Mutex<std::collections::HashMap<String, Arc<object_store::memory::InMemory>>>,
    > = std::sync::OnceLock::new();
    let mut stores = STORES
        .get_or_init(Default::default)
        .lock()
        .unwrap_or_else(|p| p.into_inner());
    stores
        .entry(name.to_string())
        .or_insert_with(|| Arc::new(object_store::memory::InMemory::new()))
        .clone()
}
