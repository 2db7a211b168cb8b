//! Newline-delimited framing with a hard per-frame cap (REQUIREMENTS STDIO-01; seed: max_line_bytes).
//!
//! A frame that reaches the cap without a newline is an error and is never buffered whole: the
//! reader stops consuming as soon as the cap is crossed. A final frame without a trailing newline
//! is still returned at EOF.

use tokio::io::{AsyncBufRead, AsyncBufReadExt};

/// Why reading a frame failed.
#[derive(Debug, thiserror::Error)]
pub enum FrameError {
    /// A frame exceeded the configured cap.
    #[error("frame exceeds {limit} bytes")]
    TooLarge {
        /// The cap in bytes.
        limit: usize,
    },
    /// The underlying stream failed.
    #[error("read failed: {0}")]
    Io(#[from] std::io::Error),
}

/// Reads newline-delimited frames up to `limit` bytes each.
pub struct FrameReader<R> {
    inner: R,
    limit: usize,
    buf: Vec<u8>,
}

impl<R: AsyncBufRead + Unpin> FrameReader<R> {
    /// A reader with a per-frame cap.
    ///
    /// # Errors
    /// `limit` must be positive: a zero cap would disable the protection.
    pub fn new(inner: R, limit: usize) -> Result<Self, crate::limits::LimitError> {
        if limit == 0 {
            return Err(crate::limits::LimitError {
                name: "max_message_bytes",
                reason: "must be positive",
            });
        }
        Ok(Self {
            inner,
            limit,
            buf: Vec::with_capacity(4096),
        })
    }

    /// The next frame (without its newline; a trailing `\r` is trimmed). `Ok(None)` at EOF.
    /// Blank lines are skipped.
    ///
    /// # Errors
    /// [`FrameError::TooLarge`] when a frame crosses the cap; [`FrameError::Io`] on read failure.
    pub async fn next_frame(&mut self) -> Result<Option<&[u8]>, FrameError> {
        loop {
            self.buf.clear();
            let complete = loop {
                let chunk = self.inner.fill_buf().await?;
                if chunk.is_empty() {
                    break false;
                }
                let (take, done) = match memchr(chunk) {
                    Some(i) => (i + 1, true),
                    None => (chunk.len(), false),
                };
                let payload = if done { take - 1 } else { take };
                if self.buf.len() + payload > self.limit {
                    return Err(FrameError::TooLarge { limit: self.limit });
                }
                self.buf.extend_from_slice(&chunk[..payload]);
                self.inner.consume(take);
                if done {
                    break true;
                }
            };
            if !complete && self.buf.is_empty() {
                return Ok(None);
            }
            if self.buf.last() == Some(&b'\r') {
                self.buf.pop();
            }
            if self.buf.iter().all(u8::is_ascii_whitespace) {
                if complete {
                    continue;
                }
                return Ok(None);
            }
            return Ok(Some(&self.buf));
        }
    }
}

fn memchr(hay: &[u8]) -> Option<usize> {
    hay.iter().position(|&b| b == b'\n')
}

#[cfg(test)]
mod tests {
    use super::*;

    async fn frames(input: &[u8], limit: usize) -> Vec<Result<Vec<u8>, String>> {
        let mut r = FrameReader::new(input, limit).expect("limit");
        let mut out = Vec::new();
        loop {
            match r.next_frame().await {
                Ok(Some(f)) => out.push(Ok(f.to_vec())),
                Ok(None) => break,
                Err(e) => {
                    out.push(Err(e.to_string()));
                    break;
                }
            }
        }
        out
    }

    #[tokio::test]
    async fn stdio01_framing() {
        let got = frames(b"a\n\nbc\r\nlast", 100).await;
        assert_eq!(
            got,
            vec![Ok(b"a".to_vec()), Ok(b"bc".to_vec()), Ok(b"last".to_vec())]
        );
    }

    #[tokio::test]
    async fn stdio_cap_is_enforced() {
        let got = frames(b"12345\n123456\nok\n", 5).await;
        assert_eq!(got[0], Ok(b"12345".to_vec()));
        assert!(got[1].is_err());
        assert_eq!(got.len(), 2);
    }

    #[test]
    fn zero_limit_rejected() {
        assert!(FrameReader::new(&b""[..], 0).is_err());
    }
}
