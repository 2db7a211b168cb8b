//! The log route: mcpcore's `tracing` events (targets `mcpcore::*`) handed to a sink the
//! embedding language provides — Python's `logging`, a Node `onLog` handler, a C callback — at
//! a level it picks, changeable at any time ([`route_logs`]).
//!
//! What an event carries is what core wrote into it: messages and fields never include a
//! token, a secret or a tool argument (tests scan TRACE output of an authorized session).

use std::fmt::Write as _;
use std::sync::Arc;
use tracing::field::{Field, Visit};
use tracing::level_filters::LevelFilter;
use tracing::{Event, Level};

/// One log event as a sink receives it.
#[derive(Debug, Clone, Copy)]
#[non_exhaustive]
pub struct LogRecord<'a> {
    /// The event's level.
    pub level: Level,
    /// Where it comes from (`mcpcore::transport::http`, …).
    pub target: &'a str,
    /// The message, then the event's other fields as `key=value`.
    pub message: &'a str,
}

/// Where log events go: called on the thread that logs (any runtime thread), so it must not
/// block for long; a sink that calls into an interpreter queues the record.
pub type LogSink = Arc<dyn Fn(&LogRecord<'_>) + Send + Sync>;

/// A sink and the most verbose level it is given.
#[derive(Clone)]
pub(crate) struct Route {
    pub sink: LogSink,
    pub level: LevelFilter,
}

/// Parse a level name: `off`, `error`, `warn`, `info`, `debug` or `trace`.
///
/// # Errors
/// Any other name (the message lists the accepted ones).
pub fn parse_level_filter(name: &str) -> Result<LevelFilter, String> {
    name.parse::<LevelFilter>()
        .map_err(|_| format!("level must be off, error, warn, info, debug or trace, got {name:?}"))
}

/// Send mcpcore's log events at `level` or more severe to `sink` (replacing any earlier sink);
/// `None` stops the route. The first call installs the process's `tracing` subscriber, as
/// [`super::install`] does (one per process: the bindings and the C ABI own theirs).
///
/// # Errors
/// A `tracing` subscriber not installed by mcpcore already owns the process.
pub fn route_logs(sink: Option<LogSink>, level: LevelFilter) -> Result<(), String> {
    let state = super::install::process()?;
    state.set_route(sink.map(|sink| Route { sink, level }));
    Ok(())
}

/// Hand `event` to the route.
pub(crate) fn deliver(route: &Route, event: &Event<'_>) {
    let meta = event.metadata();
    let mut text = Text(String::new());
    event.record(&mut text);
    (route.sink)(&LogRecord {
        level: *meta.level(),
        target: meta.target(),
        message: &text.0,
    });
}

/// Formats an event: the `message` field first, the others after it as `key=value`.
struct Text(String);

impl Text {
    fn field(&mut self, f: &Field, v: &dyn std::fmt::Display) {
        if f.name() == "message" {
            let rest = std::mem::take(&mut self.0);
            let _ = write!(self.0, "{v}");
            if !rest.is_empty() {
                self.0.push(' ');
                self.0.push_str(&rest);
            }
        } else {
            if !self.0.is_empty() {
                self.0.push(' ');
            }
            let _ = write!(self.0, "{}={v}", f.name());
        }
    }
}

impl Visit for Text {
    fn record_str(&mut self, f: &Field, v: &str) {
        self.field(f, &v);
    }
    fn record_debug(&mut self, f: &Field, v: &dyn std::fmt::Debug) {
        self.field(f, &format_args!("{v:?}"));
    }
}
