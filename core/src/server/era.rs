//! The modern per-request envelope (REQUIREMENTS §0.2, §0.3, META-01…05, VER-01), the era
//! routing of a message that also carries a transport-level version claim (§0.2), and the
//! `serverInfo` stamp on modern results (META-02).
//!
//! A request is modern iff `params._meta` carries `io.modelcontextprotocol/protocolVersion`
//! (the claim key). A claimed envelope must be complete and well-typed; its version must be served.
//! `parse_envelope` is the one envelope parser: every transport reaches it through dispatch
//! (or `subscriptions/listen`'s opening), never on its own.

use serde_json::{json, Map, Value};

use crate::error::{codes, ErrorObject};
use crate::protocol::version::{is_modern, MODERN_VERSIONS};
use crate::protocol::LoggingLevel;

// The envelope's key names are wire vocabulary (protocol/envelope.rs).
pub(crate) use crate::protocol::envelope::has_claim;
pub(crate) use crate::protocol::envelope::{
    KEY_CLIENT_CAPABILITIES, KEY_CLIENT_INFO, KEY_LOG_LEVEL, KEY_PROTOCOL_VERSION, KEY_SERVER_INFO,
};

/// What a modern request says about its client: handlers read the client only from this request
/// (here, and its checked `clientInfo` from the request's own `_meta`, copied only when asked),
/// never from an earlier one.
#[derive(Debug, Clone, PartialEq)]
pub struct Envelope {
    /// The requested protocol version (one this server serves).
    pub protocol_version: String,
    /// `clientCapabilities` of this request.
    pub client_capabilities: Value,
    /// `logLevel`, when sent and known (an unknown level reads as absent).
    pub log_level: Option<LoggingLevel>,
}

/// Parse and validate a claimed envelope.
///
/// # Errors
/// -32602 naming every offending key (shape problems), then -32022 with `{supported, requested}`
/// for a version this server does not serve.
pub(crate) fn parse_envelope(params: Option<&Map<String, Value>>) -> Result<Envelope, ErrorObject> {
    let empty = Map::new();
    let meta = params
        .and_then(|p| p.get("_meta"))
        .and_then(Value::as_object)
        .unwrap_or(&empty);
    let mut bad: Vec<&str> = Vec::new();
    let version = meta.get(KEY_PROTOCOL_VERSION).and_then(Value::as_str);
    if version.is_none() {
        bad.push(KEY_PROTOCOL_VERSION);
    }
    // The known capabilities are objects when present (ClientCapabilities in the schema).
    let caps = meta.get(KEY_CLIENT_CAPABILITIES).filter(|v| {
        v.as_object().is_some_and(|o| {
            [
                "elicitation",
                "sampling",
                "roots",
                "experimental",
                "extensions",
            ]
            .iter()
            .all(|k| o.get(*k).is_none_or(Value::is_object))
        })
    });
    if caps.is_none() {
        bad.push(KEY_CLIENT_CAPABILITIES);
    }
    let info = meta.get(KEY_CLIENT_INFO);
    if let Some(i) = info {
        let ok = i.get("name").is_some_and(Value::is_string)
            && i.get("version").is_some_and(Value::is_string);
        if !ok {
            bad.push(KEY_CLIENT_INFO);
        }
    }
    // An unknown level reads as absent (the safe direction); a non-string one is mistyped.
    if meta.get(KEY_LOG_LEVEL).is_some_and(|l| !l.is_string()) {
        bad.push(KEY_LOG_LEVEL);
    }
    if !bad.is_empty() {
        return Err(ErrorObject::invalid_params(format!(
            "missing or invalid _meta envelope keys: {}",
            bad.join(", ")
        ))
        .with_data(json!({"invalidKeys": bad})));
    }
    let (Some(version), Some(caps)) = (version, caps) else {
        return Err(ErrorObject::invalid_params("missing envelope"));
    };
    if !MODERN_VERSIONS.contains(&version) {
        return Err(unsupported_version(version));
    }
    Ok(Envelope {
        protocol_version: version.to_owned(),
        client_capabilities: caps.clone(),
        log_level: meta
            .get(KEY_LOG_LEVEL)
            .and_then(Value::as_str)
            .and_then(LoggingLevel::parse),
    })
}

/// META-02: identify the server in a modern result's `_meta` (a value the handler put there
/// is kept; a non-object `_meta` is left alone rather than clobbered).
pub(crate) fn stamp_server_info(result: &mut Value, info: &Value) {
    let Some(obj) = result.as_object_mut() else {
        return;
    };
    let meta = obj
        .entry("_meta")
        .or_insert_with(|| Value::Object(Map::new()));
    if let Some(m) = meta.as_object_mut() {
        if !m.contains_key(KEY_SERVER_INFO) {
            m.insert(KEY_SERVER_INFO.into(), info.clone());
        }
    }
}

/// -32022 with the versions this server serves on the modern era.
pub(crate) fn unsupported_version(requested: &str) -> ErrorObject {
    ErrorObject::new(
        codes::UNSUPPORTED_PROTOCOL_VERSION,
        "Unsupported protocol version",
    )
    .with_data(json!({"supported": MODERN_VERSIONS, "requested": requested}))
}

/// -32602 for a request without an envelope on a modern-locked connection.
pub(crate) fn missing_envelope() -> ErrorObject {
    ErrorObject::invalid_params(format!(
        "missing _meta envelope keys: {KEY_PROTOCOL_VERSION}, {KEY_CLIENT_CAPABILITIES}"
    ))
    .with_data(json!({"invalidKeys": [KEY_PROTOCOL_VERSION, KEY_CLIENT_CAPABILITIES]}))
}

