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
    pub name: std::borrow::Cow<'static, str>,
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

// Sizes, so each message's length is written before its fields and nothing is encoded twice
// or into a temporary buffer. Every field number used here is below 16: a tag is one byte.

fn varint_len(v: u64) -> usize {
    (64 - (v | 1).leading_zeros() as usize).div_ceil(7)
}

/// A length-delimited field of `n` bytes, tag and length included.
fn field_len(n: usize) -> usize {
    1 + varint_len(n as u64) + n
}

fn any_len(v: &Val) -> usize {
    match v {
        Val::Str(s) => field_len(s.len()),
        Val::Bool(_) => 2,
        Val::Int(i) => 1 + varint_len(*i as u64),
        Val::F64(_) => 9,
    }
}

fn key_value_len(k: &str, v: &Val) -> usize {
    field_len(k.len()) + field_len(any_len(v))
}

/// Tag and length of a sub-message of `n` bytes.
fn header(out: &mut Vec<u8>, field: u64, n: usize) {
    tag(out, field, 2);
    varint(out, n as u64);
}

/// `KeyValue { key = 1; AnyValue value = 2 }`, `AnyValue { string 1; bool 2; int64 3; double 4 }`.
pub(crate) fn key_value(out: &mut Vec<u8>, field: u64, k: &str, v: &Val) {
    header(out, field, key_value_len(k, v));
    bytes(out, 1, k.as_bytes());
    header(out, 2, any_len(v));
    match v {
        Val::Str(s) => bytes(out, 1, s.as_bytes()),
        Val::Bool(b) => {
            tag(out, 2, 0);
            varint(out, u64::from(*b));
        }
        Val::Int(i) => {
            tag(out, 3, 0);
            varint(out, *i as u64);
        }
        Val::F64(f) => fixed64_f(out, 4, *f),
    }
}

fn fixed64_f(out: &mut Vec<u8>, field: u64, v: f64) {
    tag(out, field, 1);
    out.extend_from_slice(&v.to_le_bytes());
}

fn span_len(s: &SpanData) -> usize {
    let mut n = field_len(16) + field_len(8) + field_len(s.name.len());
    n += s.trace_state.as_ref().map_or(0, |t| field_len(t.len()));
    n += s.parent_span_id.map_or(0, |_| field_len(8));
    n += 1 + varint_len(s.kind) + 9 + 9;
    n += s
        .attributes
        .iter()
        .map(|(k, v)| field_len(key_value_len(k, v)))
        .sum::<usize>();
    if s.status != 0 {
        n += field_len(1 + varint_len(s.status));
    }
    n
}

/// `Span`: trace_id 1, span_id 2, trace_state 3, parent_span_id 4, name 5, kind 6,
/// start 7, end 8 (fixed64), attributes 9, status 15 (`Status { message 2; code 3 }`).
fn span(out: &mut Vec<u8>, s: &SpanData, len: usize) {
    header(out, 2, len);
    bytes(out, 1, &s.trace_id);
    bytes(out, 2, &s.span_id);
    if let Some(ts) = &s.trace_state {
        bytes(out, 3, ts.as_bytes());
    }
    if let Some(p) = &s.parent_span_id {
        bytes(out, 4, p);
    }
    bytes(out, 5, s.name.as_bytes());
    tag(out, 6, 0);
    varint(out, s.kind);
    fixed64(out, 7, s.start_ns);
    fixed64(out, 8, s.end_ns);
    for (k, v) in &s.attributes {
        key_value(out, 9, k, v);
    }
    if s.status != 0 {
        header(out, 15, 1 + varint_len(s.status));
        tag(out, 3, 0);
        varint(out, s.status);
    }
}

/// `ExportTraceServiceRequest { repeated ResourceSpans resource_spans = 1 }` with one resource
/// (`Resource { attributes = 1 }`) and one scope (`ScopeSpans { scope = 1; spans = 2 }`,
/// `InstrumentationScope { name = 1; version = 2 }`).
pub(crate) fn export_request(resource: &[(String, Val)], spans: &[SpanData]) -> Vec<u8> {
    const SCOPE: &[u8] = b"mcpcore";
    const VERSION: &[u8] = env!("CARGO_PKG_VERSION").as_bytes();
    let resource_len: usize = resource
        .iter()
        .map(|(k, v)| field_len(key_value_len(k, v)))
        .sum();
    let scope_len = field_len(SCOPE.len()) + field_len(VERSION.len());
    let lens: Vec<usize> = spans.iter().map(span_len).collect();
    let spans_len: usize = lens.iter().map(|n| field_len(*n)).sum();
    let scope_spans_len = field_len(scope_len) + spans_len;
    let resource_spans_len = field_len(resource_len) + field_len(scope_spans_len);
    let mut out = Vec::with_capacity(field_len(resource_spans_len));
    header(&mut out, 1, resource_spans_len);
    header(&mut out, 1, resource_len);
    for (k, v) in resource {
        key_value(&mut out, 1, k, v);
    }
    header(&mut out, 2, scope_spans_len);
    header(&mut out, 1, scope_len);
    bytes(&mut out, 1, SCOPE);
    bytes(&mut out, 2, VERSION);
    for (s, len) in spans.iter().zip(lens) {
        span(&mut out, s, len);
    }
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

    /// Lengths are computed before the fields are written: they must equal what is written,
    /// for every value kind and for lengths that need a two-byte varint.
    #[test]
    fn computed_lengths_match_the_bytes_written() {
        for v in [
            Val::Str("x".repeat(200)),
            Val::Int(-1),
            Val::Int(300),
            Val::Bool(true),
            Val::F64(1.5),
        ] {
            let mut out = Vec::new();
            key_value(&mut out, 9, "key", &v);
            assert_eq!(out.len(), field_len(key_value_len("key", &v)), "{v:?}");
        }
        let s = SpanData {
            trace_id: [1; 16],
            span_id: [2; 8],
            parent_span_id: Some([3; 8]),
            trace_state: Some("a=b".into()),
            name: "n".repeat(130).into(),
            kind: 2,
            start_ns: 1,
            end_ns: 2,
            attributes: (0..20).map(|i| ("k", Val::Int(i))).collect(),
            status: 2,
        };
        let mut out = Vec::new();
        span(&mut out, &s, span_len(&s));
        assert_eq!(out.len(), field_len(span_len(&s)));
        let whole = export_request(&[("service.name".into(), Val::Str("s".into()))], &[s]);
        assert_eq!(whole.capacity(), whole.len(), "sized exactly, never grown");
    }
}
