//! The HTTP client's TLS: which servers it trusts and which certificate it presents
//! ([`ClientTls`], the `tls` key of [`super::http_options::HttpClientOptions`]), and readable
//! handshake errors.
//!
//! Platform roots come from `rustls-native-certs` (the system's trust store, `SSL_CERT_FILE` /
//! `SSL_CERT_DIR` honoured; no OpenSSL is linked, only its file locations are probed), not from
//! a compiled-in bundle: an operator's own CAs (a corporate proxy, a private PKI) are then
//! trusted as every other program on the machine trusts them, and the set is updated with the
//! system rather than with this crate. A machine without a trust store gets a precise error
//! naming `tls.caFile` / `tls.caPem` (or a bundle via `SSL_CERT_FILE`).

use rustls::pki_types::CertificateDer;
use rustls::{CertificateError, ClientConfig};
use std::sync::{Arc, OnceLock};

use crate::transport::tls::{
    alpn, certs_from_pem, key_from_pem, provider, read_pem_file, root_store,
};

/// Client TLS options. JSON shape: `{"caFile", "caPem", "certFile", "keyFile", "certPem",
/// "keyPem", "platformRoots"}` (all optional). `Debug` never prints the inline key.
#[derive(Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields, default)]
#[non_exhaustive]
pub struct ClientTls {
    /// Extra trusted CA certificates, a PEM file (added to the platform roots unless
    /// [`Self::platform_roots`] is off).
    pub ca_file: Option<String>,
    /// Extra trusted CA certificates, inline PEM.
    pub ca_pem: Option<String>,
    /// A client certificate chain (PEM file) for mutual TLS; needs a key.
    pub cert_file: Option<String>,
    /// The client certificate's private key (PEM file).
    pub key_file: Option<String>,
    /// A client certificate chain, inline PEM.
    pub cert_pem: Option<String>,
    /// The client certificate's private key, inline PEM.
    pub key_pem: Option<String>,
    /// Trust the platform's root certificates (default true). Off, only the CAs given here
    /// are trusted (a private PKI that must not accept public certificates).
    pub platform_roots: bool,
}

impl std::fmt::Debug for ClientTls {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Paths and public certificates are shown; the inline private key only as set/unset.
        f.debug_struct("ClientTls")
            .field("ca_file", &self.ca_file)
            .field("ca_pem", &self.ca_pem.as_ref().map(|_| "<pem>"))
            .field("cert_file", &self.cert_file)
            .field("key_file", &self.key_file)
            .field("cert_pem", &self.cert_pem.as_ref().map(|_| "<pem>"))
            .field("key_pem", &self.key_pem.as_ref().map(|_| "<redacted>"))
            .field("platform_roots", &self.platform_roots)
            .finish()
    }
}

impl Default for ClientTls {
    fn default() -> Self {
        Self {
            ca_file: None,
            ca_pem: None,
            cert_file: None,
            key_file: None,
            cert_pem: None,
            key_pem: None,
            platform_roots: true,
        }
    }
}

/// One PEM item given as a file or inline (never both).
fn pem_source(
    file: Option<&String>,
    inline: Option<&String>,
    what: &str,
    keys: &str,
) -> Result<Option<Vec<u8>>, String> {
    match (file, inline) {
        (Some(_), Some(_)) => Err(format!("tls: set one of {keys}, not both")),
        (Some(path), None) => read_pem_file(path, what).map(Some),
        (None, Some(pem)) => Ok(Some(pem.as_bytes().to_vec())),
        (None, None) => Ok(None),
    }
}

/// The platform's roots, read once per process (a few hundred files on a typical system).
fn platform_roots() -> &'static [CertificateDer<'static>] {
    static ROOTS: OnceLock<Vec<CertificateDer<'static>>> = OnceLock::new();
    ROOTS.get_or_init(|| {
        let found = rustls_native_certs::load_native_certs();
        for e in &found.errors {
            tracing::debug!(error = %e, "a platform root certificate could not be loaded");
        }
        found.certs
    })
}

impl ClientTls {
    /// The rustls configuration: trusted roots, client certificate, ALPN (`h2` first when
    /// `http2`).
    ///
    /// # Errors
    /// Unreadable or malformed PEM, a certificate without a key (or the reverse), or no trusted
    /// root at all.
    pub fn client_config(&self, http2: bool) -> Result<ClientConfig, String> {
        let mut roots = rustls::RootCertStore::empty();
        if self.platform_roots {
            roots.add_parsable_certificates(platform_roots().iter().cloned());
        }
        if let Some(pem) = pem_source(
            self.ca_file.as_ref(),
            self.ca_pem.as_ref(),
            "TLS CA",
            "caFile and caPem",
        )? {
            roots
                .roots
                .extend(root_store(certs_from_pem(&pem, "TLS CA")?, "TLS CA")?.roots);
        }
        if roots.is_empty() {
            return Err(if self.platform_roots {
                "tls: no trusted CA certificate: the platform trust store is empty; give one \
                 with tls.caFile or tls.caPem (or SSL_CERT_FILE)"
                    .into()
            } else {
                "tls: platformRoots is off and no tls.caFile or tls.caPem is given: no server \
                 could be trusted"
                    .into()
            });
        }
        let builder = ClientConfig::builder_with_provider(provider())
            .with_safe_default_protocol_versions()
            .map_err(|e| format!("TLS: {e}"))?
            .with_root_certificates(roots);
        let cert = pem_source(
            self.cert_file.as_ref(),
            self.cert_pem.as_ref(),
            "TLS client certificate",
            "certFile and certPem",
        )?;
        let key = pem_source(
            self.key_file.as_ref(),
            self.key_pem.as_ref(),
            "TLS client key",
            "keyFile and keyPem",
        )?;
        let mut config = match (cert, key) {
            (None, None) => builder.with_no_client_auth(),
            (Some(cert), Some(key)) => builder
                .with_client_auth_cert(
                    certs_from_pem(&cert, "TLS client certificate")?,
                    key_from_pem(&key, "TLS client key")?,
                )
                .map_err(|e| format!("the TLS client key does not fit its certificate: {e}"))?,
            (Some(_), None) => return Err("tls: a client certificate needs a key".into()),
            (None, Some(_)) => return Err("tls: a client key needs a certificate".into()),
        };
        config.alpn_protocols = alpn(http2);
        Ok(config)
    }
}

