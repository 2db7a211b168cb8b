//! The OTLP/HTTP (protobuf) span exporter and the `tracing` layer that feeds it.
//!
//! The layer records mcpcore's spans (targets `mcpcore::*`) — their fields, start and end —
//! and hands each finished span to a bounded queue; an exporter thread with its own small
//! runtime batches them and POSTs `ExportTraceServiceRequest`s to `{endpoint}/v1/traces`.
//! A full queue drops spans (counted) rather than slowing requests; a failed export is logged
//! and dropped, never retried without bound.
//!
//! Ids: a span that recorded W3C ids (`trace_id`, `span_id`, `parent_span_id`: the MCP
//! request spans and the HTTP request span) is exported with them, so the ids a handler reads
//! (`RequestContext::trace_context`) are the exported span's; any other span gets a new span id
//! in its local parent's trace.
//!
//! Configuration: [`OtlpOptions`], whose unset fields come from the standard environment
//! variables `OTEL_EXPORTER_OTLP_ENDPOINT`, `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`,
//! `OTEL_EXPORTER_OTLP_HEADERS`, `OTEL_EXPORTER_OTLP_TIMEOUT`, `OTEL_SERVICE_NAME` and
//! `OTEL_RESOURCE_ATTRIBUTES`, and the batch settings `OTEL_BSP_MAX_QUEUE_SIZE`,
//! `OTEL_BSP_MAX_EXPORT_BATCH_SIZE` and `OTEL_BSP_SCHEDULE_DELAY`. Only `http/protobuf` is
//! spoken (`OTEL_EXPORTER_OTLP_PROTOCOL` naming another protocol is refused).

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{sync_channel, Receiver, RecvTimeoutError, SyncSender, TrySendError};
use std::time::{Duration, SystemTime, UNIX_EPOCH};
use tracing::span::{Attributes, Id, Record};
use tracing::Subscriber;
use tracing_subscriber::layer::Context;
use tracing_subscriber::registry::LookupSpan;
use tracing_subscriber::Layer;

use super::otlp_span::{Open, Visitor};
use super::proto::{export_request, Val};

/// Where and how spans are exported. Every field left `None` is read from the environment.
#[derive(Clone, Debug, Default, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields, default)]
#[non_exhaustive]
pub struct OtlpOptions {
    /// The collector's base URL (`/v1/traces` is appended), e.g. `http://127.0.0.1:4318`;
    /// default `OTEL_EXPORTER_OTLP_ENDPOINT`, else `http://localhost:4318`.
    pub endpoint: Option<String>,
    /// The full traces URL (taken as is); default `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`.
    pub traces_endpoint: Option<String>,
    /// Extra request headers (`OTEL_EXPORTER_OTLP_HEADERS`: `k=v,k2=v2`, percent-encoded).
    pub headers: Option<Vec<(String, String)>>,
    /// `service.name` (`OTEL_SERVICE_NAME`, else `unknown_service`).
    pub service_name: Option<String>,
    /// Per-export deadline in ms (`OTEL_EXPORTER_OTLP_TIMEOUT`, else 10,000).
    pub timeout_ms: Option<u64>,
    /// Most finished spans waiting to be exported (`OTEL_BSP_MAX_QUEUE_SIZE`, else 2,048);
    /// past it spans are dropped.
    pub max_queue: Option<usize>,
    /// Most spans per export request, and how many wake the exporter
    /// (`OTEL_BSP_MAX_EXPORT_BATCH_SIZE`, else 512).
    pub max_batch: Option<usize>,
    /// How often a partial batch is sent, in ms (`OTEL_BSP_SCHEDULE_DELAY`, else 1,000).
    pub interval_ms: Option<u64>,
    /// The full metrics URL (`OTEL_EXPORTER_OTLP_METRICS_ENDPOINT`, else the endpoint's
    /// `/v1/metrics`).
    pub metrics_endpoint: Option<String>,
    /// How often the metrics of servers with `metrics` on are exported, in ms
    /// (`OTEL_METRIC_EXPORT_INTERVAL`, else 60,000).
    pub metrics_interval_ms: Option<u64>,
    /// How long a server that stops serving (stdin ended, HTTP shut down) waits, in ms, for
    /// the spans and metrics recorded so far to be exported before its serve call returns
    /// (else 2,000; 0: it does not wait). A stdio server usually exits right after: without
    /// the wait, what it recorded since the last export is lost.
    pub stop_flush_ms: Option<u64>,
}

