//! An `ObjectStore` wrapper that counts requests, errors and bytes for `/metrics` and can
//! inject faults for tests and benchmarks ([`Faults`]: so far, latency before every PUT, the
//! way a remote object store behaves). Every method forwards to the wrapped store (renames and
//! ranged reads too, so the wrapped store's own atomic or coalescing implementations are kept).

use std::ops::Range;
use std::sync::Arc;

use async_trait::async_trait;
use bytes::Bytes;
use futures::stream::BoxStream;
use futures::StreamExt;
use object_store::path::Path;
use object_store::{
    CopyOptions, GetOptions, GetResult, ListResult, MultipartUpload, ObjectMeta, ObjectStore,
    PutMultipartOptions, PutOptions, PutPayload, PutResult, RenameOptions, Result,
};

use crate::metrics::Metrics;

/// Faults to inject.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Faults {
    /// Added before every PUT (single and multipart start).
    pub put_latency: std::time::Duration,
}

#[derive(Debug)]
pub struct Instrumented {
    inner: Arc<dyn ObjectStore>,
    metrics: Arc<Metrics>,
    faults: Faults,
}

impl Instrumented {
    pub fn new(inner: Arc<dyn ObjectStore>, metrics: Arc<Metrics>, faults: Faults) -> Instrumented {
        Instrumented {
            inner,
            metrics,
            faults,
        }
    }

    async fn before_put(&self) {
        if !self.faults.put_latency.is_zero() {
            tokio::time::sleep(self.faults.put_latency).await;
        }
    }

    fn count<T>(&self, op: &'static str, r: Result<T>) -> Result<T> {
        self.metrics.store_op(op, r.as_ref().err().map(error_kind));
        r
    }
}

/// Error kinds for `/metrics`. SlateDB meets some of them as part of its protocol (probing
/// for objects that may not exist, conditional PUTs, retrying a PUT without attributes on
/// stores that do not support them); only `other` means the store itself is failing.
fn error_kind(e: &object_store::Error) -> &'static str {
    match e {
        object_store::Error::NotFound { .. } => "not_found",
        object_store::Error::AlreadyExists { .. } => "already_exists",
        object_store::Error::Precondition { .. } => "precondition",
        object_store::Error::NotModified { .. } => "not_modified",
        object_store::Error::NotImplemented { .. } => "not_implemented",
        _ => "other",
    }
}

impl std::fmt::Display for Instrumented {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Instrumented({})", self.inner)
    }
}

#[async_trait]
impl ObjectStore for Instrumented {
    async fn put_opts(
        &self,
        location: &Path,
        payload: PutPayload,
        opts: PutOptions,
    ) -> Result<PutResult> {
        let len = payload.content_length() as u64;
        self.before_put().await;
        let r = self.inner.put_opts(location, payload, opts).await;
        if r.is_ok() {
            self.metrics.store_bytes_written.inc_by(len);
        }
        self.count("put", r)
    }

    async fn put_multipart_opts(
        &self,
        location: &Path,
        opts: PutMultipartOptions,
    ) -> Result<Box<dyn MultipartUpload>> {
        self.before_put().await;
        let r = self.inner.put_multipart_opts(location, opts).await;
        self.count("put_multipart", r)
    }

    async fn get_opts(&self, location: &Path, options: GetOptions) -> Result<GetResult> {
        let r = self.inner.get_opts(location, options).await;
        if let Ok(g) = &r {
            self.metrics
                .store_bytes_read
                .inc_by(g.range.end.saturating_sub(g.range.start));
        }
        self.count("get", r)
    }

    async fn get_ranges(&self, location: &Path, ranges: &[Range<u64>]) -> Result<Vec<Bytes>> {
        let r = self.inner.get_ranges(location, ranges).await;
        if let Ok(parts) = &r {
            let n: usize = parts.iter().map(Bytes::len).sum();
            self.metrics.store_bytes_read.inc_by(n as u64);
        }
        self.count("get", r)
    }

    fn delete_stream(
        &self,
        locations: BoxStream<'static, Result<Path>>,
    ) -> BoxStream<'static, Result<Path>> {
        let metrics = self.metrics.clone();
        self.inner
            .delete_stream(locations)
            .inspect(move |r| metrics.store_op("delete", r.as_ref().err().map(error_kind)))
            .boxed()
    }

    fn list(&self, prefix: Option<&Path>) -> BoxStream<'static, Result<ObjectMeta>> {
        self.metrics.store_op("list", None);
        self.inner.list(prefix)
    }

    fn list_with_offset(
        &self,
        prefix: Option<&Path>,
        offset: &Path,
    ) -> BoxStream<'static, Result<ObjectMeta>> {
        self.metrics.store_op("list", None);
        self.inner.list_with_offset(prefix, offset)
    }

    async fn list_with_delimiter(&self, prefix: Option<&Path>) -> Result<ListResult> {
        let r = self.inner.list_with_delimiter(prefix).await;
        self.count("list", r)
    }

    async fn copy_opts(&self, from: &Path, to: &Path, options: CopyOptions) -> Result<()> {
        let r = self.inner.copy_opts(from, to, options).await;
        self.count("copy", r)
    }

    async fn rename_opts(&self, from: &Path, to: &Path, options: RenameOptions) -> Result<()> {
        let r = self.inner.rename_opts(from, to, options).await;
        self.count("rename", r)
    }
}
