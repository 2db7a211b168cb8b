use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use std::fmt;
use std::sync::Arc;

use crate::error::ErrorObject;

/// A JSON-RPC request id: a string or an integer, never null (JR-01).
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Id {
    /// An integer id.
    Num(i64),
    /// A string id.
    Str(Arc<str>),
}

impl Id {
    /// Read an id from JSON; `None` for null, floats, booleans, arrays and objects.
    pub fn from_value(v: &Value) -> Option<Id> {
        match v {
            Value::String(s) => Some(Id::Str(Arc::from(s.as_str()))),
            Value::Number(n) => n.as_i64().map(Id::Num),
            _ => None,
        }
    }
    /// The id as JSON.
    pub fn to_value(&self) -> Value {
        match self {
            Id::Num(n) => Value::from(*n),
            Id::Str(s) => Value::from(&**s),
        }
    }
}

impl fmt::Display for Id {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Id::Num(n) => write!(f, "{n}"),
            Id::Str(s) => write!(f, "{s:?}"),
        }
    }
}

impl From<i64> for Id {
    fn from(n: i64) -> Self {
        Id::Num(n)
    }
}

impl From<&str> for Id {
    fn from(s: &str) -> Self {
        Id::Str(Arc::from(s))
    }
}

/// One classified inbound message.
#[derive(Debug)]
pub enum Incoming {
    /// A request: it gets exactly one response.
    Request {
        /// Request id.
        id: Id,
        /// Method name.
        method: String,
        /// Params object (absent → `None`).
        params: Option<Map<String, Value>>,
    },
    /// A notification: never answered.
    Notification {
        /// Method name.
        method: String,
        /// Params object.
        params: Option<Map<String, Value>>,
    },
    /// A response to a request this side sent.
    Response {
        /// Id of our request.
        id: Id,
        /// Its result or error.
        outcome: Result<Value, ErrorObject>,
    },
    /// Not a valid message: answered with `error` under `id` (null when unreadable).
    Invalid {
        /// The id when it could be read.
        id: Option<Id>,
        /// The error to answer with.
        error: ErrorObject,
    },
}

/// The outcome of parsing one frame.
#[derive(Debug)]
pub enum ParsedFrame {
    /// One JSON value (object or not).
    Single(Value),
    /// A JSON array (batch candidate).
    Batch(Vec<Value>),
    /// Unparsable or too deep: answer with this error under a null id.
    Error(ErrorObject),
}

/// True when `bytes` nests arrays/objects deeper than `max` (strings are skipped correctly).
///
/// A linear scan that never recurses, so hostile nesting cannot exhaust the stack.
pub fn json_depth_exceeds(bytes: &[u8], max: usize) -> bool {
    let mut depth = 0usize;
    let mut in_str = false;
    let mut escaped = false;
    for &b in bytes {
        if in_str {
            if escaped {
                escaped = false;
            } else if b == b'\\' {
                escaped = true;
            } else if b == b'"' {
                in_str = false;
            }
            continue;
        }
        match b {
            b'"' => in_str = true,
            b'[' | b'{' => {
                depth += 1;
                if depth > max {
                    return true;
                }
            }
            b']' | b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    false
}

/// Parse one frame: depth check first (-32600), then JSON (-32700).
pub fn parse_frame(bytes: &[u8], max_depth: usize) -> ParsedFrame {
    if json_depth_exceeds(bytes, max_depth) {
        return ParsedFrame::Error(ErrorObject::invalid_request(format!(
            "JSON nesting exceeds {max_depth} levels"
        )));
    }
    match serde_json::from_slice::<Value>(bytes) {
        Ok(Value::Array(items)) => ParsedFrame::Batch(items),
        Ok(v) => ParsedFrame::Single(v),
        Err(_) => ParsedFrame::Error(ErrorObject::parse_error()),
    }
}

/// Classify one JSON value as a request, notification, response or invalid message.
pub fn classify(v: Value) -> Incoming {
    let Value::Object(mut obj) = v else {
        return Incoming::Invalid {
            id: None,
            error: ErrorObject::invalid_request("message must be a JSON object"),
        };
    };
    let raw_id = obj.remove("id");
    let id = match &raw_id {
        None => None,
        Some(v) => match Id::from_value(v) {
            Some(id) => Some(id),
            None => {
                return Incoming::Invalid {
                    id: None,
                    error: ErrorObject::invalid_request("id must be a string or an integer"),
                }
            }
        },
    };
    if obj.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
        return Incoming::Invalid {
            id,
            error: ErrorObject::invalid_request("jsonrpc must be \"2.0\""),
        };
    }
    match obj.remove("method") {
        Some(Value::String(method)) => {
            let params = match obj.remove("params") {
                None => None,
                Some(Value::Object(m)) => Some(m),
                Some(_) => {
                    return Incoming::Invalid {
                        id,
                        error: ErrorObject::invalid_request("params must be an object"),
                    }
                }
            };
            match id {
                Some(id) => Incoming::Request { id, method, params },
                None => Incoming::Notification { method, params },
            }
        }
        Some(_) => Incoming::Invalid {
            id,
            error: ErrorObject::invalid_request("method must be a string"),
        },
        None => {
            let Some(id) = id else {
                return Incoming::Invalid {
                    id: None,
                    error: ErrorObject::invalid_request("missing method"),
                };
            };
            match (obj.remove("result"), obj.remove("error")) {
                (Some(result), None) => Incoming::Response {
                    id,
                    outcome: Ok(result),
                },
                (None, Some(err)) => match serde_json::from_value::<ErrorObject>(err) {
                    Ok(e) => Incoming::Response {
                        id,
                        outcome: Err(e),
                    },
                    Err(_) => Incoming::Invalid {
                        id: Some(id),
                        error: ErrorObject::invalid_request("malformed error object"),
                    },
                },
                _ => Incoming::Invalid {
                    id: Some(id),
                    error: ErrorObject::invalid_request("missing method"),
                },
            }
        }
    }
}

#[derive(Serialize)]
struct ResultOut<'a, T: Serialize + ?Sized> {
    jsonrpc: &'static str,
    id: &'a Id,
    result: &'a T,
}

