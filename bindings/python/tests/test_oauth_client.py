"""The OAuth 2.1 authorization code flow from Python (REQUIREMENTS §15, AUTH-01…07): core's client
discovers, registers, builds the PKCE authorization URL and redeems the code; the binding only
runs ``on_authorize``, the browser step. Over real HTTP on 127.0.0.1: a small authorization
server (below, ``http.server`` in a thread) and a protected endpoint served by this binding with
core's resource server, which verifies the ES256 tokens the authorization server mints."""

from __future__ import annotations

import asyncio
import gc
import base64
import hashlib
import http.client
import json
import secrets
import socket
import threading
import time
import urllib.parse
import weakref
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Dict, List

import jwt
import pytest
from cryptography.hazmat.primitives.asymmetric import ec

import mcpcore.sync
from mcpcore import Client, Context, McpcoreError, Server

AUDIENCE = "urn:mcpcore:python-oauth-test"

server = Server("protected", "1.0.0")


@server.tool()
def whoami(ctx: Context) -> dict:
    return {"principal": ctx.principal}


class AuthorizationServer:
    """RFC 8414 metadata, RFC 7591 registration, an authorization endpoint that approves at once
    and a token endpoint that checks the PKCE verifier (RFC 7636 S256) and the resource."""

    def __init__(self, key: ec.EllipticCurvePrivateKey) -> None:
        self.key = key
        self.clients: Dict[str, List[str]] = {}
        self.codes: Dict[str, Dict[str, str]] = {}
        self.token_requests: List[Dict[str, str]] = []
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self.issuer = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()

    def metadata(self) -> Dict[str, Any]:
        return {
            "issuer": self.issuer,
            "authorization_endpoint": f"{self.issuer}/authorize",
            "token_endpoint": f"{self.issuer}/token",
            "registration_endpoint": f"{self.issuer}/register",
            "response_types_supported": ["code"],
            "grant_types_supported": ["authorization_code", "refresh_token"],
            "code_challenge_methods_supported": ["S256"],
            "token_endpoint_auth_methods_supported": ["none"],
        }

    def register(self, body: Dict[str, Any]) -> Any:
        client_id = f"client-{len(self.clients) + 1}"
        self.clients[client_id] = list(body.get("redirect_uris", []))
        return 201, {"client_id": client_id, "token_endpoint_auth_method": "none", **body}

    def authorize(self, q: Dict[str, str]) -> Any:
        redirects = self.clients.get(q.get("client_id", ""))
        if redirects is None or q.get("redirect_uri") not in redirects:
            return 400, {"error": "invalid_client"}
        if q.get("response_type") != "code" or q.get("code_challenge_method") != "S256":
            return 400, {"error": "invalid_request"}
        code = secrets.token_urlsafe(16)
        self.codes[code] = q
        target = (
            q["redirect_uri"]
            + "?"
            + urllib.parse.urlencode({"code": code, "state": q.get("state", "")})
        )
        return 302, target

    def token(self, form: Dict[str, str]) -> Any:
        self.token_requests.append(form)
        issued = self.codes.pop(form.get("code", ""), None)
        if form.get("grant_type") != "authorization_code" or issued is None:
            return 400, {"error": "invalid_grant"}
        digest = hashlib.sha256(form.get("code_verifier", "").encode()).digest()
        challenge = base64.urlsafe_b64encode(digest).rstrip(b"=").decode()
        same = all(form.get(k) == issued.get(k) for k in ("client_id", "redirect_uri", "resource"))
        if challenge != issued["code_challenge"] or not same:
            return 400, {"error": "invalid_grant"}
        claims = {
            "iss": self.issuer,
            "aud": AUDIENCE,
            "sub": "alice",
            "scope": "mcp",
            "exp": time.time() + 600,
        }
        access = jwt.encode(claims, self.key, algorithm="ES256", headers={"kid": "k1"})
        return 200, {"access_token": access, "token_type": "Bearer", "expires_in": 600}

    def _handler(self) -> Any:
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def _send(self, status: int, body: Any) -> None:
                if status == 302:
                    self.send_response(302)
                    self.send_header("Location", body)
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self) -> None:
                u = urllib.parse.urlsplit(self.path)
                q = dict(urllib.parse.parse_qsl(u.query))
                if u.path == "/.well-known/oauth-authorization-server":
                    self._send(200, server.metadata())
                elif u.path == "/authorize":
                    self._send(*server.authorize(q))
                else:
                    self._send(404, {"error": "not_found"})

            def do_POST(self) -> None:
                raw = self.rfile.read(int(self.headers.get("Content-Length", "0"))).decode()
                if self.path == "/register":
                    self._send(*server.register(json.loads(raw)))
                elif self.path == "/token":
                    self._send(*server.token(dict(urllib.parse.parse_qsl(raw))))
                else:
                    self._send(404, {"error": "not_found"})

        return Handler


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


@pytest.fixture
async def protected(tmp_path):
    key = ec.generate_private_key(ec.SECP256R1())
    jwk = json.loads(jwt.algorithms.ECAlgorithm.to_jwk(key.public_key()))
    jwk.update({"kid": "k1", "alg": "ES256", "use": "sig"})
    jwks = tmp_path / "jwks.json"
    jwks.write_text(json.dumps({"keys": [jwk]}))
    authz = AuthorizationServer(key)
    # AUTH-05: the PRM `resource` names the endpoint itself, so the port is chosen first.
    resource = f"http://127.0.0.1:{free_port()}/mcp"
    port = int(urllib.parse.urlsplit(resource).port or 0)
    auth = {
        "resource": resource,
        "authorizationServers": [authz.issuer],
        "issuer": authz.issuer,
        "audience": AUDIENCE,
        "jwksPath": str(jwks),
    }
    handle = await server.serve_http("127.0.0.1", port, options={"auth": auth})
    assert handle.url == resource
    try:
        yield resource, authz
    finally:
        await handle.close()
        authz.close()


