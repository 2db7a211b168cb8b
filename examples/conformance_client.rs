//! `conformance-client`: the client fixture the official MCP conformance suite drives
//! (shared/conformance/FIXTURE.md §7), built on the public `mcpcore::client` API only.
//!
//! The suite runs `conformance-client <server-url>` with `MCP_CONFORMANCE_SCENARIO` naming what to
//! do and `MCP_CONFORMANCE_PROTOCOL_VERSION` choosing the era (≤ 2025-11-25: initialize and a
//! session; 2026-07-28: the stateless envelope). An unknown scenario exits non-zero.

use mcpcore::client::auth::{GrantKind, OAuthOptions};
use mcpcore::client::{
    client_handler_fn, Client, ClientBuilder, ClientError, ConnectMode, HttpClientOptions,
};
use serde_json::{json, Map, Value};

type Res<T> = Result<T, Box<dyn std::error::Error>>;

/// Fill every property that has a `default` (SEP-1034) into an accepted form answer.
fn form_defaults(params: &Value) -> Value {
    let mut content = Map::new();
    if let Some(props) = params
        .pointer("/requestedSchema/properties")
        .and_then(Value::as_object)
    {
        for (k, p) in props {
            if let Some(d) = p.get("default") {
                content.insert(k.clone(), d.clone());
            }
        }
    }
    json!({"action": "accept", "content": content})
}

fn sampling_answer() -> Value {
    json!({"role": "assistant", "content": {"type": "text", "text": "Paris"}, "model": "conformance-model", "stopReason": "endTurn"})
}

fn roots_answer() -> Value {
    json!({"roots": [{"uri": "file:///tmp/conformance", "name": "conformance"}]})
}

/// The answer to one embedded input request of an `input_required` result.
fn answer_input(req: &Value) -> Value {
    match req.get("method").and_then(Value::as_str) {
        Some("elicitation/create") => form_defaults(req.get("params").unwrap_or(&Value::Null)),
        Some("sampling/createMessage") => sampling_answer(),
        Some("roots/list") => roots_answer(),
        _ => json!({}),
    }
}

fn builder(version: &str, handlers: bool) -> ClientBuilder {
    let mut b = Client::builder().protocol_version(version.to_owned());
    b = b.mode(if version >= "2026-07-28" {
        ConnectMode::Modern
    } else {
        ConnectMode::Legacy
    });
    if handlers {
        b = b
            .on_elicitation(client_handler_fn(|p: Value| async move {
                Ok(form_defaults(&p))
            }))
            .on_sampling(client_handler_fn(|_p: Value| async move {
                Ok(sampling_answer())
            }))
            .on_roots(client_handler_fn(
                |_p: Value| async move { Ok(roots_answer()) },
            ));
    }
    b
}

async fn connect(url: &str, version: &str, handlers: bool) -> Result<Client, ClientError> {
    builder(version, handlers)
        .connect_http(url, HttpClientOptions::default())
        .await
}

/// Every tool the client keeps (tools whose `x-mcp-header` declarations break the rules are
/// dropped on HTTP, HTTP-14), as JSON exactly as received.
async fn list_tools(c: &Client) -> Result<Vec<Value>, ClientError> {
    let tools = c.list_all_tools().await?;
    Ok(tools
        .into_iter()
        .filter_map(|t| serde_json::to_value(t).ok())
        .collect())
}

async fn call(c: &Client, name: &str, args: Value) -> Result<Value, ClientError> {
    c.request("tools/call", json!({"name": name, "arguments": args}))
        .await
}

