//! The subcommands: each checks its own words, connects, asks, prints, and says how it ended.

use mcpcore::backplane::Backplane;
use mcpcore::client::Client;
use mcpcore::client::{CallOptions, ClientError, ListKind};
use mcpcore::security::KeyRing;
use mcpcore::transport::http::HttpOptions;
use mcpcore::LoggingLevel;
use serde_json::{json, Map, Value};

use crate::connect::{self, Needs, Target, Usage};
use crate::terminal::{self, Style};
use crate::{
    arguments, bridge, exit, Command, ConnArgs, GatewayArgs, ListenArgs, ServeArgs, Words,
};

/// How a command failed.
enum Fail {
    Usage(String),
    Client(ClientError),
}

impl From<Usage> for Fail {
    fn from(u: Usage) -> Self {
        Fail::Usage(u.0)
    }
}

impl From<ClientError> for Fail {
    fn from(e: ClientError) -> Self {
        Fail::Client(e)
    }
}

/// The exit status of a client error: the server's or the protocol's fault (2), or no answer
/// at all (3).
fn status(e: &ClientError) -> i32 {
    match e {
        ClientError::Rpc(_)
        | ClientError::Protocol(_)
        | ClientError::InvalidArgument(_)
        | ClientError::InputRequired(_)
        | ClientError::OutputValidation(_) => exit::PROTOCOL,
        _ => exit::CONNECTION,
    }
}

fn explain(e: &ClientError) -> String {
    match e {
        ClientError::Rpc(o) => {
            let data = o
                .data
                .as_ref()
                .map(|d| format!(" ({d})"))
                .unwrap_or_default();
            format!("the server answered error {}: {}{data}", o.code, o.message)
        }
        ClientError::InputRequired(_) => {
            "the server needs input that was not given (run without --no-input to answer it)".into()
        }
        other => other.to_string(),
    }
}

/// Run `cmd` and return the exit status.
pub(crate) async fn run(cmd: Command, c: ConnArgs) -> i32 {
    let style = Style::of(&c);
    let outcome = match cmd {
        Command::Discover(w) => discover(w, &c, style).await,
        Command::List(w) => list(w, &c, style).await,
        Command::Call { words, no_check } => call(words, no_check, &c, style).await,
        Command::Read(w) => read(w, &c, style).await,
        Command::Prompt(w) => prompt(w, &c, style).await,
        Command::Complete(w) => complete(w, &c, style).await,
        Command::Listen {
            words,
            count,
            tools,
            prompts,
            resources,
        } => listen(words, count, [tools, prompts, resources], &c).await,
        Command::Ping(w) => ping(w, &c).await,
        Command::Serve(s) => serve(s, &c).await,
        Command::Stdio(w) => stdio(w, &c).await,
        Command::Gateway(g) => gateway(g, &c).await,
    };
    match outcome {
        Ok(code) => code,
        Err(Fail::Usage(m)) => {
            eprintln!("mcpcore: {m}");
            exit::PROTOCOL
        }
        Err(Fail::Client(e)) => {
            eprintln!("mcpcore: {}", explain(&e));
            status(&e)
        }
    }
}

/// Per-call options: the timeout, progress on stderr, the log level asked for.
fn call_options(c: &ConnArgs) -> Result<CallOptions, Fail> {
    let mut o = CallOptions::new()
        .timeout(connect::timeout(c))
        .on_progress(terminal::progress);
    if let Some(l) = &c.log_level {
        let level = LoggingLevel::parse(l).ok_or_else(|| {
            Fail::Usage(format!(
                "--log-level {l:?} is not one of debug, info, notice, warning, error, critical, \
                 alert, emergency"
            ))
        })?;
        o = o.log_level(level);
    }
    Ok(o)
}

/// Connect, run `f`, close the connection whatever happened.
async fn session<F, Fut>(target: &Target, c: &ConnArgs, needs: Needs, f: F) -> Result<i32, Fail>
where
    F: FnOnce(Client) -> Fut,
    Fut: std::future::Future<Output = Result<i32, Fail>>,
{
    let client = connect::connect(target, c, &needs).await?;
    let out = f(client.clone()).await;
    client.close().await;
    out
}

