//! Prometheus metrics of the server (`/metrics`, see [`crate::http`]).

use std::sync::atomic::AtomicI64;
use std::time::Duration;

use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{exponential_buckets, Histogram};
use prometheus_client::registry::Registry;

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct ClassLabel {
    pub class: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct OpLabel {
    pub op: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct OpErrorLabel {
    pub op: String,
    pub kind: String,
}

fn latency_histogram() -> Histogram {
    // 50 µs … ~1.6 s
    Histogram::new(exponential_buckets(0.000_05, 2.0, 16))
}

/// Every metric the server exports, registered once.
pub struct Metrics {
    registry: Registry,
    pub sessions: Gauge,
    pub sessions_opened: Counter,
    pub statements: Family<ClassLabel, Counter>,
    pub statement_errors: Family<ClassLabel, Counter>,
    pub statement_seconds: Family<ClassLabel, Histogram, fn() -> Histogram>,
    pub slow_statements: Counter,
    pub commits: Counter,
    pub commit_failures: Counter,
    pub commits_aborted: Counter,
    pub commit_seconds: Histogram,
    pub commit_bytes: Counter,
    pub commit_group_size: Histogram,
    pub last_commit_seq: Gauge,
    pub writer_epoch: Gauge,
    pub fenced_gauge: Gauge,
    pub store_requests: Family<OpLabel, Counter>,
    pub store_errors: Family<OpErrorLabel, Counter>,
    pub store_bytes_written: Counter,
    pub store_bytes_read: Counter,
    /// Sampled when `/metrics` is rendered (see [`Metrics::set_memory_probe`]).
    heap_bytes: Gauge,
    heap_free_bytes: Gauge,
    mirror_bytes: Gauge,
    core_memory_bytes: Gauge,
    memory_probe: std::sync::Mutex<Option<MemoryProbe>>,
    /// Trims of the heap by [`crate::heap::spawn_reclaimer`].
    heap_trims: Counter,
    heap_trimmed_bytes: Counter,
    heap_trim_seconds: Counter<f64, std::sync::atomic::AtomicU64>,
}

/// What the server's memory holds besides the allocator's own view, read at each scrape.
pub type MemoryProbe = Box<dyn Fn() -> MemorySample + Send + Sync>;

/// See [`MemoryProbe`].
#[derive(Debug, Clone, Copy, Default)]
pub struct MemorySample {
    /// The store's in-memory copy of every key (run, recent writes, a merge's frozen layer).
    pub mirror_bytes: u64,
    /// The WebAssembly core's linear memory (`None` with the native core, whose heap is
    /// part of the process heap).
    pub core_memory_bytes: Option<u64>,
}

impl std::fmt::Debug for Metrics {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Metrics").finish_non_exhaustive()
    }
}

impl Default for Metrics {
    fn default() -> Self {
        Metrics::new()
    }
}

impl Metrics {
    pub fn new() -> Metrics {
        let mut registry = Registry::with_prefix("rocklake");
        let sessions = Gauge::<i64, AtomicI64>::default();
        let sessions_opened = Counter::default();
        let statements = Family::<ClassLabel, Counter>::default();
        let statement_errors = Family::<ClassLabel, Counter>::default();
        let statement_seconds =
            Family::<ClassLabel, Histogram, fn() -> Histogram>::new_with_constructor(
                latency_histogram,
            );
        let slow_statements = Counter::default();
        let commits = Counter::default();
        let commit_failures = Counter::default();
        let commits_aborted = Counter::default();
        let commit_seconds = latency_histogram();
        let commit_bytes = Counter::default();
        let commit_group_size = Histogram::new(exponential_buckets(1.0, 2.0, 10));
        let last_commit_seq = Gauge::<i64, AtomicI64>::default();
        let writer_epoch = Gauge::<i64, AtomicI64>::default();
        let fenced_gauge = Gauge::<i64, AtomicI64>::default();
        let store_requests = Family::<OpLabel, Counter>::default();
        let store_errors = Family::<OpErrorLabel, Counter>::default();
        let store_bytes_written = Counter::default();
        let store_bytes_read = Counter::default();
        registry.register("sessions", "Client sessions open now", sessions.clone());
        registry.register(
            "sessions_opened",
            "Client sessions opened since start",
            sessions_opened.clone(),
        );
        registry.register(
            "statements",
            "Query strings executed, by class of the first statement",
            statements.clone(),
        );
        registry.register(
            "statement_errors",
            "Query strings that ended in an error, by class",
            statement_errors.clone(),
        );
        registry.register(
            "statement_seconds",
            "Time to answer a query string (including its commit), by class",
            statement_seconds.clone(),
        );
        registry.register(
            "slow_statements",
            "Query strings slower than the slow-statement threshold",
            slow_statements.clone(),
        );
        registry.register("commits", "Transactions committed durably", commits.clone());
        registry.register(
            "commit_failures",
            "Commits the store refused or failed",
            commit_failures.clone(),
        );
        registry.register(
            "commits_aborted",
            "Commits abandoned before reaching the store (cancel request or statement timeout)",
            commits_aborted.clone(),
        );
        registry.register(
            "commit_seconds",
            "Time from commit start to durable in the store",
            commit_seconds.clone(),
        );
        registry.register(
            "commit_bytes",
            "Bytes of keys and values written by commits",
            commit_bytes.clone(),
        );
        registry.register(
            "commit_group_size",
            "Commits made durable together by one store write (group commit)",
            commit_group_size.clone(),
        );
        registry.register(
            "last_commit_seq",
            "Commit sequence number of the newest durable commit",
            last_commit_seq.clone(),
        );
        registry.register(
            "writer_epoch",
            "Fencing epoch this server claimed as writer",
            writer_epoch.clone(),
        );
        registry.register(
            "fenced",
            "1 when another server has fenced this one",
            fenced_gauge.clone(),
        );
        registry.register(
            "object_store_requests",
            "Object store requests, by operation",
            store_requests.clone(),
        );
        registry.register(
            "object_store_errors",
            "Object store requests that failed, by operation and kind; only kind other means the \
             store is failing (SlateDB probes with not_found, retries not_implemented and \
             fences with precondition or already_exists)",
            store_errors.clone(),
        );
        registry.register(
            "object_store_written_bytes",
            "Bytes written to the object store",
            store_bytes_written.clone(),
        );
        registry.register(
            "object_store_read_bytes",
            "Bytes read from the object store",
            store_bytes_read.clone(),
        );
        let heap_bytes = Gauge::<i64, AtomicI64>::default();
        let heap_free_bytes = Gauge::<i64, AtomicI64>::default();
        let heap_trims = Counter::default();
        let heap_trimmed_bytes = Counter::default();
        let heap_trim_seconds = Counter::<f64, std::sync::atomic::AtomicU64>::default();
        let mirror_bytes = Gauge::<i64, AtomicI64>::default();
        let core_memory_bytes = Gauge::<i64, AtomicI64>::default();
        registry.register(
            "heap_bytes",
            "Bytes the process has allocated from its heap and not freed (glibc's count; the \
             mirror and the native core live here, the WebAssembly core's memory does not)",
            heap_bytes.clone(),
        );
        registry.register(
            "heap_free_bytes",
            "Bytes freed and kept by the heap allocator (trimmed pages included: they are no \
             longer resident, but the allocator still holds their addresses)",
            heap_free_bytes.clone(),
        );
        registry.register(
            "heap_trims",
            "Times freed heap was returned to the OS after a bulk free (malloc_trim)",
            heap_trims.clone(),
        );
        registry.register(
            "heap_trimmed_bytes",
            "Resident bytes those trims gave back",
            heap_trimmed_bytes.clone(),
        );
        registry.register(
            "heap_trim_seconds",
            "Time spent in those trims",
            heap_trim_seconds.clone(),
        );
        registry.register(
            "mirror_bytes",
            "Bytes of the store's in-memory copy of the catalog's keys and values",
            mirror_bytes.clone(),
        );
        registry.register(
            "core_memory_bytes",
            "Bytes of the WebAssembly core's linear memory (it never shrinks; 0 with the \
             native core)",
            core_memory_bytes.clone(),
        );
        Metrics {
            registry,
            sessions,
            sessions_opened,
            statements,
            statement_errors,
            statement_seconds,
            slow_statements,
            commits,
            commit_failures,
            commits_aborted,
            commit_seconds,
            commit_bytes,
            commit_group_size,
            last_commit_seq,
            writer_epoch,
            fenced_gauge,
            store_requests,
            store_errors,
            store_bytes_written,
            store_bytes_read,
            heap_bytes,
            heap_free_bytes,
            mirror_bytes,
            core_memory_bytes,
            memory_probe: std::sync::Mutex::new(None),
            heap_trims,
            heap_trimmed_bytes,
            heap_trim_seconds,
        }
    }

    /// Where the memory gauges read from; called once the store and the core exist.
    pub fn set_memory_probe(&self, probe: MemoryProbe) {
        *self
            .memory_probe
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = Some(probe);
    }

    /// Counts one trim of the heap.
    pub fn record_heap_trim(&self, took: Duration, released: u64) {
        self.heap_trims.inc();
        self.heap_trimmed_bytes.inc_by(released);
        self.heap_trim_seconds.inc_by(took.as_secs_f64());
    }

    /// Samples the memory gauges (at each scrape: they are cheap to read).
    fn sample_memory(&self) {
        if let Some(heap) = crate::heap::stats() {
            self.heap_bytes.set(clamp(heap.in_use));
            self.heap_free_bytes.set(clamp(heap.free));
        }
        let probe = self
            .memory_probe
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some(sample) = probe.as_ref().map(|p| p()) {
            self.mirror_bytes.set(clamp(sample.mirror_bytes));
            self.core_memory_bytes
                .set(clamp(sample.core_memory_bytes.unwrap_or(0)));
        }
    }

    /// The text exposition format.
    pub fn render(&self) -> String {
        self.sample_memory();
        let mut out = String::new();
        if let Err(e) = prometheus_client::encoding::text::encode(&mut out, &self.registry) {
            // Only a formatter error can end here; say so rather than serve half a page.
            tracing::error!("cannot render metrics: {e}");
            out.clear();
        }
        out
    }

    pub fn statement(&self, class: &str, elapsed: Duration, failed: bool) {
        let label = ClassLabel {
            class: class.to_string(),
        };
        self.statements.get_or_create(&label).inc();
        if failed {
            self.statement_errors.get_or_create(&label).inc();
        }
        self.statement_seconds
            .get_or_create(&label)
            .observe(elapsed.as_secs_f64());
    }

    pub fn set_fenced(&self) {
        self.fenced_gauge.set(1);
    }

    pub fn is_fenced(&self) -> bool {
        self.fenced_gauge.get() == 1
    }

    pub fn store_op(&self, op: &'static str, error: Option<&'static str>) {
        let label = OpLabel { op: op.to_string() };
        self.store_requests.get_or_create(&label).inc();
        if let Some(kind) = error {
            self.store_errors
                .get_or_create(&OpErrorLabel {
                    op: op.to_string(),
                    kind: kind.to_string(),
                })
                .inc();
        }
    }
}

/// The class of a query string for metrics: the first keyword of its first statement.
pub fn statement_class(sql: &str) -> &'static str {
    let word: String = sql
        .trim_start_matches(|c: char| c.is_whitespace() || c == '(' || c == ';')
        .chars()
        .take_while(|c| c.is_ascii_alphabetic())
        .collect::<String>()
        .to_ascii_lowercase();
    match word.as_str() {
        "select" | "values" | "table" => "select",
        "with" => "with",
        "insert" => "insert",
        "update" => "update",
        "delete" => "delete",
        "copy" => "copy",
        "begin" | "start" => "begin",
        "commit" | "end" => "commit",
        "rollback" | "abort" => "rollback",
        "create" => "create",
        "drop" => "drop",
        "alter" => "alter",
        "set" | "reset" => "set",
        "show" => "show",
        "discard" => "discard",
        "" => "empty",
        _ => "other",
    }
}

