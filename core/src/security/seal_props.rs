//! Property tests of sealed `requestState` (REQUIREMENTS MRTR-06, AUTH-06; SEP-2322): an
//! untouched token opens for the call it was sealed for until it expires, and every change to
//! the token (a flipped bit anywhere, truncation, extension, any other text), another key, or
//! another binding (method, target, arguments, audience/principal, expiry) is refused.

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use proptest::prelude::*;
use serde_json::Value;
use std::time::Duration;

use super::sealing::{Claims, KeyRing, SealError, SealKey, Sealer, TOKEN_PREFIX};
use crate::jsonrpc::props_gen::{any_json, text};

const TTL_MS: u64 = 300_000;

/// What a state is sealed for, owned (`Claims` borrows).
#[derive(Debug, Clone)]
struct Binding {
    method: &'static str,
    target: String,
    arguments: Value,
    audience: Option<String>,
}

impl Binding {
    fn claims(&self) -> Claims<'_> {
        Claims {
            method: self.method,
            target: &self.target,
            arguments: &self.arguments,
            audience: self.audience.as_deref(),
        }
    }
}

fn method() -> impl Strategy<Value = &'static str> {
    prop_oneof![
        Just("tools/call"),
        Just("prompts/get"),
        Just("resources/read")
    ]
}

/// An audience as the server forms it: configured, and on a protected endpoint joined with the
/// principal's binding key (`server::mrtr::sealed_audience`).
fn audience() -> impl Strategy<Value = Option<String>> {
    proptest::option::of(
        (text(), proptest::option::of(text())).prop_map(|(aud, principal)| {
            principal.map_or(aud.clone(), |p| format!("{aud}#principal={p}"))
        }),
    )
}

fn binding() -> impl Strategy<Value = Binding> {
    (method(), text(), any_json(), audience()).prop_map(|(method, target, arguments, audience)| {
        Binding {
            method,
            target,
            arguments,
            audience,
        }
    })
}

fn sealer(id: &str, bytes: [u8; 32]) -> Sealer {
    let key = SealKey::new(id, bytes).expect("non-empty id");
    Sealer::new(KeyRing::new(key), Duration::from_millis(TTL_MS))
}

/// One way of changing a token.
#[derive(Debug, Clone)]
enum Change {
    /// Flip one bit of the decoded nonce ‖ ciphertext ‖ tag.
    FlipBit { byte: usize, bit: u8 },
    /// Replace one character of the token text.
    Replace { at: usize, with: char },
    /// Keep only a prefix.
    Truncate { keep: usize },
    /// Append text.
    Extend { suffix: String },
}

fn change() -> impl Strategy<Value = Change> {
    prop_oneof![
        (any::<usize>(), 0u8..8).prop_map(|(byte, bit)| Change::FlipBit { byte, bit }),
        (any::<usize>(), any::<char>()).prop_map(|(at, with)| Change::Replace { at, with }),
        any::<usize>().prop_map(|keep| Change::Truncate { keep }),
        "[A-Za-z0-9_=.-]{1,8}|.{1,4}".prop_map(|suffix| Change::Extend { suffix }),
    ]
}

fn apply(token: &str, change: &Change) -> String {
    match change {
        Change::FlipBit { byte, bit } => {
            let mut raw = URL_SAFE_NO_PAD
                .decode(&token[TOKEN_PREFIX.len()..])
                .expect("own token decodes");
            let i = byte % raw.len();
            raw[i] ^= 1 << bit;
            format!("{TOKEN_PREFIX}{}", URL_SAFE_NO_PAD.encode(raw))
        }
        Change::Replace { at, with } => {
            let mut chars: Vec<char> = token.chars().collect();
            let i = at % chars.len();
            chars[i] = *with;
            chars.into_iter().collect()
        }
        Change::Truncate { keep } => token[..keep % token.len()].to_owned(),
        Change::Extend { suffix } => format!("{token}{suffix}"),
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn untouched_state_opens_until_expiry(
        key in any::<[u8; 32]>(), b in binding(), state in text(),
        now in 0u64..1 << 50, elapsed in 0..TTL_MS,
    ) {
        let s = sealer("k", key);
        let token = s.seal_at(now, &b.claims(), &state).map_err(|e| TestCaseError::fail(e.to_string()))?;
        let opened = s.open_at(now + elapsed, &token, &b.claims());
        prop_assert_eq!(opened.map(|o| o.state), Ok(state));
        prop_assert_eq!(s.open_at(now + TTL_MS, &token, &b.claims()).map(|o| o.state), Err(SealError::Expired));
    }

    #[test]
    fn any_change_to_the_token_is_refused(
        key in any::<[u8; 32]>(), b in binding(), state in text(), change in change(),
    ) {
        let s = sealer("k", key);
        let token = s.seal_at(1_000, &b.claims(), &state).map_err(|e| TestCaseError::fail(e.to_string()))?;
        let changed = apply(&token, &change);
        prop_assume!(changed != token);
        let got = s.open_at(2_000, &changed, &b.claims()).map(|o| o.state);
        if let Change::FlipBit { .. } = change {
            // The tag covers nonce, ciphertext and itself: a flipped bit never authenticates.
            prop_assert_eq!(got, Err(SealError::Unauthentic));
        } else {
            prop_assert!(got.is_err(), "{changed:?} opened");
        }
    }

    #[test]
    fn another_key_is_refused(
        key in any::<[u8; 32]>(), other in any::<[u8; 32]>(), b in binding(), state in text(),
    ) {
        prop_assume!(key != other);
        let token = sealer("k", key).seal_at(1_000, &b.claims(), &state)
            .map_err(|e| TestCaseError::fail(e.to_string()))?;
        let refused = |s: Sealer| s.open_at(2_000, &token, &b.claims()).map(|o| o.state);
        prop_assert_eq!(refused(sealer("k", other)), Err(SealError::Unauthentic));
        // The same key material under another id is another key (the id is sealed inside).
        prop_assert_eq!(refused(sealer("renamed", key)), Err(SealError::Unauthentic));
        // A rotated ring that still holds the sealing key opens it.
        let ring = KeyRing::new(SealKey::new("new", other).expect("id"))
            .with_previous(SealKey::new("k", key).expect("id"))
            .map_err(|e| TestCaseError::fail(e.to_string()))?;
        prop_assert_eq!(refused(Sealer::new(ring, Duration::from_millis(TTL_MS))), Ok(state));
    }

    #[test]
    fn another_binding_is_refused(
        key in any::<[u8; 32]>(), b in binding(), other in binding(), state in text(),
    ) {
        let s = sealer("k", key);
        let token = s.seal_at(1_000, &b.claims(), &state).map_err(|e| TestCaseError::fail(e.to_string()))?;
        let open = |c: Claims<'_>| s.open_at(2_000, &token, &c).map(|o| o.state);
        let base = b.claims();
        if other.method != b.method {
            prop_assert_eq!(open(Claims { method: other.method, ..base }), Err(SealError::Mismatch("method")));
        }
        if other.target != b.target {
            prop_assert_eq!(open(Claims { target: &other.target, ..base }), Err(SealError::Mismatch("target")));
        }
        if other.arguments != b.arguments {
            prop_assert_eq!(
                open(Claims { arguments: &other.arguments, ..base }),
                Err(SealError::Mismatch("arguments"))
            );
        }
        if other.audience != b.audience {
            prop_assert_eq!(
                open(Claims { audience: other.audience.as_deref(), ..base }),
                Err(SealError::Mismatch("audience"))
            );
        }
        prop_assert_eq!(open(base), Ok(state));
    }
}
