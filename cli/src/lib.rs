//! The `mcpcore` command: call and inspect any MCP server from a shell, in either protocol era,
//! over stdio or Streamable HTTP. Everything protocol-shaped is core's client (negotiation,
//! `input_required` rounds, pagination, OAuth); this crate parses the command line, prints JSON
//! and talks to the person at the terminal.
//!
//! The same entry point ([`main_with`]) runs as the `mcpcore` binary, as `python -m mcpcore`
//! from the wheel and as `npx mcpcore` from the npm package.

mod arguments;
mod bridge;
mod commands;
mod connect;
mod gateway;
mod hub;
mod lane;
mod oauth;
mod subs;
mod terminal;
mod upstream;

use clap::{Args, Parser, Subcommand};
use std::ffi::OsString;

/// Exit statuses (documented in `--help` and the guide).
pub mod exit {
    /// The command did what was asked.
    pub const OK: i32 = 0;
    /// The tool ran and answered `isError: true`.
    pub const TOOL_ERROR: i32 = 1;
    /// A protocol error: the server answered with a JSON-RPC error or something the protocol
    /// does not allow, or the command line was wrong (also clap's usage errors).
    pub const PROTOCOL: i32 = 2;
    /// No answer: the server could not be started or reached, authorization failed, the
    /// connection closed, or the timeout passed.
    pub const CONNECTION: i32 = 3;
}

const EXIT_CODES: &str = "\
Targets: an http(s):// URL as the first argument, or a stdio command after `--`:
  mcpcore call http://127.0.0.1:8000/mcp echo text=hi
  mcpcore call echo text=hi -- python server.py

Exit status: 0 success; 1 the tool answered isError; 2 protocol error (a JSON-RPC error, a
malformed answer, arguments the tool's schema refuses, a wrong command line); 3 connection or
authorization failure (cannot start or reach the server, refused credentials, timeout).";

/// Call and inspect any MCP server (both protocol eras, stdio or Streamable HTTP).
#[derive(Parser, Debug)]
#[command(name = "mcpcore", version, after_help = EXIT_CODES, max_term_width = 100)]
struct Cli {
    #[command(subcommand)]
    command: Command,
    #[command(flatten)]
    conn: ConnArgs,
}

/// How to reach the server (every subcommand takes these).
#[derive(Args, Debug, Clone)]
struct ConnArgs {
    /// Protocol era: `auto` (the default) probes `server/discover` and falls back to
    /// `initialize`. (A bridge reaches a stdio server in `legacy` unless told: a stdio server
    /// announces list changes only on a legacy session.)
    #[arg(long, global = true, value_enum)]
    mode: Option<connect::Mode>,
    /// An extra HTTP header, `Name: value` (repeatable).
    #[arg(
        short = 'H',
        long = "header",
        global = true,
        value_name = "NAME: VALUE"
    )]
    headers: Vec<String>,
    /// A bearer token sent as `Authorization: Bearer TOKEN` (also `MCPCORE_TOKEN`).
    #[arg(long, global = true, env = "MCPCORE_TOKEN", hide_env_values = true)]
    token: Option<String>,
    /// Never run the OAuth flow on a 401 (it runs unless a token or `Authorization` is given).
    #[arg(long, global = true)]
    no_oauth: bool,
    /// The loopback port the OAuth redirect comes back to (`http://127.0.0.1:PORT/callback`).
    #[arg(long, global = true, default_value_t = 33418, value_name = "PORT")]
    oauth_port: u16,
    /// A pre-registered OAuth client id (else the client registers itself).
    #[arg(long, global = true)]
    client_id: Option<String>,
    /// The pre-registered client's secret (also `MCPCORE_CLIENT_SECRET`); needs `--issuer`.
    #[arg(
        long,
        global = true,
        env = "MCPCORE_CLIENT_SECRET",
        hide_env_values = true
    )]
    client_secret: Option<String>,
    /// The authorization server the pre-registered credentials belong to.
    #[arg(long, global = true, value_name = "URL")]
    issuer: Option<String>,
    /// Where OAuth tokens and registrations are kept (mode 0600; default
    /// `~/.cache/mcpcore/oauth.json`).
    #[arg(long, global = true, value_name = "FILE")]
    token_cache: Option<String>,
    /// Seconds to wait for connecting and for each answer.
    #[arg(long, global = true, default_value_t = 60.0, value_name = "SECONDS")]
    timeout: f64,
    /// Extra trusted CA certificates (PEM) for https:// URLs.
    #[arg(long, global = true, value_name = "PEM")]
    cacert: Option<String>,
    /// A client certificate chain (PEM) for mutual TLS.
    #[arg(long, global = true, value_name = "PEM", requires = "key")]
    cert: Option<String>,
    /// The client certificate's private key (PEM).
    #[arg(long, global = true, value_name = "PEM", requires = "cert")]
    key: Option<String>,
    /// Never ask at the terminal: the elicitation capability is not declared, so a server that
    /// needs input fails the call instead of waiting for an answer.
    #[arg(long, global = true)]
    no_input: bool,
    /// A directory offered to the server as a root (repeatable; declares `roots`).
    #[arg(long = "root", global = true, value_name = "DIR")]
    roots: Vec<String>,
    /// The log level asked of the server; its log messages are printed on stderr.
    #[arg(long, global = true, value_name = "LEVEL")]
    log_level: Option<String>,
    /// Print JSON indented (the default on a terminal).
    #[arg(long, global = true, conflicts_with = "compact")]
    pretty: bool,
    /// Print JSON on one line (the default when piped).
    #[arg(long, global = true)]
    compact: bool,
    /// Discard the stdio server's stderr instead of passing it through.
    #[arg(long, global = true)]
    quiet: bool,
    /// Environment variables added for a stdio server (a gateway's configuration sets them).
    #[arg(skip)]
    env: Vec<(String, String)>,
}

