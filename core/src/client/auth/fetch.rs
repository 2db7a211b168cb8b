//! Bounded HTTP exchanges of the authorization flow (metadata, registration, token, the
//! headless authorization GET), on core's own HTTP client (`transport::pool`): each fetch
//! has a time limit and a body size limit, and its failure names the URL and the step only.

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::header::{HeaderName, HeaderValue, ACCEPT, CONTENT_TYPE};
use hyper::{HeaderMap, Method, Request, Uri};
use serde_json::Value;
use std::time::Duration;

use super::error::{AuthError, AuthErrorKind};
use super::util::is_loopback;
use crate::client::transport::http_options::HttpClientOptions;
use crate::client::transport::pool::{Hold, Pool};

/// Largest metadata / token / registration body read.
pub(crate) const MAX_BODY: usize = 256 * 1024;
/// Time limit of one fetch (connect, send, read).
pub(crate) const FETCH_TIMEOUT: Duration = Duration::from_secs(15);

/// A fetched response.
pub(crate) struct Fetched {
    pub status: u16,
    pub headers: HeaderMap,
    pub body: Vec<u8>,
}

impl Fetched {
    /// The body as a JSON object, or a precise error of `kind` naming `what`.
    pub(crate) fn json_object(
        &self,
        kind: AuthErrorKind,
        what: &str,
    ) -> Result<serde_json::Map<String, Value>, AuthError> {
        match serde_json::from_slice::<Value>(&self.body) {
            Ok(Value::Object(m)) => Ok(m),
            Ok(_) => Err(AuthError::new(
                kind,
                format!("{what}: the body is not a JSON object"),
            )),
            Err(e) => Err(AuthError::new(
                kind,
                format!("{what}: the body is not JSON ({e})"),
            )),
        }
    }

    pub(crate) fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).and_then(|v| v.to_str().ok())
    }
}

/// The fetcher: one short-lived connection pool per request (the flow's few fetches go to
/// several origins), so the transport's settings (and TLS) apply to them too.
#[derive(Clone)]
pub(crate) struct Fetcher {
    opts: HttpClientOptions,
    /// `auth.allowInsecureHttp`: plain http off loopback is fetched too.
    allow_http: bool,
}

impl Fetcher {
    /// A fetcher with the transport's settings; `allow_http` is `auth.allowInsecureHttp`.
    pub(crate) fn new(mut opts: HttpClientOptions, allow_http: bool) -> Self {
        opts.headers.clear();
        opts.max_connections = opts.max_connections.max(2);
        Self { opts, allow_http }
    }

    pub(crate) async fn get(&self, url: &str) -> Result<Fetched, AuthError> {
        self.send(
            Method::GET,
            url,
            &[(ACCEPT, "application/json")],
            Bytes::new(),
        )
        .await
    }

    /// POST `body` with `content_type` and extra headers.
    pub(crate) async fn post(
        &self,
        url: &str,
        content_type: &str,
        extra: &[(HeaderName, String)],
        body: String,
    ) -> Result<Fetched, AuthError> {
        let mut h: Vec<(HeaderName, &str)> =
            vec![(CONTENT_TYPE, content_type), (ACCEPT, "application/json")];
        for (k, v) in extra {
            h.push((k.clone(), v.as_str()));
        }
        self.send(Method::POST, url, &h, Bytes::from(body)).await
    }

    async fn send(
        &self,
        method: Method,
        url: &str,
        headers: &[(HeaderName, &str)],
        body: Bytes,
    ) -> Result<Fetched, AuthError> {
        let err = |m: String| AuthError::new(AuthErrorKind::Http, m);
        let shown = redact_query(url);
        let uri: Uri = url
            .parse()
            .map_err(|_| err(format!("invalid URL {shown:?}")))?;
        // The pool speaks TLS for https:// (the client's `tls` options apply); nothing else is
        // fetched.
        if !matches!(uri.scheme_str(), Some("http" | "https")) {
            return Err(err(format!(
                "{shown}: only http:// and https:// URLs can be fetched"
            )));
        }
        // OAuth 2.1 §1.5: what the flow exchanges (metadata, codes, secrets, tokens) travels
        // over TLS; plain http only to a loopback host. Discovery already refused such
        // endpoints with a precise error; this keeps every other path to the wire honest.
        let loopback = uri.authority().is_some_and(|a| is_loopback(a.as_str()));
        if uri.scheme_str() == Some("http") && !loopback && !self.allow_http {
            return Err(err(format!(
                "{shown}: plain http is refused except to a loopback host (auth.allowInsecureHttp allows it)"
            )));
        }
        let mut b = Request::builder().method(method).uri(uri.clone());
        for (k, v) in headers {
            let v = HeaderValue::from_str(v)
                .map_err(|_| err(format!("a header for {shown} is not valid")))?;
            b = b.header(k, v);
        }
        let req = b
            .body(Full::new(body))
            .map_err(|e| err(format!("cannot build the request to {shown}: {e}")))?;
        let pool = Pool::new(&uri, &self.opts).map_err(|e| err(format!("{shown}: {e}")))?;
        let run = async {
            let resp = pool
                .send(req, Hold::Short)
                .await
                .map_err(|e| err(format!("{shown}: {e}")))?;
            let status = resp.status().as_u16();
            let headers = resp.headers().clone();
            let mut body = resp.into_body();
            let mut out = Vec::new();
            while let Some(frame) = body.frame().await {
                let frame = frame.map_err(|e| err(format!("{shown}: reading failed: {e}")))?;
                if let Ok(d) = frame.into_data() {
                    if out.len() + d.len() > MAX_BODY {
                        return Err(err(format!("{shown}: the body exceeds {MAX_BODY} bytes")));
                    }
                    out.extend_from_slice(&d);
                }
            }
            Ok(Fetched {
                status,
                headers,
                body: out,
            })
        };
        let r = tokio::time::timeout(FETCH_TIMEOUT, run)
            .await
            .map_err(|_| err(format!("{shown}: no answer within {FETCH_TIMEOUT:?}")));
        pool.close();
        r?
    }
}

/// `url` without its query (authorization URLs carry state and challenges).
pub(crate) fn redact_query(url: &str) -> String {
    match url.split_once('?') {
        Some((u, _)) => format!("{u}?…"),
        None => url.to_owned(),
    }
}
