//! Why an authorization step failed. Messages name the step and the peer's offending field,
//! never a secret (client secret, code, verifier, token, private key).

/// The class of an authorization failure.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum AuthErrorKind {
    /// A `WWW-Authenticate` header that cannot be parsed.
    InvalidChallenge,
    /// No usable Protected Resource Metadata (AUTH-01).
    ResourceMetadata,
    /// The PRM `resource` does not identify the server connected to (AUTH-05).
    ResourceMismatch,
    /// No usable authorization-server metadata, or its `issuer` is not the expected one
    /// (AUTH-03).
    ServerMetadata,
    /// The resource names only authorization servers the configured static credentials do not
    /// belong to (`auth.issuer`, `auth.allowedIssuers`; AUTH-09); nothing was sent to them.
    UntrustedIssuer,
    /// The authorization server does not advertise PKCE `S256` (AUTH-04).
    PkceUnsupported,
    /// No way to obtain client credentials (AUTH-08).
    Registration,
    /// The authorization response is an error, lacks the code, or its `state`/`iss` do not
    /// match (AUTH-07).
    AuthorizationResponse,
    /// The token endpoint refused or answered something unusable.
    TokenEndpoint,
    /// The server still refuses after the bounded number of authorization rounds (AUTH-02).
    Forbidden,
    /// A fetch failed: connection, timeout, size limit, status.
    Http,
    /// The auth options are invalid (a key that cannot be read, a bad URL).
    Config,
    /// The browser callback failed.
    Browser,
}

/// An authorization failure.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AuthError {
    kind: AuthErrorKind,
    message: String,
}

impl AuthError {
    /// An error of `kind` (for [`super::AuthorizationBrowser`] and [`super::TokenStore`]
    /// implementations).
    pub fn new(kind: AuthErrorKind, message: impl Into<String>) -> Self {
        Self {
            kind,
            message: message.into(),
        }
    }

    /// The class of the failure.
    pub fn kind(&self) -> AuthErrorKind {
        self.kind
    }

    /// What went wrong (no secrets).
    pub fn message(&self) -> &str {
        &self.message
    }
}

impl std::fmt::Display for AuthError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{:?}: {}", self.kind, self.message)
    }
}

impl std::error::Error for AuthError {}
