//! The documented defaults of every configurable limit and option, asserted on the public API.
//! The wire tests exercise each limit with small configured values; this file pins the values a
//! server gets when nothing is configured, so a changed default cannot go unnoticed.

use mcpcore::transport::http::{AllowList, HttpOptions};
use mcpcore::{Limits, Server};
use std::time::Duration;

/// STDIO-01, HTTP body cap, JSON depth, CAN/LC-08 peer timeout, HTTP-05 per-request queue,
/// MRTR-09 shim round cap.
#[test]
fn engine_limits_defaults() {
    let l = Limits::default();
    assert_eq!(
        l.max_message_bytes,
        4 * 1024 * 1024,
        "frames and bodies: 4 MiB"
    );
    assert_eq!(l.max_json_depth, 64);
    assert_eq!(l.peer_request_timeout, Duration::from_secs(600));
    assert_eq!(l.max_outbound_queue, 1000, "per-request / per-stream queue");
    assert_eq!(
        l.max_outbound_bytes,
        8 * 1024 * 1024,
        "stdio output backpressure"
    );
    assert_eq!(l.max_inflight, 10_000);
    assert_eq!(l.max_mrtr_rounds, 8);
    assert!(l.shutdown_grace > Duration::ZERO, "EOF grace period is on");
    assert!(l.validate().is_ok());
    let setters: [fn(&mut Limits); 5] = [
        |l| l.max_message_bytes = 0,
        |l| l.max_outbound_bytes = 0,
        |l| l.max_json_depth = 0,
        |l| l.max_outbound_queue = 0,
        |l| l.peer_request_timeout = Duration::ZERO,
    ];
    for set in setters {
        let mut broken = Limits::default();
        set(&mut broken);
        assert!(broken.validate().is_err(), "{broken:?}");
    }
}

/// PAGE-01 (one page), CACHE-01 (0 / private, legacy opt-in off), MRTR-06 (sealed, 300 s,
/// random key), MRTR-09 (shim on), META-02 (server info stamped).
#[test]
fn server_options_defaults() {
    let mut seen = None;
    Server::builder("d", "1")
        .options(|o| seen = Some(o.clone()))
        .build()
        .expect("an empty server builds");
    let o = seen.expect("options visited");
    assert_eq!(o.page_size, None, "everything in one page");
    assert_eq!(o.cache_hints.ttl_ms, 0);
    assert_eq!(o.cache_hints.scope, "private");
    assert!(
        !o.legacy_cache_hints,
        "legacy results carry no hints unless opted in"
    );
    assert!(o.request_state.seal, "requestState sealed by default");
    assert!(o.request_state.keys.is_none(), "random per-process key");
    assert_eq!(o.request_state.ttl, Duration::from_secs(300));
    assert!(o.request_state.audience.is_none());
    assert!(o.legacy_input_shim, "legacy shim on by default");
    assert!(o.stamp_server_info);
}

/// LHTTP-02 sessions (10,000; idle 30 min; 10 s to send `notifications/initialized`), SUB-05
/// listen cap (1,000), HTTP-06 keepalive (15 s), HTTP-03 allow-lists derived from the bind
/// address, `/mcp`.
#[test]
fn http_options_defaults() {
    let o = HttpOptions::default();
    assert_eq!(o.path.as_deref(), Some("/mcp"));
    assert_eq!(o.allowed_origins, AllowList::Auto);
    assert_eq!(o.allowed_hosts, AllowList::Auto);
    assert!(o.legacy);
    assert!(!o.stateless_legacy);
    assert_eq!(o.max_sessions, 10_000);
    assert_eq!(o.session_idle_timeout, Duration::from_secs(30 * 60));
    assert_eq!(o.uninitialized_session_timeout, Duration::from_secs(10));
    assert_eq!(o.max_listen_streams, 1000);
    assert_eq!(o.keepalive, Some(Duration::from_secs(15)));
    assert!(o.replay_buffer > 0, "bounded replay buffer is on");
    assert!(o.shutdown_deadline > Duration::ZERO);
    assert!(o.validate().is_ok());
    let mut zero = HttpOptions::default();
    zero.max_listen_streams = 0;
    assert!(zero.validate().is_err());
    let mut zero = HttpOptions::default();
    zero.uninitialized_session_timeout = Duration::ZERO;
    assert!(zero.validate().is_err());
}
