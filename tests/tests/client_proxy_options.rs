//! The per-call options a proxy needs (MRTR-04, META-02, SEP-2575): `manual_input` hands an
//! `input_required` round back as the server sent it even when a handler could answer it, and
//! `client_capabilities` states another client's capabilities in the request's envelope.

use mcpcore::client::{client_handler_fn, CallOptions, Client, ConnectMode};
use mcpcore::{handler_fn, InputRequired, Outcome, RequestContext, Server, Tool};
use serde_json::{json, Value};

fn server() -> Server {
    let no_args = json!({"type": "object"});
    Server::builder("proxy-options", "1")
        .tool(
            Tool::new("ask").input_schema(no_args.clone()),
            handler_fn(|ctx: RequestContext, _a: Value| async move {
                if let Some(r) = ctx.input_responses() {
                    return Ok(Outcome::Complete(json!({"content": [
                        {"type": "text", "text": r["the_key"]["action"].to_string()}]})));
                }
                let ask = InputRequired::new()
                    .elicit(
                        "the_key",
                        json!({"mode": "form", "message": "ok?",
                        "requestedSchema": {"type": "object", "properties": {}}}),
                    )
                    .state("s1");
                Ok(Outcome::from(ask))
            }),
        )
        .tool(
            Tool::new("caps").input_schema(no_args),
            handler_fn(|ctx: RequestContext, _a: Value| async move {
                let caps = ctx.client_capabilities().to_string();
                Ok(Outcome::Complete(
                    json!({"content": [{"type": "text", "text": caps}]}),
                ))
            }),
        )
        .build()
        .expect("server")
}

async fn client(s: &Server) -> Client {
    Client::builder()
        .mode(ConnectMode::Modern)
        .on_elicitation(client_handler_fn(|_p: Value| async move {
            Ok(json!({"action": "accept", "content": {}}))
        }))
        .connect_in_memory(s)
        .await
        .expect("connect")
}

#[tokio::test]
async fn manual_input_returns_the_round_as_sent() {
    let s = server();
    let c = client(&s).await;
    let call = json!({"name": "ask", "arguments": {}});
    // Without it the registered handler answers the round.
    let r = c
        .request("tools/call", call.clone())
        .await
        .expect("answered");
    assert_eq!(r["content"][0]["text"], "\"accept\"");
    let r = c
        .request_with("tools/call", call, CallOptions::new().manual_input())
        .await
        .expect("the round");
    assert_eq!(r["resultType"], "input_required");
    assert!(
        r["inputRequests"]["the_key"].is_object(),
        "the server's key: {r}"
    );
    assert!(r["requestState"].is_string());
}

#[tokio::test]
async fn client_capabilities_replace_the_envelopes() {
    let s = server();
    let c = client(&s).await;
    let call = json!({"name": "caps", "arguments": {}});
    let own = c.request("tools/call", call.clone()).await.expect("call");
    assert!(own["content"][0]["text"]
        .as_str()
        .unwrap_or("")
        .contains("elicitation"));
    let opts = CallOptions::new().client_capabilities(json!({"sampling": {}}));
    let r = c
        .request_with("tools/call", call, opts)
        .await
        .expect("call");
    let caps: Value =
        serde_json::from_str(r["content"][0]["text"].as_str().unwrap_or("")).expect("json");
    assert_eq!(caps, json!({"sampling": {}}));
}
