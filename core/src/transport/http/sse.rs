//! Server-Sent Events encoding (REQUIREMENTS HTTP-05, HTTP-06, HTTP-07, LHTTP-04, LHTTP-06).
//!
//! JSON-RPC messages are single-line JSON, so each event is one `data:` line. Modern streams carry
//! no event ids (HTTP-07); legacy streams give every event an id `<stream>_<seq>` that is unique
//! across the session and names the stream it belongs to (LHTTP-06).

use bytes::{BufMut, Bytes, BytesMut};

/// One `data:` event, optionally with an id.
pub(crate) fn event(id: Option<&str>, data: &[u8]) -> Bytes {
    let mut b = BytesMut::with_capacity(data.len() + 32);
    if let Some(id) = id {
        b.put_slice(b"id: ");
        b.put_slice(id.as_bytes());
        b.put_u8(b'\n');
    }
    b.put_slice(b"data: ");
    b.put_slice(data);
    b.put_slice(b"\n\n");
    b.freeze()
}

/// The priming event of a legacy stream: an id, a `retry:` hint and empty data (LHTTP-04).
pub(crate) fn priming(id: &str, retry_ms: u64) -> Bytes {
    Bytes::from(format!("id: {id}\nretry: {retry_ms}\ndata: \n\n"))
}

/// A keep-alive comment line (HTTP-06); clients ignore it.
pub(crate) fn keepalive() -> Bytes {
    Bytes::from_static(b": keepalive\n\n")
}

/// A legacy event id.
pub(crate) fn event_id(stream: u64, seq: u64) -> String {
    format!("{stream}_{seq}")
}

/// Parse a legacy event id back into `(stream, seq)`.
pub(crate) fn parse_event_id(s: &str) -> Option<(u64, u64)> {
    let (a, b) = s.trim().split_once('_')?;
    Some((a.parse().ok()?, b.parse().ok()?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn event_shapes() {
        assert_eq!(&event(None, b"{}")[..], b"data: {}\n\n");
        assert_eq!(&event(Some("1_2"), b"{}")[..], b"id: 1_2\ndata: {}\n\n");
        assert_eq!(parse_event_id("3_4"), Some((3, 4)));
        assert_eq!(parse_event_id("x"), None);
        assert_eq!(parse_event_id("1_-1"), None);
    }
}
