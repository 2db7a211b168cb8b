//! Operation metrics by the OpenTelemetry MCP semantic conventions (`mcp.server.operation.duration`,
//! `mcp.server.session.duration`) plus what operators watch: requests by method, target and
//! outcome, in-flight requests, refusals by reason, and the gauges of the HTTP endpoints serving
//! the server (live legacy sessions, listen streams, open connections). Rendered as a Prometheus
//! text exposition (version 0.0.4).
//!
//! Off by default (`ServerOptions::metrics`); when off every hook is one branch on a constant
//! flag. Series are bounded (`ServerOptions::metrics_max_series`): names a peer chooses (an
//! unknown tool) cannot grow memory without limit; past the bound they are counted under the
//! target `_other`.

use std::collections::HashMap;
use std::fmt::Write;
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};
use std::sync::{Mutex, Weak};
use std::time::Duration;

/// Bucket bounds (seconds) the semantic conventions recommend for MCP durations.
pub(crate) const BUCKETS: [f64; 14] = [
    0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0,
];

/// Why the engine refused work before (or instead of) a handler answering it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Refusal {
    /// A per-connection or server-wide cap (`max_inflight`; -32603 "server busy").
    Busy,
    /// The handler ran past `handler_timeout`.
    Timeout,
    /// The bearer gate refused the token (401/403, AUTH-06).
    Auth,
    /// `Origin` or `Host` not allowed (403, HTTP-03).
    Origin,
    /// The body crossed `max_message_bytes` (413).
    TooLarge,
    /// The body did not arrive within `body_read_timeout` (408).
    BodyTimeout,
    /// Another malformed HTTP request (400, 405, 406, 415).
    BadRequest,
    /// Shutting down, or the backplane unreachable (503).
    Unavailable,
}

const REFUSALS: [(Refusal, &str); 8] = [
    (Refusal::Busy, "busy"),
    (Refusal::Timeout, "timeout"),
    (Refusal::Auth, "auth"),
    (Refusal::Origin, "origin"),
    (Refusal::TooLarge, "too_large"),
    (Refusal::BodyTimeout, "body_timeout"),
    (Refusal::BadRequest, "bad_request"),
    (Refusal::Unavailable, "unavailable"),
];

/// A histogram with the conventions' bucket bounds; `counts[i]` counts observations up to
/// `BUCKETS[i]` (cumulative, as Prometheus reports them).
#[derive(Default, Clone)]
pub(crate) struct Hist {
    pub counts: [u64; BUCKETS.len()],
    pub count: u64,
    pub sum: f64,
}

impl Hist {
    fn add(&mut self, o: &Hist) {
        for (a, b) in self.counts.iter_mut().zip(o.counts) {
            *a += b;
        }
        self.count += o.count;
        self.sum += o.sum;
    }

    fn observe(&mut self, secs: f64) {
        for (c, b) in self.counts.iter_mut().zip(BUCKETS) {
            if secs <= b {
                *c += 1;
            }
        }
        self.count += 1;
        self.sum += secs;
    }
}

#[derive(Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) struct OpKey {
    pub method: String,
    pub target: Option<String>,
    pub error: Option<String>,
}

impl OpKey {
    /// The attribute naming the target: a tool, a prompt or a resource.
    pub(crate) fn target_attribute(&self) -> &'static str {
        match self.method.as_str() {
            "prompts/get" => "gen_ai.prompt.name",
            m if m.starts_with("resources/") => "mcp.resource.uri",
            _ => "gen_ai.tool.name",
        }
    }
}

/// The operation series, found by the request's own strings (hashed as borrowed `&str`s, so a
/// known series is found without building an owned key).
#[derive(Default)]
struct Series {
    by_hash: HashMap<u64, Vec<(OpKey, Hist)>>,
    len: usize,
}

fn series_hash(method: &str, target: Option<&str>, error: Option<&str>) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    (method, target, error).hash(&mut h);
    h.finish()
}

impl Series {
    fn find(
        &mut self,
        method: &str,
        target: Option<&str>,
        error: Option<&str>,
    ) -> Option<&mut Hist> {
        self.by_hash
            .get_mut(&series_hash(method, target, error))?
            .iter_mut()
            .find(|(k, _)| {
                k.method == method && k.target.as_deref() == target && k.error.as_deref() == error
            })
            .map(|(_, h)| h)
    }

