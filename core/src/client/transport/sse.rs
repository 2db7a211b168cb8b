//! An incremental Server-Sent Events parser (REQUIREMENTS HTTP-05, HTTP-06, LHTTP-04).
//!
//! Lines end in LF, CRLF or CR. `data:` lines of one event are joined with LF; comment lines
//! (`:` …) are ignored; `retry:` sets the reconnection delay; `id:` and `event:` are kept. An
//! event is dispatched at a blank line. One event may not exceed the configured size.

/// One dispatched event.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SseEvent {
    /// `event:` (empty = "message").
    pub event: String,
    /// The joined `data:` lines.
    pub data: String,
    /// `id:`, when given.
    pub id: Option<String>,
}

/// Why parsing stopped.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SseError {
    /// An event or line exceeded the cap.
    #[error("SSE event exceeds {0} bytes")]
    TooLarge(usize),
}

/// Feeds bytes in, gets events out.
#[derive(Debug)]
pub struct SseParser {
    line: Vec<u8>,
    data: String,
    has_data: bool,
    event: String,
    id: Option<String>,
    retry: Option<u64>,
    last_cr: bool,
    max: usize,
}

impl SseParser {
    /// A parser whose events may hold at most `max` bytes.
    pub fn new(max: usize) -> Self {
        Self {
            line: Vec::new(),
            data: String::new(),
            has_data: false,
            event: String::new(),
            id: None,
            retry: None,
            last_cr: false,
            max,
        }
    }

    /// The last `retry:` value in milliseconds.
    pub fn retry(&self) -> Option<u64> {
        self.retry
    }

    /// Feed a chunk; completed events are appended to `out`.
    ///
    /// # Errors
    /// [`SseError::TooLarge`] when an event crosses the cap.
    pub fn feed(&mut self, chunk: &[u8], out: &mut Vec<SseEvent>) -> Result<(), SseError> {
        for &b in chunk {
            if self.last_cr {
                self.last_cr = false;
                if b == b'\n' {
                    continue;
                }
            }
            match b {
                b'\n' => self.end_line(out)?,
                b'\r' => {
                    self.last_cr = true;
                    self.end_line(out)?;
                }
                _ => {
                    self.line.push(b);
                    if self.line.len() + self.data.len() > self.max {
                        return Err(SseError::TooLarge(self.max));
                    }
                }
            }
        }
        Ok(())
    }

    /// Ends one line. The cap is checked again on the joined `data`: the joining LF and the
    /// lossy UTF-8 decoding (one invalid byte becomes a 3-byte U+FFFD) can make the decoded
    /// event larger than the raw bytes counted in `feed`.
    fn end_line(&mut self, out: &mut Vec<SseEvent>) -> Result<(), SseError> {
        let line = std::mem::take(&mut self.line);
        let line = String::from_utf8_lossy(&line);
        if line.is_empty() {
            if self.has_data {
                out.push(SseEvent {
                    event: std::mem::take(&mut self.event),
                    data: std::mem::take(&mut self.data),
                    id: self.id.clone(),
                });
            }
            self.has_data = false;
            self.data.clear();
            self.event.clear();
            return Ok(());
        }
        if line.starts_with(':') {
            return Ok(());
        }
        let (field, value) = match line.find(':') {
            Some(i) => {
                let v = &line[i + 1..];
                (&line[..i], v.strip_prefix(' ').unwrap_or(v))
            }
            None => (&line[..], ""),
        };
        match field {
            "data" => {
                let sep = usize::from(self.has_data);
                if self.data.len() + sep + value.len() > self.max {
                    return Err(SseError::TooLarge(self.max));
                }
                if self.has_data {
                    self.data.push('\n');
                }
                self.data.push_str(value);
                self.has_data = true;
            }
            "event" => self.event = value.to_owned(),
            "id" if !value.contains('\0') => self.id = Some(value.to_owned()),
            "retry" => {
                if let Ok(ms) = value.parse::<u64>() {
                    self.retry = Some(ms);
                }
            }
            _ => {}
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(chunks: &[&[u8]]) -> (Vec<SseEvent>, SseParser) {
        let mut p = SseParser::new(1024);
        let mut out = Vec::new();
        for c in chunks {
            p.feed(c, &mut out).unwrap();
        }
        (out, p)
    }

    #[test]
    fn multi_line_data_comments_retry() {
        let (ev, p) = parse(&[
            b": keep-alive\r\n\r\nretry: 1500\nid: 7\nevent: message\ndata: {\"a\":\ndata: 1}\n\n",
            b"data:x\r",
            b"\n\r\n",
        ]);
        assert_eq!(ev.len(), 2);
        assert_eq!(ev[0].data, "{\"a\":\n1}");
        assert_eq!(ev[0].id.as_deref(), Some("7"));
        assert_eq!(ev[0].event, "message");
        assert_eq!(ev[1].data, "x");
        assert_eq!(p.retry(), Some(1500));
    }

    #[test]
    fn split_anywhere() {
        let all = b"data: hello\n\ndata: world\n\n";
        for cut in 0..all.len() {
            let (ev, _) = parse(&[&all[..cut], &all[cut..]]);
            let data: Vec<_> = ev.iter().map(|e| e.data.as_str()).collect();
            assert_eq!(data, ["hello", "world"], "cut at {cut}");
        }
    }

    #[test]
    fn priming_event_without_data_is_not_dispatched() {
        let (ev, _) = parse(&[b"id: 1\ndata:\n\n", b"id: 2\n\n"]);
        assert_eq!(ev.len(), 1);
        assert_eq!(ev[0].data, "");
    }

    #[test]
    fn cap_counts_decoded_bytes() {
        // Four invalid bytes decode to four U+FFFD (12 bytes): over a cap of 8.
        let mut p = SseParser::new(8);
        let mut out = Vec::new();
        assert!(p.feed(b"data:\xff\xff\xff\xff\n\n", &mut out).is_err());
        assert!(out.is_empty());
        // Two lines of 4 join with LF into 9 bytes: over a cap of 8.
        let mut p = SseParser::new(8);
        assert!(p.feed(b"data:abcd\ndata:efgh\n\n", &mut out).is_err());
        assert!(out.is_empty());
    }

    #[test]
    fn cap_is_enforced() {
        let mut p = SseParser::new(8);
        let mut out = Vec::new();
        assert!(p.feed(b"data: 0123456789\n\n", &mut out).is_err());
    }
}
