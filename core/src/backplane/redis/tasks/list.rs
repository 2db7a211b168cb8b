//! `list` of [`super::RedisTaskStore`]: legacy `tasks/list` pages (TASK-L01), oldest first, by
//! era and owner, with the last member as the opaque cursor (the in-process store's order).

use super::{id_of_member, parse, Inner, LIST_SCAN_MAX, MAX_CURSOR_LEN};
use crate::tasks::{now_ms, TaskPage, TaskRecord, TaskStoreError};

/// A cursor minted by [`Inner::list`]: `{created:020}:{id}`. Anything else restarts the listing
/// (as an unknown cursor does in the in-process store).
fn valid_cursor(c: &str) -> bool {
    c.len() <= MAX_CURSOR_LEN
        && c.len() > 21
        && c.as_bytes()[..20].iter().all(u8::is_ascii_digit)
        && c.as_bytes()[20] == b':'
}

impl Inner {
    pub(super) async fn list(
        &self,
        owner: Option<&str>,
        legacy: bool,
        cursor: Option<String>,
        limit: usize,
    ) -> Result<TaskPage, TaskStoreError> {
        let limit = limit.max(1);
        let key = self.keys.list(legacy, owner);
        let mut from = match cursor {
            Some(c) if valid_cursor(&c) => format!("({c}"),
            _ => "-".to_owned(),
        };
        let mut page: Vec<(String, TaskRecord)> = Vec::new();
        let mut scanned = 0usize;
        let mut more = false;
        // Read one more live record than the page holds, to know whether a next page exists;
        // entries whose record Redis already expired are skipped (and dropped from the index).
        while page.len() <= limit {
            let want = limit + 1 - page.len();
            let members = self.members_after(&key, &from, want).await?;
            let Some(last) = members.last() else { break };
            from = format!("({last}");
            scanned += members.len();
            let full_batch = members.len() == want;
            self.resolve(&key, members, &mut page).await?;
            if !full_batch {
                break;
            }
            if scanned >= LIST_SCAN_MAX && page.len() <= limit {
                // A long run of dead entries: hand back a short page and resume after them.
                more = true;
                break;
            }
        }
        let next = if page.len() > limit {
            page.truncate(limit);
            page.last().map(|(m, _)| m.clone())
        } else if more {
            from.get(1..).map(str::to_owned)
        } else {
            None
        };
        Ok((page.into_iter().map(|(_, r)| r).collect(), next))
    }

    async fn members_after(
        &self,
        key: &str,
        from: &str,
        n: usize,
    ) -> Result<Vec<String>, TaskStoreError> {
        self.run("list", |mut c| async move {
            redis::cmd("ZRANGEBYLEX")
                .arg(key)
                .arg(from)
                .arg("+")
                .arg("LIMIT")
                .arg(0)
                .arg(n)
                .query_async(&mut c)
                .await
        })
        .await
    }

    /// Read the records of `members`; live ones go to `page`, gone ones leave the index.
    async fn resolve(
        &self,
        key: &str,
        members: Vec<String>,
        page: &mut Vec<(String, TaskRecord)>,
    ) -> Result<(), TaskStoreError> {
        let mut pipe = redis::pipe();
        for m in &members {
            pipe.cmd("HMGET")
                .arg(self.keys.record(id_of_member(m)))
                .arg("v")
                .arg("j");
        }
        let rows: Vec<(Option<u64>, Option<String>)> = self
            .run(
                "list",
                |mut c| async move { pipe.query_async(&mut c).await },
            )
            .await?;
        let now = now_ms();
        let mut gone = Vec::new();
        for (m, row) in members.into_iter().zip(rows) {
            match row {
                (Some(v), Some(j)) => {
                    let mut r = parse(&j)?;
                    r.version = v;
                    // An expired record still held (clock skew with Redis) is skipped; the
                    // next reap drops it.
                    if !r.is_expired(now) {
                        page.push((m, r));
                    }
                }
                _ => gone.push(m),
            }
        }
        if gone.is_empty() {
            return Ok(());
        }
        let mut inv = self.forget.prepare_invoke();
        inv.key(key).key(&self.keys.all).key(&self.keys.where_);
        for m in &gone {
            inv.arg(m).arg(id_of_member(m));
        }
        self.run("list", |mut c| async move {
            inv.invoke_async::<i64>(&mut c).await
        })
        .await
        .map(|_| ())
    }
}
