//! OAuth 2.1 for the command line (REQUIREMENTS §15; core runs the flow): the browser step
//! prints the authorization URL and waits for the redirect on a loopback port (RFC 8252 §7.3),
//! and tokens and registered clients are kept in a JSON file only its owner can read (AUTH-09).

use mcpcore::client::auth::{
    AuthError, AuthErrorKind, AuthHooks, AuthorizationBrowser, ClientInfo, OAuthOptions,
    TokenStore, Tokens,
};
use mcpcore::BoxFuture;
use serde_json::{json, Map, Value};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use crate::ConnArgs;

/// How long the browser step waits for the redirect.
pub(crate) const BROWSER_WAIT: Duration = Duration::from_secs(300);
/// The most of a redirect request read.
const MAX_HEAD: usize = 16 * 1024;

/// The OAuth options and hooks of `c`, or `None` when a token or `Authorization` header is
/// given or `--no-oauth` says so.
pub(crate) fn options(c: &ConnArgs) -> Option<(OAuthOptions, AuthHooks)> {
    if !enabled(c) {
        return None;
    }
    let mut o = OAuthOptions::default();
    o.redirect_uri = format!("http://127.0.0.1:{}/callback", c.oauth_port);
    o.client_name = "mcpcore command line".into();
    o.client_id = c.client_id.clone();
    o.client_secret = c.client_secret.clone();
    o.issuer = c.issuer.clone();
    let hooks = AuthHooks {
        browser: Some(Arc::new(LoopbackBrowser { port: c.oauth_port })),
        store: Some(Arc::new(FileStore::new(token_file(c)))),
    };
    Some((o, hooks))
}

/// Whether the flow may run: no token, no `Authorization` header, no `--no-oauth`.
pub(crate) fn enabled(c: &ConnArgs) -> bool {
    let has_authorization = c.headers.iter().any(|h| {
        h.trim_start()
            .to_ascii_lowercase()
            .starts_with("authorization:")
    });
    !(c.no_oauth || c.token.is_some() || has_authorization)
}