/// The resolved configuration.
#[derive(Clone, Debug)]
pub(crate) struct Resolved {
    pub url: String,
    pub metrics_url: String,
    pub metrics_interval: Duration,
    pub headers: Vec<(String, String)>,
    pub resource: Vec<(String, Val)>,
    pub timeout: Duration,
    pub max_queue: usize,
    pub max_batch: usize,
    pub interval: Duration,
    pub stop_flush: Duration,
}

fn env(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.trim().is_empty())
}

/// A number from the environment (an unparsable value is ignored, as the OTel SDKs do).
fn env_num<T: std::str::FromStr>(name: &str) -> Option<T> {
    env(name).and_then(|v| v.trim().parse().ok())
}

/// `k=v,k2=v2` with percent-encoded values (the OTel environment syntax).
fn pairs(s: &str) -> Vec<(String, String)> {
    s.split(',')
        .filter_map(|kv| {
            let (k, v) = kv.split_once('=')?;
            let dec = |x: &str| {
                percent_encoding::percent_decode_str(x.trim())
                    .decode_utf8_lossy()
                    .into_owned()
            };
            Some((dec(k), dec(v))).filter(|(k, _)| !k.is_empty())
        })
        .collect()
}

impl OtlpOptions {
    pub(crate) fn resolve(&self) -> Result<Resolved, String> {
        if let Some(p) =
            env("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL").or_else(|| env("OTEL_EXPORTER_OTLP_PROTOCOL"))
        {
            if p != "http/protobuf" {
                return Err(format!(
                    "OTLP protocol {p:?} is not supported; use http/protobuf"
                ));
            }
        }
        let base = self
            .endpoint
            .clone()
            .or_else(|| env("OTEL_EXPORTER_OTLP_ENDPOINT"))
            .unwrap_or_else(|| "http://localhost:4318".into());
        let base = base.trim_end_matches('/');
        let url = self
            .traces_endpoint
            .clone()
            .or_else(|| env("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"))
            .unwrap_or_else(|| format!("{base}/v1/traces"));
        let metrics_url = self
            .metrics_endpoint
            .clone()
            .or_else(|| env("OTEL_EXPORTER_OTLP_METRICS_ENDPOINT"))
            .unwrap_or_else(|| format!("{base}/v1/metrics"));
        for u in [&url, &metrics_url] {
            u.parse::<http::Uri>()
                .map_err(|e| format!("OTLP endpoint {u:?}: {e}"))?;
        }
        let metrics_interval = self
            .metrics_interval_ms
            .or_else(|| env("OTEL_METRIC_EXPORT_INTERVAL").and_then(|t| t.parse().ok()))
            .unwrap_or(60_000);
        let headers = match &self.headers {
            Some(h) => h.clone(),
            None => env("OTEL_EXPORTER_OTLP_HEADERS")
                .map(|h| pairs(&h))
                .unwrap_or_default(),
        };
        let mut resource: Vec<(String, Val)> = env("OTEL_RESOURCE_ATTRIBUTES")
            .map(|a| pairs(&a))
            .unwrap_or_default()
            .into_iter()
            .filter(|(k, _)| k != "service.name")
            .map(|(k, v)| (k, Val::Str(v)))
            .collect();
        let service = self
            .service_name
            .clone()
            .or_else(|| env("OTEL_SERVICE_NAME"))
            .or_else(|| {
                env("OTEL_RESOURCE_ATTRIBUTES")
                    .and_then(|a| pairs(&a).into_iter().find(|(k, _)| k == "service.name"))
                    .map(|(_, v)| v)
            })
            .unwrap_or_else(|| "unknown_service".into());
        resource.push(("service.name".into(), Val::Str(service)));
        resource.push(("telemetry.sdk.name".into(), Val::Str("mcpcore".into())));
        resource.push(("telemetry.sdk.language".into(), Val::Str("rust".into())));
        resource.push((
            "telemetry.sdk.version".into(),
            Val::Str(env!("CARGO_PKG_VERSION").into()),
        ));
        let timeout = self
            .timeout_ms
            .or_else(|| env("OTEL_EXPORTER_OTLP_TIMEOUT").and_then(|t| t.parse().ok()))
            .unwrap_or(10_000);
        let positive = |v: Option<usize>, d: usize, name: &str| match v {
            Some(0) => Err(format!("{name} must be positive")),
            Some(n) => Ok(n),
            None => Ok(d),
        };
        Ok(Resolved {
            url,
            metrics_url,
            metrics_interval: Duration::from_millis(metrics_interval.max(1)),
            headers,
            resource,
            timeout: Duration::from_millis(timeout.max(1)),
            max_queue: positive(
                self.max_queue.or(env_num("OTEL_BSP_MAX_QUEUE_SIZE")),
                2048,
                "maxQueue",
            )?,
            max_batch: positive(
                self.max_batch.or(env_num("OTEL_BSP_MAX_EXPORT_BATCH_SIZE")),
                512,
                "maxBatch",
            )?,
            interval: Duration::from_millis(
                self.interval_ms
                    .or(env_num("OTEL_BSP_SCHEDULE_DELAY"))
                    .unwrap_or(1000)
                    .max(1),
            ),
            stop_flush: Duration::from_millis(self.stop_flush_ms.unwrap_or(2000)),
        })
    }
}

