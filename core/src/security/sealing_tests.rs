//! Unit tests of `sealing.rs`: keys, rings, seal and open.
use super::*;
use serde_json::json;

#[test]
fn rings_from_specs_name_unnamed_keys_by_place_and_never_echo_a_key() {
    use base64::Engine;
    let b64 = |b: u8| base64::engine::general_purpose::STANDARD.encode([b; 32]);
    let none: [&str; 0] = [];
    assert!(KeyRing::from_specs(&none).unwrap().is_none());
    let ring = KeyRing::from_specs(&[b64(1), format!("old:{}", b64(2))])
        .unwrap()
        .unwrap();
    assert_eq!(ring.current().id(), "k1");
    assert_eq!(ring.ids().collect::<Vec<_>>(), ["k1", "old"]);
    let bad = "not-a-key-zzzz";
    let e = KeyRing::from_specs(&[b64(1), bad.to_owned()]).unwrap_err();
    assert!(e.contains("key #2") && !e.contains(bad), "{e}");
    let e = KeyRing::from_specs(&[format!("a:{}", b64(1)), format!("a:{}", b64(2))]).unwrap_err();
    assert!(e.contains("keys"), "{e}");
}

fn key(id: &str, b: u8) -> SealKey {
    SealKey::new(id, [b; 32]).unwrap()
}

fn sealer() -> Sealer {
    Sealer::new(KeyRing::new(key("k1", 1)), DEFAULT_TTL)
}

fn claims<'a>(args: &'a Value) -> Claims<'a> {
    Claims {
        method: "tools/call",
        target: "t",
        arguments: args,
        audience: None,
    }
}

#[test]
fn mrtr06_round_trip_is_opaque() {
    let args = json!({"a": 1});
    let s = sealer();
    let tok = s.seal(&claims(&args), "secret-state").unwrap();
    assert!(tok.starts_with("v1."));
    assert!(!tok.contains("secret"));
    assert_eq!(s.unseal(&tok, &claims(&args)).unwrap(), "secret-state");
    // Random nonce: two seals of the same state differ.
    assert_ne!(tok, s.seal(&claims(&args), "secret-state").unwrap());
}

#[test]
fn mrtr06_every_claim_is_bound() {
    let args = json!({"a": 1, "b": [1, {"c": 2}]});
    let s = sealer();
    let c = Claims {
        audience: Some("aud-1"),
        ..claims(&args)
    };
    let tok = s.seal(&c, "x").unwrap();
    let other_args = json!({"a": 2, "b": [1, {"c": 2}]});
    let cases = [
        (
            Claims {
                method: "prompts/get",
                ..c
            },
            SealError::Mismatch("method"),
        ),
        (
            Claims {
                target: "other",
                ..c
            },
            SealError::Mismatch("target"),
        ),
        (
            Claims {
                arguments: &other_args,
                ..c
            },
            SealError::Mismatch("arguments"),
        ),
        (
            Claims {
                audience: Some("aud-2"),
                ..c
            },
            SealError::Mismatch("audience"),
        ),
        (
            Claims {
                audience: None,
                ..c
            },
            SealError::Mismatch("audience"),
        ),
    ];
    for (cl, want) in cases {
        assert_eq!(s.unseal(&tok, &cl), Err(want));
    }
    assert_eq!(s.unseal(&tok, &c).unwrap(), "x");
}

