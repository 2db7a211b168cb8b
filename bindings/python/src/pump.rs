//! `NativePump`: a stdio connection served from the asyncio loop's own thread through core's
//! [`StdioPump`] (framing and dispatch stay in core, STDIO-01…04).
//!
//! Why: served on core's runtime, an `async def` call crosses threads twice on its way
//! (runtime reader → the loop's thread for the coroutine → runtime writer), each crossing a
//! wake-up of a sleeping thread. Here the loop's thread reads the input itself and hands it to
//! [`NativePump::feed`]; a request is started and polled once right there, and an `async def`
//! handler is started as a task on the spot ([`pumping`] tells `crate::handler` so). A handler
//! that finishes without waiting (3.12+ starts tasks eagerly) is answered within the same
//! `feed` call, with no thread hand-off at all. A request that waits (a task that awaits, a
//! plain `def` on a blocking thread, a server→client request) continues on core's runtime; its
//! answer is queued and the loop is woken through a socket it watches (one byte, written
//! without the interpreter lock), and then takes it with [`NativePump::take`].

use std::cell::Cell;
use std::io::Write;
use std::sync::{Arc, Mutex, Weak};

use mcpcore::transport::stdio_pump::{Fed, StdioPump};
use mcpcore::Server;
use pyo3::exceptions::{PyOSError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyBytes;

use crate::bridge;
use crate::handler::Loop;
use crate::inbox::{read_wakeups, wake_pair};

thread_local! {
    /// The loop whose pump is feeding on this thread, else null: its `async def` calls start
    /// here, on the loop's thread, with the interpreter lock held.
    static PUMPING: Cell<*const Loop> = const { Cell::new(std::ptr::null()) };
}

/// True while this thread is inside a `feed` of a pump serving `lp`'s handlers.
pub(crate) fn pumping(lp: &Arc<Loop>) -> bool {
    PUMPING.with(|p| std::ptr::eq(p.get(), Arc::as_ptr(lp)))
}

/// Marks this thread as feeding for `lp` until dropped (restoring what was there: a feed may
/// run inside another server's handler).
struct Feeding(*const Loop);

impl Feeding {
    fn enter(lp: &Weak<Loop>) -> Self {
        Self(PUMPING.with(|p| p.replace(Weak::as_ptr(lp))))
    }
}

impl Drop for Feeding {
    fn drop(&mut self) {
        PUMPING.with(|p| p.set(self.0));
    }
}

/// One stdio connection served from the loop's thread (driven by `mcpcore._pump`).
#[pyclass(module = "mcpcore._native", frozen)]
pub struct NativePump {
    pump: Arc<StdioPump>,
    /// The loop this server's handlers run on (compared, never upgraded: the pump does not keep
    /// the server's Python objects alive).
    owner: Weak<Loop>,
    /// The watched end of the wake-up socket (owned by the Python side).
    fd: i64,
    /// Why the connection ended early (a frame over the size cap).
    failed: Mutex<Option<String>>,
}

impl NativePump {
    /// A pump for a new connection of `server` and the descriptor of the socket that wakes the
    /// loop when output is waiting (non-blocking, owned by the caller from now on).
    pub fn open(server: &Server, owner: &Arc<Loop>) -> PyResult<(Self, i64)> {
        let (wake, fd) = wake_pair().map_err(|e| PyOSError::new_err(e.to_string()))?;
        // A full socket already holds a wake-up the loop has not read: nothing is lost.
        let notify = Box::new(move || {
            let _ = (&wake).write(&[1]);
        });
        let _rt = bridge::runtime()?.handle().enter();
        // Local: a request that waits is polled again on the loop's thread once woken, so an
        // answer a task gave there is written without a round through a runtime thread.
        let pump = StdioPump::new(server, notify)
            .map(StdioPump::local)
            .map_err(|e| {
                #[cfg(unix)]
                close_fd(fd);
                PyValueError::new_err(e.to_string())
            })?;
        let pump = Self {
            pump: Arc::new(pump),
            owner: Arc::downgrade(owner),
            fd,
            failed: Mutex::new(None),
        };
        Ok((pump, fd))
    }

    fn fed<'py>(&self, py: Python<'py>, fed: Fed) -> Option<Bound<'py, PyBytes>> {
        let out = self.record(fed);
        (!out.is_empty()).then(|| PyBytes::new(py, &out))
    }

    /// Keep why the connection must end, if it must; the output.
    fn record(&self, fed: Fed) -> Vec<u8> {
        if let Err(e) = fed.result {
            *self.failed.lock().unwrap_or_else(|p| p.into_inner()) = Some(e.to_string());
        }
        fed.output
    }

    fn run<'py>(
        &self,
        py: Python<'py>,
        f: impl FnOnce(&StdioPump) -> Fed,
    ) -> PyResult<Option<Bound<'py, PyBytes>>> {
        let _rt = bridge::runtime()?.handle().enter();
        let fed = {
            let _feeding = Feeding::enter(&self.owner);
            f(&self.pump)
        };
        Ok(self.fed(py, fed))
    }
}