fn clamp(v: u64) -> i64 {
    i64::try_from(v).unwrap_or(i64::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classes() {
        assert_eq!(statement_class("  SELECT 1"), "select");
        assert_eq!(statement_class("(select 1)"), "select");
        assert_eq!(statement_class("BEGIN TRANSACTION"), "begin");
        assert_eq!(statement_class("COPY (SELECT 1) TO STDOUT"), "copy");
        assert_eq!(statement_class("vacuum"), "other");
        assert_eq!(statement_class(""), "empty");
    }

    #[test]
    fn render_has_counters_after_use() {
        let m = Metrics::new();
        m.statement("insert", Duration::from_millis(3), false);
        m.commits.inc();
        let text = m.render();
        assert!(
            text.contains("rocklake_statements_total{class=\"insert\"} 1"),
            "{text}"
        );
        assert!(text.contains("rocklake_commits_total 1"), "{text}");
        assert!(text.contains("rocklake_statement_seconds_bucket"), "{text}");
        // Without a probe the mirror and core gauges stay 0; the heap is glibc's.
        assert!(text.contains("rocklake_mirror_bytes 0"), "{text}");
        let heap = text
            .lines()
            .find_map(|l| l.strip_prefix("rocklake_heap_bytes "))
            .and_then(|v| v.parse::<i64>().ok());
        assert!(heap.is_some_and(|h| h > 0), "{text}");
        m.set_memory_probe(Box::new(|| MemorySample {
            mirror_bytes: 1234,
            core_memory_bytes: Some(65536),
        }));
        let text = m.render();
        assert!(text.contains("rocklake_mirror_bytes 1234"), "{text}");
        assert!(text.contains("rocklake_core_memory_bytes 65536"), "{text}");
    }
}