/// What wakes the exporter: a full batch waiting, or a flush to acknowledge.
enum Msg {
    Batch,
    Flush(SyncSender<()>),
}

/// The layer exporting mcpcore's spans over OTLP (add it to a `tracing_subscriber` registry,
/// or let [`super::install`] do it).
pub struct OtlpLayer {
    handle: std::sync::Arc<ExportHandle>,
}

/// The exporter's queue, shared by the layer and whoever flushes it.
///
/// Finished spans wait, already encoded, in a buffer under a mutex: a request's thread appends
/// and goes on, and only a full batch wakes the exporter thread (a channel message per span
/// would switch to it once per span, which on a busy core costs more than the span itself).
pub struct ExportHandle {
    tx: SyncSender<Msg>,
    queue: std::sync::Mutex<Encoded>,
    max_queue: usize,
    max_batch: usize,
    dropped: AtomicU64,
    stop_flush: Duration,
}

/// Encoded spans, back to back, and where each ends.
#[derive(Default)]
pub(super) struct Encoded {
    pub bytes: Vec<u8>,
    pub ends: Vec<usize>,
}

impl Encoded {
    fn with_room(spans: usize) -> Self {
        Self {
            bytes: Vec::with_capacity(spans * 320),
            ends: Vec::with_capacity(spans),
        }
    }

    /// The spans in runs of at most `max` (one export request each).
    fn batches(&self, max: usize) -> impl Iterator<Item = &[u8]> {
        let mut start = 0;
        self.ends.chunks(max).map(move |run| {
            let end = run.last().copied().unwrap_or(start);
            let batch = self.bytes.get(start..end).unwrap_or_default();
            start = end;
            batch
        })
    }
}

impl ExportHandle {
    /// Send every finished span now and wait (at most `timeout`) for the export to end.
    pub fn flush(&self, timeout: Duration) -> bool {
        let deadline = std::time::Instant::now() + timeout;
        let (tx, rx) = sync_channel(1);
        let mut msg = Msg::Flush(tx);
        loop {
            // A full wake-up channel: the exporter is busy with a slow collector. The request
            // is retried until the deadline (a flush before exit must not give up at once).
            match self.tx.try_send(msg) {
                Ok(()) => {
                    let left = deadline.saturating_duration_since(std::time::Instant::now());
                    return rx.recv_timeout(left).is_ok();
                }
                Err(TrySendError::Full(m)) if std::time::Instant::now() < deadline => {
                    msg = m;
                    std::thread::sleep(Duration::from_millis(1));
                }
                Err(_) => return false,
            }
        }
    }

    /// [`Self::flush`] bounded by `stopFlushMs`; `false` at once when that is 0.
    pub(super) fn flush_for_stop(&self) -> bool {
        !self.stop_flush.is_zero() && self.flush(self.stop_flush)
    }

