//! Signed JWTs on `ring`: `private_key_jwt` client assertions (RFC 7523 §2.2) from a PEM
//! PKCS#8 key (ES256 or RS256), and DPoP proofs (RFC 9449 §4) with a key generated per
//! connection.

use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
use base64::Engine;
use ring::rand::SystemRandom;
use ring::signature::{self, EcdsaKeyPair, KeyPair, RsaKeyPair};
use serde_json::{json, Value};
use std::time::{SystemTime, UNIX_EPOCH};

use super::error::{AuthError, AuthErrorKind};
use super::util::random_b64;

/// A signing key and its JWS algorithm.
pub(crate) enum Signer {
    Es256(EcdsaKeyPair),
    Rs256(RsaKeyPair),
}

fn config(m: impl Into<String>) -> AuthError {
    AuthError::new(AuthErrorKind::Config, m)
}

pub(crate) fn now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// The DER inside a PEM block (any label).
fn pem_der(pem: &str) -> Result<Vec<u8>, AuthError> {
    let body: String = pem
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with("-----"))
        .collect();
    STANDARD
        .decode(body)
        .map_err(|_| config("the private key is not PEM (base64 between BEGIN/END lines)"))
}

impl Signer {
    /// A PKCS#8 PEM key for `alg` (`ES256` default, or `RS256`). The error never quotes the
    /// key.
    pub(crate) fn from_pem(pem: &str, alg: Option<&str>) -> Result<Signer, AuthError> {
        let der = pem_der(pem)?;
        match alg.unwrap_or("ES256") {
            "ES256" => EcdsaKeyPair::from_pkcs8(
                &signature::ECDSA_P256_SHA256_FIXED_SIGNING,
                &der,
                &SystemRandom::new(),
            )
            .map(Signer::Es256)
            .map_err(|e| config(format!("the private key is not a P-256 PKCS#8 key: {e}"))),
            "RS256" => RsaKeyPair::from_pkcs8(&der)
                .map(Signer::Rs256)
                .map_err(|e| config(format!("the private key is not an RSA PKCS#8 key: {e}"))),
            other => Err(config(format!(
                "unsupported signing algorithm {other:?} (ES256, RS256)"
            ))),
        }
    }

    /// A fresh P-256 key (DPoP).
    pub(crate) fn generate_es256() -> Result<Signer, AuthError> {
        let rng = SystemRandom::new();
        let alg = &signature::ECDSA_P256_SHA256_FIXED_SIGNING;
        let doc = EcdsaKeyPair::generate_pkcs8(alg, &rng)
            .map_err(|_| config("cannot generate a P-256 key"))?;
        EcdsaKeyPair::from_pkcs8(alg, doc.as_ref(), &rng)
            .map(Signer::Es256)
            .map_err(|_| config("cannot load the generated P-256 key"))
    }

    fn alg(&self) -> &'static str {
        match self {
            Signer::Es256(_) => "ES256",
            Signer::Rs256(_) => "RS256",
        }
    }

    /// The public JWK of an EC key (`kty`, `crv`, `x`, `y`).
    pub(crate) fn public_jwk(&self) -> Option<Value> {
        let Signer::Es256(k) = self else {
            return None;
        };
        let p = k.public_key().as_ref();
        // Uncompressed point: 0x04 || x (32) || y (32).
        (p.len() == 65).then(|| {
            json!({"kty": "EC", "crv": "P-256",
                   "x": URL_SAFE_NO_PAD.encode(&p[1..33]), "y": URL_SAFE_NO_PAD.encode(&p[33..])})
        })
    }

    /// `header.claims.signature`, with `alg` set in the header.
    pub(crate) fn sign(&self, mut header: Value, claims: &Value) -> Result<String, AuthError> {
        header["alg"] = json!(self.alg());
        let input = format!(
            "{}.{}",
            URL_SAFE_NO_PAD.encode(header.to_string()),
            URL_SAFE_NO_PAD.encode(claims.to_string())
        );
        let rng = SystemRandom::new();
        let sig = match self {
            Signer::Es256(k) => k
                .sign(&rng, input.as_bytes())
                .map(|s| s.as_ref().to_vec())
                .map_err(|_| config("signing failed"))?,
            Signer::Rs256(k) => {
                let mut out = vec![0u8; k.public().modulus_len()];
                k.sign(
                    &signature::RSA_PKCS1_SHA256,
                    &rng,
                    input.as_bytes(),
                    &mut out,
                )
                .map_err(|_| config("signing failed"))?;
                out
            }
        };
        Ok(format!("{input}.{}", URL_SAFE_NO_PAD.encode(sig)))
    }
}

/// A `private_key_jwt` assertion: `iss` = `sub` = client id, `aud` = the issuer, short-lived.
pub(crate) fn client_assertion(
    signer: &Signer,
    client_id: &str,
    audience: &str,
) -> Result<String, AuthError> {
    let t = now();
    let claims = json!({"iss": client_id, "sub": client_id, "aud": audience,
        "iat": t, "exp": t + 300, "jti": random_b64(16)?});
    signer.sign(json!({"typ": "JWT"}), &claims)
}

