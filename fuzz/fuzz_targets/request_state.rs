//! `requestState` unsealing (MRTR-06, SEP-2322): the token a client hands back is attacker
//! input, opened by `security::sealing::Sealer` with a fixed key ring.
//!
//! Invariants: no arbitrary token opens (AES-GCM tags cannot be guessed); sealing arbitrary
//! state then opening it under the same claims gives the state back; the same token under other
//! claims, under another key, or with any one character changed is refused.

#![no_main]

use libfuzzer_sys::fuzz_target;
use mcpcore::fuzzing::{Claims, Sealer};
use mcpcore::security::{KeyRing, SealKey};
use serde_json::{json, Value};
use std::sync::OnceLock;
use std::time::Duration;

const ALPHABET: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

fn sealer(id: &str, byte: u8) -> Sealer {
    let key = SealKey::new(id, [byte; 32]).expect("a valid key");
    Sealer::new(KeyRing::new(key), Duration::from_secs(300))
}

fn sealers() -> &'static (Sealer, Sealer) {
    static S: OnceLock<(Sealer, Sealer)> = OnceLock::new();
    S.get_or_init(|| (sealer("k1", 7), sealer("k2", 9)))
}

fuzz_target!(|data: &[u8]| {
    let (ours, other) = sealers();
    let text = String::from_utf8_lossy(data);
    let args: Value = serde_json::from_slice(data).unwrap_or_else(|_| json!({}));
    let claims = Claims {
        method: "tools/call",
        target: "echo",
        arguments: &args,
        audience: None,
    };
    // Arbitrary tokens, with and without the version prefix, never open.
    assert!(
        ours.open(&text, &claims).is_err(),
        "an arbitrary token opened"
    );
    assert!(
        ours.open(&format!("v1.{text}"), &claims).is_err(),
        "an arbitrary token opened"
    );

    // Round trip of arbitrary state.
    let token = ours.seal(&claims, &text).expect("sealing works");
    let opened = ours.open(&token, &claims).expect("our own token opens");
    assert_eq!(opened.state, text);
    assert!(
        other.open(&token, &claims).is_err(),
        "another key opened the token"
    );
    let elsewhere = Claims {
        target: "other",
        ..claims
    };
    assert!(
        ours.open(&token, &elsewhere).is_err(),
        "the token opened for another target"
    );
    let audience = Claims {
        audience: Some("aud"),
        ..claims
    };
    assert!(
        ours.open(&token, &audience).is_err(),
        "the token opened for another audience"
    );
    let changed = json!({"changed": args});
    let moved = Claims {
        arguments: &changed,
        ..claims
    };
    assert!(
        ours.open(&token, &moved).is_err(),
        "the token opened for other arguments"
    );

    // One character of the body replaced by another base64url character.
    let body = &token.as_bytes()["v1.".len()..];
    if !body.is_empty() {
        let h = data.iter().fold(0usize, |h, &b| {
            h.wrapping_mul(31).wrapping_add(usize::from(b))
        });
        let at = h % body.len();
        let old = body[at];
        let new =
            ALPHABET[(ALPHABET.iter().position(|&c| c == old).unwrap_or(0) + 1 + h % 63) % 64];
        let mut bytes = token.clone().into_bytes();
        bytes["v1.".len() + at] = new;
        let tampered = String::from_utf8(bytes).expect("ASCII");
        assert!(
            ours.open(&tampered, &claims).is_err(),
            "a tampered token opened"
        );
    }
});
