//! Connect modes and era negotiation (REQUIREMENTS 0.8, DISC-02, DISC-03, LC-01, LC-02, VER-01;
//! seeds: `:auto` probe with fallback on any failure, 5 s stdio probe bound, legacy pin, modern
//! pin errors before spawning, modern `InitializeResult` rejected, counter-offer adopted).
//!
//! `auto`: a probe that fails in any way — any error code, a malformed or non-modern result,
//! garbage, a timeout, an HTTP status without a JSON-RPC answer — falls back to `initialize`;
//! only `-32022` naming a mutual version retries the probe there (once) first. When that
//! `initialize` is refused as only a modern server would (`-32020/-32021/-32022`, or `-32601`:
//! every legacy server knows `initialize`), the client re-probes once before giving up.

use serde_json::{json, Map, Value};

use super::options::{CallOptions, ConnectMode};
use super::peer::RequestSpec;
use super::types::{Era, Negotiated};
use super::{speaks_modern, Client, ClientError, ClientOptions};
use crate::error::codes;
use crate::protocol::version::{
    is_legacy_supported, is_modern, LATEST_LEGACY, LATEST_MODERN, MODERN_VERSIONS,
};

/// Argument checks that run before any process is spawned or any byte is sent.
pub(crate) fn validate(o: &ClientOptions) -> Result<(), ClientError> {
    o.check_ranges().map_err(ClientError::InvalidArgument)?;
    let Some(v) = o.protocol_version.as_deref() else {
        return Ok(());
    };
    if is_modern(v) {
        if o.mode == ConnectMode::Legacy {
            return Err(ClientError::InvalidArgument(format!(
                "protocol version {v} is a modern (stateless) version; the legacy handshake cannot negotiate it"
            )));
        }
        if !speaks_modern(v) {
            return Err(ClientError::InvalidArgument(format!(
                "unsupported protocol version {v} (modern versions: {})",
                MODERN_VERSIONS.join(", ")
            )));
        }
    } else {
        if !is_legacy_supported(v) {
            return Err(ClientError::InvalidArgument(format!(
                "unsupported protocol version {v}"
            )));
        }
        if o.mode == ConnectMode::Modern {
            return Err(ClientError::InvalidArgument(format!(
                "protocol version {v} is a handshake version; modern mode needs a modern version"
            )));
        }
    }
    Ok(())
}

/// The best modern version in `supported` that this client speaks (`prefer` first).
pub(crate) fn pick_mutual(supported: Option<&Value>, prefer: Option<&str>) -> Option<String> {
    let list: Vec<&str> = supported?
        .as_array()?
        .iter()
        .filter_map(Value::as_str)
        .collect();
    if let Some(p) = prefer {
        if list.contains(&p) && speaks_modern(p) {
            return Some(p.to_owned());
        }
    }
    MODERN_VERSIONS
        .iter()
        .rev()
        .find(|v| list.contains(v))
        .map(|v| (*v).to_owned())
}

/// Run the configured connect mode.
pub(crate) async fn connect(client: &Client) -> Result<(), ClientError> {
    let o = &client.inner.options;
    let pinned = o.protocol_version.clone();
    match o.mode {
        ConnectMode::Legacy => {
            legacy(client, pinned.as_deref().unwrap_or(LATEST_LEGACY), false).await
        }
        ConnectMode::Modern => {
            modern(client, pinned.as_deref().unwrap_or(LATEST_MODERN), false).await
        }
        ConnectMode::Auto => match pinned.as_deref() {
            Some(v) if !is_modern(v) => legacy(client, v, false).await,
            // An explicit modern version is never downgraded into the legacy fallback.
            Some(v) => modern(client, v, false).await,
            None => modern(client, LATEST_MODERN, true).await,
        },
    }
}

async fn modern(client: &Client, version: &str, fallback: bool) -> Result<(), ClientError> {
    if let Some(d) = client.inner.options.cached_discovery.clone() {
        if let Some(v) = pick_mutual(d.get("supportedVersions"), Some(version)) {
            adopt_modern(client, &v, d);
            return Ok(());
        }
    }
    let failure = match discover(client, version).await {
        Ok(r) => match pick_mutual(r.get("supportedVersions"), Some(version)) {
            Some(v) => {
                adopt_modern(client, &v, r);
                return Ok(());
            }
            None => ClientError::Protocol(format!(
                "server/discover offered no mutually supported modern version (offered {})",
                r.get("supportedVersions").cloned().unwrap_or(Value::Null)
            )),
        },
        Err(ClientError::Rpc(e)) if e.code == codes::UNSUPPORTED_PROTOCOL_VERSION => {
            // A recognised modern error: the server is modern; retry at a mutual version.
            match pick_mutual(e.data.as_ref().and_then(|d| d.get("supported")), None) {
                // Once, even at the version just refused (VER-01: retry with a listed version).
                Some(v) => match discover(client, &v).await {
                    Ok(r) => {
                        adopt_modern(client, &v, r);
                        return Ok(());
                    }
                    Err(e2) => e2,
                },
                _ => ClientError::Rpc(e),
            }
        }
        Err(e) => e,
    };
    // A failed authorization (REQUIREMENTS §15) says nothing about the era: `initialize` would
    // run the same flow again (and ask the user twice).
    if !fallback || client.inner.peer.is_closed() || matches!(failure, ClientError::Auth(_)) {
        return Err(failure);
    }
    tracing::debug!(error = %failure, "discovery failed; falling back to initialize");
    legacy(client, LATEST_LEGACY, true).await
}