fn no_more(words: &[String], what: &str) -> Result<(), Fail> {
    match words.first() {
        None => Ok(()),
        Some(w) => Err(Fail::Usage(format!("unexpected {w:?} ({what})"))),
    }
}

async fn discover(w: Words, c: &ConnArgs, style: Style) -> Result<i32, Fail> {
    let (target, words) = connect::target(w)?;
    no_more(&words, "discover takes no arguments")?;
    session(&target, c, Needs::default(), |client| async move {
        let n = client
            .negotiated()
            .ok_or_else(|| Fail::Client(ClientError::Protocol("nothing was negotiated".into())))?;
        let era = if client.is_modern() {
            "modern"
        } else {
            "legacy"
        };
        style.print(&json!({"era": era, "protocolVersion": n.protocol_version, "result": n.raw}));
        Ok(exit::OK)
    })
    .await
}

async fn list(w: Words, c: &ConnArgs, style: Style) -> Result<i32, Fail> {
    let (target, words) = connect::target(w)?;
    let kind = match words.first().map(String::as_str) {
        None | Some("tools") => ListKind::Tools,
        Some("prompts") => ListKind::Prompts,
        Some("resources") => ListKind::Resources,
        Some("templates" | "resource-templates") => ListKind::ResourceTemplates,
        Some(other) => {
            return Err(Fail::Usage(format!(
                "cannot list {other:?}: tools, prompts, resources or templates"
            )))
        }
    };
    no_more(words.get(1..).unwrap_or_default(), "list takes one kind")?;
    let opts = call_options(c)?;
    session(&target, c, Needs::default(), |client| async move {
        style.print(&client.list_all_json(kind, opts).await?);
        Ok(exit::OK)
    })
    .await
}

async fn call(w: Words, no_check: bool, c: &ConnArgs, style: Style) -> Result<i32, Fail> {
    let (target, words) = connect::target(w)?;
    let Some((tool, rest)) = words.split_first() else {
        return Err(Fail::Usage("call needs a tool name".into()));
    };
    if no_check {
        // Checked for form only, before anything starts.
        arguments::parse(rest, None).map_err(Fail::Usage)?;
    }
    let opts = call_options(c)?;
    session(&target, c, Needs::default(), |client| async move {
        let args = if no_check {
            arguments::parse(rest, None).map_err(Fail::Usage)?
        } else {
            let tools = client.list_all_tools_with(opts.clone()).await?;
            let Some(t) = tools.iter().find(|t| &t.name == tool) else {
                let names: Vec<&str> = tools.iter().map(|t| t.name.as_str()).collect();
                return Err(Fail::Usage(format!(
                    "the server has no tool {tool:?} (it has: {})",
                    names.join(", ")
                )));
            };
            let args = arguments::parse(rest, Some(&t.input_schema)).map_err(Fail::Usage)?;
            arguments::check(&args, &t.input_schema).map_err(Fail::Usage)?;
            args
        };
        let params = json!({"name": tool, "arguments": args});
        let result = client.request_with("tools/call", params, opts).await?;
        style.print(&result);
        let failed = result.get("isError").and_then(Value::as_bool) == Some(true);
        Ok(if failed { exit::TOOL_ERROR } else { exit::OK })
    })
    .await
}

async fn read(w: Words, c: &ConnArgs, style: Style) -> Result<i32, Fail> {
    let (target, words) = connect::target(w)?;
    let Some((uri, rest)) = words.split_first() else {
        return Err(Fail::Usage("read needs a resource URI".into()));
    };
    no_more(rest, "read takes one URI")?;
    let opts = call_options(c)?;
    let params = json!({"uri": uri});
    session(&target, c, Needs::default(), |client| async move {
        style.print(&client.request_with("resources/read", params, opts).await?);
        Ok(exit::OK)
    })
    .await
}

