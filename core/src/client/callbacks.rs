//! Handlers the client serves: `sampling/createMessage`, `elicitation/create`, `roots/list`, and
//! notification callbacks (REQUIREMENTS JR-05, SAMP-*, ELIC-*, ROOT-01, LC-07).
//!
//! The same handlers answer legacy server→client requests and fulfil modern `inputRequests`
//! (MRTR). Client capabilities are declared from what is registered; `ping` is answered
//! automatically; anything unregistered gets -32601.

use serde_json::{json, Map, Value};
use std::collections::HashMap;
use std::future::Future;
use std::sync::{Arc, RwLock};

use super::options::ClientOptions;
use crate::error::{codes, ErrorObject};
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

/// A callback a server may ask the client for: the client capability that declares it and the
/// server→client method it answers (SAMP-*, ELIC-*, ROOT-01). The one table of these; the
/// bindings name a callback by [`ClientCallback::capability`] and never by method.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub enum ClientCallback {
    /// `sampling` answers `sampling/createMessage`.
    Sampling,
    /// `elicitation` answers `elicitation/create`.
    Elicitation,
    /// `roots` answers `roots/list`.
    Roots,
}

impl ClientCallback {
    /// Every callback, in the order the bindings list them.
    pub const ALL: [Self; 3] = [Self::Elicitation, Self::Sampling, Self::Roots];

    /// The client capability it declares (`"sampling"`, `"elicitation"`, `"roots"`).
    pub const fn capability(self) -> &'static str {
        match self {
            Self::Sampling => "sampling",
            Self::Elicitation => "elicitation",
            Self::Roots => "roots",
        }
    }

    /// The server→client request method it answers.
    pub const fn method(self) -> &'static str {
        match self {
            Self::Sampling => SAMPLING,
            Self::Elicitation => ELICITATION,
            Self::Roots => ROOTS,
        }
    }

    /// The callback of a capability name.
    ///
    /// # Errors
    /// An unknown name, with the names there are (for a binding's argument error).
    pub fn parse(capability: &str) -> Result<Self, String> {
        Self::ALL
            .into_iter()
            .find(|c| c.capability() == capability)
            .ok_or_else(|| {
                let names: Vec<String> = Self::ALL
                    .iter()
                    .map(|c| format!("{:?}", c.capability()))
                    .collect();
                format!(
                    "unknown client callback {capability:?} (there are {})",
                    names.join(", ")
                )
            })
    }
}

/// A declared callback's handler, set at connect or later (a binding's decorator registered
/// after connecting), replaced or cleared at any time. While it is empty, the server's request
/// answers -32601: the capability was declared, but nothing answers it (JR-05).
#[derive(Clone)]
pub struct CallbackSlot {
    kind: ClientCallback,
    handler: Arc<RwLock<Option<Arc<dyn ClientHandler>>>>,
}

impl CallbackSlot {
    /// An empty slot for `kind`.
    pub fn new(kind: ClientCallback) -> Self {
        Self {
            kind,
            handler: Arc::new(RwLock::new(None)),
        }
    }

    /// The callback this slot answers.
    pub fn kind(&self) -> ClientCallback {
        self.kind
    }

    /// Answer with `h` from now on (`None`: answer -32601 again).
    pub fn set(&self, h: Option<Arc<dyn ClientHandler>>) {
        let old = std::mem::replace(
            &mut *self.handler.write().unwrap_or_else(|p| p.into_inner()),
            h,
        );
        drop(old); // outside the lock: dropping a binding's handler may run foreign code
    }

    fn current(&self) -> Option<Arc<dyn ClientHandler>> {
        self.handler
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }
}

impl ClientHandler for CallbackSlot {
    fn call(&self, params: Value) -> BoxFuture<Result<Value, ErrorObject>> {
        match self.current() {
            Some(h) => h.call(params),
            None => {
                let method = self.kind.method();
                Box::pin(async move {
                    Err(ErrorObject::new(
                        codes::METHOD_NOT_FOUND,
                        format!("no callback is registered for {method}"),
                    ))
                })
            }
        }
    }
}

/// What a client callback written in another language ended in, as the server sees it: a
/// JSON-RPC error the callback chose (a raised `McpError`) goes out as is, exactly as the
/// `Err` of a [`client_handler_fn`]; any other failure (an exception, a rejection, a panic) is
/// logged here and answers a generic -32603 "Internal error" with no detail, as a panicking
/// Rust handler does.
pub fn callback_error(e: crate::HandlerError) -> ErrorObject {
    e.into_wire("client callback")
}

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

    /// A declared slot answers -32601 while empty, its handler once set, and a handler's
    /// internal failure as a generic -32603 (the detail stays local).
    #[tokio::test]
    async fn slot_routes_and_answers_the_defined_errors() {
        let slot = CallbackSlot::new(ClientCallback::Sampling);
        let e = slot.call(json!({})).await.unwrap_err();
        assert_eq!(e.code, -32601);
        assert_eq!(
            e.message,
            "no callback is registered for sampling/createMessage"
        );
        slot.set(Some(Arc::new(client_handler_fn(|_| async {
            Err(callback_error(crate::HandlerError::internal(
                "secret detail",
            )))
        }))));
        let e = slot.call(json!({})).await.unwrap_err();
        assert_eq!((e.code, e.message.as_str()), (-32603, "Internal error"));
        slot.set(Some(Arc::new(client_handler_fn(|_| async {
            Ok(json!({"ok": 1}))
        }))));
        assert_eq!(slot.call(json!({})).await.ok(), Some(json!({"ok": 1})));
        slot.set(None);
        assert_eq!(slot.call(json!({})).await.unwrap_err().code, -32601);
    }

    #[test]
    fn callback_table_names_capability_and_method() {
        let table: Vec<_> = ClientCallback::ALL
            .iter()
            .map(|c| (c.capability(), c.method()))
            .collect();
        assert_eq!(
            table,
            [
                ("elicitation", "elicitation/create"),
                ("sampling", "sampling/createMessage"),
                ("roots", "roots/list")
            ]
        );
        assert_eq!(ClientCallback::parse("roots"), Ok(ClientCallback::Roots));
        let e = ClientCallback::parse("weather").unwrap_err();
        assert!(
            e.contains("\"weather\"") && e.contains("\"sampling\""),
            "{e}"
        );
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