async fn discover(client: &Client, version: &str) -> Result<Value, ClientError> {
    let o = &client.inner.options;
    let mut params = Map::new();
    params.insert(
        "_meta".into(),
        Value::Object(client.envelope(Some(version), &CallOptions::default())),
    );
    let peer = &client.inner.peer;
    let r = peer
        .request(
            peer.next_id(),
            "server/discover",
            params,
            RequestSpec {
                timeout: Some(o.request_timeout.unwrap_or(o.probe_timeout)),
                cancel: None,
                on_progress: None,
                notify_cancel: false,
            },
        )
        .await?;
    if !r.is_object() || !r.get("supportedVersions").is_some_and(Value::is_array) {
        return Err(ClientError::Protocol(
            "server/discover returned a malformed result".into(),
        ));
    }
    Ok(r)
}

fn adopt_modern(client: &Client, version: &str, raw: Value) {
    let cb = &client.inner.peer.callbacks;
    for (m, what) in [
        (super::callbacks::SAMPLING, "sampling"),
        (super::callbacks::ROOTS, "roots"),
    ] {
        if cb.handler(m).is_some() {
            tracing::warn!(
                "the {what} capability is deprecated in protocol {version}; it is only used for input_required requests"
            );
        }
    }
    client.set_negotiated(Negotiated {
        era: Era::Modern,
        protocol_version: version.to_owned(),
        raw,
    });
}

/// Errors answering `initialize` that only a modern server gives: the modern envelope and
/// version errors (HTTP-18), and not knowing `initialize` at all (every legacy server does).
fn refuses_as_modern(code: i64) -> bool {
    matches!(
        code,
        codes::UNSUPPORTED_PROTOCOL_VERSION
            | codes::HEADER_MISMATCH
            | codes::MISSING_REQUIRED_CLIENT_CAPABILITY
            | codes::METHOD_NOT_FOUND
    )
}

/// A new `initialize` handshake at the negotiated legacy version (LHTTP-02: the server ended
/// the session).
pub(crate) async fn reinitialize(client: &Client) -> Result<(), ClientError> {
    let v = client
        .protocol_version()
        .unwrap_or_else(|| LATEST_LEGACY.to_owned());
    legacy(client, &v, false).await
}

async fn legacy(client: &Client, version: &str, from_auto: bool) -> Result<(), ClientError> {
    let o = &client.inner.options;
    let peer = &client.inner.peer;
    let params = json!({
        "protocolVersion": version,
        "capabilities": peer.callbacks.capabilities(o, true),
        "clientInfo": o.client_info,
    });
    let params = params.as_object().cloned().unwrap_or_default();
    let r = peer
        .request(
            peer.next_id(),
            "initialize",
            params,
            RequestSpec {
                timeout: o.request_timeout,
                cancel: None,
                on_progress: None,
                // LC-05: initialize is never cancelled.
                notify_cancel: false,
            },
        )
        .await;
    let r = match r {
        Ok(r) => r,
        Err(ClientError::Rpc(e)) if from_auto && refuses_as_modern(e.code) => {
            // DISC-03 / HTTP-18: a server refusing `initialize` with a modern error (or not
            // knowing it at all) is modern evidence: re-probe once, at a version it named when
            // it named one. When that fails too, the refusal is the answer.
            let named = e.data.as_ref().and_then(|d| d.get("supported"));
            let v = match pick_mutual(named, None) {
                Some(v) => v,
                None if e.code == codes::UNSUPPORTED_PROTOCOL_VERSION => {
                    return Err(ClientError::Rpc(e))
                }
                None => LATEST_MODERN.to_owned(),
            };
            match discover(client, &v).await {
                Ok(r) => {
                    if let Some(m) = pick_mutual(r.get("supportedVersions"), Some(&v)) {
                        adopt_modern(client, &m, r);
                        return Ok(());
                    }
                }
                Err(re) => tracing::debug!(error = %re, "the re-probe failed too"),
            }
            return Err(ClientError::Rpc(e));
        }
        Err(e) => return Err(e),
    };
    let Some(pv) = r.get("protocolVersion").and_then(Value::as_str) else {
        return Err(ClientError::Protocol(
            "initialize result has no protocolVersion".into(),
        ));
    };
    if is_modern(pv) {
        return Err(ClientError::Protocol(format!(
            "the server answered initialize with modern version {pv}; the handshake only negotiates up to {LATEST_LEGACY}"
        )));
    }
    if !is_legacy_supported(pv) {
        return Err(ClientError::Protocol(format!(
            "the server answered initialize with unsupported version {pv}"
        )));
    }
    // LC-02: a counter-offered version is adopted and spoken afterwards.
    client.set_negotiated(Negotiated {
        era: Era::Legacy,
        protocol_version: pv.to_owned(),
        raw: r,
    });
    peer.notify("notifications/initialized", None).await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn argument_errors() {
        let mut o = ClientOptions {
            mode: ConnectMode::Legacy,
            protocol_version: Some("2026-07-28".into()),
            ..ClientOptions::default()
        };
        assert!(matches!(validate(&o), Err(ClientError::InvalidArgument(_))));
        o.mode = ConnectMode::Modern;
        o.protocol_version = Some("2025-06-18".into());
        assert!(matches!(validate(&o), Err(ClientError::InvalidArgument(_))));
        o.mode = ConnectMode::Auto;
        o.protocol_version = Some("1999-01-01".into());
        assert!(validate(&o).is_err());
        o.protocol_version = Some("2025-06-18".into());
        assert!(validate(&o).is_ok());
    }

    #[test]
    fn mutual_version() {
        assert_eq!(
            pick_mutual(
                Some(&json!(["2026-07-28", "2099-01-01"])),
                Some("2026-07-28")
            ),
            Some("2026-07-28".into())
        );
        assert_eq!(pick_mutual(Some(&json!(["2025-11-25"])), None), None);
        assert_eq!(pick_mutual(Some(&json!("x")), None), None);
        assert_eq!(pick_mutual(None, None), None);
    }
}
