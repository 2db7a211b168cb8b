//! Large messages over the standalone HTTP listener lead core to run the process's memory trim
//! (glibc otherwise keeps large freed buffers: `mcpcore::transport::http::set_memory_trim`), once
//! they add up past `TRIM_AFTER_BYTES`; small ones never do. `demo-server` and the `mcpcore`
//! command install glibc's `malloc_trim`; here a counter stands in for it.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use mcpcore::transport::http::{serve, set_memory_trim, HttpOptions, TRIM_AFTER_BYTES};
use mcpcore::{handler_fn, HandlerError, Server, Tool};
use mcpcore_tests::http::McpHttp;
use serde_json::{json, Value};

static TRIMS: AtomicUsize = AtomicUsize::new(0);

fn echo_server() -> Server {
    Server::builder("trim", "1")
        .tool(
            Tool::new("echo").input_schema(
                json!({"type": "object", "properties": {"text": {"type": "string"}}}),
            ),
            handler_fn(|_ctx, args: Value| async move {
                Ok::<_, HandlerError>(json!({"content": [{"type": "text", "text": args["text"]}]}))
            }),
        )
        .build()
        .expect("server")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn large_messages_lead_to_a_trim_and_small_ones_do_not() {
    set_memory_trim(|| {
        TRIMS.fetch_add(1, Ordering::SeqCst);
    });
    let l = serve(
        echo_server(),
        "127.0.0.1:0".parse().expect("addr"),
        HttpOptions::default(),
    )
    .await
    .expect("listen");
    let h = McpHttp::new(l.local_addr());
    let call = |id: i64, text: String| {
        let h = h.clone();
        async move {
            let x = h
                .modern(
                    id,
                    "tools/call",
                    json!({"name": "echo", "arguments": {"text": text}}),
                )
                .await;
            assert_eq!(
                x.last()["result"]["content"][0]["text"]
                    .as_str()
                    .map(str::len),
                Some(text.len()),
                "{}",
                x.last()
            );
        }
    };
    for id in 0..40 {
        call(id, "small".into()).await;
    }
    tokio::time::sleep(Duration::from_millis(1500)).await;
    assert_eq!(TRIMS.load(Ordering::SeqCst), 0, "small messages never trim");

    // Each call carries its text twice (request and answer): enough calls to pass the mark.
    let text = "x".repeat(1 << 20);
    for id in 100..100 + (TRIM_AFTER_BYTES >> 21) as i64 + 1 {
        call(id, text.clone()).await;
    }
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    while TRIMS.load(Ordering::SeqCst) == 0 {
        assert!(
            tokio::time::Instant::now() < deadline,
            "no trim after the large messages"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    l.shutdown().await;
}
