//! `wait_for_change` of [`super::RedisTaskStore`]: woken by the change channel (any worker's
//! update publishes the task id), with a bounded re-read so a lost message only delays a waiter.

use std::time::Duration;
use tokio::sync::broadcast::error::RecvError;
use tokio::time::Instant;

use super::Inner;
use crate::tasks::{now_ms, TaskRecord, TaskStoreError};

impl Inner {
    pub(super) async fn wait_for_change(
        &self,
        task_id: &str,
        seen: u64,
    ) -> Result<TaskRecord, TaskStoreError> {
        // Listen before reading, so a change between the read and the wait is not missed.
        let mut rx = self.changes.subscribe();
        loop {
            let rec = self.get(task_id).await?;
            if rec.version != seen {
                return Ok(rec);
            }
            // Wake at the TTL at the latest, so a waiter learns of the expiry (NotFound).
            let mut nap = self.opts.recheck_interval;
            if let Some(e) = rec.expires_at_ms() {
                nap = nap.min(Duration::from_millis(
                    e.saturating_sub(now_ms()).saturating_add(1),
                ));
            }
            let deadline = Instant::now() + nap;
            loop {
                match tokio::time::timeout_at(deadline, rx.recv()).await {
                    Ok(Ok(id)) if id != task_id && !id.is_empty() => continue,
                    // This task changed, the connection dropped (messages may be lost), this
                    // waiter fell behind, or the bound ran out: re-read.
                    Ok(Ok(_) | Err(RecvError::Lagged(_))) | Err(_) => break,
                    Ok(Err(RecvError::Closed)) => {
                        tokio::time::sleep_until(deadline).await;
                        break;
                    }
                }
            }
        }
    }
}
