"""Users' client callables as the handlers core's client calls: a callback answering a server
request, and the OAuth browser step. Core routes and answers; these only await the callable and
report its result or failure."""

from __future__ import annotations

import asyncio
import functools
import inspect
import logging
from typing import Any, Awaitable, Callable, Dict, Union

from . import _native
from .errors import McpError

logger = logging.getLogger("mcpcore")

#: A client callback: takes the request's params, returns its result (sync or async).
Callback = Callable[[Dict[str, Any]], Union[Dict[str, Any], Awaitable[Dict[str, Any]]]]


def _invoker(fn: Callback) -> _native._ClientInvoke:
    """``fn`` as core's client handler. Core routes the request (and answers -32601 while no
    callback is set); an ``McpError`` goes to the server as is, any other exception is logged
    here and reported to core as a failure, which the server sees as core's generic -32603."""

    async def invoke(params: Any, responder: _native.Responder) -> None:
        try:
            if inspect.iscoroutinefunction(fn):
                result = await fn(params)
            else:
                result = await asyncio.to_thread(functools.partial(fn, params))
            responder.ok(result)
        except McpError as e:
            responder.error(e.code, e.message, e.data)
        except Exception as e:
            logger.exception("mcpcore: client callback %r failed", fn)
            responder.fail(f"client callback raised {type(e).__name__}")

    return invoke


#: The OAuth browser step: takes the authorization URL, returns the redirect URL (sync or async).
Authorize = Callable[[str], Union[str, Awaitable[str]]]


def _authorizer(fn: Authorize) -> Callable[[str, _native.Responder], Awaitable[None]]:
    """``fn`` as core's browser step: its redirect URL, or its failure as the detail of the
    connect's authorization error (a plain ``def`` runs on a worker thread: it may wait for a
    user)."""

    async def invoke(url: str, responder: _native.Responder) -> None:
        try:
            if inspect.iscoroutinefunction(fn):
                redirect: Any = await fn(url)
            else:
                redirect = await asyncio.to_thread(fn, url)
                if inspect.isawaitable(redirect):
                    redirect = await redirect
        except Exception as e:
            responder.fail(f"on_authorize raised {type(e).__name__}: {e}")
            return
        except asyncio.CancelledError:
            responder.fail("on_authorize was cancelled")
            raise
        if isinstance(redirect, str):
            responder.ok(redirect)
        else:
            responder.fail(
                f"on_authorize must return the redirect URL as a str, not {type(redirect).__name__}"
            )

    return invoke
