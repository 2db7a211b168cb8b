//! The few OTLP protobuf messages the exporter sends (opentelemetry-proto `trace/v1`,
//! `collector/trace/v1`), encoded by hand: a length-delimited field per sub-message, varints and
//! fixed-width integers as the protobuf wire format defines them. Field numbers are those of the
//! official `.proto` files (tests decode the output with them).

/// A resource attribute's or metric label's value (always text; span attributes of other
/// kinds are written by `otlp_span`).
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Val {
    Str(String),
}

#[inline]
pub(crate) fn varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

#[inline]
pub(crate) fn tag(out: &mut Vec<u8>, field: u64, wire: u64) {
    varint(out, (field << 3) | wire);
}

#[inline]
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

#[inline]
pub(crate) fn fixed64(out: &mut Vec<u8>, field: u64, v: u64) {
    tag(out, field, 1);
    out.extend_from_slice(&v.to_le_bytes());
}

// Sizes, so each message's length is written before its fields and nothing is encoded twice
// or into a temporary buffer. Every field number used here is below 16: a tag is one byte.

#[inline]
pub(crate) fn varint_len(v: u64) -> usize {
    (64 - (v | 1).leading_zeros() as usize).div_ceil(7)
}

/// A length-delimited field of `n` bytes, tag and length included.
#[inline]
pub(crate) fn field_len(n: usize) -> usize {
    1 + varint_len(n as u64) + n
}

fn any_len(v: &Val) -> usize {
    match v {
        Val::Str(s) => field_len(s.len()),
    }
}

fn key_value_len(k: &str, v: &Val) -> usize {
    field_len(k.len()) + field_len(any_len(v))
}

/// Tag and length of a sub-message of `n` bytes.
#[inline]
pub(crate) fn header(out: &mut Vec<u8>, field: u64, n: usize) {
    tag(out, field, 2);
    varint(out, n as u64);
}

/// `KeyValue { key = 1; AnyValue value = 2 }`, `AnyValue { string 1 }`.
pub(crate) fn key_value(out: &mut Vec<u8>, field: u64, k: &str, v: &Val) {
    header(out, field, key_value_len(k, v));
    bytes(out, 1, k.as_bytes());
    header(out, 2, any_len(v));
    match v {
        Val::Str(s) => bytes(out, 1, s.as_bytes()),
    }
}

/// `ExportTraceServiceRequest { repeated ResourceSpans resource_spans = 1 }` with one resource
/// (`Resource { attributes = 1 }`) and one scope (`ScopeSpans { scope = 1; spans = 2 }`,
/// `InstrumentationScope { name = 1; version = 2 }`). `spans`: `ScopeSpans.spans` fields,
/// already encoded (each span is encoded when it closes).
pub(crate) fn export_request(resource: &[(String, Val)], spans: &[u8]) -> Vec<u8> {
    const SCOPE: &[u8] = b"mcpcore";
    const VERSION: &[u8] = env!("CARGO_PKG_VERSION").as_bytes();
    let resource_len: usize = resource
        .iter()
        .map(|(k, v)| field_len(key_value_len(k, v)))
        .sum();
    let scope_len = field_len(SCOPE.len()) + field_len(VERSION.len());
    let scope_spans_len = field_len(scope_len) + spans.len();
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
    out.extend_from_slice(spans);
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
        assert_eq!(varint_len((-1i64) as u64), 10);
        assert_eq!(varint_len(300), 2);
        assert_eq!(varint_len(0), 1);
    }

    /// Lengths are computed before the fields are written: they must equal what is written,
    /// for every value kind and for lengths that need a two-byte varint.
    #[test]
    fn computed_lengths_match_the_bytes_written() {
        for v in [Val::Str("x".repeat(200)), Val::Str(String::new())] {
            let mut out = Vec::new();
            key_value(&mut out, 9, "key", &v);
            assert_eq!(out.len(), field_len(key_value_len("key", &v)), "{v:?}");
        }
        let spans = [0x12, 0x00, 0x12, 0x00];
        let whole = export_request(&[("service.name".into(), Val::Str("s".into()))], &spans);
        assert_eq!(whole.capacity(), whole.len(), "sized exactly, never grown");
        assert!(whole.ends_with(&spans), "the encoded spans close the scope");
    }
}
