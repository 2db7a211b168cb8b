//! A test OTLP/HTTP receiver on 127.0.0.1 (it keeps every `POST /v1/traces` body) and a reader
//! of the protobuf it receives: the fields of opentelemetry-proto's `trace/v1` messages the
//! tests check (span ids, parent, name, kind, string and int attributes, status).

use std::collections::HashMap;

use mcpcore::client::{Client, ConnectMode, HttpClientOptions};
use mcpcore::transport::http::{serve, HttpListener, HttpOptions};
use mcpcore::{handler_fn, CallToolResult, HandlerError, Server, ServerOptions, Tool};
use serde_json::Value;

/// A server with an `echo` tool answering its arguments as text (`opts` adjusts its options).
pub fn echo_server(name: &str, opts: impl FnOnce(&mut ServerOptions)) -> Server {
    Server::builder(name, "1")
        .options(opts)
        .tool(
            Tool::new("echo"),
            handler_fn(|_ctx, args: Value| async move {
                Ok::<_, HandlerError>(CallToolResult::text(args.to_string()))
            }),
        )
        .build()
        .expect("server")
}

/// `server` on 127.0.0.1 over HTTP, and a 2026-07-28 client connected to it.
pub async fn served_over_http(server: Server) -> (HttpListener, Client) {
    let l = serve(
        server,
        "127.0.0.1:0".parse().expect("addr"),
        HttpOptions::default(),
    )
    .await
    .expect("listen");
    let c = Client::builder()
        .mode(ConnectMode::Modern)
        .connect_http(
            &format!("http://{}/mcp", l.local_addr()),
            HttpClientOptions::default(),
        )
        .await
        .expect("connect");
    (l, c)
}

/// One exported span, as decoded.
#[derive(Clone, Debug, Default)]
pub struct Span {
    pub trace_id: String,
    pub span_id: String,
    pub parent_span_id: String,
    pub name: String,
    pub kind: u64,
    pub attributes: HashMap<String, String>,
    pub status: u64,
    pub service: String,
}

/// The receiver: a scripted HTTP server answering 200 to every export.
pub struct Receiver {
    server: crate::scripted::Scripted,
}

impl Receiver {
    /// Serve on 127.0.0.1, port 0.
    pub async fn start() -> Self {
        let server = crate::scripted::Scripted::start(|_| {
            crate::scripted::raw(200, "application/x-protobuf", "", b"")
        })
        .await;
        Self { server }
    }

    /// The base URL (`http://127.0.0.1:N`), as `OTEL_EXPORTER_OTLP_ENDPOINT` takes it.
    pub fn endpoint(&self) -> String {
        self.server.url.trim_end_matches("/mcp").to_owned()
    }

    fn bodies(&self, path: &str) -> Vec<Vec<u8>> {
        self.server
            .requests()
            .into_iter()
            .inspect(|r| assert_eq!(r.method, "POST"))
            .inspect(|r| assert!(r.head.contains("content-type: application/x-protobuf")))
            .filter(|r| r.target == path)
            .map(|r| r.bytes)
            .collect()
    }

    /// Every span received so far (POSTed to `/v1/traces`).
    pub fn spans(&self) -> Vec<Span> {
        self.bodies("/v1/traces")
            .iter()
            .flat_map(|b| decode(b))
            .collect()
    }

    /// Every metric data point received so far (POSTed to `/v1/metrics`): metric name,
    /// point attributes, and the point's count (histograms) or value (sums, gauges).
    pub fn metric_points(&self) -> Vec<(String, HashMap<String, String>, u64)> {
        self.bodies("/v1/metrics")
            .iter()
            .flat_map(|b| decode_metrics(b))
            .collect()
    }
}

fn varint(b: &[u8], i: &mut usize) -> u64 {
    let mut v = 0u64;
    let mut shift = 0;
    while *i < b.len() {
        let byte = b[*i];
        *i += 1;
        v |= u64::from(byte & 0x7f) << shift;
        if byte & 0x80 == 0 {
            break;
        }
        shift += 7;
    }
    v
}