/// Positional words (an optional URL first) and the stdio command after `--`.
#[derive(Args, Debug, Clone)]
struct Words {
    /// [URL] then the subcommand's own arguments.
    #[arg(value_name = "ARGS")]
    words: Vec<String>,
    /// The stdio server to start: a program and its arguments, after `--`.
    #[arg(last = true, value_name = "COMMAND")]
    command: Vec<String>,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Print what the server offers: its `server/discover` result (modern) or `initialize`
    /// result (legacy), with the era and protocol version in force.
    #[command(override_usage = "mcpcore discover [URL] [-- COMMAND...]")]
    Discover(Words),
    /// List the server's tools, prompts, resources or resource templates (every page).
    #[command(
        override_usage = "mcpcore list [URL] [tools|prompts|resources|templates] [-- COMMAND...]"
    )]
    List(Words),
    /// Call a tool. Arguments are one JSON object, or `key=value` pairs (each value read as
    /// the tool's input schema types it) and `key:=JSON` pairs; they are checked against the
    /// schema before anything is sent.
    #[command(override_usage = "mcpcore call [URL] TOOL [ARGS...] [-- COMMAND...]")]
    Call {
        #[command(flatten)]
        words: Words,
        /// Send the arguments unchecked (strings stay strings unless given as `key:=JSON`).
        #[arg(long)]
        no_check: bool,
    },
    /// Read a resource.
    #[command(override_usage = "mcpcore read [URL] URI [-- COMMAND...]")]
    Read(Words),
    /// Get a prompt with `key=value` arguments.
    #[command(override_usage = "mcpcore prompt [URL] NAME [KEY=VALUE...] [-- COMMAND...]")]
    Prompt(Words),
    /// Complete an argument of a prompt (`prompt:NAME`) or a resource template
    /// (`resource:URI_TEMPLATE`); further `key=value` pairs are context.
    #[command(
        override_usage = "mcpcore complete [URL] prompt:NAME|resource:URI ARG=PARTIAL [KEY=VALUE...] [-- COMMAND...]"
    )]
    Complete(Words),
    /// Print notifications (list changes, resource updates, logs) as JSON lines until
    /// interrupted: a `subscriptions/listen` stream (modern) or the session's notifications
    /// (legacy).
    #[command(override_usage = "mcpcore listen [URL] [RESOURCE_URI...] [-- COMMAND...]")]
    Listen {
        #[command(flatten)]
        words: Words,
        /// Stop after this many notifications.
        #[arg(long)]
        count: Option<u64>,
        /// Only tool list changes (with `--prompts`/`--resources`: those; none: all three).
        #[arg(long)]
        tools: bool,
        /// Only prompt list changes (see `--tools`).
        #[arg(long)]
        prompts: bool,
        /// Only resource list changes (see `--tools`).
        #[arg(long)]
        resources: bool,
    },
    /// Serve a stdio server over Streamable HTTP to many clients, in both eras (the server
    /// itself may speak either): its tools, prompts, resources and completions, with progress,
    /// cancellation, elicitation and list changes passed through; a server that exits is
    /// restarted with backoff.
    #[command(
        override_usage = "mcpcore serve --http ADDR [--tls-cert PEM --tls-key PEM] [--auth-jwks JWKS --auth-issuer ISS --auth-audience AUD] -- COMMAND..."
    )]
    Serve(ServeArgs),
    /// Join several servers (stdio commands or URLs, either era, each with its own
    /// credentials) behind one endpoint, their names namespaced and filtered as CONFIG says;
    /// a server that is down is absent from the lists until it is back.
    #[command(
        override_usage = "mcpcore gateway CONFIG [--http ADDR [--tls-cert PEM --tls-key PEM] [--auth-jwks JWKS --auth-issuer ISS --auth-audience AUD]] [--health ADDR]"
    )]
    Gateway(GatewayArgs),
    /// Serve a Streamable HTTP server over stdio (for clients that only start commands).
    #[command(override_usage = "mcpcore stdio URL")]
    Stdio(Words),
    /// Check that the server answers (`ping`; `server/discover` in the modern era).
    #[command(override_usage = "mcpcore ping [URL] [-- COMMAND...]")]
    Ping(Words),
}

