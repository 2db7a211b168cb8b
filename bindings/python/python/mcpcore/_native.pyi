"""Type stubs of the native half (``mcpcore._native``); the public API is the pure-Python package."""

from typing import Any, Awaitable, Callable, Dict, List, Optional, Sequence, Tuple, final

__all__ = [
    "NativeServer",
    "HttpHandle",
    "Responder",
    "NativeContext",
    "NativeClient",
    "NativeSubscription",
    "shutdown",
    "media_block",
    "check_input_required",
    "APP_MIME_TYPE",
    "__version__",
]
__version__: str
APP_MIME_TYPE: str

def media_block(data: bytes, mime_type: str) -> Dict[str, Any]: ...
def check_input_required(
    input_requests: Dict[str, Any], request_state: Optional[str] = None
) -> None: ...

def shutdown(timeout: float = 2.0) -> None:
    """``atexit``: stop runtime threads from entering the interpreter; wait for those inside."""

@final
class Responder:
    """The one-shot reply of a handler call (used by ``mcpcore.server``/``mcpcore.client``)."""

    def ok(self, result: Any) -> None: ...
    def error(self, code: int, message: str, data: Optional[Any] = None) -> None: ...
    def fail(self, detail: str) -> None: ...
    def cancelled(self) -> None: ...
    def invalid_arguments(self, tool: str, reason: str) -> None: ...
    def value(self, value: Any) -> None: ...
    def bytes(self, data: bytes, mime_type: Optional[str] = None) -> None: ...
    def tool_error(self, message: str) -> None: ...
    def input_required(
        self, input_requests: Dict[str, Any], request_state: Optional[str] = None
    ) -> None: ...

@final
class NativeContext:
    @property
    def cancelled(self) -> bool: ...
    @property
    def task_id(self) -> Optional[str]: ...
    @property
    def protocol_version(self) -> Optional[str]: ...
    @property
    def is_modern(self) -> bool: ...
    @property
    def method(self) -> str: ...
    @property
    def name(self) -> Optional[str]: ...
    @property
    def client_capabilities(self) -> Dict[str, Any]: ...
    @property
    def client_info(self) -> Optional[Dict[str, Any]]: ...
    @property
    def principal(self) -> Optional[Dict[str, Any]]: ...
    @property
    def input_responses(self) -> Optional[Dict[str, Any]]: ...
    @property
    def request_state(self) -> Optional[str]: ...
    def require_client_capability(self, path: List[str]) -> None: ...
    def close_sse_stream(self) -> bool: ...
    def progress(
        self, progress: float, total: Optional[float] = None, message: Optional[str] = None
    ) -> bool: ...
    def log(self, level: str, data: Any, logger: Optional[str] = None) -> bool: ...
    def request_client(
        self, method: str, params: Optional[Dict[str, Any]] = None
    ) -> Awaitable[Any]: ...

# A coroutine to run on the serving loop, or None when the call was started already.
_Invoke = Callable[[NativeContext, Any, Responder], Optional[Awaitable[None]]]

@final
class HttpHandle:
    @property
    def port(self) -> int: ...
    @property
    def host(self) -> str: ...
    def close(self) -> Awaitable[None]: ...

@final
class NativeServer:
    def __new__(
        cls,
        name: str,
        version: str,
        instructions: Optional[str],
        entries: Sequence[Tuple[str, Dict[str, Any], _Invoke]],
        event_loop: Any,
        options: Optional[Dict[str, Any]] = None,
    ) -> NativeServer: ...
    def serve_stdio(self) -> Awaitable[None]: ...
    def serve_http(
        self, host: str, port: int, options: Optional[Dict[str, Any]] = None
    ) -> Awaitable[HttpHandle]: ...
    def notify_tools_list_changed(self) -> int: ...
    def notify_prompts_list_changed(self) -> int: ...
    def notify_resources_list_changed(self) -> int: ...
    def notify_resource_updated(self, uri: str) -> int: ...

_ClientInvoke = Callable[[Any, Responder], Awaitable[None]]

