//! `PyBrowser`: core's OAuth browser step ([`AuthorizationBrowser`], REQUIREMENTS §15) as a
//! Python callable. The Python side (`mcpcore.client`) wraps `on_authorize` as
//! `invoke(url, responder)`: it runs the callable (a coroutine on the connecting loop, a plain
//! `def` on a worker thread) and reports the redirect URL with `responder.ok(str)` or the
//! failure with `responder.fail(detail)`. Like the client handlers, the interpreter is entered
//! from the blocking pool only, and the wait for the reply holds nothing. Everything else of
//! the flow (discovery, registration, PKCE, `state`/`iss` checks, tokens) is core's.

use std::sync::Arc;

use mcpcore::client::auth::{AuthError, AuthErrorKind, AuthorizationBrowser};
use mcpcore::{BoxFuture, HandlerError, Outcome};
use pyo3::prelude::*;
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::bridge;
use crate::gc::Slot;
use crate::handler::{Call, Loop};

/// The `on_authorize` callable of one client.
pub struct PyBrowser {
    pub invoke: Arc<Slot>,
    pub event_loop: Arc<Loop>,
    /// Cancelled when the task awaiting the connect is: core runs the request that meets the
    /// 401 in a task of its own, which would otherwise wait for the callback after the connect
    /// was abandoned.
    pub cancel: CancellationToken,
}

fn failed(message: impl Into<String>) -> AuthError {
    AuthError::new(AuthErrorKind::Browser, message)
}

impl AuthorizationBrowser for PyBrowser {
    fn authorize(&self, url: String) -> BoxFuture<Result<String, AuthError>> {
        let cancel = self.cancel.clone();
        let call = Call {
            invoke: self.invoke.clone(),
            event_loop: self.event_loop.clone(),
        };
        Box::pin(async move {
            let (fut, rx) = bridge::attach_blocking(move |py| {
                let url = url.into_pyobject(py)?.into_any();
                call.start(py, vec![url])
            })
            .await
            .ok_or_else(|| failed("the interpreter is shutting down"))?
            .map_err(|e| failed(format!("on_authorize could not be called: {e}")))?;
            let mut pending = CancelOnDrop(fut);
            let reply = tokio::select! {
                r = rx => r,
                // `pending` cancels the callback's task as it drops.
                () = cancel.cancelled() => return Err(failed("the connect was cancelled")),
            };
            pending.0 = None;
            match reply {
                Ok(Ok(Outcome::Complete(Value::String(redirect)))) => Ok(redirect),
                Ok(Ok(_)) => Err(failed("on_authorize must return the redirect URL as a str")),
                Ok(Err(HandlerError::Internal(detail))) => Err(failed(detail)),
                Ok(Err(e)) => Err(failed(e.to_string())),
                Err(_) => Err(failed("on_authorize ended without a reply")),
            }
        })
    }
}

/// The callback's `Spawn` handle while core waits for it: a wait that ends early
/// (the connect was cancelled, or core dropped the flow) cancels the callback's asyncio task,
/// so a callback waiting for the user does not wait for ever. (A plain `def` cannot be
/// interrupted.)
struct CancelOnDrop(Option<Py<PyAny>>);

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        let Some(fut) = self.0.take() else { return };
        // The interpreter is entered from the blocking pool, never from a tokio worker.
        if let Ok(rt) = tokio::runtime::Handle::try_current() {
            rt.spawn_blocking(move || {
                bridge::attach(|py| {
                    let _ = fut.bind(py).call_method0("cancel");
                })
            });
        }
    }
}
