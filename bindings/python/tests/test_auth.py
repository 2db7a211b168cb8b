"""An OAuth-protected endpoint (core's resource server, AUTH-06) served from Python: tokens are
verified by core, and a handler sees the principal through ``ctx.principal``."""

from __future__ import annotations

import json
import time

import jwt
import pytest
from cryptography.hazmat.primitives.asymmetric import ec

from mcpcore import Client, Context, McpcoreError, Server

ISSUER = "http://127.0.0.1/as"
AUDIENCE = "urn:mcpcore:python-test"

server = Server("protected", "1.0.0")


@server.tool()
def whoami(ctx: Context) -> dict:
    return {"principal": ctx.principal}


def token(key: ec.EllipticCurvePrivateKey, **claims: object) -> str:
    body = {
        "iss": ISSUER,
        "aud": AUDIENCE,
        "sub": "alice",
        "scope": "mcp",
        "exp": time.time() + 600,
    }
    body.update(claims)
    return jwt.encode(body, key, algorithm="ES256", headers={"kid": "k1"})


@pytest.fixture
async def protected(tmp_path):
    key = ec.generate_private_key(ec.SECP256R1())
    jwk = json.loads(jwt.algorithms.ECAlgorithm.to_jwk(key.public_key()))
    jwk.update({"kid": "k1", "alg": "ES256", "use": "sig"})
    jwks = tmp_path / "jwks.json"
    jwks.write_text(json.dumps({"keys": [jwk]}))
    auth = {
        "resource": "http://127.0.0.1/mcp",
        "authorizationServers": [ISSUER],
        "issuer": ISSUER,
        "audience": AUDIENCE,
        "jwksPath": str(jwks),
    }
    handle = await server.serve_http("127.0.0.1", 0, options={"auth": auth})
    try:
        yield handle.url, key
    finally:
        await handle.close()


@pytest.mark.parametrize("mode", ["legacy", "modern"])
async def test_principal_reaches_the_handler(protected, mode):
    url, key = protected
    headers = {"Authorization": f"Bearer {token(key)}"}
    async with await Client.connect_http(url, mode=mode, headers=headers) as c:
        p = (await c.call_tool("whoami", {}))["structuredContent"]["principal"]
        assert p["subject"] == "alice"
        assert p["issuer"] == ISSUER
        assert p["scopes"] == ["mcp"]


async def test_missing_or_foreign_tokens_are_refused(protected):
    url, key = protected
    with pytest.raises(McpcoreError):
        await Client.connect_http(url, mode="modern")
    foreign = token(key, aud="urn:someone-else")
    with pytest.raises(McpcoreError):
        await Client.connect_http(
            url, mode="modern", headers={"Authorization": f"Bearer {foreign}"}
        )