    /// The series of `key`, made empty when new.
    fn entry(&mut self, key: OpKey) -> &mut Hist {
        let bucket = self
            .by_hash
            .entry(series_hash(
                &key.method,
                key.target.as_deref(),
                key.error.as_deref(),
            ))
            .or_default();
        let at = match bucket.iter().position(|(k, _)| *k == key) {
            Some(i) => i,
            None => {
                bucket.push((key, Hist::default()));
                self.len += 1;
                bucket.len() - 1
            }
        };
        &mut bucket[at].1
    }

    fn iter(&self) -> impl Iterator<Item = &(OpKey, Hist)> {
        self.by_hash.values().flatten()
    }
}

/// The gauges an HTTP endpoint reports when the metrics are rendered.
pub(crate) trait GaugeSource: Send + Sync {
    /// (live legacy sessions, open listen streams, open connections).
    fn gauges(&self) -> (usize, usize, usize);
}

/// Whose operations a registry records: a server's (handled) or a client's (sent).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Side {
    Server,
    Client,
}

impl Side {
    /// The word the conventions' names use (`mcp.server.…`, `mcp.client.…`).
    pub(crate) fn name(self) -> &'static str {
        match self {
            Side::Server => "server",
            Side::Client => "client",
        }
    }
}

/// One server's or client's metrics (every door reads the same registry).
pub(crate) struct Metrics {
    side: Side,
    on: bool,
    max_series: usize,
    ops: Mutex<Series>,
    sessions: Mutex<HashMap<&'static str, Hist>>,
    in_flight: AtomicI64,
    refused: [AtomicU64; REFUSALS.len()],
    sources: Mutex<Vec<Weak<dyn GaugeSource>>>,
}

/// The metrics of every live server recording them, for the OTLP exporter.
static REGISTERED: Mutex<Vec<Weak<Metrics>>> = Mutex::new(Vec::new());

/// Export `m` over OTLP while it lives (when an exporter is installed).
pub(crate) fn register(m: &std::sync::Arc<Metrics>) {
    if m.on {
        let mut v = lock(&REGISTERED);
        v.retain(|w| w.strong_count() > 0);
        v.push(std::sync::Arc::downgrade(m));
    }
}

/// Snapshots of every live server's metrics.
#[cfg_attr(not(feature = "otlp"), allow(dead_code))]
pub(crate) fn registered() -> Vec<Snapshot> {
    let live: Vec<std::sync::Arc<Metrics>> =
        lock(&REGISTERED).iter().filter_map(Weak::upgrade).collect();
    live.iter().map(|m| m.snapshot()).collect()
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// Decrements the in-flight gauge when the request ends, however it ends.
pub(crate) struct InFlight<'a>(Option<&'a Metrics>);

impl Drop for InFlight<'_> {
    fn drop(&mut self) {
        if let Some(m) = self.0 {
            m.in_flight.fetch_sub(1, Ordering::Relaxed);
        }
    }
}

impl Metrics {
    pub(crate) fn new(on: bool, max_series: usize) -> Self {
        Self::of(Side::Server, on, max_series)
    }

    /// A client's registry (`mcp.client.operation.duration`, `mcp.client.session.duration`).
    pub(crate) fn client(on: bool, max_series: usize) -> Self {
        Self::of(Side::Client, on, max_series)
    }

    fn of(side: Side, on: bool, max_series: usize) -> Self {
        Self {
            side,
            on,
            max_series,
            ops: Mutex::default(),
            sessions: Mutex::default(),
            in_flight: AtomicI64::new(0),
            refused: Default::default(),
            sources: Mutex::default(),
        }
    }

    /// Whether metrics are recorded.
    pub(crate) fn on(&self) -> bool {
        self.on
    }

