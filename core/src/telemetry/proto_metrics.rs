//! OTLP metrics (opentelemetry-proto `metrics/v1`, `collector/metrics/v1`), encoded by hand
//! like the spans: `mcp.{server,client}.operation.duration` and
//! `mcp.{server,client}.session.duration` as cumulative histograms with the conventions' bounds,
//! requests and refusals as cumulative sums, in-flight requests and the HTTP endpoints' gauges
//! as gauges.

use super::metrics::{merge, Hist, Side, Snapshot, BUCKETS};
use super::proto::{bytes, fixed64, key_value, message, tag, varint, Val};

/// `AggregationTemporality.CUMULATIVE`.
const CUMULATIVE: u64 = 2;

struct Point<'a> {
    attrs: Vec<(&'a str, Val)>,
    start: u64,
    now: u64,
}

fn attrs(m: &mut Vec<u8>, field: u64, attrs: &[(&str, Val)]) {
    for (k, v) in attrs {
        key_value(m, field, k, v);
    }
}

/// `HistogramDataPoint { start 2; time 3; count 4 (fixed64); sum 5 (double);
/// bucket_counts 6 (packed fixed64, per bucket); explicit_bounds 7 (packed double);
/// attributes 9 }`.
fn hist_point(out: &mut Vec<u8>, p: &Point<'_>, h: &Hist) {
    message(out, 1, |d| {
        fixed64(d, 2, p.start);
        fixed64(d, 3, p.now);
        fixed64(d, 4, h.count);
        fixed64(d, 5, h.sum.to_bits());
        let mut counts = Vec::with_capacity(8 * (BUCKETS.len() + 1));
        let mut below = 0;
        for c in h.counts.iter().copied().chain(std::iter::once(h.count)) {
            counts.extend_from_slice(&(c - below).to_le_bytes());
            below = c;
        }
        bytes(d, 6, &counts);
        let bounds: Vec<u8> = BUCKETS.iter().flat_map(|b| b.to_le_bytes()).collect();
        bytes(d, 7, &bounds);
        attrs(d, 9, &p.attrs);
    });
}

/// `NumberDataPoint { start 2; time 3; as_int 6 (sfixed64); attributes 7 }`.
fn number_point(out: &mut Vec<u8>, p: &Point<'_>, v: i64) {
    message(out, 1, |d| {
        fixed64(d, 2, p.start);
        fixed64(d, 3, p.now);
        fixed64(d, 6, v as u64);
        attrs(d, 7, &p.attrs);
    });
}

/// `Metric { name 1; description 2; unit 3; gauge 5 | sum 7 | histogram 9 }`.
fn metric(out: &mut Vec<u8>, name: &str, unit: &str, kind: u64, points: impl FnOnce(&mut Vec<u8>)) {
    message(out, 2, |m| {
        bytes(m, 1, name.as_bytes());
        bytes(m, 3, unit.as_bytes());
        message(m, kind, |data| {
            points(data);
            if kind != 5 {
                tag(data, 2, 0);
                varint(data, CUMULATIVE);
            }
            if kind == 7 {
                tag(data, 3, 0);
                varint(data, 1);
            }
        });
    });
}

fn op_attrs(k: &super::metrics::OpKey) -> Vec<(&str, Val)> {
    let mut a = vec![("mcp.method.name", Val::Str(k.method.clone()))];
    if let Some(t) = &k.target {
        a.push((k.target_attribute(), Val::Str(t.clone())));
    }
    if let Some(e) = &k.error {
        a.push(("error.type", Val::Str(e.clone())));
    }
    a
}

fn side_metrics(sm: &mut Vec<u8>, snap: &Snapshot, start: u64, now: u64) {
    let pt = |attrs| Point { attrs, start, now };
    let side = snap.side.name();
    metric(sm, &format!("mcp.{side}.operation.duration"), "s", 9, |d| {
        for (k, h) in &snap.ops {
            hist_point(d, &pt(op_attrs(k)), h);
        }
    });
    metric(sm, &format!("mcp.{side}.session.duration"), "s", 9, |d| {
        for (t, h) in &snap.sessions {
            hist_point(
                d,
                &pt(vec![("network.transport", Val::Str((*t).into()))]),
                h,
            );
        }
    });
    metric(
        sm,
        &format!("mcpcore.{side}.requests"),
        "{request}",
        7,
        |d| {
            for (k, h) in &snap.ops {
                number_point(
                    d,
                    &pt(op_attrs(k)),
                    i64::try_from(h.count).unwrap_or(i64::MAX),
                );
            }
        },
    );
    let flight = format!("mcpcore.{side}.requests_in_flight");
    metric(sm, &flight, "{request}", 5, |d| {
        number_point(d, &pt(Vec::new()), snap.in_flight);
    });
    if snap.side != Side::Server {
        return;
    }
    metric(sm, "mcpcore.server.refused", "{request}", 7, |d| {
        for (r, n) in &snap.refused {
            let v = i64::try_from(*n).unwrap_or(i64::MAX);
            number_point(d, &pt(vec![("reason", Val::Str((*r).into()))]), v);
        }
    });
    let as_i = |n: usize| i64::try_from(n).unwrap_or(i64::MAX);
    let (sessions, listens, conns) = snap.gauges;
    for (name, unit, v) in [
        ("mcpcore.legacy_sessions", "{session}", as_i(sessions)),
        ("mcpcore.listen_streams", "{stream}", as_i(listens)),
        ("mcpcore.http_connections", "{connection}", as_i(conns)),
    ] {
        metric(sm, name, unit, 5, |d| number_point(d, &pt(Vec::new()), v));
    }
    if let Some(n) = snap.spans_dropped {
        let v = i64::try_from(n).unwrap_or(i64::MAX);
        metric(sm, "mcpcore.telemetry.spans_dropped", "{span}", 7, |d| {
            number_point(d, &pt(Vec::new()), v);
        });
    }
}

/// `ExportMetricsServiceRequest { resource_metrics 1 }`: one `ResourceMetrics { resource 1;
/// scope_metrics 2 }` with one `ScopeMetrics { scope 1; metrics 2 }` for the process's servers
/// and one for its clients, each the sum of every live registry of its side — a point's
/// identity is its name and attributes, so two servers (the bindings build one per transport)
/// must not report the same series twice.
pub(crate) fn export_request(
    resource: &[(String, Val)],
    snaps: Vec<Snapshot>,
    start: u64,
    now: u64,
) -> Vec<u8> {
    let (servers, clients): (Vec<Snapshot>, Vec<Snapshot>) =
        snaps.into_iter().partition(|s| s.side == Side::Server);
    let mut out = Vec::with_capacity(1024);
    message(&mut out, 1, |rm| {
        message(rm, 1, |r| {
            for (k, v) in resource {
                key_value(r, 1, k, v);
            }
        });
        for group in [servers, clients] {
            if group.is_empty() {
                continue;
            }
            let snap = merge(group);
            message(rm, 2, |sm| {
                message(sm, 1, |scope| {
                    bytes(scope, 1, b"mcpcore");
                    bytes(scope, 2, env!("CARGO_PKG_VERSION").as_bytes());
                });
                side_metrics(sm, &snap, start, now);
            });
        }
    });
    out
}
