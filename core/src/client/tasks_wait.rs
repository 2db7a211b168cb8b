//! Following a task to its end (REQUIREMENTS TASK-L01, TASK-M03, TASK-M04): poll `tasks/get`
//! honouring the server's `pollIntervalMs` (bounded below and above by the caller), or follow
//! pushes (modern `notifications/tasks` on a `subscriptions/listen` stream with `taskIds`;
//! legacy `notifications/tasks/status`) with a slow poll as the safety net.
//!
//! `input_required` is answered with the handlers registered for sampling, elicitation and
//! roots, the same ones that fulfil `input_required` results (MRTR): modern tasks list their
//! `inputRequests`, answered once per key with `tasks/update`; legacy servers send ordinary
//! server→client requests while the client waits in `tasks/result`, which the registered
//! handlers already answer.

use serde::{Deserialize, Serialize};
use serde_json::{json, Map, Value};
use std::collections::HashSet;
use std::time::Duration;

use super::listen::{Subscription, LISTEN_QUEUE};
use super::listen_legacy::LegacyFilter;
use super::tasks::{failed, TaskCallOptions, TaskCallOutcome, TaskInfo, TaskStatus};
use super::{CallOptions, Client, ClientError};
use crate::protocol::CallToolResult;

/// Default wait between polls when the server suggests none.
pub const DEFAULT_TASK_POLL_INTERVAL: Duration = Duration::from_millis(500);
/// Default shortest wait between polls (a server suggesting 0 ms cannot make the client spin).
pub const DEFAULT_TASK_MIN_POLL_INTERVAL: Duration = Duration::from_millis(20);
/// Default longest wait between polls (also the safety-net poll while following pushes).
pub const DEFAULT_TASK_MAX_POLL_INTERVAL: Duration = Duration::from_secs(5);

/// How [`Client::wait_task`] follows a task.
///
/// JSON shape (C ABI, bindings; see [`crate::options`]): `pollIntervalMs`, `minPollIntervalMs`,
/// `maxPollIntervalMs`, `timeoutMs` (`0` or `null` = none), `followPushes`. The per-request
/// options ([`TaskWaitOptions::call`]) have no JSON form here.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields, default)]
#[non_exhaustive]
pub struct TaskWaitOptions {
    /// Wait between polls when the server suggests no `pollIntervalMs` (default 500 ms).
    #[serde(rename = "pollIntervalMs", with = "crate::options::millis")]
    pub poll_interval: Duration,
    /// Shortest wait between polls, whatever the server suggests (default 20 ms).
    #[serde(rename = "minPollIntervalMs", with = "crate::options::millis")]
    pub min_poll_interval: Duration,
    /// Longest wait between polls, whatever the server suggests (default 5 s).
    #[serde(rename = "maxPollIntervalMs", with = "crate::options::millis")]
    pub max_poll_interval: Duration,
    /// Give up waiting after this long with [`ClientError::Timeout`] (default none). The task
    /// itself goes on; cancel it with [`Client::cancel_task`].
    #[serde(rename = "timeoutMs", with = "crate::options::opt_millis")]
    pub timeout: Option<Duration>,
    /// Follow pushes on a listen stream (modern) or the session's status notifications
    /// (legacy), polling only as a safety net (default off: poll).
    pub follow_pushes: bool,
    /// Options of every request the wait sends (timeout per request, `_meta`, log level); its
    /// cancellation token ends the wait with [`ClientError::Cancelled`].
    #[serde(skip)]
    pub call: CallOptions,
}

impl Default for TaskWaitOptions {
    fn default() -> Self {
        Self {
            poll_interval: DEFAULT_TASK_POLL_INTERVAL,
            min_poll_interval: DEFAULT_TASK_MIN_POLL_INTERVAL,
            max_poll_interval: DEFAULT_TASK_MAX_POLL_INTERVAL,
            timeout: None,
            follow_pushes: false,
            call: CallOptions::default(),
        }
    }
}