    /// A request started; the guard ends it.
    pub(crate) fn start(&self) -> InFlight<'_> {
        if !self.on {
            return InFlight(None);
        }
        self.in_flight.fetch_add(1, Ordering::Relaxed);
        InFlight(Some(self))
    }

    /// A request finished after `took`: `error` is its `error.type` (`None`: success).
    pub(crate) fn operation(
        &self,
        method: &str,
        target: Option<&str>,
        error: Option<&str>,
        took: Duration,
    ) {
        if !self.on {
            return;
        }
        let secs = took.as_secs_f64();
        let mut ops = lock(&self.ops);
        // A known series: no allocation on the request's path.
        if let Some(h) = ops.find(method, target, error) {
            h.observe(secs);
            return;
        }
        let mut key = OpKey {
            method: method.to_owned(),
            target: target.map(str::to_owned),
            error: error.map(str::to_owned),
        };
        if ops.len >= self.max_series {
            key.target = Some("_other".into());
            if !ops.iter().any(|(k, _)| k.method == key.method) {
                key.method = "_other".into();
            }
        }
        ops.entry(key).observe(secs);
    }

    /// A session (`stdio` connection or legacy HTTP session) ended after `lived`.
    pub(crate) fn session_ended(&self, transport: &'static str, lived: Duration) {
        if self.on {
            lock(&self.sessions)
                .entry(transport)
                .or_default()
                .observe(lived.as_secs_f64());
        }
    }

    /// The engine refused work.
    pub(crate) fn refused(&self, why: Refusal) {
        if !self.on {
            return;
        }
        if let Some(i) = REFUSALS.iter().position(|(r, _)| *r == why) {
            self.refused[i].fetch_add(1, Ordering::Relaxed);
        }
    }

    /// Report an HTTP endpoint's gauges while it lives.
    pub(crate) fn add_source(&self, s: Weak<dyn GaugeSource>) {
        let mut v = lock(&self.sources);
        v.retain(|w| w.strong_count() > 0);
        v.push(s);
    }

    /// A copy of everything recorded so far (sorted, so expositions are stable).
    pub(crate) fn snapshot(&self) -> Snapshot {
        let mut ops: Vec<(OpKey, Hist)> = lock(&self.ops)
            .iter()
            .map(|(k, h)| (k.clone(), h.clone()))
            .collect();
        ops.sort_by(|a, b| a.0.cmp(&b.0));
        let mut sessions: Vec<(&'static str, Hist)> = lock(&self.sessions)
            .iter()
            .map(|(k, h)| (*k, h.clone()))
            .collect();
        sessions.sort_by(|a, b| a.0.cmp(b.0));
        let refused = REFUSALS
            .iter()
            .enumerate()
            .map(|(i, (_, name))| (*name, self.refused[i].load(Ordering::Relaxed)))
            .collect();
        let mut gauges = (0, 0, 0);
        for s in lock(&self.sources).iter().filter_map(Weak::upgrade) {
            let (a, b, c) = s.gauges();
            gauges = (gauges.0 + a, gauges.1 + b, gauges.2 + c);
        }
        Snapshot {
            side: self.side,
            ops,
            sessions,
            in_flight: self.in_flight.load(Ordering::Relaxed).max(0),
            refused,
            gauges,
            spans_dropped: spans_dropped(),
        }
    }

    /// The Prometheus text exposition (format 0.0.4) of everything recorded so far.
    pub(crate) fn render(&self) -> String {
        render(&self.snapshot())
    }
}

/// The process exporter's dropped-span count: `None` when nothing is exported (or the `otlp`
/// feature is off).
fn spans_dropped() -> Option<u64> {
    #[cfg(feature = "otlp")]
    return super::install::spans_dropped();
    #[cfg(not(feature = "otlp"))]
    None
}

