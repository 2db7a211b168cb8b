//! Server→client requests on the legacy era (REQUIREMENTS LHTTP-08, SAMP-*, ELIC-*, ROOT-01,
//! LC-08): capability checks, per-request timeouts, cancellation of nested requests when the
//! parent is cancelled, first-writer-wins between response, cancel and timeout.

use serde_json::{json, Value};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::oneshot;

use super::context::RequestContext;
use super::AnswerWatch;
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
    /// Servers never send requests on the modern era (JR-05): [`RequestContext::peer_request`]
    /// on a 2026-07-28 request ([`RequestContext::request_client`] asks through
    /// `input_required` instead).
    #[error("server-to-client requests are not allowed on a 2026-07-28 request")]
    NotAllowed,
    /// 2026-07-28: the client has not answered this yet. Propagate it (`?`): the engine answers
    /// `input_required` asking the client (under this key), and the handler runs again from the
    /// start with the answer (MRTR-01, [`RequestContext::request_client`]).
    #[error("input required from the client ({0}); propagate this error")]
    InputRequired(String),
    /// The request cannot be asked here; the error object says why and is sent as is (-32021
    /// with `data.requiredCapabilities` for an undeclared capability on a 2026-07-28 request,
    /// -32603 for a method that may not ask or a request that cannot be asked).
    #[error("{0}")]
    Unavailable(ErrorObject),
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
            PeerError::Unavailable(e) => HandlerError::Rpc(e),
            PeerError::Cancelled => HandlerError::Cancelled,
            other => HandlerError::Internal(other.to_string()),
        }
    }
}

/// A server→client request an [`AnswerWatch`] was told about; dropping it tells the watch the
/// request no longer waits.
struct Watched(Arc<dyn AnswerWatch>, crate::jsonrpc::Id);

impl Drop for Watched {
    fn drop(&mut self) {
        self.0.done(&self.1);
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
        if self.is_modern() || self.session().era() == Some(crate::protocol::Era::Modern) {
            return Err(PeerError::NotAllowed);
        }
        if self.is_cancelled() {
            return Err(PeerError::Cancelled);
        }
        let session = self.session().clone();
        let id = session.next_peer_id();
        let (tx, mut rx) = oneshot::channel();
        session.add_pending(id.clone(), tx);
        // A session shared across workers records the request before the client can see it,
        // so the answer is routed back from any worker (LHTTP-08); the record goes with
        // `_watch` however this ends.
        let _watch = session
            .answer_watch()
            .map(|w| Watched(w.clone(), id.clone()));
        if let Some(Watched(w, id)) = &_watch {
            w.sending(id).await;
        }
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

    /// `sampling/createMessage` (checks `sampling`, and `sampling.tools` when tools are used),
    /// in either era through [`RequestContext::request_client_with`].
    ///
    /// # Errors
    /// See [`PeerError`].
    pub async fn create_message(
        &self,
        params: Value,
        timeout: Option<Duration>,
    ) -> Result<Value, PeerError> {
        self.request_client_with("sampling/createMessage", Some(params), timeout)
            .await
    }

    /// `elicitation/create` in form or URL mode (a bare `elicitation: {}` means form), in either
    /// era through [`RequestContext::request_client_with`].
    ///
    /// # Errors
    /// See [`PeerError`].
    pub async fn elicit(
        &self,
        params: Value,
        timeout: Option<Duration>,
    ) -> Result<Value, PeerError> {
        self.request_client_with("elicitation/create", Some(params), timeout)
            .await
    }

    /// `roots/list` (checks `roots`), in either era through
    /// [`RequestContext::request_client_with`].
    ///
    /// # Errors
    /// See [`PeerError`].
    pub async fn list_roots(&self, timeout: Option<Duration>) -> Result<Value, PeerError> {
        self.request_client_with("roots/list", None, timeout).await
    }

    /// `ping` the client (legacy; a 2026-07-28 request cannot ping, [`PeerError::Unavailable`]).
    ///
    /// # Errors
    /// See [`PeerError`].
    pub async fn ping_client(&self, timeout: Option<Duration>) -> Result<Value, PeerError> {
        self.request_client_with("ping", None, timeout).await
    }
}