impl crate::options::JsonOptions for TaskWaitOptions {
    fn check(&self) -> Result<(), crate::options::OptionsError> {
        if self.min_poll_interval > self.max_poll_interval || self.max_poll_interval.is_zero() {
            return Err(crate::options::OptionsError::Range(
                "minPollIntervalMs must not exceed maxPollIntervalMs, which must be positive"
                    .into(),
            ));
        }
        Ok(())
    }
    fn keep_unrepresented(&mut self, from: &Self) {
        self.call = from.call.clone();
    }
}

impl TaskWaitOptions {
    /// Default options.
    pub fn new() -> Self {
        Self::default()
    }
    /// Give up waiting after `t`.
    #[must_use]
    pub fn timeout(mut self, t: Duration) -> Self {
        self.timeout = Some(t);
        self
    }
    /// Bound the wait between polls to `[min, max]` (the server's suggestion is clamped).
    #[must_use]
    pub fn poll_bounds(mut self, min: Duration, max: Duration) -> Self {
        self.min_poll_interval = min;
        self.max_poll_interval = max;
        self
    }
    /// Wait this long between polls when the server suggests nothing.
    #[must_use]
    pub fn poll_interval(mut self, d: Duration) -> Self {
        self.poll_interval = d;
        self
    }
    /// Follow pushes instead of polling at the server's pace.
    #[must_use]
    pub fn follow_pushes(mut self, on: bool) -> Self {
        self.follow_pushes = on;
        self
    }
    /// Options of every request the wait sends.
    #[must_use]
    pub fn call(mut self, call: CallOptions) -> Self {
        self.call = call;
        self
    }

    /// The wait before the next poll: the server's suggestion clamped to the bounds.
    fn interval(&self, suggested_ms: Option<u64>) -> Duration {
        suggested_ms
            .map_or(self.poll_interval, Duration::from_millis)
            .max(self.min_poll_interval)
            .min(self.max_poll_interval)
    }
}

/// Push notifications about one task.
struct Pushes {
    sub: Subscription,
    method: &'static str,
}

impl Pushes {
    /// The next state of `task_id` pushed, `None` once the stream ended.
    async fn next(&mut self, task_id: &str) -> Option<Result<TaskInfo, ClientError>> {
        loop {
            let n = self.sub.next().await?;
            if n.get("method").and_then(Value::as_str) != Some(self.method) {
                continue;
            }
            let params = n.get("params").cloned().unwrap_or_else(|| json!({}));
            match TaskInfo::parse(&params) {
                Ok(t) if t.task_id != task_id => continue,
                other => return Some(other),
            }
        }
    }
}

impl Client {
    /// Wait until the task is terminal and return its last state; `input_required` is answered
    /// through the registered handlers.
    ///
    /// # Errors
    /// [`ClientError::Timeout`] after [`TaskWaitOptions::timeout`], [`ClientError::Cancelled`]
    /// when its token is cancelled (the task goes on in both cases),
    /// [`ClientError::InputRequired`] (the task's raw state) when no handler can answer what
    /// the task needs, [`ClientError::Protocol`] for a malformed task; see [`ClientError`].
    pub async fn wait_task(
        &self,
        task_id: &str,
        opts: TaskWaitOptions,
    ) -> Result<TaskInfo, ClientError> {
        let cancel = opts.call.cancel.clone().unwrap_or_default();
        let wait = async {
            match opts.timeout {
                Some(t) => tokio::time::timeout(t, self.wait_loop(task_id, &opts))
                    .await
                    .map_err(|_| ClientError::Timeout)?,
                None => self.wait_loop(task_id, &opts).await,
            }
        };
        tokio::select! {
            r = wait => r,
            () = cancel.cancelled() => Err(ClientError::Cancelled),
        }
    }

