"""Process-wide telemetry: core's spans (by the OpenTelemetry MCP semantic conventions) and the
metrics of servers with ``metrics`` on, exported over OTLP/HTTP (protobuf). Core records and
exports everything; these functions only pass it the options."""

from typing import Any, Dict, Optional

from . import _native


def configure_telemetry(options: Optional[Dict[str, Any]] = None) -> None:
    """Install core's telemetry for this process (once; a second call raises ``ValueError``).

    ``options`` is core's ``TelemetryOptions`` JSON shape: ``{"otlp": {...}}`` exports spans
    and metrics to a collector — fields left out come from the standard environment
    (``OTEL_EXPORTER_OTLP_ENDPOINT``, ``OTEL_SERVICE_NAME``, ``OTEL_EXPORTER_OTLP_HEADERS``, …)
    — and ``"level"`` (default ``"info"``: a span per request) picks what is recorded."""
    _native.configure_telemetry(options)


def flush_telemetry(timeout: float = 5.0) -> bool:
    """Export every finished span and the metrics now, waiting at most ``timeout`` seconds.
    ``False`` when nothing exports (no ``otlp`` configured) or the deadline passed."""
    return bool(_native.flush_telemetry(timeout))
