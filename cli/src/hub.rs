//! One core `Server` in front of one or more upstreams (the bridges have one, the gateway
//! several): each upstream's tools, prompts, resources and templates are mirrored into the
//! server's dynamic registry under the upstream's naming (a prefix and separator for names,
//! allow/deny globs) and forwarded to it; completions are routed by their reference. A mirror
//! follows its upstream's `list_changed`, empties while the upstream is down (absence, not
//! failure) and fills again when it is back.

use mcpcore::client::{CallOptions, ClientError, ListKind};
use mcpcore::server::ItemKind;
use mcpcore::{handler_fn, HandlerError, RequestContext, Server};
use serde_json::{json, Value};
use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::{Arc, Mutex};

use crate::upstream::{Change, Upstream};

/// The four kinds, as the registry, the list call and the upstream capability name them, and
/// the field that is the registry key.
const KINDS: [(ItemKind, ListKind, &str, &str); 4] = [
    (ItemKind::Tool, ListKind::Tools, "tools", "name"),
    (ItemKind::Prompt, ListKind::Prompts, "prompts", "name"),
    (ItemKind::Resource, ListKind::Resources, "resources", "uri"),
    (
        ItemKind::ResourceTemplate,
        ListKind::ResourceTemplates,
        "resources",
        "uriTemplate",
    ),
];

/// How an upstream's items are named and filtered in front of it.
#[derive(Debug, Clone, Default)]
pub(crate) struct Naming {
    /// `{prefix}{separator}{name}` for tools, prompts and template names; none: as is.
    pub prefix: Option<String>,
    pub separator: String,
    /// Globs (`*`, `?`) over the upstream's own names (URIs for resources): only matching
    /// items when not empty, and never the ones `deny` matches.
    pub allow: Vec<String>,
    pub deny: Vec<String>,
    /// More rules for principals holding an OAuth scope: what a scope allows is visible to its
    /// holders even when `allow`/`deny` leave it out; what it denies is hidden from them.
    pub scopes: BTreeMap<String, Rule>,
}

/// The allow/deny globs of one scope.
#[derive(Debug, Clone, Default, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Rule {
    #[serde(default)]
    pub allow: Vec<String>,
    #[serde(default)]
    pub deny: Vec<String>,
}

fn any_glob(globs: &[String], name: &str) -> bool {
    globs.iter().any(|g| glob(g, name))
}

impl Naming {
    fn exposed(&self, name: &str) -> String {
        match &self.prefix {
            Some(p) => format!("{p}{}{name}", self.separator),
            None => name.to_owned(),
        }
    }

    /// The upstream's name of an exposed one, if it is this upstream's.
    fn original<'a>(&self, exposed: &'a str) -> Option<&'a str> {
        match &self.prefix {
            Some(p) => exposed
                .strip_prefix(p.as_str())?
                .strip_prefix(&self.separator),
            None => Some(exposed),
        }
    }

    /// What every client may see.
    fn admits_everyone(&self, name: &str) -> bool {
        (self.allow.is_empty() || any_glob(&self.allow, name)) && !any_glob(&self.deny, name)
    }

    /// What is served at all: what someone may see.
    fn admits(&self, name: &str) -> bool {
        self.admits_everyone(name) || self.scopes.values().any(|r| any_glob(&r.allow, name))
    }

    /// What a principal holding `held` scopes may see.
    fn visible(&self, name: &str, held: &[String]) -> bool {
        let rules: Vec<&Rule> = held.iter().filter_map(|s| self.scopes.get(s)).collect();
        (self.admits_everyone(name) || rules.iter().any(|r| any_glob(&r.allow, name)))
            && !rules.iter().any(|r| any_glob(&r.deny, name))
    }
}

/// `*` (any run) and `?` (any one character) glob match.
pub(crate) fn glob(pattern: &str, text: &str) -> bool {
    let (p, t): (Vec<char>, Vec<char>) = (pattern.chars().collect(), text.chars().collect());
    let (mut pi, mut ti, mut star, mut mark) = (0, 0, None, 0);
    while ti < t.len() {
        if pi < p.len() && (p[pi] == '?' || p[pi] == t[ti]) {
            pi += 1;
            ti += 1;
        } else if pi < p.len() && p[pi] == '*' {
            star = Some(pi);
            mark = ti;
            pi += 1;
        } else if let Some(s) = star {
            pi = s + 1;
            mark += 1;
            ti = mark;
        } else {
            return false;
        }
    }
    p[pi..].iter().all(|c| *c == '*')
}

