//! W3C Trace Context (`traceparent` / `tracestate`) carried in `params._meta`, as the
//! OpenTelemetry MCP semantic conventions place it, and over HTTP in the `traceparent` header.
//!
//! Ids come from a SplitMix64 sequence seeded once from the OS: unique and unpredictable enough
//! for trace correlation (they are not secrets), and free of a system call per request.

use serde_json::{Map, Value};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::OnceLock;

/// The `_meta` keys (and HTTP header names) of the W3C Trace Context.
pub const TRACEPARENT: &str = "traceparent";
/// See [`TRACEPARENT`].
pub const TRACESTATE: &str = "tracestate";

/// One span's place in a trace: trace id, span id, flags and the vendor `tracestate`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TraceContext {
    /// 16 bytes, never all zero.
    pub trace_id: [u8; 16],
    /// 8 bytes, never all zero.
    pub span_id: [u8; 8],
    /// Trace flags (bit 0: sampled).
    pub flags: u8,
    /// The `tracestate` list, passed on unchanged.
    pub state: Option<String>,
}

/// Parse lower-case hex of exactly `out`'s length. Upper-case hex is invalid in version 00
/// (W3C Trace Context §3.2.2). A nibble at a time, without `from_str_radix` on substrings:
/// the exporter parses the ids of every recorded span.
pub(crate) fn hex_into(s: &str, out: &mut [u8]) -> Option<()> {
    fn nibble(c: u8) -> Option<u8> {
        match c {
            b'0'..=b'9' => Some(c - b'0'),
            b'a'..=b'f' => Some(c - b'a' + 10),
            _ => None,
        }
    }
    let s = s.as_bytes();
    if s.len() != out.len() * 2 {
        return None;
    }
    for (o, pair) in out.iter_mut().zip(s.chunks_exact(2)) {
        *o = (nibble(pair[0])? << 4) | nibble(pair[1])?;
    }
    Some(())
}

/// Lower-case hex (a table, not `format!`: ids are written for every recorded span).
fn hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut s = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        s.push(char::from(DIGITS[usize::from(b >> 4)]));
        s.push(char::from(DIGITS[usize::from(b & 0xf)]));
    }
    s
}

fn next_u64() -> u64 {
    static STATE: OnceLock<AtomicU64> = OnceLock::new();
    let st = STATE.get_or_init(|| {
        let mut b = [0u8; 8];
        if getrandom::fill(&mut b).is_err() {
            // No OS randomness: the clock still separates processes.
            let t = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_nanos() as u64);
            b = (t ^ u64::from(std::process::id())).to_le_bytes();
        }
        AtomicU64::new(u64::from_le_bytes(b))
    });
    // SplitMix64: every step of the counter gives a well-mixed, distinct value.
    let mut z = st
        .fetch_add(0x9E37_79B9_7F4A_7C15, Ordering::Relaxed)
        .wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

fn nonzero_u64() -> u64 {
    loop {
        let v = next_u64();
        if v != 0 {
            return v;
        }
    }
}

impl TraceContext {
    /// Parse a `traceparent` value (and the `tracestate` that goes with it). `None` when it is
    /// malformed: version `ff`, wrong lengths, non-hex or upper-case digits, an all-zero id, or
    /// extra fields on version 00 (W3C Trace Context §3.2).
    pub fn parse(traceparent: &str, tracestate: Option<&str>) -> Option<Self> {
        let tp = traceparent.trim();
        let mut parts = tp.split('-');
        let (version, trace, span, flags) =
            (parts.next()?, parts.next()?, parts.next()?, parts.next()?);
        let mut v = [0u8; 1];
        hex_into(version, &mut v)?;
        if v[0] == 0xff || (v[0] == 0 && parts.next().is_some()) {
            return None;
        }
        let mut trace_id = [0u8; 16];
        let mut span_id = [0u8; 8];
        let mut f = [0u8; 1];
        hex_into(trace, &mut trace_id)?;
        hex_into(span, &mut span_id)?;
        hex_into(flags, &mut f)?;
        if trace_id == [0; 16] || span_id == [0; 8] {
            return None;
        }
        let state = tracestate
            .map(str::trim)
            .filter(|s| !s.is_empty() && s.len() <= 512)
            .map(str::to_owned);
        Some(Self {
            trace_id,
            span_id,
            flags: f[0],
            state,
        })
    }

