//! Handlers the client serves: `sampling/createMessage`, `elicitation/create`, `roots/list`, and
//! notification callbacks (REQUIREMENTS JR-05, SAMP-*, ELIC-*, ROOT-01, LC-07).
//!
//! The same handlers answer legacy server→client requests and fulfil modern `inputRequests`
//! (MRTR). Client capabilities are declared from what is registered; `ping` is answered
//! automatically; anything unregistered gets -32601.

use serde_json::{json, Map, Value};
use std::collections::HashMap;
use std::future::Future;
use std::sync::Arc;

use super::options::ClientOptions;
use crate::error::ErrorObject;
use crate::future::BoxFuture;

/// A handler for one server→client method: params in, result (or JSON-RPC error) out.
pub trait ClientHandler: Send + Sync + 'static {
    /// Answer one request.
    fn call(&self, params: Value) -> BoxFuture<Result<Value, ErrorObject>>;
}

/// A shared client handler is a client handler (one handler for several methods, or the
/// `Arc<dyn ClientHandler>` a binding built).
impl<H: ClientHandler + ?Sized> ClientHandler for Arc<H> {
    fn call(&self, params: Value) -> BoxFuture<Result<Value, ErrorObject>> {
        (**self).call(params)
    }
}

/// A boxed client handler (`Box<dyn ClientHandler>`) is a client handler.
impl<H: ClientHandler + ?Sized> ClientHandler for Box<H> {
    fn call(&self, params: Value) -> BoxFuture<Result<Value, ErrorObject>> {
        (**self).call(params)
    }
}

struct FnClientHandler<F>(F);

impl<F, Fut> ClientHandler for FnClientHandler<F>
where
    F: Fn(Value) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<Value, ErrorObject>> + Send + 'static,
{
    fn call(&self, params: Value) -> BoxFuture<Result<Value, ErrorObject>> {
        Box::pin((self.0)(params))
    }
}

/// Wrap an async closure as a [`ClientHandler`].
pub fn client_handler_fn<F, Fut>(f: F) -> impl ClientHandler
where
    F: Fn(Value) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<Value, ErrorObject>> + Send + 'static,
{
    FnClientHandler(f)
}

/// A notification callback: `(method, params)`.
pub type NotificationFn = Arc<dyn Fn(&str, &Value) + Send + Sync>;

/// Methods a server may ask the client for.
pub const SAMPLING: &str = "sampling/createMessage";
/// Elicitation.
pub const ELICITATION: &str = "elicitation/create";
/// Roots.
pub const ROOTS: &str = "roots/list";

/// Registered handlers and callbacks.
#[derive(Clone, Default)]
pub(crate) struct Callbacks {
    pub handlers: HashMap<String, Arc<dyn ClientHandler>>,
    pub notifications: Vec<NotificationFn>,
}

impl Callbacks {
    pub fn handler(&self, method: &str) -> Option<&Arc<dyn ClientHandler>> {
        self.handlers.get(method)
    }

    /// Client capabilities declared from what is registered, plus the extra ones configured.
    pub fn capabilities(&self, opts: &ClientOptions, legacy: bool) -> Value {
        let mut caps = Map::new();
        if self.handlers.contains_key(SAMPLING) {
            caps.insert("sampling".into(), json!({}));
        }
        if self.handlers.contains_key(ELICITATION) {
            let modes: Map<String, Value> = opts
                .elicitation_modes
                .iter()
                .map(|m| (m.clone(), json!({})))
                .collect();
            caps.insert("elicitation".into(), Value::Object(modes));
        }
        if self.handlers.contains_key(ROOTS) {
            caps.insert(
                "roots".into(),
                if legacy {
                    json!({"listChanged": true})
                } else {
                    json!({})
                },
            );
        }
        for (k, v) in &opts.extra_capabilities {
            if legacy && k == "extensions" {
                continue; // the legacy schema has no `extensions` (LC-04)
            }
            caps.insert(k.clone(), v.clone());
        }
        if opts.apps {
            // EXT-03: the ext-apps specification negotiates the extension in `initialize` too,
            // so unlike other extensions it is sent in both eras (the legacy schema has no
            // `extensions` member but allows extra ones; LC-04 Δ).
            let ext = caps.entry("extensions").or_insert_with(|| json!({}));
            if let Some(e) = ext.as_object_mut() {
                e.entry(crate::protocol::apps::UI_EXTENSION)
                    .or_insert_with(crate::protocol::apps::extension_settings);
            }
        }
        Value::Object(caps)
    }

