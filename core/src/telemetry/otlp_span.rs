//! One span as the OTLP layer records it while it is open, and its protobuf `Span` message
//! (opentelemetry-proto `trace/v1`), written when it closes.
//!
//! Why this shape: a request makes two spans (HTTP and MCP) with a dozen attributes each. Kept as
//! one owned string per attribute and handed to the exporter thread, they cost some thirty
//! allocations per request, each freed on the other thread — which empties the request thread's
//! allocator cache and sends every allocation down the slow path. Here every text value of a
//! span is appended to one buffer (values written by `Display` straight into it), and the span
//! is encoded on the thread that closes it: only encoded bytes cross to the exporter.

use std::fmt::Write as _;
use tracing::field::{Field, Visit};

use super::proto::{bytes, field_len, fixed64, header, tag, varint, varint_len};

/// An attribute's value; text lives in [`Open::text`] (start, end).
#[derive(Clone, Copy, Debug)]
enum Slot {
    Str(u32, u32),
    Int(i64),
    Bool(bool),
    F64(f64),
}

thread_local! {
    /// Records of closed spans, cleared, for the next spans this thread opens: a request's
    /// spans then allocate nothing for their text and attributes. Kept boxed: the boxes
    /// themselves are what is reused.
    #[allow(clippy::vec_box)]
    static SPARE: std::cell::RefCell<Vec<Box<Open>>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// How many spare records a thread keeps (enough for the spans open at once on a busy thread).
const MAX_SPARE: usize = 64;

/// What the layer keeps on each span while it is open. Boxed and reused ([`Open::new`],
/// [`Open::recycle`]): the subscriber moves a span's record from the layer into its slab and
/// back out to the exporter, and by value each move copied some 150 bytes.
pub(super) struct Open {
    /// The metadata's name until `otel.name` gives one (then a range of `text`).
    name: Result<(u32, u32), &'static str>,
    kind: u64,
    status: u64,
    pub start_ns: u64,
    text: String,
    fields: Vec<(&'static str, Slot)>,
    /// W3C trace id and span id (a span id of zeros: none yet).
    pub ids: Option<([u8; 16], [u8; 8])>,
    pub remote_parent: Option<[u8; 8]>,
    state: Option<(u32, u32)>,
    /// The ids came as bytes ([`super::NEXT_IDS`]): the id fields are not read.
    given: bool,
    /// The span's first fields are being read: a callsite names each field once, so none is
    /// looked for among those already read.
    pub fresh: bool,
}

impl Open {
    pub fn new(name: &'static str, start_ns: u64) -> Box<Self> {
        if let Some(mut spare) = SPARE.try_with(|s| s.borrow_mut().pop()).ok().flatten() {
            spare.name = Err(name);
            spare.start_ns = start_ns;
            return spare;
        }
        Box::new(Self {
            name: Err(name),
            kind: 1,
            status: 0,
            start_ns,
            text: String::with_capacity(192),
            fields: Vec::with_capacity(16),
            ids: None,
            remote_parent: None,
            state: None,
            given: false,
            fresh: false,
        })
    }

    /// Clear this record and keep it for the next span this thread opens (unless its buffers
    /// grew large).
    pub fn recycle(mut self: Box<Self>) {
        if self.text.capacity() > 4096 || self.fields.capacity() > 64 {
            return;
        }
        self.text.clear();
        self.fields.clear();
        (self.kind, self.status, self.ids, self.remote_parent) = (1, 0, None, None);
        (self.state, self.given, self.fresh) = (None, false, false);
        let _ = SPARE.try_with(|s| {
            let mut s = s.borrow_mut();
            if s.len() < MAX_SPARE {
                s.push(self);
            }
        });
    }

    /// Ids handed over as bytes when the span was made.
    pub fn give_ids(&mut self, trace: [u8; 16], span: [u8; 8], parent: Option<[u8; 8]>) {
        self.ids = Some((trace, span));
        self.remote_parent = parent;
        self.given = true;
    }

    fn str_at(&self, (a, b): (u32, u32)) -> &str {
        self.text.get(a as usize..b as usize).unwrap_or_default()
    }

    /// Append text written by `write` and return its range (an over-long span's text is cut
    /// at 4 GiB, which no attribute reaches).
    fn append(&mut self, write: impl FnOnce(&mut String)) -> (u32, u32) {
        let start = self.text.len();
        write(&mut self.text);
        let end = self.text.len();
        let cap = |n: usize| u32::try_from(n).unwrap_or(u32::MAX);
        (cap(start), cap(end))
    }

    fn put(&mut self, key: &'static str, v: Slot) {
        if !self.fresh {
            if let Some(slot) = self.fields.iter_mut().find(|(k, _)| *k == key) {
                slot.1 = v;
                return;
            }
        }
        self.fields.push((key, v));
    }

    /// A field given as text: the span's own fields (`otel.*`, ids, `tracestate`) are read
    /// into the span; any other is an attribute.
    fn set_str(&mut self, key: &'static str, s: &str) {
        match key {
            "otel.kind" => {
                self.kind = match s {
                    "server" => 2,
                    "client" => 3,
                    _ => 1,
                }
            }
            "otel.status_code" => self.status = u64::from(s == "ERROR") * 2,
            "trace_id" | "span_id" | "parent_span_id" => self.set_id(key, s),
            _ => {
                let r = self.append(|t| t.push_str(s));
                self.set_text(key, r);
            }
        }
    }

    fn set_text(&mut self, key: &'static str, r: (u32, u32)) {
        match key {
            "otel.name" => self.name = Ok(r),
            "tracestate" => self.state = Some(r),
            _ => self.put(key, Slot::Str(r.0, r.1)),
        }
    }

    /// A W3C id field (lower-case hex; anything else is ignored).
    fn set_id(&mut self, key: &str, s: &str) {
        if self.given {
            return;
        }
        let mut span = [0u8; 8];
        match key {
            "trace_id" => {
                let mut t = [0u8; 16];
                if super::trace::hex_into(s, &mut t).is_some() {
                    self.ids = Some((t, self.ids.map_or([0; 8], |i| i.1)));
                }
            }
            "span_id" => {
                if let (Some(()), Some(ids)) =
                    (super::trace::hex_into(s, &mut span), self.ids.as_mut())
                {
                    ids.1 = span;
                }
            }
            _ => {
                self.remote_parent = super::trace::hex_into(s, &mut span).map(|()| span);
            }
        }
    }

    fn name(&self) -> &str {
        match self.name {
            Ok(r) => self.str_at(r),
            Err(n) => n,
        }
    }

    /// Append this span as `ScopeSpans.spans` (field 2): `Span { trace_id 1; span_id 2;
    /// trace_state 3; parent_span_id 4; name 5; kind 6; start 7; end 8 (fixed64);
    /// attributes 9 (KeyValue { key 1; AnyValue value 2 }); status 15 (Status { code 3 }) }`.
    ///
    /// One pass: the body is written after room for the longest length prefix, which is then
    /// written and the body moved up to it (a few hundred bytes; cheaper than sizing every
    /// attribute twice).
    pub fn encode(
        &self,
        out: &mut Vec<u8>,
        ids: ([u8; 16], [u8; 8]),
        parent: Option<[u8; 8]>,
        end_ns: u64,
    ) {
        const ROOM: usize = 1 + 5;
        let at = out.len();
        out.resize(at + ROOM, 0);
        bytes(out, 1, &ids.0);
        bytes(out, 2, &ids.1);
        if let Some(r) = self.state {
            bytes(out, 3, self.str_at(r).as_bytes());
        }
        if let Some(p) = &parent {
            bytes(out, 4, p);
        }
        bytes(out, 5, self.name().as_bytes());
        tag(out, 6, 0);
        varint(out, self.kind);
        fixed64(out, 7, self.start_ns);
        fixed64(out, 8, end_ns);
        for (k, v) in &self.fields {
            self.attribute(out, k, *v);
        }
        if self.status != 0 {
            header(out, 15, 1 + varint_len(self.status));
            tag(out, 3, 0);
            varint(out, self.status);
        }
        let body = out.len() - at - ROOM;
        let mut len = [0u8; 10];
        let len = varint_bytes(&mut len, body as u64);
        let n = 1 + len.len();
        out.copy_within(at + ROOM.., at + n);
        out[at] = (2 << 3) | 2;
        out[at + 1..at + n].copy_from_slice(len);
        out.truncate(at + n + body);
    }

    /// `KeyValue { key 1; AnyValue value 2 }`, `AnyValue { string 1; bool 2; int64 3;
    /// double 4 }` as `Span.attributes` (field 9).
    fn attribute(&self, out: &mut Vec<u8>, k: &str, v: Slot) {
        let mut scratch = [0u8; 10];
        let value: &[u8] = match v {
            Slot::Str(a, b) => self.str_at((a, b)).as_bytes(),
            Slot::Int(i) => varint_bytes(&mut scratch, i as u64),
            Slot::Bool(b) => varint_bytes(&mut scratch, u64::from(b)),
            Slot::F64(f) => {
                scratch[..8].copy_from_slice(&f.to_le_bytes());
                &scratch[..8]
            }
        };
        let (field, wire) = match v {
            Slot::Str(..) => (1, 2),
            Slot::Bool(_) => (2, 0),
            Slot::Int(_) => (3, 0),
            Slot::F64(_) => (4, 1),
        };
        let any = if wire == 2 {
            field_len(value.len())
        } else {
            1 + value.len()
        };
        header(out, 9, field_len(k.len()) + field_len(any));
        bytes(out, 1, k.as_bytes());
        header(out, 2, any);
        if wire == 2 {
            bytes(out, field, value);
        } else {
            tag(out, field, wire);
            out.extend_from_slice(value);
        }
    }
}

/// `v` as a varint in `buf`.
fn varint_bytes(buf: &mut [u8; 10], mut v: u64) -> &[u8] {
    let mut n = 0;
    while v >= 0x80 {
        buf[n] = (v as u8) | 0x80;
        v >>= 7;
        n += 1;
    }
    buf[n] = v as u8;
    &buf[..=n]
}

/// Room for a trace id's 32 hex digits; longer text is refused.
#[derive(Default)]
struct IdText {
    bytes: [u8; 32],
    len: usize,
}

impl std::fmt::Write for IdText {
    fn write_str(&mut self, s: &str) -> std::fmt::Result {
        let end = self.len + s.len();
        let room = self.bytes.get_mut(self.len..end).ok_or(std::fmt::Error)?;
        room.copy_from_slice(s.as_bytes());
        self.len = end;
        Ok(())
    }
}

pub(super) struct Visitor<'a>(pub &'a mut Open);

impl Visit for Visitor<'_> {
    fn record_str(&mut self, f: &Field, v: &str) {
        self.0.set_str(f.name(), v);
    }
    fn record_i64(&mut self, f: &Field, v: i64) {
        self.0.put(f.name(), Slot::Int(v));
    }
    fn record_u64(&mut self, f: &Field, v: u64) {
        let v = i64::try_from(v).unwrap_or(i64::MAX);
        self.0.put(f.name(), Slot::Int(v));
    }
    fn record_bool(&mut self, f: &Field, v: bool) {
        self.0.put(f.name(), Slot::Bool(v));
    }
    fn record_f64(&mut self, f: &Field, v: f64) {
        self.0.put(f.name(), Slot::F64(v));
    }
    fn record_debug(&mut self, f: &Field, v: &dyn std::fmt::Debug) {
        match f.name() {
            // W3C ids arrive as `Display` values (`span::Hex`): read from a buffer on the stack.
            "trace_id" | "span_id" | "parent_span_id" if !self.0.given => {
                let mut buf = IdText::default();
                if write!(buf, "{v:?}").is_ok() {
                    if let Ok(text) = std::str::from_utf8(&buf.bytes[..buf.len]) {
                        self.0.set_id(f.name(), text);
                    }
                }
            }
            "trace_id" | "span_id" | "parent_span_id" => {}
            // Other `otel.*` fields are short words: read as text.
            key @ ("otel.kind" | "otel.status_code") => self.0.set_str(key, &format!("{v:?}")),
            key => {
                let r = self.0.append(|t| {
                    let _ = write!(t, "{v:?}");
                });
                self.0.set_text(key, r);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn open() -> Box<Open> {
        let mut o = Open::new("mcp.server.request", 1);
        o.set_str("otel.kind", "server");
        o.set_str("otel.name", "tools/call echo");
        o.set_str("mcp.method.name", "tools/call");
        o.set_str("otel.status_code", "ERROR");
        o.put("n", Slot::Int(-1));
        o.put("b", Slot::Bool(true));
        o.put("f", Slot::F64(1.5));
        o.set_str("long", &"x".repeat(200));
        o.set_str("tracestate", "a=b");
        o
    }

    /// The length prefix is written after the body: it must be the body's length, for short
    /// bodies and for those needing a two-byte varint, with nothing left between.
    #[test]
    fn the_length_prefix_is_the_bodys() {
        for o in [Open::new("s", 0), open()] {
            let mut out = vec![0xEE];
            o.encode(&mut out, ([1; 16], [2; 8]), Some([3; 8]), 2);
            assert_eq!(out[1], 0x12, "ScopeSpans.spans, length-delimited");
            let (mut len, mut i, mut shift) = (0usize, 2, 0);
            loop {
                len |= usize::from(out[i] & 0x7f) << shift;
                i += 1;
                if out[i - 1] & 0x80 == 0 {
                    break;
                }
                shift += 7;
            }
            assert_eq!(out.len() - i, len, "the body follows its prefix exactly");
            assert_eq!(out[i], 0x0A, "and starts with the trace id");
        }
    }

    #[test]
    fn a_span_encodes_its_ids_name_kind_and_status() {
        let o = open();
        let mut out = Vec::new();
        o.encode(&mut out, ([1; 16], [2; 8]), None, 2);
        let find = |needle: &[u8]| out.windows(needle.len()).any(|w| w == needle);
        assert!(find(&[0x0A, 16, 1, 1, 1]), "trace_id as field 1, 16 bytes");
        assert!(
            find(b"\x2a\x0ftools/call echo"),
            "otel.name is the name (field 5)"
        );
        assert!(find(&[0x30, 2]), "kind SERVER");
        assert!(find(&[0x7A, 2, 0x18, 2]), "status {{ code: ERROR }}");
        assert!(
            !find(b"otel.kind"),
            "otel.* fields are the span's, not attributes"
        );
    }

    /// The fields a span is made with are kept without a search (a callsite names each field
    /// once); a field recorded later still replaces the one the span was made with.
    #[test]
    fn a_field_made_then_recorded_is_one_attribute() {
        let mut o = Open::new("s", 0);
        o.fresh = true;
        o.put("n", Slot::Int(3));
        o.set_str("error.type", "-32602");
        o.fresh = false;
        o.put("n", Slot::Int(4));
        assert_eq!(o.fields.len(), 2, "n once, error.type once");
        assert!(
            matches!(o.fields[0], ("n", Slot::Int(4))),
            "the later value"
        );
    }

    /// A value recorded again replaces the first (an attribute appears once).
    #[test]
    fn a_field_recorded_twice_is_one_attribute() {
        let mut o = Open::new("s", 0);
        o.set_str("error.type", "-32602");
        o.set_str("error.type", "tool_error");
        assert_eq!(o.fields.len(), 1);
        assert!(matches!(o.fields[0].1, Slot::Str(a, b) if o.str_at((a, b)) == "tool_error"));
    }
}