/// Several servers' snapshots as one (the bindings build a core server per transport they
/// serve): series with the same labels are added.
pub(crate) fn merge(snaps: Vec<Snapshot>) -> Snapshot {
    let mut it = snaps.into_iter();
    let Some(mut acc) = it.next() else {
        return Snapshot {
            side: Side::Server,
            ops: Vec::new(),
            sessions: Vec::new(),
            in_flight: 0,
            refused: REFUSALS.iter().map(|(_, n)| (*n, 0)).collect(),
            gauges: (0, 0, 0),
            spans_dropped: spans_dropped(),
        };
    };
    for s in it {
        for (k, h) in s.ops {
            match acc.ops.iter_mut().find(|(ak, _)| *ak == k) {
                Some((_, ah)) => ah.add(&h),
                None => acc.ops.push((k, h)),
            }
        }
        for (t, h) in s.sessions {
            match acc.sessions.iter_mut().find(|(at, _)| *at == t) {
                Some((_, ah)) => ah.add(&h),
                None => acc.sessions.push((t, h)),
            }
        }
        acc.in_flight += s.in_flight;
        for ((_, a), (_, b)) in acc.refused.iter_mut().zip(s.refused) {
            *a += b;
        }
        acc.gauges = (
            acc.gauges.0 + s.gauges.0,
            acc.gauges.1 + s.gauges.1,
            acc.gauges.2 + s.gauges.2,
        );
        // The process's one exporter: the same count in every snapshot, not summed.
        acc.spans_dropped = acc.spans_dropped.max(s.spans_dropped);
    }
    acc.ops.sort_by(|a, b| a.0.cmp(&b.0));
    acc.sessions.sort_by(|a, b| a.0.cmp(b.0));
    acc
}

/// The Prometheus text exposition (format 0.0.4) of a snapshot.
pub(crate) fn render(snap: &Snapshot) -> String {
    let mut out = String::with_capacity(2048);
    let side = snap.side.name();
    let verb = match snap.side {
        Side::Server => "handled by the server",
        Side::Client => "sent by the client",
    };
    let op = format!("mcp_{side}_operation_duration_seconds");
    header(
        &mut out,
        &op,
        "histogram",
        &format!("Duration of MCP requests {verb}."),
    );
    for (k, h) in &snap.ops {
        histogram(&mut out, &op, &op_labels(k), h);
    }
    let req = format!("mcpcore_{side}_requests_total");
    let help = format!("MCP requests {verb}, by method, target and outcome.");
    header(&mut out, &req, "counter", &help);
    for (k, h) in &snap.ops {
        let _ = writeln!(out, "{req}{{{}}} {}", op_labels(k), h.count);
    }
    let sess = format!("mcp_{side}_session_duration_seconds");
    let help = "Lifetime of MCP sessions (stdio connections, HTTP sessions).";
    header(&mut out, &sess, "histogram", help);
    for (t, h) in &snap.sessions {
        histogram(&mut out, &sess, &format!("network_transport=\"{t}\""), h);
    }
    let flight = format!("mcpcore_{side}_requests_in_flight");
    header(&mut out, &flight, "gauge", "Requests not answered yet.");
    let _ = writeln!(out, "{flight} {}", snap.in_flight);
    if snap.side == Side::Server {
        render_server_only(&mut out, snap);
    }
    out
}

/// Refusals and the HTTP endpoints' gauges: a server's alone.
fn render_server_only(out: &mut String, snap: &Snapshot) {
    let refused = "mcpcore_server_refused_total";
    header(
        out,
        refused,
        "counter",
        "Work the engine refused, by reason.",
    );
    for (name, n) in &snap.refused {
        let _ = writeln!(out, "{refused}{{reason=\"{name}\"}} {n}");
    }
    let (sessions, listens, conns) = snap.gauges;
    for (name, help, v) in [
        (
            "mcpcore_legacy_sessions",
            "Live legacy HTTP sessions.",
            sessions,
        ),
        (
            "mcpcore_listen_streams",
            "Open subscriptions/listen streams.",
            listens,
        ),
        ("mcpcore_http_connections", "Open HTTP connections.", conns),
    ] {
        header(out, name, "gauge", help);
        let _ = writeln!(out, "{name} {v}");
    }
    if let Some(n) = snap.spans_dropped {
        let name = "mcpcore_telemetry_spans_dropped_total";
        let help =
            "Finished spans the OTLP exporter dropped because its queue (maxQueue) was full.";
        header(out, name, "counter", help);
        let _ = writeln!(out, "{name} {n}");
    }
}