#[test]
fn canonical_digest_ignores_key_order() {
    let a: Value = serde_json::from_str(r#"{"b":{"y":1,"x":[2,3]},"a":"s"}"#).unwrap();
    let b: Value = serde_json::from_str(r#"{"a":"s","b":{"x":[2,3],"y":1}}"#).unwrap();
    assert_eq!(arguments_digest(&a), arguments_digest(&b));
    assert_ne!(arguments_digest(&a), arguments_digest(&json!({"a": "s"})));
}

#[test]
fn wrong_key_is_refused() {
    let args = json!({});
    let tok = sealer().seal(&claims(&args), "x").unwrap();
    let other = Sealer::new(KeyRing::new(key("k1", 2)), DEFAULT_TTL);
    assert_eq!(
        other.unseal(&tok, &claims(&args)),
        Err(SealError::Unauthentic)
    );
}

#[test]
fn rotation_old_keys_open_new_key_seals() {
    let args = json!({});
    let old = sealer();
    let tok_old = old.seal(&claims(&args), "old").unwrap();
    let ring = KeyRing::new(key("k2", 2))
        .with_previous(key("k1", 1))
        .unwrap();
    let rotated = Sealer::new(ring, DEFAULT_TTL);
    assert_eq!(rotated.unseal(&tok_old, &claims(&args)).unwrap(), "old");
    let tok_new = rotated.seal(&claims(&args), "new").unwrap();
    // The old-only worker cannot open what the rotated one sealed.
    assert_eq!(
        old.unseal(&tok_new, &claims(&args)),
        Err(SealError::Unauthentic)
    );
    assert_eq!(rotated.ring.ids().collect::<Vec<_>>(), ["k2", "k1"]);
    // Dropping the old key retires its tokens.
    let retired = Sealer::new(KeyRing::new(key("k2", 2)), DEFAULT_TTL);
    assert_eq!(
        retired.unseal(&tok_old, &claims(&args)),
        Err(SealError::Unauthentic)
    );
}

#[test]
fn same_key_bytes_under_another_id_is_refused() {
    let args = json!({});
    let tok = sealer().seal(&claims(&args), "x").unwrap();
    let renamed = Sealer::new(KeyRing::new(key("other", 1)), DEFAULT_TTL);
    assert_eq!(
        renamed.unseal(&tok, &claims(&args)),
        Err(SealError::Unauthentic)
    );
}

#[test]
fn expiry() {
    let args = json!({});
    let s = Sealer::new(KeyRing::new(key("k1", 1)), Duration::from_secs(300));
    let tok = s.seal_at(1_000, &claims(&args), "x").unwrap();
    assert!(s.unseal_at(300_999, &tok, &claims(&args)).is_ok());
    assert_eq!(
        s.unseal_at(301_000, &tok, &claims(&args)),
        Err(SealError::Expired)
    );
    let zero = Sealer::new(KeyRing::new(key("k1", 1)), Duration::ZERO);
    let tok = zero.seal_at(5, &claims(&args), "x").unwrap();
    assert_eq!(
        zero.unseal_at(5, &tok, &claims(&args)),
        Err(SealError::Expired)
    );
}

#[test]
fn tampering_any_byte_is_refused() {
    let args = json!({});
    let s = sealer();
    let tok = s.seal(&claims(&args), "x").unwrap();
    let raw = URL_SAFE_NO_PAD.decode(&tok[3..]).unwrap();
    for i in 0..raw.len() {
        let mut r = raw.clone();
        r[i] ^= 0x01;
        let t = format!("v1.{}", URL_SAFE_NO_PAD.encode(&r));
        assert_eq!(s.unseal(&t, &claims(&args)), Err(SealError::Unauthentic));
    }
    // Another version prefix over the same body fails (prefix is the AAD and the format).
    assert_eq!(
        s.unseal(&format!("v2.{}", &tok[3..]), &claims(&args)),
        Err(SealError::Malformed)
    );
    assert!(s
        .unseal(&format!("{tok}-TAMPERED"), &claims(&args))
        .is_err());
}

#[test]
fn malformed_inputs_never_panic() {
    let args = json!({});
    let s = sealer();
    let long = "A".repeat(10_000);
    let inputs = [
        "",
        "v1",
        "v1.",
        "v1.!!!!",
        "v1.AAAA",
        "v1.AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA",
        "garbage",
        "v1.ü",
        long.as_str(),
    ];
    for i in inputs {
        assert!(s.unseal(i, &claims(&args)).is_err(), "{i:?}");
    }
    // Authentic ciphertext with a non-JSON payload is malformed, not a panic.
    let k = key("k1", 1);
    let nonce = [7u8; 12];
    let ct = k
        .cipher
        .encrypt(
            Nonce::from_slice(&nonce),
            Payload {
                msg: b"not json",
                aad: AAD,
            },
        )
        .unwrap();
    let t = format!("v1.{}", URL_SAFE_NO_PAD.encode([&nonce[..], &ct].concat()));
    assert_eq!(s.unseal(&t, &claims(&args)), Err(SealError::Malformed));
}

#[test]
fn key_parsing_and_ring_rules() {
    let b64 = URL_SAFE_NO_PAD.encode([9u8; 32]);
    assert!(SealKey::from_base64("a", &b64).is_ok());
    assert!(SealKey::from_base64("a", &STANDARD.encode([9u8; 32])).is_ok());
    assert_eq!(
        SealKey::from_base64("a", "short").unwrap_err(),
        KeyError::BadKey
    );
    assert_eq!(
        SealKey::from_base64("a", &STANDARD.encode([9u8; 31])).unwrap_err(),
        KeyError::BadKey
    );
    assert_eq!(SealKey::new("", [0; 32]).unwrap_err(), KeyError::BadId);
    assert_eq!(
        KeyRing::new(key("a", 1))
            .with_previous(key("a", 2))
            .unwrap_err(),
        KeyError::BadId
    );
    let mut ring = KeyRing::new(key("k0", 0));
    for i in 1..MAX_KEYS {
        ring = ring.with_previous(key(&format!("k{i}"), 1)).unwrap();
    }
    assert_eq!(
        ring.with_previous(key("extra", 3)).unwrap_err(),
        KeyError::TooMany
    );
    assert!(!format!("{:?}", key("dbg", 42)).contains("42"));
    let a = KeyRing::process_default().unwrap();
    let b = KeyRing::process_default().unwrap();
    let args = json!({});
    let tok = Sealer::new(a, DEFAULT_TTL)
        .seal(&claims(&args), "p")
        .unwrap();
    assert_eq!(
        Sealer::new(b, DEFAULT_TTL)
            .unseal(&tok, &claims(&args))
            .unwrap(),
        "p"
    );
}
