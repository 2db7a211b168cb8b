//! The modern per-request `_meta` envelope (§0.2, §0.3, META-01…05, VER-01): the claim
//! detection of `protocol/envelope.rs`, the one envelope parser (`server::era::parse_envelope`)
//! and the §0.2 era routing, fed arbitrary JSON as a request's `params`.
//!
//! Invariants: an accepted envelope is a claim whose version is the claimed string and whose
//! capabilities are an object; a refusal is -32602 or -32022; a claim always routes modern; a
//! notification is never refused; no claim with the legacy era served and no transport claim
//! routes legacy.

#![no_main]

use libfuzzer_sys::fuzz_target;
use mcpcore::fuzzing::{parse_envelope, route_notification, route_request};
use mcpcore::protocol::envelope::{claimed_version, has_claim};
use serde_json::{Map, Value};

const TRANSPORT_VERSIONS: &[Option<&str>] = &[
    None,
    Some("2025-11-25"),
    Some("2025-06-18"),
    Some("2026-07-28"),
    Some("1999-01-01"),
];

fn check(params: Option<&Map<String, Value>>) {
    let claim = has_claim(params);
    match parse_envelope(params) {
        Ok(env) => {
            assert!(claim, "an envelope without the claim key was accepted");
            assert_eq!(claimed_version(params), Some(env.protocol_version.as_str()));
            assert!(env.client_capabilities.is_object());
        }
        Err(e) => assert!(
            e.code == -32602 || e.code == -32022,
            "unexpected code {e:?}"
        ),
    }
    for &tv in TRANSPORT_VERSIONS {
        for legacy in [true, false] {
            let routed = route_request(params, tv, legacy);
            if claim {
                assert!(matches!(routed, Ok(true)), "a claim did not route modern");
            } else if legacy && tv.is_none() {
                assert!(matches!(routed, Ok(false)), "no claim did not route legacy");
            }
            if let Err(e) = &routed {
                assert!(
                    e.code == -32602 || e.code == -32022,
                    "unexpected code {e:?}"
                );
            }
            assert!(
                route_notification(params, tv, legacy).is_ok(),
                "a notification was refused"
            );
        }
    }
}

fuzz_target!(|data: &[u8]| {
    let Ok(v) = serde_json::from_slice::<Value>(data) else {
        return;
    };
    match &v {
        Value::Object(m) => {
            check(Some(m));
            // The same value as the `_meta` object itself.
            let mut p = Map::new();
            p.insert("_meta".into(), v.clone());
            check(Some(&p));
        }
        _ => check(None),
    }
});