/// Everything one server's (or client's) metrics hold at one moment.
pub(crate) struct Snapshot {
    pub side: Side,
    pub ops: Vec<(OpKey, Hist)>,
    pub sessions: Vec<(&'static str, Hist)>,
    pub in_flight: i64,
    pub refused: Vec<(&'static str, u64)>,
    /// (live legacy sessions, listen streams, open HTTP connections).
    pub gauges: (usize, usize, usize),
    /// Spans the process's OTLP exporter dropped (its queue full); `None` when nothing is
    /// exported. One count for the process, not per server.
    pub spans_dropped: Option<u64>,
}

fn header(out: &mut String, name: &str, kind: &str, help: &str) {
    let _ = writeln!(out, "# HELP {name} {help}");
    let _ = writeln!(out, "# TYPE {name} {kind}");
}

/// A label value escaped as the exposition format requires (`\\`, `\"`, `\n`).
fn escape(v: &str) -> String {
    v.replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n")
}

fn op_labels(k: &OpKey) -> String {
    let mut l = format!("mcp_method_name=\"{}\"", escape(&k.method));
    if let Some(t) = &k.target {
        let name = k.target_attribute().replace('.', "_");
        let _ = write!(l, ",{name}=\"{}\"", escape(t));
    }
    if let Some(e) = &k.error {
        let _ = write!(l, ",error_type=\"{}\"", escape(e));
    }
    l
}

fn histogram(out: &mut String, name: &str, labels: &str, h: &Hist) {
    for (b, c) in BUCKETS.iter().zip(h.counts) {
        let _ = writeln!(out, "{name}_bucket{{{labels},le=\"{b}\"}} {c}");
    }
    let _ = writeln!(out, "{name}_bucket{{{labels},le=\"+Inf\"}} {}", h.count);
    let _ = writeln!(out, "{name}_sum{{{labels}}} {}", h.sum);
    let _ = writeln!(out, "{name}_count{{{labels}}} {}", h.count);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn off_records_nothing() {
        let m = Metrics::new(false, 10);
        let _g = m.start();
        m.operation("tools/call", Some("echo"), None, Duration::from_millis(3));
        m.refused(Refusal::Busy);
        let text = m.render();
        assert!(!text.contains("echo"), "{text}");
        assert!(
            text.contains("mcpcore_server_requests_in_flight 0"),
            "{text}"
        );
    }

    #[test]
    fn series_are_bounded() {
        let m = Metrics::new(true, 2);
        for i in 0..50 {
            m.operation("tools/call", Some(&format!("t{i}")), None, Duration::ZERO);
        }
        let text = m.render();
        assert!(text.contains("gen_ai_tool_name=\"_other\""), "{text}");
        assert!(!text.contains("t49"), "{text}");
        assert_eq!(lock(&m.ops).len, 3);
    }

    #[test]
    fn merged_servers_add_their_series() {
        let (a, b) = (Metrics::new(true, 10), Metrics::new(true, 10));
        a.operation("tools/call", Some("echo"), None, Duration::from_millis(1));
        b.operation("tools/call", Some("echo"), None, Duration::from_millis(1));
        b.operation("tools/list", None, None, Duration::ZERO);
        b.refused(Refusal::Auth);
        let text = render(&merge(vec![a.snapshot(), b.snapshot()]));
        let echo = r#"mcpcore_server_requests_total{mcp_method_name="tools/call",gen_ai_tool_name="echo"} 2"#;
        assert!(text.contains(echo), "{text}");
        assert!(text.contains(r#"mcpcore_server_requests_total{mcp_method_name="tools/list"} 1"#));
        assert!(text.contains(r#"mcpcore_server_refused_total{reason="auth"} 1"#));
        assert_eq!(
            text.matches("# TYPE mcpcore_server_requests_total").count(),
            1
        );
        assert!(render(&merge(Vec::new())).contains("mcpcore_server_requests_in_flight 0"));
    }

    #[test]
    fn labels_are_escaped() {
        let m = Metrics::new(true, 10);
        m.operation(
            "tools/call",
            Some("a\"b\\c\nd"),
            Some("-32602"),
            Duration::ZERO,
        );
        let text = m.render();
        assert!(
            text.contains(r#"gen_ai_tool_name="a\"b\\c\nd",error_type="-32602""#),
            "{text}"
        );
    }
}
