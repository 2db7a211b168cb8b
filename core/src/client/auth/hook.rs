//! The HTTP transport's side of authorization: every request carries the current token
//! (AUTH-06); a 401, or a 403 `insufficient_scope` (AUTH-02), runs the flow and resends the
//! request, at most `maxAuthRounds` times.

use crate::client::transport::pool::PoolBody;
use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::header::{AUTHORIZATION, WWW_AUTHENTICATE};
use hyper::{Request, Response, StatusCode};

use super::challenge::bearer_challenge;
use super::error::{AuthError, AuthErrorKind};
use super::flow::{Authorizer, Trigger};
use crate::client::error::ClientError;
use crate::client::transport::pool::{Hold, Pool};

impl From<AuthError> for ClientError {
    fn from(e: AuthError) -> Self {
        ClientError::Auth(e)
    }
}

fn copy(req: &Request<Full<Bytes>>) -> Request<Full<Bytes>> {
    let mut r = Request::new(req.body().clone());
    *r.method_mut() = req.method().clone();
    *r.uri_mut() = req.uri().clone();
    *r.version_mut() = req.version();
    *r.headers_mut() = req.headers().clone();
    r
}

/// True when the request is of the 2026-07-28 era (its `MCP-Protocol-Version`).
fn is_modern(req: &Request<Full<Bytes>>) -> bool {
    req.headers()
        .get("mcp-protocol-version")
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v >= "2026-07-28")
}

/// Send `req` on `pool` with authorization.
pub(crate) async fn send(
    auth: &Authorizer,
    pool: &Pool,
    req: Request<Full<Bytes>>,
    hold: Hold,
) -> Result<Response<PoolBody>, ClientError> {
    let modern = is_modern(&req);
    let mut rounds = 0;
    let mut nonce_retries = 0;
    loop {
        let mut attempt = copy(&req);
        let sent = auth.authorization();
        if let Some(v) = &sent {
            let bad = |_| {
                AuthError::new(
                    AuthErrorKind::TokenEndpoint,
                    "the access token is not a valid header value",
                )
            };
            attempt
                .headers_mut()
                .insert(AUTHORIZATION, v.parse().map_err(bad)?);
            if let Some(p) = auth.resource_proof(req.method().as_str(), v)? {
                attempt
                    .headers_mut()
                    .insert("dpop", p.parse().map_err(bad)?);
            }
        }
        let resp = pool.send(attempt, hold).await?;
        let status = resp.status();
        if let Some(n) = resp
            .headers()
            .get("dpop-nonce")
            .and_then(|v| v.to_str().ok())
        {
            auth.set_nonce(auth.server_url(), n);
        }
        if status != StatusCode::UNAUTHORIZED && status != StatusCode::FORBIDDEN {
            return Ok(resp);
        }
        let challenge = bearer_challenge(
            resp.headers()
                .get_all(WWW_AUTHENTICATE)
                .iter()
                .filter_map(|v| v.to_str().ok()),
        )?;
        if status == StatusCode::FORBIDDEN
            && challenge.as_ref().and_then(|c| c.param("error")) != Some("insufficient_scope")
        {
            // A plain 403 is the server's answer, not an authorization matter.
            return Ok(resp);
        }
        // Drain the refusal (bounded) so the connection can be reused.
        let mut body = resp.into_body();
        let mut seen = 0usize;
        while let Some(Ok(f)) = body.frame().await {
            seen += f.data_ref().map_or(0, |d| d.len());
            if seen > 64 * 1024 {
                break;
            }
        }
        let wants_nonce =
            challenge.as_ref().and_then(|c| c.param("error")) == Some("use_dpop_nonce");
        if status == StatusCode::UNAUTHORIZED && wants_nonce && sent.is_some() && nonce_retries < 2
        {
            // RFC 9449 §9: resend with the server's fresh nonce; not an authorization round.
            nonce_retries += 1;
            continue;
        }
        if rounds >= auth.max_rounds() {
            return Err(AuthError::new(
                AuthErrorKind::Forbidden,
                format!("HTTP {status} after {rounds} authorization rounds"),
            )
            .into());
        }
        rounds += 1;
        auth.handle(Trigger {
            status: status.as_u16(),
            challenge: challenge.as_ref(),
            modern,
            sent: sent.as_deref(),
        })
        .await?;
    }
}
