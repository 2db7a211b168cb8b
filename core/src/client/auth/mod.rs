//! OAuth 2.1 client authorization for the Streamable HTTP client (REQUIREMENTS §15,
//! AUTH-01…09). Off unless [`HttpClientOptions::auth`](crate::client::HttpClientOptions) is set.
//!
//! On a 401 (or a 403 `insufficient_scope`) the transport hands the challenge here: Protected
//! Resource Metadata discovery (AUTH-01), authorization-server metadata with the exact-issuer
//! check (AUTH-03), client registration by pre-registered credentials, Client ID Metadata
//! Document URL or Dynamic Client Registration (AUTH-08, keyed by issuer, AUTH-09), then the
//! authorization code grant with PKCE S256 (AUTH-04), `resource` on both requests (AUTH-05)
//! and the RFC 9207 `iss` checks (AUTH-07); or a refresh, or the client-credentials grant.
//! The request is then resent with `Authorization: Bearer` (AUTH-06).
//!
//! Data options are JSON ([`OAuthOptions`]); the browser step ([`AuthorizationBrowser`]) and
//! token storage ([`TokenStore`]) are Rust traits with defaults ([`HeadlessBrowser`],
//! [`MemoryTokenStore`]).

// The challenge parser and the error type exist in every build (`ClientError::Auth`); the
// flow needs the HTTP client (`http-client` feature).
mod challenge;
#[cfg(feature = "http-client")]
mod discovery;
mod error;
#[cfg(feature = "http-client")]
mod fetch;
#[cfg(feature = "http-client")]
mod flow;
#[cfg(feature = "http-client")]
mod grants;
#[cfg(feature = "http-client")]
pub(crate) mod hook;
#[cfg(feature = "http-client")]
mod jwt;
#[cfg(feature = "http-client")]
mod options;
#[cfg(feature = "http-client")]
mod store;
#[cfg(feature = "http-client")]
mod util;

pub use challenge::{parse_www_authenticate, Challenge};
pub use error::{AuthError, AuthErrorKind};
#[cfg(feature = "http-client")]
pub(crate) use flow::Authorizer;
#[cfg(feature = "http-client")]
pub use options::{AuthHooks, GrantKind, OAuthOptions};
#[cfg(feature = "http-client")]
pub use store::{
    browser_fn, AuthorizationBrowser, ClientInfo, HeadlessBrowser, MemoryTokenStore, TokenStore,
    Tokens,
};

/// Shims for the fuzz targets (`crate::fuzzing`): the metadata validators and the URL parser
/// are crate-private, so they are reached through here rather than made public.
#[cfg(all(feature = "fuzzing", feature = "http-client"))]
pub(crate) mod fuzzing {
    use serde_json::{Map, Value};

    pub(crate) fn parse_prm(
        m: &Map<String, Value>,
        server: &str,
    ) -> Result<(String, Vec<String>), String> {
        super::discovery::parse_prm(m, server)
            .map(|p| (p.resource, p.authorization_servers))
            .map_err(|e| e.message().to_owned())
    }

    pub(crate) fn parse_as(m: &Map<String, Value>, issuer: &str) -> Result<String, String> {
        super::discovery::parse_as(m, issuer)
            .map(|a| a.issuer)
            .map_err(|e| e.message().to_owned())
    }

    pub(crate) fn url(s: &str) -> Option<crate::fuzzing::OAuthUrl> {
        let u = super::util::Url::parse(s).ok()?;
        Some(crate::fuzzing::OAuthUrl {
            prm_urls: super::util::prm_urls(&u),
            as_metadata_urls: super::util::as_metadata_urls(&u),
            scheme: u.scheme,
            authority: u.authority,
            path: u.path,
        })
    }

    pub(crate) fn resource_covers(resource: &str, server: &str) -> bool {
        super::util::resource_covers(resource, server)
    }
}
