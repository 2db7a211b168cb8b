//! The C client half of the C suite: the C client programs (`tests/c/client.c`,
//! `examples/c/echo_client.c`) compiled against `include/mcpcore.h`, linked to `libmcpcore.a` and
//! run plain, under ASan+UBSan, LeakSanitizer and valgrind (a missing tool fails), against the Rust demo
//! server and the C echo server over stdio and HTTP. The server half is `c_suite.rs`.

mod support;

use std::process::Stdio;
use std::time::Duration;
use support::{build, command, variants, Variant};

const EXIT_WAIT: Duration = Duration::from_secs(60);
/// The first message of a program under valgrind can take long on a loaded machine.
const FIRST_WAIT: Duration = Duration::from_secs(180);

/// Run a C program that needs no peer on its stdio to the end; returns its stdout.
async fn run_to_end(exe: &std::path::Path, v: Variant, extra: &[String]) -> String {
    support::clear_reports(exe);
    let (prog, mut args) = command(exe, v);
    args.extend(extra.iter().cloned());
    let child = tokio::process::Command::new(prog)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("spawn the C program");
    let out = tokio::time::timeout(FIRST_WAIT + EXIT_WAIT, child.wait_with_output())
        .await
        .unwrap_or_else(|_| panic!("{v:?}: {} did not finish in time", exe.display()))
        .expect("wait");
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "{v:?}: {} failed ({}):\n{stdout}\n{}\n{}",
        exe.display(),
        out.status,
        String::from_utf8_lossy(&out.stderr),
        support::reports(exe)
    );
    stdout
}

/// A child process killed when dropped (bounded wait for its exit).
struct Killed(tokio::process::Child);

impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.start_kill();
    }
}

/// Start `exe --http 127.0.0.1:0` and read the URL it reports (`demo-server` prints
/// `... listening on http://ADDR/mcp` on stderr).
async fn demo_server_http() -> (Killed, String) {
    use tokio::io::AsyncBufReadExt;
    let (exe, _) = support::rust_servers();
    let mut child = tokio::process::Command::new(exe)
        .args(["--http", "127.0.0.1:0"])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("spawn demo-server --http");
    let mut lines = tokio::io::BufReader::new(child.stderr.take().expect("stderr")).lines();
    let line = tokio::time::timeout(FIRST_WAIT, lines.next_line())
        .await
        .expect("demo-server printed its address in time")
        .expect("read")
        .expect("an address line");
    let url = line
        .split_once("http://")
        .map(|(_, u)| format!("http://{}", u.trim()))
        .unwrap_or_else(|| panic!("unexpected line {line:?}"));
    // Keep draining stderr so the server never blocks on a full pipe.
    tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
    (Killed(child), url)
}

/// The C client (tests/c/client.c) against Rust servers: demo-server over stdio in legacy,
/// modern and auto mode and over HTTP, client-test-server for sampling / elicitation / roots
/// handlers in C (legacy server→client requests and modern input_required rounds), blocking and
/// callback calls, cancellation, timeouts, notifications and every client error path. The
/// program exits 0 only if every check passed and every finalizer ran exactly once.
#[tokio::test]
async fn c_client_against_rust_servers() {
    let _serial = support::one_at_a_time().await;
    let (demo, test_server) = support::rust_servers();
    let (_http, url) = demo_server_http().await;
    let args = [
        demo.display().to_string(),
        test_server.display().to_string(),
        url,
    ];
    for v in variants() {
        let exe = build("client", &["tests/c/client.c"], v);
        let out = run_to_end(&exe, v, &args).await;
        assert!(out.contains("client: ok"), "{v:?}: {out}");
    }
}

/// The C task client (tests/c/tasks.c) against the scripted tasks server over stdio, both eras
/// (TASK-L01, TASK-M01…M04): a synchronous answer despite the opt-in, a task waited for and its
/// result read, `input_required` answered by a C handler, cancel, a failed task's JSON-RPC
/// error, a wait timeout, an unknown status, and the argument errors of the task functions.
#[tokio::test]
async fn c_task_client_against_the_scripted_tasks_server() {
    let _serial = support::one_at_a_time().await;
    let server = support::task_server();
    for v in variants() {
        let exe = build("tasks", &["tests/c/tasks.c"], v);
        let out = run_to_end(&exe, v, &[server.display().to_string()]).await;
        assert!(out.contains("tasks modern: ok"), "{v:?}: {out}");
        assert!(out.contains("tasks legacy: ok"), "{v:?}: {out}");
        assert!(out.contains("tasks: ok"), "{v:?}: {out}");
    }
}

