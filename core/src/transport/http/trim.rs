//! Giving large freed buffers back to the operating system.
//!
//! A 4 MiB request body or answer is one allocation. glibc serves the first such allocation
//! with `mmap` and returns it on free, but that free raises its mmap threshold to the freed
//! size, so every later one comes from a heap arena and stays with the process when freed. A
//! server that was once sent a hundred 4 MiB calls by clients that never read their answers
//! (each cut off by the write-stall deadline) kept about 600 MB after the cut-offs, against
//! 24 MB idle: retained by the allocator, not live.
//!
//! Core counts the large messages answered and, once they add up to [`TRIM_AFTER_BYTES`] since
//! the last trim, runs the process's trim function on the blocking pool a second later (frees
//! meanwhile coalesce into it). The allocator belongs to the process, not to this library, and
//! this crate has no `unsafe`: the program installs the function with [`set_memory_trim`]
//! (glibc's `malloc_trim(0)`; `demo-server` and the `mcpcore` command do). Without one nothing
//! runs.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::OnceLock;
use std::time::Duration;

/// Bytes of large messages (requests and answers) that add up to a trim.
pub const TRIM_AFTER_BYTES: usize = 8 << 20;
/// Messages below this never count: small ones come from the allocator's caches.
const LARGE: usize = 256 << 10;
/// Frees that follow a burst are coalesced into one trim this long after its first.
const DELAY: Duration = Duration::from_secs(1);

static RELEASED: AtomicUsize = AtomicUsize::new(0);
static SCHEDULED: AtomicBool = AtomicBool::new(false);
static TRIM: OnceLock<fn()> = OnceLock::new();

/// Install the function that gives freed memory back to the operating system (once per
/// process; later calls are ignored). On glibc: `|| unsafe { libc::malloc_trim(0); }`.
pub fn set_memory_trim(trim: fn()) {
    let _ = TRIM.set(trim);
}

/// `bytes` when they count towards a trim (large, and a trim function installed), else 0.
pub(crate) fn large(bytes: u64) -> usize {
    match usize::try_from(bytes) {
        Ok(n) if n >= LARGE && TRIM.get().is_some() => n,
        Ok(_) => 0,
        Err(_) => usize::MAX,
    }
}

/// Messages of `bytes` (as counted by [`large`]) were, or are about to be, freed.
pub(crate) fn released(bytes: usize) {
    let Some(&trim) = TRIM.get() else { return };
    if bytes < LARGE {
        return;
    }
    let total = RELEASED.fetch_add(bytes, Ordering::Relaxed) + bytes;
    if total < TRIM_AFTER_BYTES || SCHEDULED.swap(true, Ordering::AcqRel) {
        return;
    }
    let Ok(rt) = tokio::runtime::Handle::try_current() else {
        SCHEDULED.store(false, Ordering::Release);
        return;
    };
    rt.spawn(async move {
        loop {
            tokio::time::sleep(DELAY).await;
            RELEASED.store(0, Ordering::Relaxed);
            let _ = tokio::task::spawn_blocking(trim).await;
            SCHEDULED.store(false, Ordering::Release);
            // Frees counted while this trim ran found it scheduled: trim again if they add up.
            if RELEASED.load(Ordering::Relaxed) < TRIM_AFTER_BYTES
                || SCHEDULED.swap(true, Ordering::AcqRel)
            {
                break;
            }
        }
    });
}