/// Which era path serves a message that arrived with a transport-level version claim (HTTP's
/// `MCP-Protocol-Version` header, HTTP-11).
#[derive(Debug)]
pub(crate) enum Route {
    /// The modern path (the envelope is validated during dispatch).
    Modern,
    /// The legacy handshake path.
    Legacy,
    /// Neither: answer this error before any session is touched.
    Refuse(ErrorObject),
}

/// §0.2 for one request: the envelope decides. Without one, a modern version claimed by the
/// transport never falls back to legacy (§0.2.3, -32602 naming the missing keys), and a server
/// that does not serve the legacy era names the versions it serves (§0.2.6, -32022).
pub(crate) fn route_request(
    params: Option<&Map<String, Value>>,
    transport_version: Option<&str>,
    legacy_served: bool,
) -> Route {
    if has_claim(params) {
        return Route::Modern;
    }
    if !legacy_served {
        return Route::Refuse(unsupported_version(transport_version.unwrap_or("")));
    }
    if transport_version.is_some_and(is_modern) {
        return Route::Refuse(missing_envelope());
    }
    Route::Legacy
}

/// §0.2 for one notification: modern when it carries the claim, when the transport claims a
/// modern version, or when the legacy era is not served (a notification is never refused).
pub(crate) fn route_notification(
    params: Option<&Map<String, Value>>,
    transport_version: Option<&str>,
    legacy_served: bool,
) -> Route {
    if has_claim(params) || transport_version.is_some_and(is_modern) || !legacy_served {
        Route::Modern
    } else {
        Route::Legacy
    }
}

/// Methods removed in the modern era (REQUIREMENTS §0.4).
pub(crate) const REMOVED_IN_MODERN: &[&str] = &[
    "initialize",
    "ping",
    "logging/setLevel",
    "resources/subscribe",
    "resources/unsubscribe",
];

#[cfg(test)]
mod tests {
    use super::*;

    fn params(meta: Value) -> Map<String, Value> {
        json!({"_meta": meta})
            .as_object()
            .cloned()
            .unwrap_or_default()
    }

    #[test]
    fn s02_routes_by_envelope_then_transport_claim() {
        let modern = params(json!({KEY_PROTOCOL_VERSION: "2026-07-28"}));
        let plain = params(json!({}));
        let code = |r: Route| match r {
            Route::Refuse(e) => Some(e.code),
            _ => None,
        };
        assert!(matches!(
            route_request(Some(&modern), None, true),
            Route::Modern
        ));
        assert!(matches!(
            route_request(Some(&plain), Some("2025-06-18"), true),
            Route::Legacy
        ));
        assert_eq!(
            code(route_request(Some(&plain), Some("2026-07-28"), true)),
            Some(-32602)
        );
        assert_eq!(code(route_request(Some(&plain), None, false)), Some(-32022));
        assert!(matches!(
            route_notification(Some(&plain), Some("2026-07-28"), true),
            Route::Modern
        ));
        assert!(matches!(
            route_notification(Some(&plain), None, true),
            Route::Legacy
        ));
        assert!(matches!(
            route_notification(Some(&plain), None, false),
            Route::Modern
        ));
    }

    #[test]
    fn meta01_incomplete_envelope_names_keys() {
        let e =
            parse_envelope(Some(&params(json!({KEY_PROTOCOL_VERSION: "2026-07-28"})))).unwrap_err();
        assert_eq!(e.code, -32602);
        assert!(e.message.contains(KEY_CLIENT_CAPABILITIES));
    }

    #[test]
    fn ver01_unsupported_version() {
        let e = parse_envelope(Some(&params(
            json!({KEY_PROTOCOL_VERSION: "2099-01-01", KEY_CLIENT_CAPABILITIES: {}}),
        )))
        .unwrap_err();
        assert_eq!(e.code, -32022);
        assert_eq!(e.data.unwrap()["requested"], "2099-01-01");
    }

    #[test]
    fn mistyped_optional_keys_are_named() {
        let e = parse_envelope(Some(&params(json!({
            KEY_PROTOCOL_VERSION: "2026-07-28", KEY_CLIENT_CAPABILITIES: [],
            KEY_CLIENT_INFO: "me", KEY_LOG_LEVEL: 3
        }))))
        .unwrap_err();
        assert_eq!(e.code, -32602);
        for k in [KEY_CLIENT_CAPABILITIES, KEY_CLIENT_INFO, KEY_LOG_LEVEL] {
            assert!(e.message.contains(k), "{k} not named in {}", e.message);
        }
        let e = parse_envelope(Some(&params(json!({
            KEY_PROTOCOL_VERSION: "2026-07-28", KEY_CLIENT_CAPABILITIES: {"sampling": true}
        }))))
        .unwrap_err();
        assert!(e.message.contains(KEY_CLIENT_CAPABILITIES));
        let ok = parse_envelope(Some(&params(json!({
            KEY_PROTOCOL_VERSION: "2026-07-28", KEY_CLIENT_CAPABILITIES: {}
        }))))
        .unwrap();
        assert_eq!(ok.protocol_version, "2026-07-28", "clientInfo is optional");
    }

    #[test]
    fn unknown_log_level_reads_as_absent() {
        let env = parse_envelope(Some(&params(json!({
            KEY_PROTOCOL_VERSION: "2026-07-28", KEY_CLIENT_CAPABILITIES: {}, KEY_LOG_LEVEL: "loud"
        }))))
        .unwrap();
        assert_eq!(env.log_level, None);
    }
}