    fn queue(&self) -> std::sync::MutexGuard<'_, Encoded> {
        self.queue
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Queue a finished span, encoded by `encode` (dropped, and counted, when the queue is
    /// full).
    fn push(&self, encode: impl FnOnce(&mut Vec<u8>)) {
        let waiting = {
            let mut q = self.queue();
            if q.ends.len() >= self.max_queue {
                drop(q);
                self.dropped.fetch_add(1, Ordering::Relaxed);
                return;
            }
            encode(&mut q.bytes);
            let end = q.bytes.len();
            q.ends.push(end);
            q.ends.len()
        };
        if waiting == self.max_batch {
            let _ = self.tx.try_send(Msg::Batch);
        }
    }

    /// Everything waiting, oldest first.
    pub(super) fn take(&self) -> Encoded {
        // A full batch's room stays: the buffers never grow by doubling (and copying) again.
        // Made before the lock is taken: the request threads pushing spans never wait for it.
        let room = Encoded::with_room(self.max_batch);
        std::mem::replace(&mut *self.queue(), room)
    }

    /// Spans dropped because the queue was full.
    pub fn dropped(&self) -> u64 {
        self.dropped.load(Ordering::Relaxed)
    }
}

fn now_ns() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_nanos()).unwrap_or(u64::MAX))
}

impl OtlpLayer {
    /// A layer exporting to the collector `opts` name (the exporter thread starts now).
    ///
    /// # Errors
    /// A malformed endpoint, an unsupported protocol, a zero bound, or no thread.
    pub fn new(opts: &OtlpOptions) -> Result<Self, String> {
        let cfg = opts.resolve()?;
        let (tx, rx) = sync_channel(16);
        let handle = std::sync::Arc::new(ExportHandle {
            tx,
            queue: std::sync::Mutex::new(Encoded::with_room(cfg.max_batch)),
            max_queue: cfg.max_queue,
            max_batch: cfg.max_batch,
            dropped: AtomicU64::new(0),
            stop_flush: cfg.stop_flush,
        });
        // Weak: the exporter ends when the handle (and with it the channel's sender) is gone.
        let queue = std::sync::Arc::downgrade(&handle);
        std::thread::Builder::new()
            .name("mcpcore-otlp".into())
            .spawn(move || export_loop(&cfg, &rx, &queue))
            .map_err(|e| format!("cannot start the OTLP exporter thread: {e}"))?;
        Ok(Self { handle })
    }

    /// The exporter's handle (flush, dropped count), usable after the layer is installed.
    pub fn handle(&self) -> std::sync::Arc<ExportHandle> {
        self.handle.clone()
    }
}

impl OtlpLayer {
    /// The record of a span being made, `None` for a span not of mcpcore's.
    pub(super) fn begin(&self, attrs: &Attributes<'_>) -> Option<Box<Open>> {
        let meta = attrs.metadata();
        if !meta.target().starts_with("mcpcore") {
            return None;
        }
        let mut open = Open::new(meta.name(), now_ns());
        if let Some(ids) = super::NEXT_IDS.take() {
            open.give_ids(ids.trace, ids.span, ids.parent);
        }
        open.fresh = true;
        attrs.record(&mut Visitor(&mut open));
        open.fresh = false;
        Some(open)
    }

    /// Queue a closed span for export. `local`: the W3C ids of its local parent, when it has
    /// one with ids — for spans without ids of their own, and for a span that has ids but no
    /// remote parent (a root by W3C, nested locally); asked only then (a span with a W3C parent,
    /// like the MCP span under the HTTP span, has all it needs).
    pub(super) fn end(&self, open: Box<Open>, local: impl FnOnce() -> Option<([u8; 16], [u8; 8])>) {
        let (trace_id, span_id, parent) = match (open.ids, open.remote_parent) {
            (Some((t, s)), Some(p)) if s != [0; 8] => (t, s, Some(p)),
            (Some((t, s)), None) if s != [0; 8] => match local() {
                Some((lt, ls)) if lt == t => (t, s, Some(ls)),
                _ => (t, s, None),
            },
            _ => {
                let fresh = super::TraceContext::child_of(None);
                match local() {
                    Some((lt, ls)) => (lt, fresh.span_id, Some(ls)),
                    None => (fresh.trace_id, fresh.span_id, None),
                }
            }
        };
        let end_ns = now_ns();
        self.handle
            .push(|out| open.encode(out, (trace_id, span_id), parent, end_ns));
        open.recycle();
    }

    /// What a span records after it was made.
    pub(super) fn record(open: &mut Open, values: &Record<'_>) {
        values.record(&mut Visitor(open));
    }
}