/// (field, wire type, varint value or the bytes).
fn fields(b: &[u8]) -> Vec<(u64, u64, u64, &[u8])> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let key = varint(b, &mut i);
        let (field, wire) = (key >> 3, key & 7);
        match wire {
            0 => out.push((field, 0, varint(b, &mut i), &b[0..0])),
            1 => {
                out.push((field, 1, 0, &b[i..i + 8]));
                i += 8;
            }
            2 => {
                let n = varint(b, &mut i) as usize;
                out.push((field, 2, 0, &b[i..i + n]));
                i += n;
            }
            5 => {
                out.push((field, 5, 0, &b[i..i + 4]));
                i += 4;
            }
            _ => break,
        }
    }
    out
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

fn key_value(b: &[u8]) -> (String, String) {
    let mut k = String::new();
    let mut v = String::new();
    for (f, _, _, bytes) in fields(b) {
        match f {
            1 => k = String::from_utf8_lossy(bytes).into_owned(),
            2 => {
                for (af, _, n, ab) in fields(bytes) {
                    v = match af {
                        1 => String::from_utf8_lossy(ab).into_owned(),
                        2 | 3 => n.to_string(),
                        _ => v,
                    };
                }
            }
            _ => {}
        }
    }
    (k, v)
}

/// The spans of one `ExportTraceServiceRequest`.
pub fn decode(body: &[u8]) -> Vec<Span> {
    let mut out = Vec::new();
    for (_, _, _, rs) in fields(body).into_iter().filter(|f| f.0 == 1) {
        let mut service = String::new();
        let parts = fields(rs);
        for (_, _, _, res) in parts.iter().filter(|f| f.0 == 1) {
            for (_, _, _, kv) in fields(res).into_iter().filter(|f| f.0 == 1) {
                let (k, v) = key_value(kv);
                if k == "service.name" {
                    service = v;
                }
            }
        }
        for (_, _, _, ss) in parts.iter().filter(|f| f.0 == 2) {
            for (_, _, _, sp) in fields(ss).into_iter().filter(|f| f.0 == 2) {
                let mut s = Span {
                    service: service.clone(),
                    ..Span::default()
                };
                for (f, _, n, b) in fields(sp) {
                    match f {
                        1 => s.trace_id = hex(b),
                        2 => s.span_id = hex(b),
                        4 => s.parent_span_id = hex(b),
                        5 => s.name = String::from_utf8_lossy(b).into_owned(),
                        6 => s.kind = n,
                        9 => {
                            let (k, v) = key_value(b);
                            s.attributes.insert(k, v);
                        }
                        15 => {
                            for (sf, _, sn, _) in fields(b) {
                                if sf == 3 {
                                    s.status = sn;
                                }
                            }
                        }
                        _ => {}
                    }
                }
                out.push(s);
            }
        }
    }
    out
}

fn fixed(b: &[u8]) -> u64 {
    let mut a = [0u8; 8];
    a.copy_from_slice(&b[..8]);
    u64::from_le_bytes(a)
}

/// The data points of one `ExportMetricsServiceRequest` (`ResourceMetrics` 1 → `ScopeMetrics`
/// 2 → `Metric` 2 → gauge 5 / sum 7 / histogram 9 → data points 1).
pub fn decode_metrics(body: &[u8]) -> Vec<(String, HashMap<String, String>, u64)> {
    let mut out = Vec::new();
    for (_, _, _, rm) in fields(body).into_iter().filter(|f| f.0 == 1) {
        for (_, _, _, sm) in fields(rm).into_iter().filter(|f| f.0 == 2) {
            for (_, _, _, m) in fields(sm).into_iter().filter(|f| f.0 == 2) {
                let mut name = String::new();
                for (f, _, _, b) in fields(m) {
                    match f {
                        1 => name = String::from_utf8_lossy(b).into_owned(),
                        5 | 7 | 9 => {
                            for (_, _, _, dp) in fields(b).into_iter().filter(|x| x.0 == 1) {
                                let mut attrs = HashMap::new();
                                let mut v = 0;
                                for (pf, _, _, pb) in fields(dp) {
                                    match (f, pf) {
                                        (9, 4) | (5 | 7, 6) => v = fixed(pb),
                                        (9, 9) | (5 | 7, 7) => {
                                            let (k, val) = key_value(pb);
                                            attrs.insert(k, val);
                                        }
                                        _ => {}
                                    }
                                }
                                out.push((name.clone(), attrs, v));
                            }
                        }
                        _ => {}
                    }
                }
            }
        }
    }
    out
}
