"""Process-wide telemetry: core's spans (by the OpenTelemetry MCP semantic conventions) and the
metrics of servers with ``metrics`` on, exported over OTLP/HTTP (protobuf), and core's own log
events in Python's :mod:`logging` (logger ``mcpcore`` and its children, named after core's
modules: ``mcpcore.transport.http``, …). Core records and exports everything; these functions
only pass it the options."""

import atexit
import logging
from typing import Any, Dict, Optional

from . import _native


def _emit(levelno: int, target: str, message: str) -> None:
    """Log one of core's events through :mod:`logging` (on core's log thread)."""
    logging.getLogger(target.replace("::", ".")).log(levelno, message)


def set_log_level(level: str) -> None:
    """How much of core's own logging reaches :mod:`logging`: ``"off"``, ``"error"``,
    ``"warn"`` (the default from import), ``"info"``, ``"debug"`` or ``"trace"`` (logged at
    level 5). Records arrive on logger ``mcpcore`` and its children, whose own levels and
    handlers then apply as usual. No level ever carries a token, a secret or a tool argument.
    Raises ``ValueError`` for another name."""
    _native.route_logs(None if level == "off" else _emit, level)


def configure_telemetry(options: Optional[Dict[str, Any]] = None) -> None:
    """Install core's telemetry for this process (once; a second call raises ``ValueError``).

    ``options`` is core's ``TelemetryOptions`` JSON shape: ``{"otlp": {...}}`` exports spans
    and metrics to a collector — fields left out come from the standard environment
    (``OTEL_EXPORTER_OTLP_ENDPOINT``, ``OTEL_SERVICE_NAME``, ``OTEL_EXPORTER_OTLP_HEADERS``, …)
    — and ``"level"`` (default ``"info"``: a span per request) picks what is recorded.

    When the interpreter exits normally, what was recorded and not yet exported is exported
    first (waiting at most ``stopFlushMs``, default 2 s): a short script's spans are not lost."""
    _native.configure_telemetry(options)
    # Registered after the import's runtime shutdown, so it runs before it (atexit is LIFO).
    atexit.register(_native.flush_telemetry_at_exit)


def flush_telemetry(timeout: float = 5.0) -> bool:
    """Export every finished span and the metrics now, waiting at most ``timeout`` seconds.
    ``False`` when nothing exports (no ``otlp`` configured) or the deadline passed."""
    return bool(_native.flush_telemetry(timeout))