impl<S> Layer<S> for OtlpLayer
where
    S: Subscriber + for<'a> LookupSpan<'a>,
{
    fn on_new_span(&self, attrs: &Attributes<'_>, id: &Id, ctx: Context<'_, S>) {
        if let (Some(open), Some(span)) = (self.begin(attrs), ctx.span(id)) {
            span.extensions_mut().insert(open);
        }
    }

    fn on_record(&self, id: &Id, values: &Record<'_>, ctx: Context<'_, S>) {
        if let Some(span) = ctx.span(id) {
            if let Some(open) = span.extensions_mut().get_mut::<Box<Open>>() {
                Self::record(open, values);
            }
        }
    }

    fn on_close(&self, id: Id, ctx: Context<'_, S>) {
        let Some(span) = ctx.span(&id) else { return };
        let Some(open) = span.extensions_mut().remove::<Box<Open>>() else {
            return;
        };
        self.end(open, || {
            span.parent().and_then(|p| {
                p.extensions()
                    .get::<Box<Open>>()
                    .and_then(|o| o.ids.filter(|i| i.1 != [0; 8]))
            })
        });
    }
}

fn export_loop(cfg: &Resolved, rx: &Receiver<Msg>, queue: &std::sync::Weak<ExportHandle>) {
    let Ok(rt) = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    else {
        return;
    };
    let (Ok(uri), Ok(metrics_uri)) = (
        cfg.url.parse::<http::Uri>(),
        cfg.metrics_url.parse::<http::Uri>(),
    ) else {
        return;
    };
    // One pool each for the life of the exporter: a kept-alive connection per export rather
    // than a new one (the response body is read to its end so the connection can be reused).
    let (traces, metrics) = (Exporter::new(uri), Exporter::new(metrics_uri));
    let (start_ns, mut last_metrics) = (now_ns(), std::time::Instant::now());
    loop {
        // Woken by a full batch or a flush; otherwise every interval, for a partial batch.
        let (ack, gone) = match rx.recv_timeout(cfg.interval.min(cfg.metrics_interval)) {
            Ok(Msg::Batch) => (None, false),
            Ok(Msg::Flush(ack)) => (Some(ack), false),
            Err(RecvTimeoutError::Timeout) => (None, false),
            Err(RecvTimeoutError::Disconnected) => (None, true),
        };
        let spans = queue.upgrade().map(|q| q.take()).unwrap_or_default();
        for batch in spans.batches(cfg.max_batch) {
            let body = export_request(&cfg.resource, batch);
            rt.block_on(traces.post(cfg, body));
        }
        if ack.is_some() || gone || last_metrics.elapsed() >= cfg.metrics_interval {
            last_metrics = std::time::Instant::now();
            let snaps = super::metrics::registered();
            if !snaps.is_empty() {
                let body =
                    super::proto_metrics::export_request(&cfg.resource, snaps, start_ns, now_ns());
                rt.block_on(metrics.post(cfg, body));
            }
        }
        if let Some(ack) = ack {
            let _ = ack.send(());
        }
        if gone {
            rt.block_on(async {
                traces.close();
                metrics.close();
            });
            return;
        }
    }
}

/// Where one kind of export goes: its URL and the connections kept to it.
struct Exporter {
    uri: http::Uri,
    pool: Result<std::sync::Arc<crate::client::transport::pool::Pool>, String>,
}

/// The most of a collector's answer read (an `Export*ServiceResponse`: a partial-success
/// count and message).
const MAX_ANSWER: usize = 64 * 1024;

impl Exporter {
    fn new(uri: http::Uri) -> Self {
        let opts = crate::client::HttpClientOptions {
            listen_stream: false,
            max_connections: 2,
            ..Default::default()
        };
        let pool =
            crate::client::transport::pool::Pool::new(&uri, &opts).map_err(|e| e.to_string());
        Self { uri, pool }
    }

    fn close(&self) {
        if let Ok(p) = &self.pool {
            p.close();
        }
    }