/// Write as much of `buf` to the non-blocking `fd` as it takes now; how much it took (less on a
/// full pipe or an error, which the caller's transport then meets and reports).
#[cfg(unix)]
fn write_some(fd: i32, mut buf: &[u8]) -> usize {
    use std::os::fd::FromRawFd;
    let total = buf.len();
    // SAFETY: the caller's transport owns `fd` and keeps it open while it calls here;
    // `ManuallyDrop` never closes it.
    let mut out = std::mem::ManuallyDrop::new(unsafe { std::fs::File::from_raw_fd(fd) });
    while !buf.is_empty() {
        match out.write(buf) {
            Ok(0) => break,
            Ok(n) => buf = &buf[n..],
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(_) => break,
        }
    }
    total - buf.len()
}

#[cfg(not(unix))]
fn write_some(_fd: i32, _buf: &[u8]) -> usize {
    0
}

#[cfg(unix)]
fn close_fd(fd: i64) {
    use std::os::fd::FromRawFd;
    if let Ok(fd) = i32::try_from(fd) {
        // SAFETY: `fd` was just made by `into_raw_fd` and handed to nobody.
        drop(unsafe { std::os::fd::OwnedFd::from_raw_fd(fd) });
    }
}

#[pymethods]
impl NativePump {
    /// Bytes read from the input: every complete frame is handled; returns what to write now,
    /// or `None`.
    fn feed<'py>(&self, py: Python<'py>, data: &[u8]) -> PyResult<Option<Bound<'py, PyBytes>>> {
        self.run(py, |p| p.feed(data))
    }

    /// The input ended: a last frame without a newline is handled; returns what to write.
    fn end<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyBytes>>> {
        self.run(py, StdioPump::feed_eof)
    }

    /// Poll this process's stdin for the next request for up to the server's
    /// `stdioIdleSpinUs` (core's `StdioPump::spin`; the interpreter lock is released while it
    /// polls): what to write when input arrived (possibly empty bytes), `None` when none did.
    fn spin<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyBytes>>> {
        let _rt = bridge::runtime()?.handle().enter();
        let owner = self.owner.clone();
        let pump = self.pump.clone();
        let fed = py.detach(move || {
            let _feeding = Feeding::enter(&owner);
            pump.spin()
        });
        Ok(fed.map(|fed| self.fed(py, fed).unwrap_or_else(|| PyBytes::new(py, b""))))
    }

    /// `feed`, then the answers written straight to `out_fd` (a non-blocking pipe whose
    /// transport holds nothing, so nothing overtakes what it queued) and, while each answer
    /// left whole, up to `turns` more requests polled from stdin (`spin`) and answered the
    /// same way, with the interpreter lock released from the write to the end of the poll.
    /// The per-request Python of the plain loop (`feed`/`spin`, the transport's `write`) is
    /// most of what an `async def` over stdio costs beyond its task. Returns the bytes not
    /// written (the pipe was full, or the write failed: the transport takes them and reports
    /// what went wrong), or `None`.
    fn turn<'py>(
        &self,
        py: Python<'py>,
        data: &[u8],
        out_fd: i32,
        turns: u32,
    ) -> PyResult<Option<Bound<'py, PyBytes>>> {
        let _rt = bridge::runtime()?.handle().enter();
        let mut fed = {
            let _feeding = Feeding::enter(&self.owner);
            self.pump.feed(data)
        };
        let mut left = turns;
        loop {
            let out = self.record(fed);
            if out.is_empty() {
                return Ok(None);
            }
            let spin = left > 0
                && self
                    .failed
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .is_none();
            left = left.saturating_sub(1);
            let owner = &self.owner;
            let pump = &self.pump;
            let (written, next) = py.detach(|| {
                let written = write_some(out_fd, &out);
                let next = (spin && written == out.len()).then(|| {
                    let _feeding = Feeding::enter(owner);
                    pump.spin()
                });
                (written, next.flatten())
            });
            if written < out.len() {
                return Ok(Some(PyBytes::new(py, &out[written..])));
            }
            match next {
                Some(f) => fed = f,
                None => return Ok(None),
            }
        }
    }

    /// After a wake-up: read the wake-up bytes, poll the requests that were woken, and return
    /// the output queued since, or `None`.
    fn take<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyBytes>>> {
        read_wakeups(self.fd);
        let _rt = bridge::runtime()?.handle().enter();
        let out = {
            let _feeding = Feeding::enter(&self.owner);
            self.pump.take_output()
        };
        Ok((!out.is_empty()).then(|| PyBytes::new(py, &out)))
    }

    /// Why the connection must end (a frame crossed the size cap), or `None`.
    #[getter]
    fn failed(&self) -> Option<String> {
        self.failed
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    /// Stop reading and let the requests in flight finish (STDIO-04; at once when
    /// `stdout_gone`); an awaitable. Take the remaining output afterwards.
    fn drain<'py>(&self, py: Python<'py>, stdout_gone: bool) -> PyResult<Bound<'py, PyAny>> {
        let pump = self.pump.clone();
        bridge::awaitable(py, async move {
            pump.drain(stdout_gone).await;
            Ok(())
        })
    }
}