/// One upstream in front of the server.
pub(crate) struct Member {
    pub name: String,
    pub up: Arc<Upstream>,
    pub naming: Naming,
    /// Each mirrored item (registry key → the definition registered), by kind.
    items: Mutex<HashMap<&'static str, HashMap<String, Value>>>,
    /// One refresh at a time (a burst of `list_changed` re-lists in order).
    turn: tokio::sync::Mutex<()>,
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

impl Member {
    pub fn new(name: String, up: Arc<Upstream>, naming: Naming) -> Arc<Self> {
        Arc::new(Self {
            name,
            up,
            naming,
            items: Mutex::new(HashMap::new()),
            turn: tokio::sync::Mutex::new(()),
        })
    }

    /// Re-list every kind the upstream offers; add what is new or changed, remove what it no
    /// longer has (everything, when it is down). Unchanged items are left alone, so clients
    /// hear of real changes only. Returns the capability names whose items changed.
    async fn refresh(&self, server: &Server) -> Result<HashSet<&'static str>, ClientError> {
        let _turn = self.turn.lock().await;
        let client = self.up.client().ok();
        let caps = client
            .as_ref()
            .and_then(|c| c.negotiated())
            .and_then(|n| n.raw.get("capabilities").cloned())
            .unwrap_or(Value::Null);
        let mut changed = HashSet::new();
        for (kind, list, cap, key) in KINDS {
            let name = list.items_key();
            let before = lock(&self.items).get(name).cloned().unwrap_or_default();
            let mut now = HashMap::new();
            if let (Some(client), Some(_)) = (&client, caps.get(cap)) {
                let listed = client.list_all_json(list, CallOptions::new()).await?;
                for item in listed
                    .get(name)
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                {
                    if let Some((k, def)) = self.expose(kind, key, item) {
                        now.insert(k, def);
                    }
                }
            }
            for (k, def) in &now {
                if before.get(k) == Some(def) {
                    continue;
                }
                let original = item_original(kind, &self.naming, k);
                let h = forwarder(&self.up, kind, original.to_owned());
                match server.add_json(kind, def.clone(), h) {
                    Ok(_) => {
                        changed.insert(cap);
                    }
                    Err(e) => eprintln!("mcpcore: not serving {name} {k:?} of {}: {e}", self.name),
                }
            }
            for gone in before.keys().filter(|k| !now.contains_key(*k)) {
                server.remove(kind, gone);
                changed.insert(cap);
            }
            lock(&self.items).insert(name, now);
        }
        Ok(changed)
    }

    /// An upstream item as served (renamed), with its registry key; `None` when filtered out.
    fn expose(&self, kind: ItemKind, key: &str, item: &Value) -> Option<(String, Value)> {
        let own = item.get(key).and_then(Value::as_str)?;
        if !self.naming.admits(filter_name(kind, own, item)) {
            return None;
        }
        let mut def = item.clone();
        if let Some(n) = item.get("name").and_then(Value::as_str) {
            def["name"] = json!(self.naming.exposed(n));
        }
        let k = match kind {
            ItemKind::Tool | ItemKind::Prompt => self.naming.exposed(own),
            _ => own.to_owned(),
        };
        Some((k, def))
    }

    /// Whether this member serves `key` of `kind`, and if so whether `held` scopes see it.
    fn shows(&self, kind: ItemKind, key: &str, held: &[String]) -> Option<bool> {
        let list = KINDS.iter().find(|k| k.0 == kind)?.1.items_key();
        let items = lock(&self.items);
        let def = items.get(list)?.get(key)?;
        let own = item_original(kind, &self.naming, key);
        Some(self.naming.visible(filter_name(kind, own, def), held))
    }

    /// Whether this member lists the resource `uri`.
    fn serves(&self, uri: &str) -> bool {
        lock(&self.items)
            .get("resources")
            .is_some_and(|m| m.contains_key(uri))
    }

    /// Whether this member serves the template `uri_template`.
    fn has_template(&self, uri_template: &str) -> bool {
        lock(&self.items)
            .get("resourceTemplates")
            .is_some_and(|m| m.contains_key(uri_template))
    }

