//! The client's Server-Sent Events parser (HTTP-05, HTTP-06, LHTTP-04;
//! `client/transport/sse.rs`), fed a server's stream.
//!
//! Invariants: the events, the error and the `retry` value do not depend on where the stream
//! is split into chunks (whole, in sizes taken from the input, and byte by byte); no event
//! holds more than the cap.

#![no_main]

use libfuzzer_sys::fuzz_target;
use mcpcore::fuzzing::{SseError, SseEvent, SseParser};

/// Small, so that the cap is reached often.
const MAX: usize = 512;

fn run<'a>(
    chunks: impl Iterator<Item = &'a [u8]>,
) -> (Vec<SseEvent>, Option<SseError>, Option<u64>) {
    let mut p = SseParser::new(MAX);
    let mut out = Vec::new();
    for c in chunks {
        if let Err(e) = p.feed(c, &mut out) {
            return (out, Some(e), p.retry());
        }
    }
    (out, None, p.retry())
}

fuzz_target!(|data: &[u8]| {
    let Some((&seed, stream)) = data.split_first() else {
        return;
    };
    let whole = run(std::iter::once(stream));
    let step = usize::from(seed % 17) + 1;
    assert_eq!(whole, run(stream.chunks(step)), "chunks of {step} differ");
    assert_eq!(whole, run(stream.chunks(1)), "byte by byte differs");
    for e in &whole.0 {
        assert!(
            e.data.len() <= MAX,
            "an event of {} bytes passed the cap",
            e.data.len()
        );
        assert!(
            e.id.as_deref().is_none_or(|i| !i.contains('\0')),
            "an id with NUL"
        );
    }
});
