//! The JSON-RPC frame decoder and message classifier (JR-01 … JR-03, JR-06, STDIO-01).
//!
//! The input is a byte stream as a peer would write it on stdio. It is framed by the real
//! `FrameReader` (cap and read-buffer size taken from the first two bytes, so chunk boundaries
//! fall anywhere) and checked against a line-splitting model; every frame then goes through
//! `parse_frame` and `classify` exactly as the transports run them. Invariants: framing agrees
//! with the model, and decode → encode → decode of every classified message is stable (the
//! encoder writes back what the classifier read).

#![no_main]

use libfuzzer_sys::fuzz_target;
use mcpcore::fuzzing::{
    classify, encode_error, encode_notification, encode_request, encode_result, parse_frame,
    FrameError, FrameReader, Incoming, ParsedFrame,
};
use serde_json::Value;
use std::sync::OnceLock;

/// The engine's default nesting cap (`Limits::max_json_depth`).
const MAX_DEPTH: usize = 64;

fn runtime() -> &'static tokio::runtime::Runtime {
    static RT: OnceLock<tokio::runtime::Runtime> = OnceLock::new();
    RT.get_or_init(|| {
        tokio::runtime::Builder::new_current_thread()
            .build()
            .expect("a current-thread runtime")
    })
}

/// What the framing must produce: lines split at LF, one trailing CR dropped, blank lines
/// skipped, and an error at the first line whose bytes (CR included) exceed the cap.
fn model(stream: &[u8], limit: usize) -> (Vec<Vec<u8>>, bool) {
    let mut out = Vec::new();
    let mut lines: Vec<&[u8]> = stream.split(|&b| b == b'\n').collect();
    if stream.last() == Some(&b'\n') || stream.is_empty() {
        lines.pop();
    }
    for line in lines {
        if line.len() > limit {
            return (out, true);
        }
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        if !line.iter().all(u8::is_ascii_whitespace) {
            out.push(line.to_vec());
        }
    }
    (out, false)
}

async fn frames(stream: &[u8], limit: usize, buf: usize) -> (Vec<Vec<u8>>, bool) {
    let reader = tokio::io::BufReader::with_capacity(buf, stream);
    let Ok(mut r) = FrameReader::new(reader, limit) else {
        return (Vec::new(), true);
    };
    let mut out = Vec::new();
    loop {
        match r.next_frame().await {
            Ok(Some(f)) => out.push(f.to_vec()),
            Ok(None) => return (out, false),
            Err(FrameError::TooLarge { .. }) => return (out, true),
            Err(FrameError::Io(e)) => panic!("reading a slice failed: {e}"),
        }
    }
}

/// Equal JSON, except that non-integer numbers may differ in the last bits: serde_json's
/// default float parser is not exactly round-trip, which is not ours to fuzz.
fn same(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) if x.is_f64() || y.is_f64() => {
            match (x.as_f64(), y.as_f64()) {
                (Some(p), Some(q)) => p == q || ((p - q) / p.abs().max(q.abs())).abs() < 1e-9,
                _ => false,
            }
        }
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(p, q)| same(p, q))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len() && x.iter().all(|(k, v)| y.get(k).is_some_and(|w| same(v, w)))
        }
        _ => a == b,
    }
}

fn single(bytes: &[u8]) -> Incoming {
    match parse_frame(bytes, MAX_DEPTH) {
        ParsedFrame::Single(v) => classify(v),
        other => panic!("an encoded message did not parse as one object: {other:?}"),
    }
}

fn opt(p: &Option<serde_json::Map<String, Value>>) -> Value {
    p.clone().map(Value::Object).unwrap_or(Value::Null)
}

/// decode → encode → decode: the second decode must classify as the first did.
fn round_trip(m: &Incoming) {
    match m {
        Incoming::Request { id, method, params } => {
            let again = single(&encode_request(id, method, params.as_ref()));
            let Incoming::Request {
                id: i2,
                method: m2,
                params: p2,
            } = &again
            else {
                panic!("request re-classified as {again:?}");
            };
            assert_eq!((id, method), (i2, m2));
            assert!(same(&opt(params), &opt(p2)), "params changed");
        }
        Incoming::Notification { method, params } => {
            let again = single(&encode_notification(method, params.as_ref()));
            let Incoming::Notification {
                method: m2,
                params: p2,
            } = &again
            else {
                panic!("notification re-classified as {again:?}");
            };
            assert_eq!(method, m2);
            assert!(same(&opt(params), &opt(p2)), "params changed");
        }
        Incoming::Response { id, outcome } => {
            let bytes = match outcome {
                Ok(v) => encode_result(id, v),
                Err(e) => encode_error(Some(id), e),
            };
            let again = single(&bytes);
            let Incoming::Response {
                id: i2,
                outcome: o2,
            } = &again
            else {
                panic!("response re-classified as {again:?}");
            };
            assert_eq!(id, i2);
            match (outcome, o2) {
                (Ok(a), Ok(b)) => assert!(same(a, b), "result changed"),
                (Err(a), Err(b)) => {
                    assert_eq!((a.code, &a.message), (b.code, &b.message));
                    let d = |e: &mcpcore::ErrorObject| e.data.clone().unwrap_or(Value::Null);
                    assert!(same(&d(a), &d(b)), "error data changed");
                }
                _ => panic!("outcome flipped"),
            }
        }
        Incoming::Invalid { id, error } => {
            // The answer to an invalid message must itself be one well-formed JSON object.
            let out = encode_error(id.as_ref(), error);
            assert!(matches!(
                parse_frame(&out, MAX_DEPTH),
                ParsedFrame::Single(Value::Object(_))
            ));
        }
    }
}

fuzz_target!(|data: &[u8]| {
    let (limit, buf, stream) = match data {
        [a, b, rest @ ..] => (usize::from(*a) * 16 + 1, usize::from(*b % 64) + 1, rest),
        _ => return,
    };
    let (got, too_large) = runtime().block_on(frames(stream, limit, buf));
    let (want, want_too_large) = model(stream, limit);
    assert_eq!(got, want, "framing differs from the model");
    assert_eq!(
        too_large, want_too_large,
        "cap enforcement differs from the model"
    );
    for frame in &got {
        match parse_frame(frame, MAX_DEPTH) {
            ParsedFrame::Single(v) => round_trip(&classify(v)),
            ParsedFrame::Batch(items) => {
                for v in items {
                    round_trip(&classify(v));
                }
            }
            ParsedFrame::Error(e) => assert!(e.code == -32700 || e.code == -32600, "{e:?}"),
        }
    }
});
