//! Fault injection for tests and benchmarks: an `ObjectStore` wrapper that slows writes down
//! the way a remote object store does (e.g. 50 ms per PUT), so commit-path behaviour under a
//! slow store can be measured on any machine. Reads, lists and deletes pass through.

use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use futures::stream::BoxStream;
use object_store::path::Path;
use object_store::{
    CopyOptions, GetOptions, GetResult, ListResult, MultipartUpload, ObjectMeta, ObjectStore,
    PutMultipartOptions, PutOptions, PutPayload, PutResult, RenameOptions, Result,
};

/// What to inject.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Faults {
    /// Added before every PUT (single and multipart start).
    pub put_latency: Duration,
}

#[derive(Debug)]
pub struct FaultInjecting {
    inner: Arc<dyn ObjectStore>,
    faults: Faults,
}

impl FaultInjecting {
    pub fn new(inner: Arc<dyn ObjectStore>, faults: Faults) -> FaultInjecting {
        FaultInjecting { inner, faults }
    }

    async fn before_put(&self) {
        if !self.faults.put_latency.is_zero() {
            tokio::time::sleep(self.faults.put_latency).await;
        }
    }
}

impl std::fmt::Display for FaultInjecting {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "FaultInjecting({})", self.inner)
    }
}

#[async_trait]
impl ObjectStore for FaultInjecting {
    async fn put_opts(
        &self,
        location: &Path,
        payload: PutPayload,
        opts: PutOptions,
    ) -> Result<PutResult> {
        self.before_put().await;
        self.inner.put_opts(location, payload, opts).await
    }

    async fn put_multipart_opts(
        &self,
        location: &Path,
        opts: PutMultipartOptions,
    ) -> Result<Box<dyn MultipartUpload>> {
        self.before_put().await;
        self.inner.put_multipart_opts(location, opts).await
    }

    async fn get_opts(&self, location: &Path, options: GetOptions) -> Result<GetResult> {
        self.inner.get_opts(location, options).await
    }

    async fn get_ranges(
        &self,
        location: &Path,
        ranges: &[std::ops::Range<u64>],
    ) -> Result<Vec<bytes::Bytes>> {
        self.inner.get_ranges(location, ranges).await
    }

    fn delete_stream(
        &self,
        locations: BoxStream<'static, Result<Path>>,
    ) -> BoxStream<'static, Result<Path>> {
        self.inner.delete_stream(locations)
    }

    fn list(&self, prefix: Option<&Path>) -> BoxStream<'static, Result<ObjectMeta>> {
        self.inner.list(prefix)
    }

    fn list_with_offset(
        &self,
        prefix: Option<&Path>,
        offset: &Path,
    ) -> BoxStream<'static, Result<ObjectMeta>> {
        self.inner.list_with_offset(prefix, offset)
    }

    async fn list_with_delimiter(&self, prefix: Option<&Path>) -> Result<ListResult> {
        self.inner.list_with_delimiter(prefix).await
    }

    async fn copy_opts(&self, from: &Path, to: &Path, options: CopyOptions) -> Result<()> {
        self.inner.copy_opts(from, to, options).await
    }

    async fn rename_opts(&self, from: &Path, to: &Path, options: RenameOptions) -> Result<()> {
        self.inner.rename_opts(from, to, options).await
    }
}