/// `--token-cache`, else `$XDG_CACHE_HOME/mcpcore/oauth.json`, else `~/.cache/mcpcore/oauth.json`.
fn token_file(c: &ConnArgs) -> PathBuf {
    if let Some(f) = &c.token_cache {
        return PathBuf::from(f);
    }
    let base = std::env::var_os("XDG_CACHE_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))
        .unwrap_or_else(std::env::temp_dir);
    base.join("mcpcore").join("oauth.json")
}

/// The browser step: print the URL, take the one redirect to `127.0.0.1:port/callback`.
struct LoopbackBrowser {
    port: u16,
}

impl AuthorizationBrowser for LoopbackBrowser {
    fn authorize(&self, url: String) -> BoxFuture<Result<String, AuthError>> {
        let port = self.port;
        Box::pin(async move {
            let fail = |m: String| AuthError::new(AuthErrorKind::Browser, m);
            let listener = tokio::net::TcpListener::bind(("127.0.0.1", port))
                .await
                .map_err(|e| fail(format!("cannot listen on 127.0.0.1:{port}: {e}")))?;
            eprintln!("Open this URL in a browser to authorize mcpcore:\n  {url}");
            tokio::time::timeout(BROWSER_WAIT, redirect(&listener, port))
                .await
                .map_err(|_| fail("no redirect came back within 5 minutes".into()))?
                .map_err(fail)
        })
    }
}

/// Serve the loopback port until a request for `/callback` arrives; its full URL.
async fn redirect(listener: &tokio::net::TcpListener, port: u16) -> Result<String, String> {
    loop {
        let (mut sock, _) = listener.accept().await.map_err(|e| e.to_string())?;
        let mut buf = Vec::new();
        let mut chunk = [0u8; 2048];
        while !buf.windows(4).any(|w| w == b"\r\n\r\n") && buf.len() < MAX_HEAD {
            match tokio::time::timeout(Duration::from_secs(10), sock.read(&mut chunk)).await {
                Ok(Ok(n)) if n > 0 => buf.extend_from_slice(&chunk[..n]),
                _ => break,
            }
        }
        let head = String::from_utf8_lossy(&buf);
        let target = head
            .lines()
            .next()
            .and_then(|l| l.strip_prefix("GET "))
            .and_then(|l| l.split(' ').next())
            .unwrap_or("")
            .to_owned();
        let ours = target == "/callback" || target.starts_with("/callback?");
        let (status, body) = if ours {
            (
                "200 OK",
                "mcpcore is authorized; you can close this window.",
            )
        } else {
            ("404 Not Found", "not found")
        };
        let reply = format!(
            "HTTP/1.1 {status}\r\ncontent-type: text/plain; charset=utf-8\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
            body.len()
        );
        let _ = sock.write_all(reply.as_bytes()).await;
        let _ = sock.shutdown().await;
        if ours {
            return Ok(format!("http://127.0.0.1:{port}{target}"));
        }
    }
}

/// Tokens by resource and clients by issuer, in one JSON file written with mode 0600.
struct FileStore {
    path: PathBuf,
    lock: Mutex<()>,
}

impl FileStore {
    fn new(path: PathBuf) -> Self {
        Self {
            path,
            lock: Mutex::new(()),
        }
    }

    fn load(&self) -> Map<String, Value> {
        std::fs::read(&self.path)
            .ok()
            .and_then(|b| serde_json::from_slice::<Value>(&b).ok())
            .and_then(|v| v.as_object().cloned())
            .unwrap_or_default()
    }

    /// Change the document under the lock and write it back whole (a temporary file renamed
    /// into place, created 0600 before any secret is written to it).
    fn update(&self, f: impl FnOnce(&mut Map<String, Value>)) {
        let _held = self.lock.lock().unwrap_or_else(|p| p.into_inner());
        let mut doc = self.load();
        f(&mut doc);
        if let Err(e) = self.write(&Value::Object(doc)) {
            eprintln!(
                "mcpcore: cannot keep tokens in {}: {e}",
                self.path.display()
            );
        }
    }

    fn write(&self, doc: &Value) -> std::io::Result<()> {
        if let Some(dir) = self.path.parent() {
            std::fs::create_dir_all(dir)?;
        }
        let tmp = self
            .path
            .with_extension(format!("tmp{}", std::process::id()));
        let mut opts = std::fs::OpenOptions::new();
        opts.write(true).create(true).truncate(true);
        #[cfg(unix)]
        std::os::unix::fs::OpenOptionsExt::mode(&mut opts, 0o600);
        let mut file = opts.open(&tmp)?;
        std::io::Write::write_all(&mut file, doc.to_string().as_bytes())?;
        file.sync_all()?;
        std::fs::rename(&tmp, &self.path)
    }

    fn section(&self, name: &str, key: &str) -> Option<Value> {
        self.load().get(name)?.get(key).cloned()
    }
}

fn text(v: &Value, k: &str) -> Option<String> {
    v.get(k).and_then(Value::as_str).map(str::to_owned)
}

impl TokenStore for FileStore {
    fn tokens(&self, resource: &str) -> Option<Tokens> {
        let v = self.section("tokens", resource)?;
        Some(Tokens {
            access_token: text(&v, "accessToken")?,
            token_type: text(&v, "tokenType").unwrap_or_else(|| "Bearer".into()),
            refresh_token: text(&v, "refreshToken"),
            scope: text(&v, "scope"),
            issuer: text(&v, "issuer")?,
        })
    }
    fn save_tokens(&self, resource: &str, t: Tokens) {
        let v = json!({"accessToken": t.access_token, "tokenType": t.token_type,
            "refreshToken": t.refresh_token, "scope": t.scope, "issuer": t.issuer});
        self.update(|doc| insert(doc, "tokens", resource, Some(v)));
    }
    fn clear_tokens(&self, resource: &str) {
        self.update(|doc| insert(doc, "tokens", resource, None));
    }
    fn client(&self, issuer: &str) -> Option<ClientInfo> {
        let v = self.section("clients", issuer)?;
        Some(ClientInfo {
            client_id: text(&v, "clientId")?,
            client_secret: text(&v, "clientSecret"),
            auth_method: text(&v, "authMethod"),
        })
    }
    fn save_client(&self, issuer: &str, c: ClientInfo) {
        let v = json!({"clientId": c.client_id, "clientSecret": c.client_secret,
            "authMethod": c.auth_method});
        self.update(|doc| insert(doc, "clients", issuer, Some(v)));
    }
}

/// Set (or with `None` remove) `doc[section][key]`.
fn insert(doc: &mut Map<String, Value>, section: &str, key: &str, v: Option<Value>) {
    let entry = doc
        .entry(section.to_owned())
        .or_insert_with(|| Value::Object(Map::new()));
    if !entry.is_object() {
        *entry = Value::Object(Map::new());
    }
    if let Some(m) = entry.as_object_mut() {
        match v {
            Some(v) => m.insert(key.to_owned(), v),
            None => m.remove(key),
        };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_file_keeps_tokens_and_clients_for_its_owner_only() {
        let dir = std::env::temp_dir().join(format!("mcpcore-cli-store-{}", std::process::id()));
        let path = dir.join("nested").join("oauth.json");
        let store = FileStore::new(path.clone());
        assert!(store.tokens("https://a/mcp").is_none());
        let t = Tokens {
            access_token: "at".into(),
            token_type: "Bearer".into(),
            refresh_token: Some("rt".into()),
            scope: None,
            issuer: "https://as".into(),
        };
        store.save_tokens("https://a/mcp", t.clone());
        store.save_client(
            "https://as",
            ClientInfo {
                client_id: "c1".into(),
                client_secret: None,
                auth_method: Some("none".into()),
            },
        );
        let again = FileStore::new(path.clone());
        assert!(again.tokens("https://a/mcp") == Some(t));
        assert_eq!(
            again.client("https://as").map(|c| c.client_id),
            Some("c1".into())
        );
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(&path).unwrap().permissions().mode();
            assert_eq!(mode & 0o777, 0o600, "only the owner reads the tokens");
        }
        again.clear_tokens("https://a/mcp");
        assert!(FileStore::new(path).tokens("https://a/mcp").is_none());
        let _ = std::fs::remove_dir_all(dir);
    }
}