def follow(url: str) -> str:
    """The browser: GET the authorization URL, return where it redirects (not followed)."""
    u = urllib.parse.urlsplit(url)
    conn = http.client.HTTPConnection(u.hostname or "", u.port, timeout=10)
    try:
        conn.request("GET", f"{u.path}?{u.query}")
        r = conn.getresponse()
        r.read()
        assert r.status == 302, r.status
        return r.getheader("Location") or ""
    finally:
        conn.close()


def check_authorization_url(url: str, authz: AuthorizationServer, resource: str) -> None:
    u = urllib.parse.urlsplit(url)
    q = dict(urllib.parse.parse_qsl(u.query))
    assert f"{u.scheme}://{u.netloc}{u.path}" == f"{authz.issuer}/authorize"
    assert q["code_challenge_method"] == "S256"
    assert q["resource"] == resource
    assert q["client_id"] in authz.clients
    assert q["state"] and q["code_challenge"]


@pytest.mark.parametrize("mode", ["legacy", "modern"])
async def test_authorization_code_flow_with_an_async_callback(protected, mode):
    resource, authz = protected
    seen: List[str] = []

    async def on_authorize(url: str) -> str:
        seen.append(url)
        return await asyncio.to_thread(follow, url)

    http = {"auth": {"clientName": "py-test"}}
    async with await Client.connect_http(
        resource, mode=mode, http=http, on_authorize=on_authorize
    ) as c:
        p = (await c.call_tool("whoami", {}))["structuredContent"]["principal"]
    assert p["subject"] == "alice"
    assert p["issuer"] == authz.issuer
    assert p["scopes"] == ["mcp"]
    assert len(seen) == 1
    check_authorization_url(seen[0], authz, resource)
    # The code was redeemed with its verifier for this resource (the endpoint checked both).
    assert [t["resource"] for t in authz.token_requests] == [resource]


def test_a_plain_def_callback_on_the_sync_client(protected):
    resource, authz = protected
    seen: List[str] = []

    def on_authorize(url: str) -> str:
        seen.append(url)
        return follow(url)

    with mcpcore.sync.Client.connect_http(
        resource, http={"auth": {}}, on_authorize=on_authorize
    ) as c:
        p = c.call_tool("whoami", {})["structuredContent"]["principal"]
    assert p["subject"] == "alice"
    assert len(seen) == 1
    check_authorization_url(seen[0], authz, resource)


async def test_a_failing_callback_fails_the_connect(protected):
    resource, authz = protected

    def refuse(url: str) -> str:
        raise RuntimeError("the user closed the browser")

    async def refuse_async(url: str) -> str:
        raise PermissionError("denied")

    def not_a_url(url: str) -> Any:
        return 42

    cases = [(refuse, "the user closed the browser"), (refuse_async, "denied")]
    cases.append((not_a_url, "must return the redirect URL as a str"))
    for fn, detail in cases:
        with pytest.raises(McpcoreError) as e:
            await Client.connect_http(resource, http={"auth": {}}, on_authorize=fn)
        assert detail in str(e.value)
        assert "authorization failed" in str(e.value)
        assert e.value.kind == "transport"
    assert authz.token_requests == []
    with pytest.raises(TypeError):
        await Client.connect_http(resource, http={"auth": {}}, on_authorize="nope")  # type: ignore[arg-type]


async def test_a_forged_redirect_is_refused_by_core(protected):
    """AUTH-07: the state of the redirect must be the one core sent."""
    resource, authz = protected

    async def forge(url: str) -> str:
        redirect = await asyncio.to_thread(follow, url)
        return redirect.replace("state=", "state=x")

    with pytest.raises(McpcoreError) as e:
        await Client.connect_http(resource, http={"auth": {}}, on_authorize=forge)
    assert "state" in str(e.value)
    assert authz.token_requests == []


async def test_cancelling_the_connect_cancels_the_callback(protected):
    """A connect abandoned while ``on_authorize`` waits for the user cancels the callback."""
    resource, authz = protected
    started, cancelled = asyncio.Event(), asyncio.Event()

    async def wait_for_the_user(url: str) -> str:
        started.set()
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            cancelled.set()
            raise
        return url

    task = asyncio.ensure_future(
        Client.connect_http(resource, http={"auth": {}}, on_authorize=wait_for_the_user)
    )
    await asyncio.wait_for(started.wait(), 10)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    await asyncio.wait_for(cancelled.wait(), 10)
    assert authz.token_requests == []


async def _cyclic_client(resource: str) -> Any:
    """A connected client whose ``on_authorize`` refers back to it; returns weak references to it
    and its native half."""
    box: List[Any] = []

    def on_authorize(url: str) -> str:
        assert not box or box[0] is not None
        return follow(url)

    c = await Client.connect_http(resource, http={"auth": {}}, on_authorize=on_authorize)
    box.append(c)
    await c.call_tool("whoami", {})
    await c.close()
    return weakref.ref(c), weakref.ref(c._native)


async def test_a_callback_in_a_cycle_with_its_client_is_collected(protected):
    """The native client reports ``on_authorize`` to the cycle collector (it keeps it for later
    authorization rounds): a callback that refers back to its client does not leak it."""
    resource, _ = protected
    gc.disable()
    try:
        ref, native = await _cyclic_client(resource)
        # Only the collector can free it: the references form a cycle.
        assert ref() is not None
        gc.collect()
        assert ref() is None and native() is None
    finally:
        gc.enable()