#[derive(Serialize)]
struct ErrorOut<'a> {
    jsonrpc: &'static str,
    id: Option<&'a Id>,
    error: &'a ErrorObject,
}

#[derive(Serialize)]
struct RequestOut<'a, T: Serialize + ?Sized> {
    jsonrpc: &'static str,
    id: &'a Id,
    method: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    params: Option<&'a T>,
}

#[derive(Serialize)]
struct NotificationOut<'a, T: Serialize + ?Sized> {
    jsonrpc: &'static str,
    method: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    params: Option<&'a T>,
}

fn to_bytes<T: Serialize>(v: &T) -> Vec<u8> {
    // Serializing our own well-formed values into a Vec cannot fail (no I/O, string keys only);
    // fall back to an internal-error frame rather than panic if it ever does.
    serde_json::to_vec(v).unwrap_or_else(|e| {
        tracing::error!(error = %e, "failed to serialize an outbound message");
        br#"{"jsonrpc":"2.0","id":null,"error":{"code":-32603,"message":"Internal error"}}"#
            .to_vec()
    })
}

/// Serialize a success response.
pub fn encode_result<T: Serialize + ?Sized>(id: &Id, result: &T) -> Vec<u8> {
    to_bytes(&ResultOut {
        jsonrpc: "2.0",
        id,
        result,
    })
}

/// Serialize an error response (`id` null when the request id was unreadable).
pub fn encode_error(id: Option<&Id>, error: &ErrorObject) -> Vec<u8> {
    to_bytes(&ErrorOut {
        jsonrpc: "2.0",
        id,
        error,
    })
}

/// Serialize a request.
pub fn encode_request<T: Serialize + ?Sized>(id: &Id, method: &str, params: Option<&T>) -> Vec<u8> {
    to_bytes(&RequestOut {
        jsonrpc: "2.0",
        id,
        method,
        params,
    })
}

/// Serialize a notification.
pub fn encode_notification<T: Serialize + ?Sized>(method: &str, params: Option<&T>) -> Vec<u8> {
    to_bytes(&NotificationOut {
        jsonrpc: "2.0",
        method,
        params,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn jr01_ids() {
        assert_eq!(Id::from_value(&json!(1)), Some(Id::Num(1)));
        assert_eq!(Id::from_value(&json!("a")), Some(Id::from("a")));
        assert_eq!(Id::from_value(&json!(null)), None);
        assert_eq!(Id::from_value(&json!(1.5)), None);
        assert_eq!(Id::from_value(&json!(true)), None);
    }

    #[test]
    fn jr01_classify() {
        assert!(matches!(
            classify(json!({"jsonrpc":"2.0","id":1,"method":"ping"})),
            Incoming::Request { .. }
        ));
        assert!(matches!(
            classify(json!({"jsonrpc":"2.0","method":"x"})),
            Incoming::Notification { .. }
        ));
        assert!(matches!(
            classify(json!({"jsonrpc":"2.0","id":1,"result":{}})),
            Incoming::Response { outcome: Ok(_), .. }
        ));
        assert!(matches!(
            classify(json!({"jsonrpc":"2.0","id":1,"error":{"code":1,"message":"m"}})),
            Incoming::Response {
                outcome: Err(_),
                ..
            }
        ));
        for bad in [
            json!(5),
            json!({"id":1,"method":"x"}),
            json!({"jsonrpc":"1.0","id":1,"method":"x"}),
            json!({"jsonrpc":"2.0","id":null,"method":"x"}),
            json!({"jsonrpc":"2.0","id":1,"method":7}),
            json!({"jsonrpc":"2.0","id":1,"method":"x","params":[1]}),
            json!({"jsonrpc":"2.0","id":1}),
            json!({"jsonrpc":"2.0","id":1,"result":1,"error":{"code":1,"message":"m"}}),
        ] {
            match classify(bad.clone()) {
                Incoming::Invalid { error, .. } => assert_eq!(error.code, -32600, "{bad}"),
                other => panic!("{bad} classified as {other:?}"),
            }
        }
    }

    #[test]
    fn depth_scan_ignores_strings() {
        let deep = "[".repeat(65) + &"]".repeat(65);
        assert!(json_depth_exceeds(deep.as_bytes(), 64));
        let ok = "[".repeat(64) + &"]".repeat(64);
        assert!(!json_depth_exceeds(ok.as_bytes(), 64));
        let s = format!("{{\"a\":\"{}\\\"\"}}", "[".repeat(100));
        assert!(!json_depth_exceeds(s.as_bytes(), 64));
    }

    #[test]
    fn encode_shapes() {
        let out = encode_result(&Id::Num(3), &json!({}));
        assert_eq!(out, br#"{"jsonrpc":"2.0","id":3,"result":{}}"#);
        let out = encode_error(None, &ErrorObject::parse_error());
        assert_eq!(
            out,
            br#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}"#
        );
    }
}
