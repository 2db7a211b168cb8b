//! `JsBrowser`: core's OAuth browser step ([`AuthorizationBrowser`], REQUIREMENTS §15) as a
//! JavaScript function. `lib/`'s wrapper of `onAuthorize` always returns a Promise that
//! resolves to `{result: redirectUrl}` or `{failed: detail}` (a throw, a rejection, a value
//! that is not a string) and never rejects. The call is queued on the JavaScript thread and
//! the task awaits the Promise: no tokio worker blocks on JavaScript. Everything else of the
//! flow (discovery, registration, PKCE, `state`/`iss` checks, tokens) is core's.

use std::sync::Arc;

use mcpcore::client::auth::{AuthError, AuthErrorKind, AuthorizationBrowser};
use mcpcore::BoxFuture;
use napi::bindgen_prelude::Promise;
use napi::threadsafe_function::ThreadsafeFunction;
use napi::Status;
use serde_json::Value;

/// `invoke(authorizationUrl) → Promise<{result} | {failed}>` (weak: the connect's Promise is
/// what keeps the process alive while it runs).
pub type AuthorizeFn = ThreadsafeFunction<String, Promise<Value>, String, Status, false, true>;

/// The `onAuthorize` function of one client.
pub struct JsBrowser {
    pub invoke: Arc<AuthorizeFn>,
}

fn failed(message: impl Into<String>) -> AuthError {
    AuthError::new(AuthErrorKind::Browser, message)
}

impl AuthorizationBrowser for JsBrowser {
    fn authorize(&self, url: String) -> BoxFuture<Result<String, AuthError>> {
        let invoke = self.invoke.clone();
        Box::pin(async move {
            let promise = invoke
                .call_async(url)
                .await
                .map_err(|e| failed(format!("onAuthorize could not be called: {e}")))?;
            let reply = promise
                .await
                .map_err(|e| failed(format!("onAuthorize rejected: {e}")))?;
            match reply {
                Value::Object(mut m) => match (m.remove("result"), m.remove("failed")) {
                    (Some(Value::String(redirect)), _) => Ok(redirect),
                    (_, Some(Value::String(detail))) => Err(failed(detail)),
                    _ => Err(failed(
                        "onAuthorize must resolve to the redirect URL string",
                    )),
                },
                _ => Err(failed("the onAuthorize wrapper sent a malformed reply")),
            }
        })
    }
}