    async fn wait_loop(
        &self,
        task_id: &str,
        opts: &TaskWaitOptions,
    ) -> Result<TaskInfo, ClientError> {
        let mut pushes = if opts.follow_pushes {
            self.task_pushes(task_id, &opts.call).await
        } else {
            None
        };
        let mut answered = HashSet::new();
        let mut info = self.get_task_with(task_id, opts.call.clone()).await?;
        let out = loop {
            if info.status.is_terminal() {
                break Ok(info);
            }
            if info.status == TaskStatus::InputRequired {
                if let Err(e) = self.task_input(&mut info, &mut answered, &opts.call).await {
                    break Err(e);
                }
                if info.status.is_terminal() {
                    continue;
                }
            }
            let next = match pushes.as_mut() {
                Some(p) => {
                    tokio::select! {
                        n = p.next(task_id) => match n {
                            Some(r) => r,
                            None => {
                                // The stream ended: poll from now on.
                                pushes = None;
                                self.get_task_with(task_id, opts.call.clone()).await
                            }
                        },
                        () = tokio::time::sleep(opts.max_poll_interval) => {
                            self.get_task_with(task_id, opts.call.clone()).await
                        }
                    }
                }
                None => {
                    tokio::time::sleep(opts.interval(info.poll_interval_ms)).await;
                    self.get_task_with(task_id, opts.call.clone()).await
                }
            };
            match next {
                Ok(n) => info = n,
                Err(e) => break Err(e),
            }
        };
        if let Some(p) = pushes {
            p.sub.close().await;
        }
        out
    }

    /// Open the push stream for `task_id`; `None` (poll instead) when the server has none.
    async fn task_pushes(&self, task_id: &str, call: &CallOptions) -> Option<Pushes> {
        if !self.is_modern() {
            let peer = self.inner.peer.clone();
            let id = peer.next_id();
            let (tx, rx) = tokio::sync::mpsc::channel(LISTEN_QUEUE);
            let method = "notifications/tasks/status";
            peer.add_legacy_listen(id.clone(), LegacyFilter::methods(&[method]), tx);
            let sub = Subscription::legacy(id, json!({}), rx, Vec::new(), self.clone());
            return Some(Pushes { sub, method });
        }
        // TASK-M04: the listen request opts into the extension too.
        match self
            .listen_with(json!({"taskIds": [task_id]}), self.task_opts(call))
            .await
        {
            Ok(sub) => Some(Pushes {
                sub,
                method: "notifications/tasks",
            }),
            Err(e) => {
                tracing::debug!(error = %e, task_id, "no task push stream; polling instead");
                None
            }
        }
    }

    /// Answer a task's `input_required` (see the [module docs](self)); `info` becomes the
    /// task's latest state when it had to be read again.
    async fn task_input(
        &self,
        info: &mut TaskInfo,
        answered: &mut HashSet<String>,
        call: &CallOptions,
    ) -> Result<(), ClientError> {
        if !self.is_modern() {
            // Legacy: the server asks through server→client requests, delivered while the
            // client waits in tasks/result (on HTTP, on that request's stream).
            match self.task_result_with(&info.task_id, call.clone()).await {
                Ok(_) | Err(ClientError::Rpc(_)) | Err(ClientError::Protocol(_)) => {}
                Err(e) => return Err(e),
            }
            *info = self.get_task_with(&info.task_id, call.clone()).await?;
            return Ok(());
        }
        if info.input_requests.is_none() {
            // A push may carry the status without the requests: read them.
            *info = self.get_task_with(&info.task_id, call.clone()).await?;
            if info.status != TaskStatus::InputRequired {
                return Ok(());
            }
        }
        let requests = info.input_requests.clone().unwrap_or_default();
        let pending: Vec<(String, Value)> = requests
            .into_iter()
            .filter(|(k, _)| !answered.contains(k))
            .collect();
        if pending.is_empty() {
            return Ok(());
        }
        // Keys are unique for the task's lifetime (TASK-M03): a bound on how many are answered
        // keeps a server from asking for ever.
        let max = self
            .inner
            .options
            .max_mrtr_rounds
            .saturating_mul(16)
            .max(16);
        if answered.len() + pending.len() > max {
            return Err(ClientError::Protocol(format!(
                "task {} asked for more than {max} inputs; giving up",
                info.task_id
            )));
        }
        let callbacks = &self.inner.peer.callbacks;
        let fulfillable = pending.iter().all(|(_, q)| {
            q.get("method")
                .and_then(Value::as_str)
                .is_some_and(|m| callbacks.handler(m).is_some())
        });
        if !fulfillable {
            return Err(ClientError::InputRequired(info.raw.clone()));
        }
        let mut responses = Map::new();
        for (key, q) in pending {
            let m = q.get("method").and_then(Value::as_str).unwrap_or_default();
            let p = q.get("params").cloned().unwrap_or_else(|| json!({}));
            let answer = callbacks.answer(m, p).await.map_err(ClientError::Rpc)?;
            answered.insert(key.clone());
            responses.insert(key, answer);
        }
        self.update_task_with(&info.task_id, responses, call.clone())
            .await
    }