    fn supports_completion(&self) -> bool {
        self.up
            .client()
            .ok()
            .and_then(|c| c.negotiated())
            .is_some_and(|n| n.raw.pointer("/capabilities/completions").is_some())
    }
}

/// The name allow/deny globs match: a tool's or prompt's own name, a resource's or template's
/// `name` (else its URI).
fn filter_name<'a>(kind: ItemKind, own: &'a str, item: &'a Value) -> &'a str {
    match kind {
        ItemKind::Tool | ItemKind::Prompt => own,
        _ => item.get("name").and_then(Value::as_str).unwrap_or(own),
    }
}

/// The upstream's key of a served item: names lose the prefix, URIs are the same.
fn item_original<'a>(kind: ItemKind, naming: &Naming, key: &'a str) -> &'a str {
    match kind {
        ItemKind::Tool | ItemKind::Prompt => naming.original(key).unwrap_or(key),
        _ => key,
    }
}

/// The handler of one served item: the call as the upstream names it.
fn forwarder(up: &Arc<Upstream>, kind: ItemKind, original: String) -> Arc<dyn mcpcore::Handler> {
    let up = up.clone();
    Arc::new(handler_fn(move |ctx: RequestContext, args: Value| {
        let (up, key) = (up.clone(), original.clone());
        async move {
            let (method, params) = match kind {
                ItemKind::Tool => ("tools/call", json!({"name": key, "arguments": args})),
                ItemKind::Prompt => ("prompts/get", json!({"name": key, "arguments": args})),
                _ => {
                    let uri = ctx.name().unwrap_or_default().to_owned();
                    ("resources/read", json!({ "uri": uri }))
                }
            };
            up.forward(ctx, method, params).await
        }
    }))
}

/// The members in front of one server.
pub(crate) struct Hub {
    pub server: Server,
    pub members: Vec<Arc<Member>>,
}

impl Hub {
    /// Fill the server from every member and follow their changes.
    pub async fn start(server: Server, members: Vec<Arc<Member>>) -> Arc<Self> {
        let hub = Arc::new(Self { server, members });
        for m in &hub.members {
            if let Err(e) = m.refresh(&hub.server).await {
                eprintln!("mcpcore: cannot list the items of {}: {e}", m.name);
            }
            let (weak, member) = (Arc::downgrade(&hub), m.clone());
            m.up.on_change(Arc::new(move |change: Change| {
                let (hub, member) = (weak.upgrade(), member.clone());
                if let Some(hub) = hub {
                    tokio::spawn(async move { hub.changed(&member, change).await });
                }
            }));
        }
        hub
    }

    async fn changed(&self, m: &Arc<Member>, change: Change) {
        match &change {
            Change::Updated(uri) => {
                self.server.notify_resource_updated(uri);
                return;
            }
            Change::Reconnected => m.up.subs.reopen(&m.up).await,
            _ => {}
        }
        match m.refresh(&self.server).await {
            Err(e) => eprintln!("mcpcore: cannot re-list the items of {}: {e}", m.name),
            // The upstream announced a change the lists do not show (or one already undone):
            // the clients hear of it all the same.
            Ok(changed) => {
                if let Change::Listed(kind) = change {
                    if !changed.contains(kind.as_str()) {
                        let _ = match kind.as_str() {
                            "tools" => self.server.notify_tools_list_changed(),
                            "prompts" => self.server.notify_prompts_list_changed(),
                            _ => self.server.notify_resources_list_changed(),
                        };
                    }
                }
            }
        }
    }

    /// `completion/complete`, sent to the member whose prompt or template it names.
    pub async fn complete(
        &self,
        ctx: RequestContext,
        params: Value,
    ) -> Result<mcpcore::Outcome, HandlerError> {
        let mut params = params;
        if let Some(m) = params.as_object_mut() {
            m.remove("_meta");
        }
        let r = &params["ref"];
        let target = match r.get("type").and_then(Value::as_str) {
            Some("ref/prompt") => {
                let name = r.get("name").and_then(Value::as_str).unwrap_or_default();
                self.members
                    .iter()
                    .find_map(|m| m.naming.original(name).map(|o| (m, Some(json!(o)))))
            }
            Some("ref/resource") => {
                let uri = r.get("uri").and_then(Value::as_str).unwrap_or_default();
                self.members
                    .iter()
                    .find(|m| m.has_template(uri))
                    .map(|m| (m, None))
            }
            _ => None,
        };
        let Some((member, rename)) = target else {
            return Err(HandlerError::invalid_params(
                "the reference names nothing served here",
            ));
        };
        if let Some(name) = rename {
            params["ref"]["name"] = name;
        }
        member.up.forward(ctx, "completion/complete", params).await
    }

