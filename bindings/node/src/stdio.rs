//! `NativeStdioPump`: stdio served from the JavaScript thread through core's
//! [`StdioPump`]. `lib/server.js` reads `process.stdin`, hands each chunk to `feed` and writes
//! what comes back to `process.stdout`; core frames and dispatches (every protocol rule stays
//! there). While `feed` runs, a handler registered with a direct function is called right here
//! on this thread ([`call_direct`]): a synchronous JavaScript handler is answered within the
//! same `feed` call, with no thread hand-off. A handler that returns a Promise continues on
//! core's runtime, which tells this side through the `wake` callback when output is waiting.

use std::cell::Cell;
use std::ptr;
use std::sync::Mutex;

use mcpcore::transport::stdio_pump::StdioPump;
use mcpcore::ErrorKind;
use napi::bindgen_prelude::{Buffer, FnArgs, FromNapiValue, Function, FunctionRef, Promise};
use napi::threadsafe_function::{ThreadsafeFunction, ThreadsafeFunctionCallMode};
use napi::{sys, Env, Status};
use napi_derive::napi;
use serde_json::Value;

use crate::handler::CallArgs;
use crate::reply;

thread_local! {
    /// The env of the `feed` call running on this thread, else null: a handler future polled
    /// here may call JavaScript directly.
    static FEEDING: Cell<sys::napi_env> = const { Cell::new(ptr::null_mut()) };
}

/// Sets [`FEEDING`] for the duration of a `feed` call, or of a mount's first poll of an exchange
/// ([`crate::embed`]), reset on unwind too.
pub struct Feeding;

impl Feeding {
    pub fn enter(env: &Env) -> Self {
        FEEDING.with(|f| f.set(env.raw()));
        Self
    }
}

impl Drop for Feeding {
    fn drop(&mut self) {
        FEEDING.with(|f| f.set(ptr::null_mut()));
    }
}

/// The reply of a direct handler call: the wrapper's reply object when the handler answered
/// synchronously, or a Promise of it.
pub enum Direct {
    Ready(Value),
    Later(Promise<Value>),
}

impl FromNapiValue for Direct {
    unsafe fn from_napi_value(env: sys::napi_env, value: sys::napi_value) -> napi::Result<Self> {
        let mut is_promise = false;
        // SAFETY: `env` and `value` come from napi for this call.
        let status = unsafe { sys::napi_is_promise(env, value, &mut is_promise) };
        if status != sys::Status::napi_ok {
            return Err(napi::Error::from_status(Status::from(status)));
        }
        // SAFETY: as above; the type was just checked.
        unsafe {
            if is_promise {
                Promise::from_napi_value(env, value).map(Direct::Later)
            } else {
                Value::from_napi_value(env, value).map(Direct::Ready)
            }
        }
    }
}

/// `direct(call, method, name, requestId, paramsJson) → replyJson | Promise<replyJson>`: the
/// handler wrapper called on this thread (JSON text both ways, see `lib/server.cjs`).
pub type DirectFn = FunctionRef<FnArgs<CallArgs>, Direct>;

/// Call `f` now when this thread is inside `feed`; otherwise hand the arguments back (the
/// caller then takes the threadsafe path).
pub fn call_direct(f: &DirectFn, args: CallArgs) -> Result<napi::Result<Direct>, CallArgs> {
    let raw = FEEDING.with(Cell::get);
    if raw.is_null() {
        return Err(args);
    }
    let env = Env::from_raw(raw);
    Ok(f.borrow_back(&env)
        .and_then(|func| func.call(FnArgs::from(args))))
}

/// `wake()`: output is waiting (weak: it never keeps the process alive by itself).
type WakeFn = ThreadsafeFunction<(), (), (), Status, false, true>;

/// One stdio connection served from the JavaScript thread (private: `lib/` drives it).
#[napi]
pub struct NativeStdioPump {
    pump: StdioPump,
    /// The error that ended the connection (a frame over the cap), as `{error}`.
    failed: Mutex<Option<Value>>,
}

impl NativeStdioPump {
    pub fn open(server: &mcpcore::Server, wake: Function<(), ()>) -> Result<Self, Value> {
        let tsfn: WakeFn = wake
            .build_threadsafe_function::<()>()
            .weak::<true>()
            .callee_handled::<false>()
            .build()
            .map_err(|e| reply::err(ErrorKind::Internal, e))?;
        let notify = Box::new(move || {
            tsfn.call((), ThreadsafeFunctionCallMode::NonBlocking);
        });
        // Requests that wait continue as tasks: the pump needs the runtime's context.
        let pump =
            napi::bindgen_prelude::within_runtime_if_available(|| StdioPump::new(server, notify))
                .map_err(|e| reply::err(ErrorKind::InvalidArgument, e))?;
        Ok(Self {
            pump,
            failed: Mutex::new(None),
        })
    }

    fn record(&self, result: Result<(), mcpcore::transport::stdio::StdioError>) {
        if let Err(e) = result {
            *self.failed.lock().unwrap_or_else(|p| p.into_inner()) = Some(reply::err(e.kind(), e));
        }
    }

    fn output(out: Vec<u8>) -> Option<Buffer> {
        (!out.is_empty()).then(|| Buffer::from(out))
    }
}

#[napi]
impl NativeStdioPump {
    /// Handle bytes read from stdin; returns what to write to stdout now, or null.
    #[napi]
    pub fn feed(&self, env: Env, chunk: &[u8]) -> Option<Buffer> {
        let fed = {
            let _feeding = Feeding::enter(&env);
            napi::bindgen_prelude::within_runtime_if_available(|| self.pump.feed(chunk))
        };
        self.record(fed.result);
        Self::output(fed.output)
    }

    /// Stdin ended: a last frame without a newline is handled; returns what to write, or null.
    #[napi]
    pub fn end(&self, env: Env) -> Option<Buffer> {
        let fed = {
            let _feeding = Feeding::enter(&env);
            napi::bindgen_prelude::within_runtime_if_available(|| self.pump.feed_eof())
        };
        Self::output(fed.output)
    }

    /// Poll stdin for the next request for up to the server's `stdioIdleSpinUs`, blocking this
    /// thread that long at most (core's `StdioPump::spin`): what to write when input arrived
    /// and was handled (possibly empty), null when none did.
    #[napi]
    pub fn spin(&self, env: Env) -> Option<Buffer> {
        let fed = {
            let _feeding = Feeding::enter(&env);
            napi::bindgen_prelude::within_runtime_if_available(|| self.pump.spin())
        }?;
        self.record(fed.result);
        Some(Buffer::from(fed.output))
    }

    /// Output queued since the last call (after `wake`), or null.
    #[napi]
    pub fn take(&self) -> Option<Buffer> {
        Self::output(self.pump.take_output())
    }

    /// True once the connection must end (a frame crossed the size cap).
    #[napi(getter)]
    pub fn stopped(&self) -> bool {
        self.failed
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .is_some()
    }

    /// Let the requests in flight finish (then they are cancelled; at once when `stdoutGone`).
    /// Resolves to `{ok: null}`, or `{error}` when a frame over the cap ended the connection.
    /// Take the remaining output afterwards.
    #[napi]
    pub async fn drain(&self, stdout_gone: bool) -> Value {
        self.pump.drain(stdout_gone).await;
        let failed = self
            .failed
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone();
        failed.unwrap_or_else(|| reply::ok(Value::Null))
    }
}