/// Drive a tool by hand through `input_required` rounds (MRTR-04): each retry is a new request
/// with `inputResponses` under the same keys and `requestState` echoed byte for byte (omitted
/// when none was given). `between` runs before each retry (an unrelated call, MRTR-05).
async fn drive_by_hand(
    c: &Client,
    name: &str,
    between: Option<&str>,
) -> Result<Value, ClientError> {
    let mut params = json!({"name": name, "arguments": {}});
    for _ in 0..10 {
        let r = c.request("tools/call", params.clone()).await?;
        if r.get("resultType").and_then(Value::as_str) != Some("input_required") {
            return Ok(r);
        }
        if let Some(other) = between {
            call(c, other, json!({})).await?;
        }
        let mut responses = Map::new();
        if let Some(reqs) = r.get("inputRequests").and_then(Value::as_object) {
            for (k, req) in reqs {
                responses.insert(k.clone(), answer_input(req));
            }
        }
        params = json!({"name": name, "arguments": {}, "inputResponses": responses});
        if let Some(state) = r.get("requestState") {
            params["requestState"] = state.clone();
        }
    }
    Err(ClientError::Protocol(format!(
        "{name}: too many input_required rounds"
    )))
}

/// The Client ID Metadata Document URL the suite's `auth/basic-cimd` expects as `client_id`.
const CIMD_URL: &str = "https://conformance-test.local/client-metadata.json";

/// OAuth options for an `auth/*` scenario: pre-registered credentials from
/// `MCP_CONFORMANCE_CONTEXT` when given, else a CIMD URL (used when the server supports it),
/// else Dynamic Client Registration; the headless browser follows the mock's auto-approval.
/// The context also selects the machine grants: a workload JWT (`valid_jwt`) the JWT-bearer
/// grant, an IdP ID token the enterprise identity-assertion grant. DPoP is requested whenever
/// the authorization server supports it.
fn auth_options(scenario: &str) -> HttpClientOptions {
    let ctx: Value = std::env::var("MCP_CONFORMANCE_CONTEXT")
        .ok()
        .and_then(|s| serde_json::from_str(&s).ok())
        .unwrap_or(Value::Null);
    let text = |k: &str| ctx.get(k).and_then(Value::as_str).map(str::to_owned);
    let mut o = OAuthOptions::default();
    o.client_id = text("client_id");
    o.client_secret = text("client_secret");
    o.issuer = text("issuer");
    // The suite's mock servers are all trusted and on loopback, and its context hands over
    // pre-registered credentials without saying whose issuer they are: let them follow the
    // resource's metadata (never do this with real credentials; see `allow_any_issuer`).
    o.allow_any_issuer = o.issuer.is_none();
    o.private_key_pem = text("private_key_pem");
    o.signing_algorithm = text("signing_algorithm");
    o.client_metadata_url = Some(CIMD_URL.into());
    o.redirect_uri = "http://localhost:3000/callback".into();
    o.client_name = "mcpcore-conformance-client".into();
    o.idp_token_endpoint = text("idp_token_endpoint");
    o.idp_id_token = text("idp_id_token");
    o.idp_client_id = text("idp_client_id");
    o.assertion = text("valid_jwt");
    o.dpop = true;
    if scenario.starts_with("auth/client-credentials") {
        o.grant = GrantKind::ClientCredentials;
    } else if o.assertion.is_some() {
        o.grant = GrantKind::JwtBearer;
    } else if o.idp_id_token.is_some() {
        o.grant = GrantKind::IdentityAssertion;
    }
    let mut h = HttpClientOptions::default();
    h.auth = Some(o);
    h
}

/// An `auth/*` scenario: connect with OAuth, list tools, call `test-tool`.
async fn run_auth(scenario: &str, version: &str, url: &str) -> Res<()> {
    let c = builder(version, false)
        .connect_http(url, auth_options(scenario))
        .await?;
    list_tools(&c).await?;
    call(&c, "test-tool", json!({})).await?;
    c.close().await;
    Ok(())
}