/// The example C client (examples/c/echo_client.c) against the example C server
/// (examples/c/echo_server.c): spawned over stdio, and over Streamable HTTP.
#[tokio::test]
async fn c_echo_client_against_c_echo_server() {
    use tokio::io::AsyncBufReadExt;
    let _serial = support::one_at_a_time().await;
    // The server always runs plain; the client runs in every variant.
    let server = build(
        "echo_server_for_client",
        &["examples/c/echo_server.c"],
        Variant::Plain,
    );
    let mut http = tokio::process::Command::new(&server)
        .args(["--http", "127.0.0.1:0"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("spawn the C echo server");
    let mut lines = tokio::io::BufReader::new(http.stdout.take().expect("stdout")).lines();
    let line = tokio::time::timeout(FIRST_WAIT, lines.next_line())
        .await
        .expect("the C server printed its port in time")
        .expect("read")
        .expect("a port line");
    let port = line.strip_prefix("port=").expect("port=N").to_owned();
    let url = format!("http://127.0.0.1:{port}/mcp");
    let http = Killed(http);
    for v in variants() {
        let exe = build("echo_client", &["examples/c/echo_client.c"], v);
        let out = run_to_end(&exe, v, &[server.display().to_string()]).await;
        assert!(out.contains("tools: echo, calculate"), "{v:?}: {out}");
        assert!(out.contains("echo -> hello from C"), "{v:?}: {out}");
        assert!(out.contains("calculate -> {\"value\":42}"), "{v:?}: {out}");
        let out = run_to_end(&exe, v, &["--http".into(), url.clone()]).await;
        assert!(out.contains("echo -> hello from C"), "{v:?}: {out}");
    }
    drop(http);
}

/// The scripted authorization server of `c_oauth_resource_server_and_client` (public client,
/// PKCE, RFC 9207 `iss`): metadata, registration and a token endpoint that redeems only the
/// code the C browser step returns, with a PKCE verifier.
fn scripted_as(r: &mcpcore_tests::scripted::Req) -> mcpcore_tests::scripted::Act {
    use mcpcore_tests::scripted::{json_resp, raw};
    use serde_json::json;
    let host = r
        .head
        .lines()
        .find_map(|l| l.strip_prefix("host:"))
        .unwrap_or_default()
        .trim();
    let iss = format!("http://{host}");
    match r.target.split('?').next().unwrap_or_default() {
        "/.well-known/oauth-authorization-server" => json_resp(
            200,
            &json!({"issuer": iss, "authorization_endpoint": format!("{iss}/authorize"),
                "token_endpoint": format!("{iss}/token"),
                "registration_endpoint": format!("{iss}/register"),
                "code_challenge_methods_supported": ["S256"],
                "token_endpoint_auth_methods_supported": ["none"],
                "authorization_response_iss_parameter_supported": true}),
        ),
        "/register" => json_resp(201, &json!({"client_id": "c-app"})),
        "/token" => {
            let redeemable = r.text.contains("grant_type=authorization_code")
                && r.text.contains("code=c-code")
                && r.text.contains("code_verifier=");
            if redeemable {
                json_resp(
                    200,
                    &json!({"access_token": "good-token", "token_type": "Bearer"}),
                )
            } else {
                json_resp(400, &json!({"error": "invalid_grant"}))
            }
        }
        _ => raw(404, "", "", b""),
    }
}

/// OAuth from C (tests/c/auth.c): a server protected by `mcp_server_listen_http_auth` with a C
/// verifier (one token accepted as a principal the handler reads with
/// `mcp_request_principal_json`, others refused with 401; the handler also reads the HTTP
/// request headers with `mcp_request_headers_json`), and a C client whose
/// `mcp_client_builder_on_authorize` browser step completes the authorization code flow
/// against a scripted authorization server (a browser step that refuses fails the connection);
/// the server saw one code redemption, carrying `resource` = the C server's URL (AUTH-05).
#[tokio::test]
async fn c_oauth_resource_server_and_client() {
    let _serial = support::one_at_a_time().await;
    for v in variants() {
        let authz = mcpcore_tests::scripted::Scripted::start(scripted_as).await;
        let issuer = authz.url.trim_end_matches("/mcp").to_owned();
        let exe = build("auth", &["tests/c/auth.c"], v);
        let out = run_to_end(&exe, v, &[issuer]).await;
        assert!(out.contains("auth: ok"), "{v:?}: {out}");
        let resource = out
            .lines()
            .find_map(|l| l.strip_prefix("resource "))
            .unwrap_or_else(|| panic!("{v:?}: no resource line in {out}"));
        let seen = authz.requests();
        let to = |p: &str| seen.iter().filter(|r| r.target == p).count();
        // Two clients registered (each connection keeps its own credentials); only the one
        // whose browser step answered redeemed a code.
        assert_eq!(to("/register"), 2, "{v:?}");
        let tokens: Vec<_> = seen.iter().filter(|r| r.target == "/token").collect();
        assert_eq!(tokens.len(), 1, "{v:?}");
        let encoded = resource.replace(':', "%3A").replace('/', "%2F");
        assert!(
            tokens[0].text.contains(&format!("resource={encoded}")),
            "{v:?}: {}",
            tokens[0].text
        );
        assert_eq!(to("/authorize"), 0, "the C browser step answered");
    }
}