/// `key=value` words as an object of strings (prompt arguments, completion context).
fn string_pairs(words: &[String]) -> Result<Map<String, Value>, Fail> {
    let mut out = Map::new();
    for w in words {
        let (k, v) = w
            .split_once('=')
            .filter(|(k, _)| !k.is_empty())
            .ok_or_else(|| Fail::Usage(format!("{w:?} is not key=value")))?;
        out.insert(k.to_owned(), Value::String(v.to_owned()));
    }
    Ok(out)
}

async fn prompt(w: Words, c: &ConnArgs, style: Style) -> Result<i32, Fail> {
    let (target, words) = connect::target(w)?;
    let Some((name, rest)) = words.split_first() else {
        return Err(Fail::Usage("prompt needs a prompt name".into()));
    };
    let params = json!({"name": name, "arguments": string_pairs(rest)?});
    let opts = call_options(c)?;
    session(&target, c, Needs::default(), |client| async move {
        style.print(&client.request_with("prompts/get", params, opts).await?);
        Ok(exit::OK)
    })
    .await
}

async fn complete(w: Words, c: &ConnArgs, style: Style) -> Result<i32, Fail> {
    let (target, words) = connect::target(w)?;
    let (Some(reference), Some(arg)) = (words.first(), words.get(1)) else {
        return Err(Fail::Usage(
            "complete needs a reference (prompt:NAME or resource:URI) and ARG=PARTIAL".into(),
        ));
    };
    let reference = match reference.split_once(':') {
        Some(("prompt", name)) => json!({"type": "ref/prompt", "name": name}),
        Some(("resource", uri)) => json!({"type": "ref/resource", "uri": uri}),
        _ => {
            return Err(Fail::Usage(format!(
                "{reference:?} is not prompt:NAME or resource:URI"
            )))
        }
    };
    let (name, value) = arg
        .split_once('=')
        .ok_or_else(|| Fail::Usage(format!("{arg:?} is not ARG=PARTIAL")))?;
    let mut params = json!({"ref": reference, "argument": {"name": name, "value": value}});
    let context = string_pairs(words.get(2..).unwrap_or_default())?;
    if !context.is_empty() {
        params["context"] = json!({ "arguments": context });
    }
    let opts = call_options(c)?;
    session(&target, c, Needs::default(), |client| async move {
        style.print(
            &client
                .request_with("completion/complete", params, opts)
                .await?,
        );
        Ok(exit::OK)
    })
    .await
}

async fn listen(w: Words, count: Option<u64>, kinds: [bool; 3], c: &ConnArgs) -> Result<i32, Fail> {
    let (target, uris) = connect::target(w)?;
    let all = !kinds.iter().any(|k| *k);
    let mut filter = json!({"toolsListChanged": all || kinds[0],
        "promptsListChanged": all || kinds[1], "resourcesListChanged": all || kinds[2]});
    if !uris.is_empty() {
        filter["resourceSubscriptions"] = json!(uris);
    }
    let lines = Style { pretty: false };
    session(&target, c, Needs { stream: true }, |client| async move {
        let opts = CallOptions::new().timeout(connect::timeout(c));
        let mut sub = client.listen_with(filter, opts).await?;
        eprintln!("listening: {}", sub.honored());
        let mut seen = 0u64;
        while count.is_none_or(|n| seen < n) {
            tokio::select! {
                next = sub.next() => match next {
                    Some(n) => lines.print(&n),
                    None => return Err(Fail::Client(ClientError::Closed(
                        "the server ended the stream".into()))),
                },
                _ = tokio::signal::ctrl_c() => break,
            }
            seen += 1;
        }
        sub.close().await;
        Ok(exit::OK)
    })
    .await
}

async fn ping(w: Words, c: &ConnArgs) -> Result<i32, Fail> {
    let (target, words) = connect::target(w)?;
    no_more(&words, "ping takes no arguments")?;
    let opts = call_options(c)?;
    session(&target, c, Needs::default(), |client| async move {
        let t0 = std::time::Instant::now();
        // The modern era has no `ping`: a fresh `server/discover` is its liveness check.
        if client.is_modern() {
            client.discover_with(opts).await?;
        } else {
            client.ping_with(opts).await?;
        }
        eprintln!("pong in {:.1} ms", t0.elapsed().as_secs_f64() * 1000.0);
        Ok(exit::OK)
    })
    .await
}

