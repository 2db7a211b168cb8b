//! From the command line to a connected client: which server (a URL or a stdio command), which
//! era, which headers, TLS and callbacks.

use mcpcore::client::Client;
use mcpcore::client::{
    client_handler_fn, ClientBuilder, ClientError, ConnectMode, HttpClientOptions, StderrMode,
    StdioCommand,
};
use mcpcore::Implementation;
use serde_json::{json, Value};
use std::time::Duration;

use crate::{terminal, ConnArgs, Words};

/// `--mode`.
#[derive(clap::ValueEnum, Clone, Copy, Debug)]
pub(crate) enum Mode {
    Auto,
    Legacy,
    Modern,
}

/// The server to talk to.
#[derive(Debug, Clone)]
pub(crate) enum Target {
    Http(String),
    Stdio(Vec<String>),
}

/// A command line that cannot be run, said before anything starts.
#[derive(Debug)]
pub(crate) struct Usage(pub String);

/// Split the positional words into the target and the subcommand's own words.
pub(crate) fn target(w: Words) -> Result<(Target, Vec<String>), Usage> {
    let mut words = w.words;
    let url = words
        .first()
        .filter(|a| a.starts_with("http://") || a.starts_with("https://"))
        .cloned();
    match (url, w.command.is_empty()) {
        (Some(_), false) => Err(Usage(
            "give either a URL or a command after `--`, not both".into(),
        )),
        (Some(u), true) => {
            words.remove(0);
            Ok((Target::Http(u), words))
        }
        (None, false) => Ok((Target::Stdio(w.command), words)),
        (None, true) => Err(Usage(
            "no server given: put an http(s):// URL first, or the stdio command after `--` \
             (mcpcore call echo text=hi -- python server.py)"
                .into(),
        )),
    }
}

/// What a command needs from the connection besides the target.
#[derive(Default)]
pub(crate) struct Needs {
    /// Keep the legacy HTTP GET stream open (listen).
    pub stream: bool,
}

pub(crate) fn timeout(c: &ConnArgs) -> Duration {
    Duration::try_from_secs_f64(c.timeout)
        .ok()
        .filter(|d| !d.is_zero())
        .unwrap_or(Duration::from_secs(60))
}

/// Connect to `target` as `c` says, asking at the terminal.
pub(crate) async fn connect(
    target: &Target,
    c: &ConnArgs,
    needs: &Needs,
) -> Result<Client, ClientError> {
    let mut b = builder(c).on_notification(terminal::notification);
    if !c.no_input {
        b = b.on_elicitation(client_handler_fn(terminal::elicit));
    }
    if !c.roots.is_empty() {
        let roots = roots(&c.roots)?;
        b = b.on_roots(client_handler_fn(move |_params: Value| {
            let roots = roots.clone();
            async move { Ok(json!({ "roots": roots })) }
        }));
    }
    open(b, target, c, needs).await
}

/// A client builder with `c`'s era and timeouts.
pub(crate) fn builder(c: &ConnArgs) -> ClientBuilder {
    let t = timeout(c);
    let mode = match c.mode.unwrap_or(Mode::Auto) {
        Mode::Auto => ConnectMode::Auto,
        Mode::Legacy => ConnectMode::Legacy,
        Mode::Modern => ConnectMode::Modern,
    };
    Client::builder()
        .mode(mode)
        .client_info(Implementation::new(
            "mcpcore-cli",
            env!("CARGO_PKG_VERSION"),
        ))
        .configure(|o| {
            o.request_timeout = Some(t);
            o.probe_timeout = t.min(o.probe_timeout);
        })
}

/// Connect `b` to `target`.
pub(crate) async fn open(
    b: ClientBuilder,
    target: &Target,
    c: &ConnArgs,
    needs: &Needs,
) -> Result<Client, ClientError> {
    let t = timeout(c);
    let connecting = async {
        match target {
            Target::Http(url) => b.connect_http(url, http_options(c, needs)?).await,
            Target::Stdio(cmd) => {
                let (program, args) = cmd
                    .split_first()
                    .ok_or_else(|| ClientError::InvalidArgument("an empty command".into()))?;
                let stderr = if c.quiet {
                    StderrMode::Null
                } else {
                    StderrMode::Inherit
                };
                let mut cmd = StdioCommand::new(program).args(args).stderr(stderr);
                for (k, v) in &c.env {
                    cmd = cmd.env(k, v);
                }
                b.connect_stdio(cmd).await
            }
        }
    };
    // The browser step of OAuth waits for a person; the per-request timeout still bounds
    // every exchange with the server.
    let backstop = if crate::oauth::enabled(c) && matches!(target, Target::Http(_)) {
        t + crate::oauth::BROWSER_WAIT
    } else {
        t
    };
    tokio::time::timeout(backstop, connecting)
        .await
        .unwrap_or(Err(ClientError::Timeout))
}

fn http_options(c: &ConnArgs, needs: &Needs) -> Result<HttpClientOptions, ClientError> {
    let mut o = HttpClientOptions::default();
    o.listen_stream = needs.stream;
    for h in &c.headers {
        let (name, value) = h.split_once(':').ok_or_else(|| {
            ClientError::InvalidArgument(format!("--header {h:?} is not `Name: value`"))
        })?;
        o.headers.push((name.trim().into(), value.trim().into()));
    }
    if let Some(t) = &c.token {
        o.headers
            .push(("Authorization".into(), format!("Bearer {t}")));
    }
    if let Some((auth, hooks)) = crate::oauth::options(c) {
        o.auth = Some(auth);
        o.auth_hooks = hooks;
    }
    o.tls.ca_file = c.cacert.clone();
    o.tls.cert_file = c.cert.clone();
    o.tls.key_file = c.key.clone();
    Ok(o)
}

/// `--root DIR`s as `Root`s (`file://` URIs of the absolute paths).
fn roots(dirs: &[String]) -> Result<Vec<Value>, ClientError> {
    dirs.iter()
        .map(|d| {
            let abs = std::path::absolute(d)
                .map_err(|e| ClientError::InvalidArgument(format!("--root {d:?}: {e}")))?;
            let name = abs
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_else(|| abs.display().to_string());
            Ok(json!({"uri": format!("file://{}", abs.display()), "name": name}))
        })
        .collect()
}
