//! TLS on rustls with the `ring` provider (no OpenSSL, no aws-lc-rs and its C toolchain): PEM
//! loading shared by both sides, and the server's configuration ([`ServerTls`], the `tls` key of
//! [`crate::transport::http::HttpOptions`]). The client's side is `client::transport::tls`.
//!
//! HTTPS is what the MCP transports spec asks of remote servers (HTTP-03 binds local servers to
//! localhost; anything else should be TLS-terminated, here or by a proxy in front).

/// The rustls this crate is built with, to build a [`rustls::ServerConfig`] of the same version.
pub use rustls;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use std::path::Path;
use std::sync::Arc;

/// ALPN identifiers: HTTP/2 first when it is on, HTTP/1.1 always (RFC 9113 §3.2).
pub(crate) fn alpn(http2: bool) -> Vec<Vec<u8>> {
    let mut v = Vec::new();
    if http2 {
        v.push(b"h2".to_vec());
    }
    v.push(b"http/1.1".to_vec());
    v
}

/// The crypto provider every config here is built with: explicit, so a process-wide default
/// installed (or not) by someone else never changes it and never panics.
pub(crate) fn provider() -> Arc<rustls::crypto::CryptoProvider> {
    Arc::new(rustls::crypto::ring::default_provider())
}

/// Read a PEM file, naming it in the error.
pub(crate) fn read_pem_file(path: &str, what: &str) -> Result<Vec<u8>, String> {
    std::fs::read(Path::new(path)).map_err(|e| format!("cannot read the {what} file {path:?}: {e}"))
}

/// Every certificate in `pem`; an error when there is none or one is malformed.
pub(crate) fn certs_from_pem(
    pem: &[u8],
    what: &str,
) -> Result<Vec<CertificateDer<'static>>, String> {
    let certs = CertificateDer::pem_slice_iter(pem)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| format!("the {what} is not valid PEM: {e}"))?;
    if certs.is_empty() {
        return Err(format!(
            "the {what} holds no certificate (expected PEM \"BEGIN CERTIFICATE\" blocks)"
        ));
    }
    Ok(certs)
}

/// The first private key (PKCS#8, PKCS#1 or SEC1) in `pem`.
pub(crate) fn key_from_pem(pem: &[u8], what: &str) -> Result<PrivateKeyDer<'static>, String> {
    PrivateKeyDer::from_pem_slice(pem).map_err(|e| match e {
        rustls::pki_types::pem::Error::NoItemsFound => {
            format!("the {what} holds no private key (expected a PEM \"PRIVATE KEY\" block)")
        }
        e => format!("the {what} is not a valid PEM private key: {e}"),
    })
}

/// A root store holding every certificate of `certs`.
pub(crate) fn root_store(
    certs: Vec<CertificateDer<'static>>,
    what: &str,
) -> Result<rustls::RootCertStore, String> {
    let mut roots = rustls::RootCertStore::empty();
    for c in certs {
        roots
            .add(c)
            .map_err(|e| format!("a certificate of the {what} cannot be a trust anchor: {e}"))?;
    }
    Ok(roots)
}

/// Server TLS from PEM files, the JSON shape of [`crate::transport::http::HttpOptions::tls`]:
/// `{"certFile": "chain.pem", "keyFile": "key.pem", "clientCaFile": null}`.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields, default)]
#[non_exhaustive]
pub struct ServerTls {
    /// The certificate chain (PEM), leaf first.
    pub cert_file: String,
    /// The leaf's private key (PEM: PKCS#8, PKCS#1 or SEC1).
    pub key_file: String,
    /// When set, clients must present a certificate signed by one of these CAs (PEM), mutual
    /// TLS; a client without one is refused during the handshake.
    pub client_ca_file: Option<String>,
}

impl ServerTls {
    /// TLS from a certificate chain file and a key file.
    pub fn new(cert_file: impl Into<String>, key_file: impl Into<String>) -> Self {
        Self {
            cert_file: cert_file.into(),
            key_file: key_file.into(),
            client_ca_file: None,
        }
    }

    /// Require client certificates signed by the CAs in `ca_file` (mutual TLS).
    #[must_use]
    pub fn client_ca_file(mut self, ca_file: impl Into<String>) -> Self {
        self.client_ca_file = Some(ca_file.into());
        self
    }

    /// Read the files and build the rustls configuration (without ALPN; the listener sets it).
    ///
    /// # Errors
    /// A file that cannot be read, holds no certificate or key, or a key that does not match.
    pub fn load(&self) -> Result<rustls::ServerConfig, String> {
        let chain = read_pem_file(&self.cert_file, "TLS certificate")?;
        let key = read_pem_file(&self.key_file, "TLS key")?;
        let client_ca = match &self.client_ca_file {
            Some(p) => Some(read_pem_file(p, "TLS client CA")?),
            None => None,
        };
        server_config_from_pem(&chain, &key, client_ca.as_deref())
    }
}

/// A server configuration from a PEM certificate chain (leaf first) and private key, requiring
/// client certificates signed by `client_ca` when given. No ALPN is set: the listener offers
/// `h2` and `http/1.1` per [`crate::transport::http::HttpOptions::http2`].
///
/// # Errors
/// Malformed or missing PEM items, a key that does not match the leaf, an unusable CA.
pub fn server_config_from_pem(
    cert_chain: &[u8],
    key: &[u8],
    client_ca: Option<&[u8]>,
) -> Result<rustls::ServerConfig, String> {
    let chain = certs_from_pem(cert_chain, "TLS certificate chain")?;
    let key = key_from_pem(key, "TLS key")?;
    let builder = rustls::ServerConfig::builder_with_provider(provider())
        .with_safe_default_protocol_versions()
        .map_err(|e| format!("TLS: {e}"))?;
    let builder = match client_ca {
        None => builder.with_no_client_auth(),
        Some(pem) => {
            let roots = root_store(certs_from_pem(pem, "TLS client CA")?, "TLS client CA")?;
            let verifier = rustls::server::WebPkiClientVerifier::builder_with_provider(
                roots.into(),
                provider(),
            )
            .build()
            .map_err(|e| format!("TLS client CA: {e}"))?;
            builder.with_client_cert_verifier(verifier)
        }
    };
    builder
        .with_single_cert(chain, key)
        .map_err(|e| format!("the TLS key does not fit the certificate: {e}"))
}

/// The server's TLS configuration with the listener's ALPN (a configuration that sets its own
/// ALPN keeps it).
pub(crate) fn with_alpn(
    config: Arc<rustls::ServerConfig>,
    http2: bool,
) -> Arc<rustls::ServerConfig> {
    if !config.alpn_protocols.is_empty() {
        return config;
    }
    let mut c = (*config).clone();
    c.alpn_protocols = alpn(http2);
    Arc::new(c)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pem_errors_are_precise() {
        let e = certs_from_pem(b"nothing here", "TLS certificate chain").expect_err("empty");
        assert!(e.contains("holds no certificate"), "{e}");
        let e = key_from_pem(b"", "TLS key").expect_err("empty");
        assert!(e.contains("holds no private key"), "{e}");
        let e = ServerTls::new("/nonexistent/chain.pem", "/nonexistent/key.pem")
            .load()
            .expect_err("missing file");
        assert!(
            e.contains("cannot read the TLS certificate file \"/nonexistent/chain.pem\""),
            "{e}"
        );
    }

    #[test]
    fn alpn_offers_h2_only_when_on() {
        assert_eq!(alpn(true), vec![b"h2".to_vec(), b"http/1.1".to_vec()]);
        assert_eq!(alpn(false), vec![b"http/1.1".to_vec()]);
    }
}