// Long by design: one match arm per conformance scenario the suite names, read as a table.
async fn run(scenario: &str, version: &str, url: &str) -> Res<()> {
    match scenario {
        "initialize" => {
            let c = connect(url, version, false).await?;
            list_tools(&c).await?;
            c.close().await;
        }
        "tools_call" => {
            let c = connect(url, version, true).await?;
            list_tools(&c).await?;
            call(&c, "add_numbers", json!({"a": 2, "b": 3})).await?;
            c.close().await;
        }
        "elicitation-sep1034-client-defaults" => {
            let c = connect(url, version, true).await?;
            list_tools(&c).await?;
            call(&c, "test_client_elicitation_defaults", json!({})).await?;
            c.close().await;
        }
        "sse-retry" => {
            let c = connect(url, version, true).await?;
            list_tools(&c).await?;
            call(&c, "test_reconnection", json!({})).await?;
            c.close().await;
        }
        "json-schema-2020-12-preservation" => {
            let c = connect(url, version, true).await?;
            let tools = list_tools(&c).await?;
            let source = tools
                .iter()
                .find(|t| t["name"] == "json_schema_2020_12_tool")
                .or_else(|| tools.iter().find(|t| t["name"] != "json_schema_echo"));
            if let Some(t) = source {
                call(&c, "json_schema_echo", json!({"schema": t["inputSchema"]})).await?;
            }
            c.close().await;
        }
        "json-schema-ref-no-deref" | "request-metadata" => {
            let c = connect(url, version, true).await?;
            list_tools(&c).await?;
            c.close().await;
        }
        "sep-2322-client-request-state" => {
            // No handlers: the raw `input_required` results are driven by hand.
            let c = connect(url, version, false).await?;
            let tools = list_tools(&c).await?;
            let has_unrelated = tools.iter().any(|t| t["name"] == "test_mrtr_unrelated");
            for t in &tools {
                let Some(name) = t["name"].as_str() else {
                    continue;
                };
                if !name.starts_with("test_mrtr") || name == "test_mrtr_unrelated" {
                    continue;
                }
                let between = (has_unrelated && name == "test_mrtr_echo_state")
                    .then_some("test_mrtr_unrelated");
                drive_by_hand(&c, name, between).await?;
            }
            c.close().await;
        }
        "http-standard-headers" => {
            let c = connect(url, version, true).await?;
            for t in list_tools(&c).await? {
                if let Some(name) = t["name"].as_str() {
                    let _ = call(&c, name, json!({})).await;
                }
            }
            if let Ok(r) = c.request("prompts/list", json!({})).await {
                for p in r["prompts"].as_array().cloned().unwrap_or_default() {
                    let _ = c
                        .request("prompts/get", json!({"name": p["name"], "arguments": {}}))
                        .await;
                }
            }
            if let Ok(r) = c.request("resources/list", json!({})).await {
                for res in r["resources"].as_array().cloned().unwrap_or_default() {
                    let _ = c
                        .request("resources/read", json!({"uri": res["uri"]}))
                        .await;
                }
            }
            c.close().await;
        }
        "http-custom-headers" | "http-invalid-tool-headers" => {
            let c = connect(url, version, true).await?;
            let tools = list_tools(&c).await?;
            let context: Value = std::env::var("MCP_CONFORMANCE_CONTEXT")
                .ok()
                .and_then(|s| serde_json::from_str(&s).ok())
                .unwrap_or(Value::Null);
            if let Some(calls) = context.get("toolCalls").and_then(Value::as_array) {
                for tc in calls {
                    if let Some(name) = tc["name"].as_str() {
                        let _ =
                            call(&c, name, tc.get("arguments").cloned().unwrap_or(json!({}))).await;
                    }
                }
            } else {
                // Call every tool the client kept (invalid x-mcp-header tools are dropped).
                for t in tools {
                    if let Some(name) = t["name"].as_str() {
                        let _ = call(&c, name, json!({})).await;
                    }
                }
            }
            c.close().await;
        }
        s if s.starts_with("auth/") => run_auth(s, version, url).await?,
        other => return Err(format!("unknown scenario {other:?}").into()),
    }
    Ok(())
}

#[tokio::main]
async fn main() {
    let scenario = std::env::var("MCP_CONFORMANCE_SCENARIO").unwrap_or_default();
    let version =
        std::env::var("MCP_CONFORMANCE_PROTOCOL_VERSION").unwrap_or_else(|_| "2025-11-25".into());
    let Some(url) = std::env::args().skip(1).last() else {
        eprintln!("usage: MCP_CONFORMANCE_SCENARIO=<name> conformance-client <server-url>");
        std::process::exit(2);
    };
    if let Err(e) = run(&scenario, &version, &url).await {
        eprintln!("conformance-client: {scenario}: {e}");
        std::process::exit(1);
    }
}