@final
class NativeClient:
    @staticmethod
    def connect_stdio(
        argv: List[str],
        mode: str = "auto",
        options: Optional[Dict[str, Any]] = None,
        handlers: Optional[Dict[str, _ClientInvoke]] = None,
        on_notification: Optional[Callable[..., None]] = None,
        event_loop: Optional[Any] = None,
    ) -> Awaitable[NativeClient]: ...
    @staticmethod
    def connect_http(
        url: str,
        mode: str = "auto",
        options: Optional[Dict[str, Any]] = None,
        handlers: Optional[Dict[str, _ClientInvoke]] = None,
        on_notification: Optional[Callable[..., None]] = None,
        event_loop: Optional[Any] = None,
        http: Optional[Dict[str, Any]] = None,
        headers: Optional[Dict[str, str]] = None,
        on_authorize: Optional[Callable[[str, Responder], Awaitable[None]]] = None,
    ) -> Awaitable[NativeClient]: ...
    @property
    def era(self) -> Optional[str]: ...
    @property
    def protocol_version(self) -> Optional[str]: ...
    @property
    def instructions(self) -> Optional[str]: ...
    @property
    def server_info(self) -> Optional[Dict[str, Any]]: ...
    @property
    def server_capabilities(self) -> Dict[str, Any]: ...
    @property
    def server_supports_apps(self) -> bool: ...
    def read_app_resource(
        self, uri: str, timeout: Optional[float] = None
    ) -> Awaitable[Dict[str, Any]]: ...
    @staticmethod
    def tool_ui_resource_uri(tool: Dict[str, Any]) -> Optional[str]: ...
    def request(
        self,
        method: str,
        params: Optional[Dict[str, Any]] = None,
        timeout: Optional[float] = None,
        progress: Optional[Callable[..., None]] = None,
        log_level: Optional[str] = None,
    ) -> Awaitable[Dict[str, Any]]: ...
    def list_all(
        self, kind: str, timeout: Optional[float] = None
    ) -> Awaitable[Dict[str, List[Dict[str, Any]]]]: ...
    def list_page(
        self, kind: str, cursor: Optional[str] = None, timeout: Optional[float] = None
    ) -> Awaitable[Dict[str, Any]]: ...
    def complete(
        self,
        reference: Dict[str, Any],
        argument_name: str,
        argument_value: str,
        context: Optional[Dict[str, str]] = None,
        timeout: Optional[float] = None,
    ) -> Awaitable[Dict[str, Any]]: ...
    def subscribe_resource(self, uri: str, timeout: Optional[float] = None) -> Awaitable[None]: ...
    def unsubscribe_resource(
        self, uri: str, timeout: Optional[float] = None
    ) -> Awaitable[None]: ...
    def listen(
        self, filter: Dict[str, Any], timeout: Optional[float] = None
    ) -> Awaitable[NativeSubscription]: ...
    def call_tool_as_task(
        self,
        name: str,
        arguments: Optional[Dict[str, Any]] = None,
        ttl_ms: Optional[int] = None,
        timeout: Optional[float] = None,
    ) -> Awaitable[Dict[str, Any]]: ...
    def get_task(
        self, task_id: str, timeout: Optional[float] = None
    ) -> Awaitable[Dict[str, Any]]: ...
    def cancel_task(
        self, task_id: str, timeout: Optional[float] = None
    ) -> Awaitable[Optional[Dict[str, Any]]]: ...
    def update_task(
        self, task_id: str, input_responses: Dict[str, Any], timeout: Optional[float] = None
    ) -> Awaitable[None]: ...
    def wait_task(
        self, task_id: str, options: Optional[Dict[str, Any]] = None
    ) -> Awaitable[Dict[str, Any]]: ...
    def call_tool_to_completion(
        self,
        name: str,
        arguments: Optional[Dict[str, Any]] = None,
        ttl_ms: Optional[int] = None,
        options: Optional[Dict[str, Any]] = None,
    ) -> Awaitable[Dict[str, Any]]: ...
    def close(self) -> Awaitable[None]: ...

@final
class NativeSubscription:
    @property
    def honored(self) -> Dict[str, Any]: ...
    def next(self) -> Awaitable[Optional[Dict[str, Any]]]: ...
    def close(self) -> Awaitable[None]: ...