/// A DPoP proof for `htm` `htu` (query and fragment dropped), with `ath` for a resource
/// request and the server's `nonce` when one was given (RFC 9449 §4.2, §8, §9).
pub(crate) fn dpop_proof(
    signer: &Signer,
    htm: &str,
    htu: &str,
    access_token: Option<&str>,
    nonce: Option<&str>,
) -> Result<String, AuthError> {
    let jwk = signer
        .public_jwk()
        .ok_or_else(|| config("DPoP needs an EC key"))?;
    let htu = htu.split(['?', '#']).next().unwrap_or_default();
    let mut claims = json!({"jti": random_b64(16)?, "htm": htm, "htu": htu, "iat": now()});
    if let Some(t) = access_token {
        claims["ath"] = json!(URL_SAFE_NO_PAD.encode(super::util::sha256(t.as_bytes())));
    }
    if let Some(n) = nonce {
        claims["nonce"] = json!(n);
    }
    signer.sign(json!({"typ": "dpop+jwt", "jwk": jwk}), &claims)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parts(jwt: &str) -> (Value, Value, Vec<u8>) {
        let p: Vec<&str> = jwt.split('.').collect();
        assert_eq!(p.len(), 3);
        let d = |s: &str| URL_SAFE_NO_PAD.decode(s).unwrap();
        (
            serde_json::from_slice(&d(p[0])).unwrap(),
            serde_json::from_slice(&d(p[1])).unwrap(),
            d(p[2]),
        )
    }

    #[test]
    fn dpop_proofs_verify_and_are_fresh() {
        let k = Signer::generate_es256().unwrap();
        let a = dpop_proof(&k, "POST", "http://h/mcp?x=1#f", Some("tok"), Some("n1")).unwrap();
        let (h, c, sig) = parts(&a);
        assert_eq!(h["typ"], "dpop+jwt");
        assert_eq!(h["alg"], "ES256");
        assert!(h["jwk"].get("d").is_none());
        assert_eq!(c["htu"], "http://h/mcp");
        assert_eq!(c["nonce"], "n1");
        assert_eq!(
            c["ath"],
            URL_SAFE_NO_PAD.encode(super::super::util::sha256(b"tok"))
        );
        // The signature verifies with the public key in the header.
        let x = URL_SAFE_NO_PAD
            .decode(h["jwk"]["x"].as_str().unwrap())
            .unwrap();
        let y = URL_SAFE_NO_PAD
            .decode(h["jwk"]["y"].as_str().unwrap())
            .unwrap();
        let public = [vec![4u8], x, y].concat();
        let input = a.rsplit_once('.').unwrap().0;
        signature::UnparsedPublicKey::new(&signature::ECDSA_P256_SHA256_FIXED, public)
            .verify(input.as_bytes(), &sig)
            .expect("verifies");
        let b = dpop_proof(&k, "POST", "http://h/mcp", Some("tok"), None).unwrap();
        assert_ne!(parts(&b).1["jti"], c["jti"], "a fresh jti per proof");
    }

    #[test]
    fn client_assertions_from_a_pem_key_verify() {
        let rng = SystemRandom::new();
        let alg = &signature::ECDSA_P256_SHA256_FIXED_SIGNING;
        let doc = EcdsaKeyPair::generate_pkcs8(alg, &rng).unwrap();
        let pem = format!(
            "-----BEGIN PRIVATE KEY-----\n{}\n-----END PRIVATE KEY-----\n",
            STANDARD.encode(doc.as_ref())
        );
        let k = Signer::from_pem(&pem, Some("ES256")).unwrap();
        let jwt = client_assertion(&k, "client-1", "http://as").unwrap();
        let (h, c, sig) = parts(&jwt);
        assert_eq!(h["alg"], "ES256");
        assert_eq!(
            (c["iss"].as_str(), c["sub"].as_str()),
            (Some("client-1"), Some("client-1"))
        );
        assert_eq!(c["aud"], "http://as");
        assert!(c["exp"].as_u64().unwrap() > c["iat"].as_u64().unwrap());
        let public = EcdsaKeyPair::from_pkcs8(alg, doc.as_ref(), &rng).unwrap();
        let input = jwt.rsplit_once('.').unwrap().0;
        signature::UnparsedPublicKey::new(
            &signature::ECDSA_P256_SHA256_FIXED,
            public.public_key().as_ref(),
        )
        .verify(input.as_bytes(), &sig)
        .expect("verifies");
    }

    #[test]
    fn bad_keys_are_config_errors_without_the_key() {
        let pem =
            "-----BEGIN PRIVATE KEY-----\nc2VjcmV0LWtleS1ieXRlcw==\n-----END PRIVATE KEY-----";
        for alg in [None, Some("RS256")] {
            let e = Signer::from_pem(pem, alg).err().unwrap();
            assert_eq!(e.kind(), AuthErrorKind::Config);
            assert!(!e.message().contains("c2VjcmV0"));
        }
        assert!(Signer::from_pem("not pem at all!", None).is_err());
        assert!(Signer::from_pem(pem, Some("HS256")).is_err());
    }
}