/// The HTTP options of `--tls-*`, `--auth-*`, `--metrics-path` and `--allowed-hosts`, and the
/// scale-out of `--redis` and `--request-state-key`.
fn listen_options(l: ListenArgs) -> Result<(Box<HttpOptions>, Option<bridge::Shared>), Fail> {
    let mut o = bridge::http_options(
        (l.tls_cert, l.tls_key),
        [l.auth_jwks, l.auth_issuer, l.auth_audience],
    )
    .map_err(Fail::Usage)?;
    o.metrics_path = l.metrics_path;
    if !l.allowed_hosts.is_empty() {
        mcpcore::options::apply_json(&mut o, &json!({ "allowedHosts": l.allowed_hosts }))
            .map_err(|e| Fail::Usage(format!("--allowed-hosts: {e}")))?;
    }
    let keys = KeyRing::from_specs(&l.request_state_key)
        .map_err(|e| Fail::Usage(format!("--request-state-key: {e}")))?;
    let shared =
        match (l.redis, keys) {
            (None, None) => None,
            (None, Some(_)) => return Err(Fail::Usage("--request-state-key needs --redis".into())),
            (Some(_), None) => return Err(Fail::Usage(
                "--redis needs --request-state-key (or MCPCORE_REQUEST_STATE_KEY): every worker \
                 must seal requestState with the same key"
                    .into(),
            )),
            (Some(url), Some(keys)) => {
                let mut backplane =
                    Backplane::redis(&url).map_err(|e| Fail::Usage(format!("--redis: {e}")))?;
                if let Some(p) = l.redis_prefix {
                    backplane = backplane.with_prefix(&p);
                }
                Some(bridge::Shared { backplane, keys })
            }
        };
    Ok((Box::new(o), shared))
}

async fn serve(s: ServeArgs, c: &ConnArgs) -> Result<i32, Fail> {
    let (opts, shared) = listen_options(s.listen)?;
    if shared.is_some() && !s.shared {
        return Err(Fail::Usage(
            "--redis: the workers share client sessions, so they must share the server behind \
             them too: add --shared"
                .into(),
        ));
    }
    let front = bridge::Front::Http { addr: s.http, opts };
    let policy = crate::lane::Policy {
        per_session: !s.shared,
        per_capabilities: s.per_capabilities,
        max: s.max_upstreams,
    };
    bridge::run(Target::Stdio(s.command), c, front, shared, policy).await?;
    Ok(exit::OK)
}

async fn gateway(g: GatewayArgs, c: &ConnArgs) -> Result<i32, Fail> {
    let (opts, shared) = listen_options(g.listen)?;
    let (identity, instructions, members) = crate::gateway::members(&g.config, c)
        .await
        .map_err(Fail::Usage)?;
    if let Some(addr) = g.health {
        crate::gateway::health(addr, members.clone())
            .await
            .map_err(|e| Fail::Usage(format!("--health {addr}: {e}")))?;
    }
    let front = match g.http {
        Some(addr) => bridge::Front::Http { addr, opts },
        None => bridge::Front::Stdio,
    };
    let setup = bridge::Setup {
        identity,
        instructions,
        shared,
    };
    bridge::serve(setup, members, front).await?;
    Ok(exit::OK)
}

async fn stdio(w: Words, c: &ConnArgs) -> Result<i32, Fail> {
    let (target, words) = connect::target(w)?;
    if !matches!(target, Target::Http(_)) {
        return Err(Fail::Usage("stdio bridges an http(s):// URL".into()));
    }
    no_more(&words, "stdio takes one URL")?;
    bridge::run(
        target,
        c,
        bridge::Front::Stdio,
        None,
        crate::lane::Policy::default(),
    )
    .await?;
    Ok(exit::OK)
}