/// How a bridge or gateway serves HTTP: TLS and OAuth.
#[derive(Args, Debug, Clone)]
struct ListenArgs {
    /// Serve HTTPS with this certificate chain (PEM); needs `--tls-key`.
    #[arg(long, value_name = "PEM")]
    tls_cert: Option<String>,
    /// The certificate's private key (PEM).
    #[arg(long, value_name = "PEM")]
    tls_key: Option<String>,
    /// Require OAuth bearer tokens (JWTs) verified with this JWKS (a file or URL).
    #[arg(long, value_name = "JWKS")]
    auth_jwks: Option<String>,
    /// The issuer tokens must carry.
    #[arg(long, value_name = "ISS")]
    auth_issuer: Option<String>,
    /// The audience tokens must carry (also the resource identifier).
    #[arg(long, value_name = "AUD")]
    auth_audience: Option<String>,
    /// Serve the Prometheus metrics of the endpoint at this path (e.g. `/metrics`).
    #[arg(long, value_name = "PATH")]
    metrics_path: Option<String>,
    /// Accepted `Host` values, comma-separated (behind a load balancer: the name clients use).
    #[arg(long, value_name = "H,H", value_delimiter = ',')]
    allowed_hosts: Vec<String>,
    /// Run as one worker of several sharing sessions and state through Redis
    /// (`redis://host:port/db`); needs `--request-state-key`.
    #[arg(long, value_name = "URL")]
    redis: Option<String>,
    /// The key prefix in Redis (default `mcp:`).
    #[arg(long, value_name = "P", requires = "redis")]
    redis_prefix: Option<String>,
    /// A 32-byte key sealing `requestState`, `[ID:]BASE64`, the same on every worker (repeat to
    /// rotate: the first seals, the others only open; or `MCPCORE_REQUEST_STATE_KEY`,
    /// comma-separated).
    #[arg(
        long,
        value_name = "[ID:]BASE64",
        env = "MCPCORE_REQUEST_STATE_KEY",
        hide_env_values = true,
        value_delimiter = ','
    )]
    request_state_key: Vec<String>,
}

/// `mcpcore serve`'s own options.
#[derive(Args, Debug, Clone)]
struct ServeArgs {
    /// The address to serve on, e.g. `127.0.0.1:8000` (port 0 picks one; printed on stderr).
    #[arg(long, value_name = "ADDR")]
    http: std::net::SocketAddr,
    #[command(flatten)]
    listen: ListenArgs,
    /// One server process for every client, for servers that keep no per-client state. Without
    /// it each legacy client session gets a process of its own (started at its first call,
    /// stopped when the session ends); 2026-07-28 clients, which have no sessions, share one.
    /// Needed with --redis.
    #[arg(long)]
    shared: bool,
    /// In front of a legacy server, one more process per client capability set, so that the
    /// server hears exactly the capabilities of each caller (2026-07-28 clients declare them per
    /// request); for servers that keep no state between calls.
    #[arg(long)]
    per_capabilities: bool,
    /// The most server processes started besides the shared one (per session, or per client
    /// capability set); a client beyond it gets an error.
    #[arg(long, value_name = "N", default_value_t = 64)]
    max_upstreams: usize,
    /// The stdio server to start: a program and its arguments, after `--`.
    #[arg(last = true, required = true, value_name = "COMMAND")]
    command: Vec<String>,
}

/// `mcpcore gateway`'s own options.
#[derive(Args, Debug, Clone)]
struct GatewayArgs {
    /// The configuration file (TOML, or JSON): the upstreams and their naming.
    config: String,
    /// Serve Streamable HTTP on this address (port 0 picks one); without it, serve stdio.
    #[arg(long, value_name = "ADDR")]
    http: Option<std::net::SocketAddr>,
    #[command(flatten)]
    listen: ListenArgs,
    /// Answer `GET /health` on this address: each upstream up or down (503 when one is down).
    #[arg(long, value_name = "ADDR")]
    health: Option<std::net::SocketAddr>,
}

/// Run the command line `args` (the program name first) and return the exit status.
pub fn main_with<I, T>(args: I) -> i32
where
    I: IntoIterator<Item = T>,
    T: Into<OsString> + Clone,
{
    let cli = match Cli::try_parse_from(args) {
        Ok(c) => c,
        Err(e) => {
            let _ = e.print();
            return e.exit_code();
        }
    };
    let rt = match tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("mcpcore: cannot start a runtime: {e}");
            return exit::CONNECTION;
        }
    };
    let code = rt.block_on(commands::run(cli.command, cli.conn));
    // Background work (a stdio child being shut down) gets a moment, never a hang.
    rt.shutdown_timeout(std::time::Duration::from_secs(2));
    code
}