    async fn post(&self, cfg: &Resolved, body: Vec<u8>) {
        use crate::client::transport::pool::Hold;
        use http_body_util::BodyExt;
        let pool = match &self.pool {
            Ok(p) => p,
            Err(e) => {
                tracing::warn!(target: "mcpcore::telemetry::otlp", "OTLP exporter: {e}");
                return;
            }
        };
        let mut req = http::Request::post(self.uri.clone())
            .header(http::header::CONTENT_TYPE, "application/x-protobuf");
        for (k, v) in &cfg.headers {
            req = req.header(k.as_str(), v.as_str());
        }
        let Ok(req) = req.body(http_body_util::Full::new(bytes::Bytes::from(body))) else {
            return;
        };
        let exchange = async {
            let r = pool.send(req, Hold::Short).await?;
            let status = r.status();
            // Read to the end (bounded) so the connection goes back to the pool.
            let _ = http_body_util::Limited::new(r.into_body(), MAX_ANSWER)
                .collect()
                .await;
            Ok::<_, crate::client::ClientError>(status)
        };
        match tokio::time::timeout(cfg.timeout, exchange).await {
            Ok(Ok(s)) if s.is_success() => {}
            Ok(Ok(s)) => {
                tracing::warn!(target: "mcpcore::telemetry::otlp", status = s.as_u16(), "OTLP export refused")
            }
            Ok(Err(e)) => {
                tracing::warn!(target: "mcpcore::telemetry::otlp", "OTLP export failed: {e}")
            }
            Err(_) => tracing::warn!(target: "mcpcore::telemetry::otlp", "OTLP export timed out"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The batch settings come from the options, else from the OpenTelemetry SDK's standard
    /// `OTEL_BSP_*` variables, else the defaults; a zero is refused, garbage ignored. (The only
    /// test in this binary that sets these variables.)
    #[test]
    fn batch_settings_come_from_options_then_the_environment() {
        let d = OtlpOptions::default().resolve().expect("defaults");
        assert_eq!((d.max_queue, d.max_batch), (2048, 512));
        assert_eq!(d.interval, Duration::from_millis(1000));
        assert_eq!(
            d.stop_flush,
            Duration::from_secs(2),
            "a stopping server waits 2 s"
        );
        let mut t = super::super::TelemetryOptions::default();
        crate::options::apply_json(&mut t, &serde_json::json!({"otlp": {"stopFlushMs": 0}}))
            .expect("stopFlushMs");
        let no_wait = t.otlp.expect("otlp").resolve().expect("0");
        assert!(no_wait.stop_flush.is_zero(), "0: no wait");
        std::env::set_var("OTEL_BSP_MAX_QUEUE_SIZE", "4096");
        std::env::set_var("OTEL_BSP_MAX_EXPORT_BATCH_SIZE", "1024");
        std::env::set_var("OTEL_BSP_SCHEDULE_DELAY", "250");
        let e = OtlpOptions::default()
            .resolve()
            .expect("from the environment");
        assert_eq!((e.max_queue, e.max_batch), (4096, 1024));
        assert_eq!(e.interval, Duration::from_millis(250));
        let o = OtlpOptions {
            max_batch: Some(8),
            ..OtlpOptions::default()
        };
        assert_eq!(o.resolve().expect("options").max_batch, 8, "options first");
        std::env::set_var("OTEL_BSP_MAX_EXPORT_BATCH_SIZE", "0");
        assert!(OtlpOptions::default().resolve().is_err(), "zero refused");
        std::env::set_var("OTEL_BSP_MAX_EXPORT_BATCH_SIZE", "many");
        assert_eq!(
            OtlpOptions::default().resolve().expect("ignored").max_batch,
            512
        );
        for v in [
            "OTEL_BSP_MAX_QUEUE_SIZE",
            "OTEL_BSP_MAX_EXPORT_BATCH_SIZE",
            "OTEL_BSP_SCHEDULE_DELAY",
        ] {
            std::env::remove_var(v);
        }
    }

    /// Encoded spans leave in runs of at most `max_batch`, split where spans end.
    #[test]
    fn batches_split_where_spans_end() {
        let mut q = Encoded::with_room(4);
        for len in [3, 5, 2, 4, 1] {
            q.bytes.extend(std::iter::repeat_n(len as u8, len));
            q.ends.push(q.bytes.len());
        }
        let runs: Vec<&[u8]> = q.batches(2).collect();
        assert_eq!(runs.len(), 3);
        assert_eq!(runs[0].len(), 8);
        assert_eq!(runs[1], &[2, 2, 4, 4, 4, 4]);
        assert_eq!(runs[2], &[1]);
    }
}