/// A user's configuration with our ALPN list when it sets none.
pub(crate) fn with_alpn(config: &Arc<ClientConfig>, http2: bool) -> Arc<ClientConfig> {
    if !config.alpn_protocols.is_empty() {
        return config.clone();
    }
    let mut c = (**config).clone();
    c.alpn_protocols = alpn(http2);
    Arc::new(c)
}

/// A TLS failure in words an operator can act on; `None` when `e` is not a TLS error.
pub(crate) fn describe(e: &(dyn std::error::Error + 'static), host: &str) -> Option<String> {
    let io = e.downcast_ref::<std::io::Error>();
    let Some(tls) = e.downcast_ref::<rustls::Error>().or_else(|| {
        io.and_then(|io| io.get_ref())
            .and_then(|inner| inner.downcast_ref::<rustls::Error>())
    }) else {
        // An alert read after the handshake reaches us through hyper as text only.
        let text = io?.to_string();
        let alert = text.strip_prefix("received fatal alert: ")?;
        let desc = match alert {
            "CertificateRequired" => rustls::AlertDescription::CertificateRequired,
            "UnknownCA" => rustls::AlertDescription::UnknownCA,
            "BadCertificate" => rustls::AlertDescription::BadCertificate,
            _ => return Some(format!("TLS error: {text}")),
        };
        return describe(&rustls::Error::AlertReceived(desc), host);
    };
    Some(match tls {
        rustls::Error::InvalidCertificate(CertificateError::UnknownIssuer) => format!(
            "the server's certificate is not signed by a trusted CA (unknown issuer); trust its \
             CA with tls.caFile or tls.caPem [{tls}]"
        ),
        rustls::Error::InvalidCertificate(
            CertificateError::NotValidForName | CertificateError::NotValidForNameContext { .. },
        ) => format!("the server's certificate does not name {host:?} (name mismatch) [{tls}]"),
        rustls::Error::InvalidCertificate(CertificateError::Expired) => {
            format!("the server's certificate has expired [{tls}]")
        }
        rustls::Error::AlertReceived(rustls::AlertDescription::CertificateRequired) => format!(
            "the server requires a client certificate (tls.certFile and tls.keyFile) [{tls}]"
        ),
        rustls::Error::AlertReceived(
            rustls::AlertDescription::UnknownCA | rustls::AlertDescription::BadCertificate,
        ) => format!("the server refused the client certificate [{tls}]"),
        other => format!("TLS error: {other}"),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn handshake_errors_are_described() {
        let io = |e: rustls::Error| std::io::Error::new(std::io::ErrorKind::InvalidData, e);
        let d = |e: &(dyn std::error::Error + 'static)| describe(e, "mcp.test").expect("TLS");
        let unknown = io(rustls::Error::InvalidCertificate(
            CertificateError::UnknownIssuer,
        ));
        assert!(d(&unknown).contains("not signed by a trusted CA"));
        let name = rustls::Error::InvalidCertificate(CertificateError::NotValidForName);
        assert!(d(&name).contains("does not name \"mcp.test\" (name mismatch)"));
        // After the handshake hyper hands the alert over as text only.
        let text = std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            rustls::Error::AlertReceived(rustls::AlertDescription::CertificateRequired).to_string(),
        );
        assert!(d(&text).contains("requires a client certificate"));
        let plain = std::io::Error::from(std::io::ErrorKind::ConnectionReset);
        assert!(describe(&plain, "h").is_none(), "not a TLS error");
    }

    #[test]
    fn misconfigurations_are_named() {
        let only_cert = ClientTls {
            cert_pem: Some("x".into()),
            ca_pem: None,
            ..ClientTls::default()
        };
        let no_roots = ClientTls {
            platform_roots: false,
            ..ClientTls::default()
        };
        let both = ClientTls {
            ca_file: Some("/a".into()),
            ca_pem: Some("b".into()),
            ..ClientTls::default()
        };
        for (t, want) in [
            (no_roots, "platformRoots is off"),
            (both, "set one of caFile and caPem"),
            (
                ClientTls {
                    platform_roots: false,
                    ca_pem: Some("junk".into()),
                    ..ClientTls::default()
                },
                "holds no certificate",
            ),
        ] {
            let e = t.client_config(true).expect_err("refused");
            assert!(e.contains(want), "{e}");
        }
        // Without platform roots on this machine the error is about roots; with them, the
        // lone certificate is refused.
        let e = only_cert.client_config(true).expect_err("refused");
        assert!(
            e.contains("needs a key") || e.contains("trust store is empty"),
            "{e}"
        );
    }
}