    /// A client subscribes to `uri` (legacy `resources/subscribe`, or a 2026-07-28 listen
    /// stream's `resourceSubscriptions`): listen for its updates from
    /// the member serving it (else every member). An upstream that cannot is logged, never a
    /// failure of the client's subscription (the engine keeps it, SUB-07).
    pub async fn subscribe(&self, uri: &str, on: bool) {
        let owners: Vec<&Arc<Member>> = {
            let serving: Vec<&Arc<Member>> =
                self.members.iter().filter(|m| m.serves(uri)).collect();
            if serving.is_empty() {
                self.members.iter().collect()
            } else {
                serving
            }
        };
        for m in owners {
            if !on {
                m.up.subs.unsubscribe(uri).await;
            } else if let Err(e) = m.up.subs.subscribe(&m.up, uri).await {
                eprintln!("mcpcore: {} cannot subscribe to {uri}: {e}", m.name);
            }
        }
    }

    /// Whether the request's principal sees `key` of `kind` (`ServerBuilder::visibility`):
    /// the rules of the member serving it, with the principal's scopes.
    pub fn visible(
        &self,
        kind: ItemKind,
        key: &str,
        who: Option<&mcpcore::auth::Principal>,
    ) -> bool {
        let held = who.map(|p| p.scopes.as_slice()).unwrap_or_default();
        self.members
            .iter()
            .find_map(|m| m.shows(kind, key, held))
            // Not (yet) mirrored: hidden until its member's rules can say.
            .unwrap_or(false)
    }

    /// Whether any member has rules per scope (then lists differ between principals).
    pub fn scoped(members: &[Arc<Member>]) -> bool {
        members.iter().any(|m| !m.naming.scopes.is_empty())
    }

    /// Whether any member completes arguments.
    pub fn completes(members: &[Arc<Member>]) -> bool {
        members.iter().any(|m| m.supports_completion())
    }

    pub async fn close(&self) {
        for m in &self.members {
            m.up.close().await;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn globs() {
        assert!(glob("get-*", "get-sum"));
        assert!(glob("*", ""));
        assert!(glob("a?c", "abc"));
        assert!(!glob("a?c", "ac"));
        assert!(glob("*-env", "get-env"));
        assert!(!glob("get-*", "echo"));
        assert!(glob("*a*b*", "xxaYYbzz"));
    }

    #[test]
    fn names_are_prefixed_and_filtered() {
        let n = Naming {
            prefix: Some("ev".into()),
            separator: "__".into(),
            allow: vec!["get-*".into(), "echo".into()],
            deny: vec!["*-env".into()],
            scopes: BTreeMap::from([
                (
                    "ops".to_owned(),
                    Rule {
                        allow: vec!["*-env".into(), "add".into()],
                        deny: vec![],
                    },
                ),
                (
                    "guest".to_owned(),
                    Rule {
                        allow: vec![],
                        deny: vec!["get-*".into()],
                    },
                ),
            ]),
        };
        assert_eq!(n.exposed("echo"), "ev__echo");
        assert_eq!(n.original("ev__echo"), Some("echo"));
        assert_eq!(n.original("other__echo"), None);
        assert!(n.admits_everyone("echo") && n.admits_everyone("get-sum"));
        assert!(!n.admits_everyone("get-env") && !n.admits_everyone("add"));
        // Served because a scope allows them; seen only by its holders.
        assert!(n.admits("get-env") && n.admits("add") && !n.admits("other"));
        assert!(!n.visible("get-env", &[]) && !n.visible("add", &["guest".into()]));
        assert!(n.visible("get-env", &["ops".into()]) && n.visible("add", &["ops".into()]));
        // A scope's deny hides from its holders what everyone else sees.
        assert!(n.visible("get-sum", &[]) && !n.visible("get-sum", &["guest".into()]));
        assert!(!n.visible("get-sum", &["ops".into(), "guest".into()]));
        assert!(n.visible("echo", &["unknown-scope".into()]));
    }
}