    /// Call a tool as a task and follow it to its result: a synchronous answer is returned at
    /// once; a task is waited for ([`Client::wait_task`]) and its result read (legacy
    /// `tasks/result`; modern the completed task's `result`).
    ///
    /// # Errors
    /// As [`Client::call_tool_as_task`] and [`Client::wait_task`]; a failed task ends in its
    /// error ([`ClientError::Rpc`] when it carries a JSON-RPC error), a cancelled one in a
    /// [`ClientError::Protocol`] saying so.
    pub async fn call_tool_to_completion(
        &self,
        name: &str,
        arguments: Value,
        call: TaskCallOptions,
        wait: TaskWaitOptions,
    ) -> Result<CallToolResult, ClientError> {
        let info = match self.call_tool_as_task(name, arguments, call).await? {
            TaskCallOutcome::Completed(r) => return Ok(r),
            TaskCallOutcome::Task(info) if info.status.is_terminal() => info,
            TaskCallOutcome::Task(info) => self.wait_task(&info.task_id, wait.clone()).await?,
        };
        if self.is_modern() {
            let info = if info.status == TaskStatus::Completed && info.result.is_none() {
                // A push or the creation answer may omit the result: read it.
                self.get_task_with(&info.task_id, wait.call.clone()).await?
            } else {
                info
            };
            return self.terminal_result(&info);
        }
        match info.status {
            TaskStatus::Cancelled => Err(ClientError::Protocol(format!(
                "task {} was cancelled",
                info.task_id
            ))),
            // A failed legacy task's error is what tasks/result answers.
            _ => match self.task_result_with(&info.task_id, wait.call).await {
                Err(ClientError::Protocol(_)) if info.status == TaskStatus::Failed => {
                    Err(failed(&info))
                }
                r => r,
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::options::apply_json;

    #[test]
    fn the_server_interval_is_clamped() {
        let o = TaskWaitOptions::new()
            .poll_bounds(Duration::from_millis(10), Duration::from_millis(100))
            .poll_interval(Duration::from_millis(40));
        assert_eq!(o.interval(None), Duration::from_millis(40));
        assert_eq!(o.interval(Some(0)), Duration::from_millis(10));
        assert_eq!(o.interval(Some(70)), Duration::from_millis(70));
        assert_eq!(o.interval(Some(u64::MAX)), Duration::from_millis(100));
    }

    #[test]
    fn wait_options_json_shape() {
        let mut o = TaskWaitOptions::new();
        apply_json(
            &mut o,
            &json!({"pollIntervalMs": 30, "minPollIntervalMs": 5, "maxPollIntervalMs": 60,
                "timeoutMs": 1000, "followPushes": true}),
        )
        .expect("applies");
        assert_eq!(o.timeout, Some(Duration::from_millis(1000)));
        assert!(o.follow_pushes);
        assert!(apply_json(&mut o, &json!({"minPollIntervalMs": 100})).is_err());
        assert!(apply_json(&mut o, &json!({"nope": 1})).is_err());
        assert_eq!(o.min_poll_interval, Duration::from_millis(5), "unchanged");
    }
}
