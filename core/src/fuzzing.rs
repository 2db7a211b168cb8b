//! Entry points for the fuzz targets in `fuzz/` (built only with the `fuzzing` feature; not a
//! public API and not covered by semver).
//!
//! Every parser that reads peer bytes is fuzzed through the same code the engine runs. Most of
//! them are crate-private on purpose (they are plumbing, not API), so this module re-exports the
//! public items of private modules and wraps the crate-private functions in one-line shims rather
//! than widening their visibility for everyone. The shims add no logic: a fuzz target calling one
//! reaches exactly the function the transport or dispatcher calls.

use serde_json::{Map, Value};

pub use crate::client::transport::sse::{SseError, SseEvent, SseParser};
pub use crate::jsonrpc::codec::{FrameError, FrameReader};
pub use crate::jsonrpc::{
    classify, encode_error, encode_notification, encode_request, encode_result, parse_frame,
    Incoming, ParsedFrame,
};
pub use crate::security::sealing::{Claims, Opened, SealError, Sealer};
pub use crate::server::era::Envelope;
use crate::server::era::Route;
pub use crate::server::uri_template::UriTemplate;

/// The modern envelope parser every dispatch path runs (META-01…05, VER-01).
///
/// # Errors
/// The JSON-RPC error the server answers with.
pub fn parse_envelope(
    params: Option<&Map<String, Value>>,
) -> Result<Envelope, crate::error::ErrorObject> {
    crate::server::era::parse_envelope(params)
}

/// §0.2 era routing of a request that arrived with a transport-level version claim: `Ok(true)`
/// for the modern path, `Ok(false)` for the legacy one, `Err` for the refusal answered.
///
/// # Errors
/// The refusal.
pub fn route_request(
    params: Option<&Map<String, Value>>,
    transport_version: Option<&str>,
    legacy_served: bool,
) -> Result<bool, crate::error::ErrorObject> {
    modern(crate::server::era::route_request(
        params,
        transport_version,
        legacy_served,
    ))
}

/// §0.2 era routing of a notification, as [`route_request`] (a notification is never refused).
///
/// # Errors
/// A refusal (a bug: notifications are never refused).
pub fn route_notification(
    params: Option<&Map<String, Value>>,
    transport_version: Option<&str>,
    legacy_served: bool,
) -> Result<bool, crate::error::ErrorObject> {
    modern(crate::server::era::route_notification(
        params,
        transport_version,
        legacy_served,
    ))
}

fn modern(r: Route) -> Result<bool, crate::error::ErrorObject> {
    match r {
        Route::Modern => Ok(true),
        Route::Legacy => Ok(false),
        Route::Refuse(e) => Err(e),
    }
}

/// Protected Resource Metadata validation for `server` (AUTH-01, AUTH-05); `Err` carries the
/// error message.
///
/// # Errors
/// Why the document is refused.
#[cfg(feature = "http-client")]
pub fn parse_prm(m: &Map<String, Value>, server: &str) -> Result<(String, Vec<String>), String> {
    crate::client::auth::fuzzing::parse_prm(m, server)
}

/// Authorization-server metadata validation for `issuer` (AUTH-03); `Err` carries the message.
///
/// # Errors
/// Why the document is refused.
#[cfg(feature = "http-client")]
pub fn parse_as(m: &Map<String, Value>, issuer: &str) -> Result<String, String> {
    crate::client::auth::fuzzing::parse_as(m, issuer)
}

/// The OAuth client's URL parser: `(scheme, authority, path)` of an absolute http(s) URL, plus
/// the PRM and authorization-server metadata locations derived from it (AUTH-01, AUTH-03).
#[cfg(feature = "http-client")]
pub fn oauth_url(s: &str) -> Option<OAuthUrl> {
    crate::client::auth::fuzzing::url(s)
}

/// True when the PRM `resource` identifies `server` (RFC 9728 §3.3).
#[cfg(feature = "http-client")]
pub fn resource_covers(resource: &str, server: &str) -> bool {
    crate::client::auth::fuzzing::resource_covers(resource, server)
}

/// What [`oauth_url`] read from a URL.
#[cfg(feature = "http-client")]
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OAuthUrl {
    /// Lowercased scheme (`http` or `https`).
    pub scheme: String,
    /// Lowercased authority.
    pub authority: String,
    /// Path without query or fragment.
    pub path: String,
    /// The PRM well-known locations, in the order they are tried.
    pub prm_urls: Vec<String>,
    /// The authorization-server metadata locations, in the order they are tried.
    pub as_metadata_urls: Vec<String>,
}