    /// Answer a server→client request: `ping` automatically, registered handlers, else -32601.
    pub async fn answer(&self, method: &str, params: Value) -> Result<Value, ErrorObject> {
        let h = match self.handlers.get(method) {
            Some(h) => h,
            None if method == "ping" => return Ok(json!({})),
            None => return Err(ErrorObject::method_not_found(method)),
        };
        // A panicking handler becomes a generic -32603, never a silent non-answer.
        match tokio::spawn(h.call(params)).await {
            Ok(r) => r,
            Err(e) => {
                tracing::error!(method, error = %e, "a client handler failed");
                Err(ErrorObject::internal())
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn ping_is_automatic_and_unknown_is_32601() {
        let cb = Callbacks::default();
        assert_eq!(cb.answer("ping", json!({})).await.unwrap(), json!({}));
        assert_eq!(
            cb.answer("sampling/createMessage", json!({}))
                .await
                .unwrap_err()
                .code,
            -32601
        );
        assert_eq!(cb.capabilities(&ClientOptions::default(), true), json!({}));
    }

    /// A shared `Arc<dyn ClientHandler>` and a `Box<dyn ClientHandler>` are client handlers.
    #[tokio::test]
    async fn shared_and_boxed_client_handlers() {
        let shared: Arc<dyn ClientHandler> =
            Arc::new(client_handler_fn(|_| async { Ok(json!({"roots": []})) }));
        let boxed: Box<dyn ClientHandler> = Box::new(client_handler_fn(|_| async {
            Ok(json!({"action": "cancel"}))
        }));
        let mut cb = Callbacks::default();
        cb.handlers.insert(ROOTS.into(), Arc::new(shared.clone()));
        cb.handlers.insert(ELICITATION.into(), Arc::new(boxed));
        assert_eq!(
            cb.answer(ROOTS, json!({})).await.ok(),
            Some(json!({"roots": []}))
        );
        assert_eq!(
            cb.answer(ELICITATION, json!({})).await.ok(),
            Some(json!({"action": "cancel"}))
        );
        assert_eq!(
            shared.call(json!({})).await.ok(),
            Some(json!({"roots": []}))
        );
    }

    #[tokio::test]
    async fn panicking_handler_answers_32603() {
        let mut cb = Callbacks::default();
        cb.handlers.insert(
            ROOTS.into(),
            Arc::new(client_handler_fn(|_| async { panic!("boom") })),
        );
        assert_eq!(cb.answer(ROOTS, json!({})).await.unwrap_err().code, -32603);
    }

    #[test]
    fn capabilities_follow_registrations() {
        let mut cb = Callbacks::default();
        cb.handlers.insert(
            ROOTS.into(),
            Arc::new(client_handler_fn(|_| async { Ok(json!({"roots": []})) })),
        );
        cb.handlers.insert(
            ELICITATION.into(),
            Arc::new(client_handler_fn(|_| async {
                Ok(json!({"action": "cancel"}))
            })),
        );
        let caps = cb.capabilities(&ClientOptions::default(), true);
        assert_eq!(caps["roots"], json!({"listChanged": true}));
        assert_eq!(caps["elicitation"], json!({"form": {}, "url": {}}));
        assert!(caps.get("sampling").is_none());
        let modern = cb.capabilities(&ClientOptions::default(), false);
        assert_eq!(modern["roots"], json!({}));
    }
}
