//! The `_meta` keys of the 2026-07-28 per-request envelope and of modern results
//! (REQUIREMENTS §0.2, §0.3, META-01…05, SUB-03). Names only: what a server does with an
//! envelope (validation, version checks) lives in `server::era`; what a client puts in one lives
//! in `client`.

use serde_json::{Map, Value};

/// The claim key: a request is modern iff its `params._meta` carries it (§0.2).
pub const KEY_PROTOCOL_VERSION: &str = "io.modelcontextprotocol/protocolVersion";
/// Client capabilities (required).
pub const KEY_CLIENT_CAPABILITIES: &str = "io.modelcontextprotocol/clientCapabilities";
/// Client info (optional).
pub const KEY_CLIENT_INFO: &str = "io.modelcontextprotocol/clientInfo";
/// Per-request log level (optional).
pub const KEY_LOG_LEVEL: &str = "io.modelcontextprotocol/logLevel";
/// Server info in result `_meta` (META-02).
pub const KEY_SERVER_INFO: &str = "io.modelcontextprotocol/serverInfo";
/// Subscription id on listen streams (SUB-03).
pub const KEY_SUBSCRIPTION_ID: &str = "io.modelcontextprotocol/subscriptionId";

/// The version a request's params claim, when they carry the claim key as a string.
pub fn claimed_version(params: Option<&Map<String, Value>>) -> Option<&str> {
    params
        .and_then(|p| p.get("_meta"))
        .and_then(|m| m.get(KEY_PROTOCOL_VERSION))
        .and_then(Value::as_str)
}

/// True when the params claim the modern era (§0.2: the claim key is present, whatever its value;
/// a mistyped claim is still a claim, and the envelope check then names it).
pub fn has_claim(params: Option<&Map<String, Value>>) -> bool {
    params
        .and_then(|p| p.get("_meta"))
        .and_then(Value::as_object)
        .is_some_and(|m| m.contains_key(KEY_PROTOCOL_VERSION))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn params(meta: Value) -> Map<String, Value> {
        json!({"_meta": meta})
            .as_object()
            .cloned()
            .unwrap_or_default()
    }

    #[test]
    fn claim_detection() {
        assert!(has_claim(Some(&params(
            json!({KEY_PROTOCOL_VERSION: "2026-07-28"})
        ))));
        assert!(has_claim(Some(&params(json!({KEY_PROTOCOL_VERSION: 1})))));
        assert!(!has_claim(Some(&params(json!({"progressToken": 1})))));
        assert!(!has_claim(None));
    }

    #[test]
    fn claimed_version_is_the_string_claim() {
        let p = params(json!({KEY_PROTOCOL_VERSION: "2026-07-28"}));
        assert_eq!(claimed_version(Some(&p)), Some("2026-07-28"));
        assert_eq!(
            claimed_version(Some(&params(json!({KEY_PROTOCOL_VERSION: 1})))),
            None
        );
        assert_eq!(claimed_version(None), None);
    }
}