    /// The context a request's `_meta` carries, if it carries a valid one.
    pub fn from_meta(meta: Option<&Value>) -> Option<Self> {
        let m = meta?.as_object()?;
        let tp = m.get(TRACEPARENT)?.as_str()?;
        Self::parse(tp, m.get(TRACESTATE).and_then(Value::as_str))
    }

    /// A new span: in `parent`'s trace when there is one (keeping its flags and state), else
    /// the root of a new, sampled trace.
    pub fn child_of(parent: Option<&Self>) -> Self {
        let span_id = nonzero_u64().to_be_bytes();
        match parent {
            Some(p) => Self {
                trace_id: p.trace_id,
                span_id,
                flags: p.flags,
                state: p.state.clone(),
            },
            None => {
                let mut trace_id = [0u8; 16];
                trace_id[..8].copy_from_slice(&nonzero_u64().to_be_bytes());
                trace_id[8..].copy_from_slice(&next_u64().to_be_bytes());
                Self {
                    trace_id,
                    span_id,
                    flags: 1,
                    state: None,
                }
            }
        }
    }

    /// The `traceparent` value (version 00).
    pub fn traceparent(&self) -> String {
        format!(
            "00-{}-{}-{:02x}",
            hex(&self.trace_id),
            hex(&self.span_id),
            self.flags
        )
    }

    /// The trace id in lower-case hex (32 digits).
    pub fn trace_id_hex(&self) -> String {
        hex(&self.trace_id)
    }

    /// The span id in lower-case hex (16 digits).
    pub fn span_id_hex(&self) -> String {
        hex(&self.span_id)
    }

    /// Write this context into a request's `_meta` (the client side of propagation). A
    /// `traceparent` the caller already put there is kept: it names the caller's own span.
    pub fn inject(&self, meta: &mut Map<String, Value>) {
        if meta.contains_key(TRACEPARENT) {
            return;
        }
        meta.insert(TRACEPARENT.into(), Value::String(self.traceparent()));
        if let Some(s) = &self.state {
            meta.insert(TRACESTATE.into(), Value::String(s.clone()));
        }
    }

    /// `{"traceparent": …, "tracestate"?: …}`: the carrier the bindings hand to Python's and
    /// Node's OpenTelemetry propagators.
    pub fn to_json(&self) -> Value {
        let mut m = Map::new();
        m.insert(TRACEPARENT.into(), Value::String(self.traceparent()));
        if let Some(s) = &self.state {
            m.insert(TRACESTATE.into(), Value::String(s.clone()));
        }
        Value::Object(m)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const TP: &str = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";

    #[test]
    fn parses_and_formats_the_w3c_example() {
        let t = TraceContext::parse(TP, Some("rojo=00f067aa0ba902b7")).expect("valid");
        assert_eq!(t.traceparent(), TP);
        assert_eq!(t.trace_id_hex(), "4bf92f3577b34da6a3ce929d0e0e4736");
        assert_eq!(t.state.as_deref(), Some("rojo=00f067aa0ba902b7"));
    }

    #[test]
    fn refuses_malformed_values() {
        for bad in [
            "",
            "ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
            "00-00000000000000000000000000000000-00f067aa0ba902b7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01",
            "00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e473-00f067aa0ba902b7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-extra",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7",
            "zz-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
        ] {
            assert!(TraceContext::parse(bad, None).is_none(), "{bad}");
        }
        // A later version may append fields.
        assert!(TraceContext::parse(&format!("01{}-more", &TP[2..]), None).is_some());
    }

    #[test]
    fn a_child_keeps_the_trace_and_gets_a_new_span() {
        let p = TraceContext::parse(TP, None).expect("valid");
        let c = TraceContext::child_of(Some(&p));
        assert_eq!(c.trace_id, p.trace_id);
        assert_ne!(c.span_id, p.span_id);
        let a = TraceContext::child_of(None);
        let b = TraceContext::child_of(None);
        assert_ne!(a.trace_id, b.trace_id);
        assert_eq!(TraceContext::parse(&a.traceparent(), None), Some(a));
    }

    #[test]
    fn inject_keeps_a_callers_traceparent() {
        let mut m = Map::new();
        m.insert(TRACEPARENT.into(), Value::String(TP.into()));
        TraceContext::child_of(None).inject(&mut m);
        assert_eq!(m[TRACEPARENT], TP);
        let mut empty = Map::new();
        let c = TraceContext::child_of(None);
        c.inject(&mut empty);
        assert_eq!(
            TraceContext::from_meta(Some(&Value::Object(empty))),
            Some(c)
        );
    }
}
