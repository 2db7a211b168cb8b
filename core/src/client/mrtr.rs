//! The `input_required` driver (REQUIREMENTS MRTR-01…05, MRTR-08, JR-09).
//!
//! A result with `resultType: "input_required"` is fulfilled through the registered handlers
//! (the same ones that answer legacy server→client requests) and the *same method and params*
//! are retried with a new id, `inputResponses` under the same keys and `requestState` echoed
//! unchanged (omitted when none was given). After `max_mrtr_rounds` fulfilled rounds the call
//! fails with a clear error. When a request cannot be fulfilled (no handler for one of its
//! methods) the caller gets [`ClientError::InputRequired`] with the raw result.

use serde_json::{Map, Value};

use super::options::CallOptions;
use super::{Client, ClientError};

fn is_input_required(v: &Value) -> bool {
    v.get("resultType").and_then(Value::as_str) == Some("input_required")
}

pub(crate) async fn drive(
    client: &Client,
    method: &str,
    mut params: Map<String, Value>,
    opts: &CallOptions,
) -> Result<Value, ClientError> {
    let max = client.inner.options.max_mrtr_rounds;
    let callbacks = &client.inner.peer.callbacks;
    let mut round = 0usize;
    loop {
        let r = client.request_once(method, params.clone(), opts).await?;
        if !is_input_required(&r) {
            return Ok(r);
        }
        let requests = match r.get("inputRequests") {
            None | Some(Value::Null) => Map::new(),
            Some(Value::Object(m)) => m.clone(),
            Some(_) => {
                return Err(ClientError::Protocol(
                    "inputRequests must be an object".into(),
                ))
            }
        };
        let fulfillable = !opts.manual_input
            && !callbacks.handlers.is_empty()
            && requests.values().all(|q| {
                q.get("method")
                    .and_then(Value::as_str)
                    .is_some_and(|m| callbacks.handler(m).is_some())
            });
        if !fulfillable {
            return Err(ClientError::InputRequired(r));
        }
        if round >= max {
            return Err(ClientError::Protocol(format!(
                "{method} still requires input after {max} rounds; giving up"
            )));
        }
        round += 1;
        let mut responses = Map::new();
        for (key, q) in requests {
            let m = q.get("method").and_then(Value::as_str).unwrap_or_default();
            let p = q
                .get("params")
                .cloned()
                .unwrap_or_else(|| Value::Object(Map::new()));
            let answer = callbacks.answer(m, p).await.map_err(ClientError::Rpc)?;
            responses.insert(key, answer);
        }
        if responses.is_empty() {
            params.remove("inputResponses");
        } else {
            params.insert("inputResponses".into(), Value::Object(responses));
        }
        match r.get("requestState") {
            Some(s @ Value::String(_)) => {
                params.insert("requestState".into(), s.clone());
            }
            _ => {
                params.remove("requestState");
            }
        }
    }
}
