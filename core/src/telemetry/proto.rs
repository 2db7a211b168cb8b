//! The few OTLP protobuf messages the exporter sends (opentelemetry-proto `trace/v1`,
//! `collector/trace/v1`), encoded by hand: a length-delimited field per sub-message, varints and
//! fixed-width integers as the protobuf wire format defines them. Field numbers are those of the
//! official `.proto` files (tests decode the output with them).

/// An attribute value.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Val {
    Str(String),
    Int(i64),
    Bool(bool),
    F64(f64),
}

/// One finished span, ready to encode.
#[derive(Clone, Debug)]
pub(crate) struct SpanData {
    pub trace_id: [u8; 16],
    pub span_id: [u8; 8],
    pub parent_span_id: Option<[u8; 8]>,
    pub trace_state: Option<String>,
    pub name: String,
    /// SpanKind: 1 internal, 2 server, 3 client.
    pub kind: u64,
    pub start_ns: u64,
    pub end_ns: u64,
    pub attributes: Vec<(&'static str, Val)>,
    /// Status code: 0 unset, 2 error.
    pub status: u64,
}

pub(crate) fn varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

pub(crate) fn tag(out: &mut Vec<u8>, field: u64, wire: u64) {
    varint(out, (field << 3) | wire);
}

pub(crate) fn bytes(out: &mut Vec<u8>, field: u64, b: &[u8]) {
    tag(out, field, 2);
    varint(out, b.len() as u64);
    out.extend_from_slice(b);
}

pub(crate) fn message(out: &mut Vec<u8>, field: u64, f: impl FnOnce(&mut Vec<u8>)) {
    let mut inner = Vec::new();
    f(&mut inner);
    bytes(out, field, &inner);
}

pub(crate) fn fixed64(out: &mut Vec<u8>, field: u64, v: u64) {
    tag(out, field, 1);
    out.extend_from_slice(&v.to_le_bytes());
}

/// `KeyValue { key = 1; AnyValue value = 2 }`, `AnyValue { string 1; bool 2; int64 3; double 4 }`.
pub(crate) fn key_value(out: &mut Vec<u8>, field: u64, k: &str, v: &Val) {
    message(out, field, |kv| {
        bytes(kv, 1, k.as_bytes());
        message(kv, 2, |any| match v {
            Val::Str(s) => bytes(any, 1, s.as_bytes()),
            Val::Bool(b) => {
                tag(any, 2, 0);
                varint(any, u64::from(*b));
            }
            Val::Int(i) => {
                tag(any, 3, 0);
                varint(any, *i as u64);
            }
            Val::F64(f) => fixed64_f(any, 4, *f),
        });
    });
}

fn fixed64_f(out: &mut Vec<u8>, field: u64, v: f64) {
    tag(out, field, 1);
    out.extend_from_slice(&v.to_le_bytes());
}

/// `Span`: trace_id 1, span_id 2, trace_state 3, parent_span_id 4, name 5, kind 6,
/// start 7, end 8 (fixed64), attributes 9, status 15 (`Status { message 2; code 3 }`).
fn span(out: &mut Vec<u8>, s: &SpanData) {
    message(out, 2, |m| {
        bytes(m, 1, &s.trace_id);
        bytes(m, 2, &s.span_id);
        if let Some(ts) = &s.trace_state {
            bytes(m, 3, ts.as_bytes());
        }
        if let Some(p) = &s.parent_span_id {
            bytes(m, 4, p);
        }
        bytes(m, 5, s.name.as_bytes());
        tag(m, 6, 0);
        varint(m, s.kind);
        fixed64(m, 7, s.start_ns);
        fixed64(m, 8, s.end_ns);
        for (k, v) in &s.attributes {
            key_value(m, 9, k, v);
        }
        if s.status != 0 {
            message(m, 15, |st| {
                tag(st, 3, 0);
                varint(st, s.status);
            });
        }
    });
}

/// `ExportTraceServiceRequest { repeated ResourceSpans resource_spans = 1 }` with one resource
/// (`Resource { attributes = 1 }`) and one scope (`ScopeSpans { scope = 1; spans = 2 }`,
/// `InstrumentationScope { name = 1; version = 2 }`).
pub(crate) fn export_request(resource: &[(String, Val)], spans: &[SpanData]) -> Vec<u8> {
    let mut out = Vec::with_capacity(256 * spans.len() + 128);
    message(&mut out, 1, |rs| {
        message(rs, 1, |r| {
            for (k, v) in resource {
                key_value(r, 1, k, v);
            }
        });
        message(rs, 2, |ss| {
            message(ss, 1, |scope| {
                bytes(scope, 1, b"mcpcore");
                bytes(scope, 2, env!("CARGO_PKG_VERSION").as_bytes());
            });
            for s in spans {
                span(ss, s);
            }
        });
    });
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn varints_are_little_endian_base_128() {
        let mut v = Vec::new();
        varint(&mut v, 300);
        assert_eq!(v, [0xAC, 0x02]);
        let mut v = Vec::new();
        varint(&mut v, (-1i64) as u64);
        assert_eq!(v.len(), 10, "a negative int64 takes ten bytes");
    }

    #[test]
    fn a_span_encodes_its_ids_and_name() {
        let s = SpanData {
            trace_id: [1; 16],
            span_id: [2; 8],
            parent_span_id: None,
            trace_state: None,
            name: "tools/call echo".into(),
            kind: 2,
            start_ns: 1,
            end_ns: 2,
            attributes: vec![("k", Val::Str("v".into()))],
            status: 2,
        };
        let out = export_request(&[], &[s]);
        let find = |needle: &[u8]| out.windows(needle.len()).any(|w| w == needle);
        assert!(find(&[0x0A, 16, 1, 1, 1]), "trace_id as field 1, 16 bytes");
        assert!(find(b"tools/call echo"));
        assert!(find(&[0x7A, 2, 0x18, 2]), "status {{ code: ERROR }}");
    }
}
