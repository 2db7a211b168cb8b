//! Server→client requests on the legacy era (REQUIREMENTS LHTTP-08, SAMP-*, ELIC-*, ROOT-01,
//! LC-08): capability checks, per-request timeouts, cancellation of nested requests when the
//! parent is cancelled, first-writer-wins between response, cancel and timeout.

use serde_json::{json, Value};
use std::time::Duration;
use tokio::sync::oneshot;

use super::context::{has_capability, RequestContext};
use crate::error::{codes, ErrorObject, HandlerError};
use crate::jsonrpc::encode_request;

fn answered(r: Result<Result<Value, ErrorObject>, ()>) -> Result<Value, PeerError> {
    match r {
        Ok(Ok(v)) => Ok(v),
        Ok(Err(e)) => Err(PeerError::Rpc(e)),
        Err(()) => Err(PeerError::Closed),
    }
}

/// Why a server→client request failed.
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum PeerError {
    /// No answer within the timeout; `notifications/cancelled` was sent.
    #[error("request timed out")]
    Timeout,
    /// The originating request was cancelled; the nested request was cancelled too.
    #[error("request cancelled")]
    Cancelled,
    /// The connection is gone or its queue is full.
    #[error("connection closed")]
    Closed,
    /// The client answered with an error.
    #[error("client error: {0}")]
    Rpc(ErrorObject),
    /// The client did not declare the capability the request needs.
    #[error("client does not support {0}")]
    MissingCapability(String),
    /// Servers never send requests on the modern era (JR-05).
    #[error("server-to-client requests are not allowed on a 2026-07-28 request")]
    NotAllowed,
}

impl From<PeerError> for HandlerError {
    fn from(e: PeerError) -> Self {
        match e {
            PeerError::Timeout => HandlerError::rpc(codes::REQUEST_TIMEOUT, "Request timed out"),
            PeerError::Rpc(e) => HandlerError::Rpc(e),
            // Same answer as the legacy input_required shim gives for an undeclared capability.
            PeerError::MissingCapability(c) => HandlerError::rpc(
                codes::INTERNAL_ERROR,
                format!("Client does not support {c}"),
            ),
            PeerError::Cancelled => HandlerError::Cancelled,
            other => HandlerError::Internal(other.to_string()),
        }
    }
}

impl RequestContext {
    /// Send a request to the client over the originating request's stream and wait for the
    /// answer (legacy era only). `timeout` defaults to the server's `peer_request_timeout`.
    ///
    /// # Errors
    /// See [`PeerError`].
    pub async fn peer_request(
        &self,
        method: &str,
        params: Option<Value>,
        timeout: Option<Duration>,
    ) -> Result<Value, PeerError> {
        if self.is_modern() || self.session().era() == super::session::ERA_MODERN {
            return Err(PeerError::NotAllowed);
        }
        if self.is_cancelled() {
            return Err(PeerError::Cancelled);
        }
        let session = self.session().clone();
        let id = session.next_peer_id();
        let (tx, mut rx) = oneshot::channel();
        session.add_pending(id.clone(), tx);
        if !self
            .sink()
            .try_send(encode_request(&id, method, params.as_ref()))
        {
            session.remove_pending(&id);
            return Err(PeerError::Closed);
        }
        let limit = timeout.unwrap_or(session.server.inner.options.limits.peer_request_timeout);
        // First writer wins: whoever removes the pending entry decides. A timeout or cancel that
        // loses the race to a response delivers that response instead.
        let give_up = |rx: &mut oneshot::Receiver<_>, reason: &str, err: PeerError| {
            if session.remove_pending(&id) {
                self.notify(
                    "notifications/cancelled",
                    json!({"requestId": id.to_value(), "reason": reason}),
                );
                return Err(err);
            }
            match rx.try_recv() {
                Ok(r) => answered(Ok(r)),
                Err(_) => Err(err),
            }
        };
        tokio::select! {
            r = &mut rx => answered(r.map_err(|_| ())),
            () = tokio::time::sleep(limit) => give_up(&mut rx, "timeout", PeerError::Timeout),
            () = self.cancelled() => {
                give_up(&mut rx, "parent request cancelled", PeerError::Cancelled)
            }
        }
    }

    fn require_peer_capability(&self, path: &[&str]) -> Result<(), PeerError> {
        if has_capability(&self.client_capabilities(), path) {
            Ok(())
        } else {
            Err(PeerError::MissingCapability(path.join(".")))
        }
    }

    /// `sampling/createMessage` (checks `sampling`, and `sampling.tools` when tools are used).
    ///
    /// # Errors
    /// See [`PeerError`].
    pub async fn create_message(
        &self,
        params: Value,
        timeout: Option<Duration>,
    ) -> Result<Value, PeerError> {
        self.require_peer_capability(&["sampling"])?;
        if params.get("tools").is_some() || params.get("toolChoice").is_some() {
            self.require_peer_capability(&["sampling", "tools"])?;
        }
        self.peer_request("sampling/createMessage", Some(params), timeout)
            .await
    }

    /// `elicitation/create` in form or URL mode (a bare `elicitation: {}` means form).
    ///
    /// # Errors
    /// See [`PeerError`].
    pub async fn elicit(
        &self,
        params: Value,
        timeout: Option<Duration>,
    ) -> Result<Value, PeerError> {
        let caps = self.client_capabilities();
        let Some(el) = caps.get("elicitation").filter(|v| v.is_object()) else {
            return Err(PeerError::MissingCapability("elicitation".into()));
        };
        let mode = params.get("mode").and_then(Value::as_str).unwrap_or("form");
        let declared = el
            .as_object()
            .is_some_and(|o| o.is_empty() && mode == "form")
            || el.get(mode).is_some_and(|v| !v.is_null());
        if !declared {
            return Err(PeerError::MissingCapability(format!("elicitation.{mode}")));
        }
        self.peer_request("elicitation/create", Some(params), timeout)
            .await
    }

    /// `roots/list` (checks `roots`).
    ///
    /// # Errors
    /// See [`PeerError`].
    pub async fn list_roots(&self, timeout: Option<Duration>) -> Result<Value, PeerError> {
        self.require_peer_capability(&["roots"])?;
        self.peer_request("roots/list", None, timeout).await
    }

    /// `ping` the client.
    ///
    /// # Errors
    /// See [`PeerError`].
    pub async fn ping_client(&self, timeout: Option<Duration>) -> Result<Value, PeerError> {
        self.peer_request("ping", None, timeout).await
    }
}
