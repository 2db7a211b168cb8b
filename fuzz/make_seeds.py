#!/usr/bin/env python3
"""Writes the seed corpora under fuzz/corpus/<target>/ (run from anywhere; rewrites them).

Seeds are small, real messages of both protocol eras (2025-11-25 handshake era and the
2026-07-28 stateless era); libFuzzer mutates from there. Each file is named after what it holds.
"""
import hashlib
import json
import os
import shutil

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "corpus")
META = "io.modelcontextprotocol/"
ENV = {
    META + "protocolVersion": "2026-07-28",
    META + "clientCapabilities": {"elicitation": {}, "sampling": {}},
    META + "clientInfo": {"name": "fuzz-client", "version": "1.0.0"},
}


def j(v):
    return json.dumps(v, separators=(",", ":"))


def req(i, method, params=None):
    m = {"jsonrpc": "2.0", "id": i, "method": method}
    if params is not None:
        m["params"] = params
    return m


def note(method, params=None):
    m = {"jsonrpc": "2.0", "method": method}
    if params is not None:
        m["params"] = params
    return m


def modern(params=None, **extra_meta):
    p = dict(params or {})
    p["_meta"] = dict(ENV, **extra_meta)
    return p


LEGACY = [
    ("initialize", req(1, "initialize", {"protocolVersion": "2025-11-25",
        "capabilities": {"sampling": {}, "elicitation": {}, "roots": {"listChanged": True}},
        "clientInfo": {"name": "c", "version": "1"}})),
    ("initialized", note("notifications/initialized")),
    ("ping", req("p-1", "ping")),
    ("tools_list", req(2, "tools/list", {"cursor": "abc"})),
    ("tools_call", req(3, "tools/call", {"name": "echo", "arguments": {"text": "hi", "n": 5},
        "_meta": {"progressToken": "t1"}})),
    ("prompts_get", req(4, "prompts/get", {"name": "greet", "arguments": {"name": "Ada"}})),
    ("resources_read", req(5, "resources/read", {"uri": "file:///etc/motd"})),
    ("complete", req(6, "completion/complete", {"ref": {"type": "ref/prompt", "name": "greet"},
        "argument": {"name": "name", "value": "a"}})),
    ("cancelled", note("notifications/cancelled", {"requestId": 3, "reason": "user"})),
    ("result", {"jsonrpc": "2.0", "id": 7, "result": {"roots": [{"uri": "file:///home"}]}}),
    ("error", {"jsonrpc": "2.0", "id": "x", "error": {"code": -32601, "message": "Method not found",
        "data": {"method": "nope"}}}),
    ("logging", req(8, "logging/setLevel", {"level": "debug"})),
]

MODERN = [
    ("discover", req(1, "server/discover", modern())),
    ("tools_list", req(2, "tools/list", modern())),
    ("tools_call", req(3, "tools/call", modern({"name": "echo", "arguments": {"text": "hi"}},
        **{META + "logLevel": "info"}))),
    ("tools_call_retry", req(4, "tools/call", modern({"name": "ask", "arguments": {},
        "inputResponses": {"name": {"action": "accept", "content": {"name": "Ada"}}},
        "requestState": "v1.AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"}))),
    ("listen", req(5, "subscriptions/listen", modern({"notifications": {"toolsListChanged": True}}))),
    ("input_required", {"jsonrpc": "2.0", "id": 4, "result": {"resultType": "input_required",
        "inputRequests": {"name": {"method": "elicitation/create", "params": {"message": "name?",
        "requestedSchema": {"type": "object", "properties": {}}}}}, "requestState": "v1.abc"}}),
    ("result_meta", {"jsonrpc": "2.0", "id": 3, "result": {"content": [{"type": "text",
        "text": "hi"}], "_meta": {META + "serverInfo": {"name": "s", "version": "1"}}}}),
    ("unsupported", {"jsonrpc": "2.0", "id": 1, "error": {"code": -32022,
        "message": "Unsupported protocol version",
        "data": {"supported": ["2026-07-28"], "requested": "2027-01-01"}}}),
]

INVALID = [b'{"jsonrpc":"2.0","id":null,"method":"x"}', b'{"jsonrpc":"1.0","id":1}',
           b'[]', b'[1,{"jsonrpc":"2.0","method":"m"}]', b'{"id":1.5}', b'[[[[[[[[]]]]]]]]',
           b'{"jsonrpc":"2.0","id":9223372036854775807,"result":null}', b'nul']


def write(target, name, data):
    d = os.path.join(ROOT, target)
    os.makedirs(d, exist_ok=True)
    if isinstance(data, str):
        data = data.encode()
    with open(os.path.join(d, name), "wb") as f:
        f.write(data)


def frames():
    # Two leading bytes: the frame cap (x16 + 1) and the read-buffer size of the target.
    for era, msgs in (("legacy", LEGACY), ("modern", MODERN)):
        for name, m in msgs:
            write("jsonrpc_frame", f"{era}_{name}", b"\xff\x3f" + j(m).encode() + b"\n")
    write("jsonrpc_frame", "batch_2025_03_26", b"\xff\x07" + j([LEGACY[2][1], LEGACY[3][1]]).encode())
    write("jsonrpc_frame", "stream_crlf", b"\xff\x05" + b"\r\n".join(j(m).encode() for _, m in LEGACY[:4]))
    write("jsonrpc_frame", "over_cap", b"\x01\x02" + j(LEGACY[0][1]).encode() + b"\n{}\n")
    for i, bad in enumerate(INVALID):
        write("jsonrpc_frame", f"invalid_{i}", b"\xff\x3f" + bad + b"\n\n  \n")


def envelopes():
    for era, msgs in (("legacy", LEGACY), ("modern", MODERN)):
        for name, m in msgs:
            if "params" in m:
                write("envelope", f"{era}_{name}", j(m["params"]))
    write("envelope", "mistyped", j({"_meta": {META + "protocolVersion": 20260728,
        META + "clientCapabilities": {"sampling": []}, META + "clientInfo": {"name": 1},
        META + "logLevel": 3}}))
    write("envelope", "unsupported", j(modern(**{META + "protocolVersion": "2027-01-01"})))
    write("envelope", "meta_only", j(ENV))


def request_state():
    write("request_state", "token", "v1.q83vEjRWeJASNFZ4kBI0VniQEjRWeJASNFZ4kBI0VniQEjRWeJASNA")
    write("request_state", "args", j({"text": "hi", "n": [1, 2, {"b": 1, "a": 2}]}))
    write("request_state", "state", "round-1:{\"asked\":[\"name\"]}")
    write("request_state", "padded", "v1.AAAA==")


def mcp_header():
    for i, v in enumerate(["eu-west-1", "=?base64?SGVsbG8sIOS4lueVjA==?=", " padded ", "=?base64?",
                           "=?base64?not base64?=", "tab\there", "42", "true"]):
        write("mcp_header", f"value_{i}", v)
    schema = {"type": "object", "properties": {
        "region": {"type": "string", "x-mcp-header": "Region"},
        "n": {"type": "integer", "x-mcp-header": "N"},
        "dry": {"type": ["boolean", "null"], "x-mcp-header": "Dry-Run"},
        "nested": {"type": "object", "properties": {"id": {"type": "string", "x-mcp-header": "Id"}}}},
        "arguments": {"region": "eu west ✓", "n": 5, "dry": True, "nested": {"id": "=?base64?x?="}}}
    write("mcp_header", "schema_with_arguments", j(schema))
    write("mcp_header", "schema_bad_items", j({"type": "object", "properties": {"a": {"type": "array",
        "items": {"type": "string", "x-mcp-header": "A"}}}}))
    write("mcp_header", "schema_duplicate", j({"properties": {"a": {"type": "string", "x-mcp-header": "X"},
        "b": {"type": "string", "x-mcp-header": "x"}}}))


def sse():
    ev = j(LEGACY[9][1])
    write("sse", "one_event", b"\x03event: message\nid: 1\ndata: " + ev.encode() + b"\n\n")
    write("sse", "priming", b"\x05id: 0\nretry: 1000\ndata:\n\n: keepalive\n\n")
    write("sse", "multiline_crlf", b"\x07data: a\r\ndata: b\r\n\r\ndata:c\rdata:d\r\r")
    write("sse", "cr_split", b"\x01data: x\r\n\r\nid: a\x00b\ndata: y\n\n")
    write("sse", "modern_result", b"\x02data: " + j(MODERN[6][1]).encode() + b"\n\n")


def uri_template():
    for i, (t, u) in enumerate([("file:///{+path}", "file:///etc/a%20b.txt"),
                                ("demo://notes/{id}", "demo://notes/42"),
                                ("users/{user}/repos/{repo}", "users/a%2Fb/repos/x"),
                                ("db://{table}.{row}", "db://t.1.2"),
                                ("static://readme", "static://readme"),
                                ("x{a}y{+b}", "x%E2%9C%93y/q?r#s")]):
        write("uri_template", f"pair_{i}", f"{t}\n{u}")


def http():
    H = "Host: 127.0.0.1:8080\nContent-Type: application/json\nAccept: application/json, text/event-stream\n"

    def post(m, extra=""):
        return f"POST /mcp\n{H}{extra}\n{j(m)}"

    init = post(LEGACY[0][1])
    sess = "Mcp-Session-Id: $SESSION\nMCP-Protocol-Version: 2025-11-25\n"
    write("http_server", "legacy_session", "\n===\n".join([
        init, post(LEGACY[1][1], sess), post(LEGACY[4][1], sess), f"GET /mcp\n{H}{sess}\n",
    ]))
    write("http_server", "legacy_delete", "\n===\n".join([init, f"DELETE /mcp\n{H}{sess}\n"]))
    mh = "MCP-Protocol-Version: 2026-07-28\n"
    write("http_server", "modern_discover", post(MODERN[0][1], mh))
    write("http_server", "modern_call_headers",
          post(MODERN[2][1], mh + "Mcp-Method: tools/call\nMcp-Name: echo\nMcp-Param-Text: hi\n"))
    write("http_server", "modern_ask", post(req(3, "tools/call", modern({"name": "ask", "arguments": {}})),
                                                mh + "Mcp-Method: tools/call\nMcp-Name: ask\n"))
    write("http_server", "modern_retry", post(MODERN[3][1], mh + "Mcp-Method: tools/call\nMcp-Name: ask\n"))
    write("http_server", "modern_listen", post(MODERN[4][1], mh + "Mcp-Method: subscriptions/listen\n"))
    write("http_server", "modern_read", post(req(9, "resources/read", modern({"uri": "file:///a/b"})),
                                             mh + "Mcp-Method: resources/read\nMcp-Name: file:///a/b\n"))
    write("http_server", "batch", post([LEGACY[2][1], LEGACY[3][1]], "MCP-Protocol-Version: 2025-03-26\n"))
    write("http_server", "bad_origin", post(LEGACY[2][1], "Origin: https://evil.example\n"))
    write("http_server", "wrong_type", "POST /mcp\nHost: localhost\nContent-Type: text/plain\n\n{}")
    write("http_server", "options", f"OPTIONS /mcp\n{H}\n")
    write("http_server", "not_found", f"POST /other\n{H}\n{{}}")
    write("http_server", "parse_error", f"POST /mcp\n{H}\n{{\"jsonrpc\":")
    write("http_server", "notification", post(note("notifications/initialized")))


def oauth():
    write("oauth_metadata", "prm", j({"resource": "https://mcp.example.com/mcp",
        "authorization_servers": ["https://auth.example.com/tenant"], "scopes_supported": ["files:read"],
        "bearer_methods_supported": ["header"]}))
    write("oauth_metadata", "prm_root", j({"resource": "https://mcp.example.com",
        "authorization_servers": ["https://auth.example.com"]}))
    write("oauth_metadata", "as", j({"issuer": "https://auth.example.com/tenant",
        "authorization_endpoint": "https://auth.example.com/tenant/authorize",
        "token_endpoint": "https://auth.example.com/tenant/token",
        "registration_endpoint": "https://auth.example.com/tenant/register",
        "code_challenge_methods_supported": ["S256"], "grant_types_supported": ["authorization_code",
        "refresh_token", "client_credentials"], "token_endpoint_auth_methods_supported": ["none",
        "client_secret_basic", "private_key_jwt"], "authorization_response_iss_parameter_supported": True,
        "client_id_metadata_document_supported": True, "dpop_signing_alg_values_supported": ["ES256"]}))
    write("oauth_metadata", "as_wrong_issuer", j({"issuer": "https://auth.example.com",
        "token_endpoint": "javascript:alert(1)"}))
    for i, u in enumerate(["https://MCP.Example.com:8443/a/b/?q=1#f", "http://[::1]:3000",
                           "https://h/a//b/", "HTTPS://x?y/z"]):
        write("oauth_metadata", f"url_{i}", u)


def www_authenticate():
    for i, v in enumerate([
        'Bearer resource_metadata="https://mcp.example.com/.well-known/oauth-protected-resource/mcp"',
        'Bearer error="insufficient_scope", scope="files:read files:write", error_description="need \\"write\\""',
        'Basic realm="x", Bearer realm="y", DPoP algs="ES256 PS256"',
        'Negotiate abc==, Bearer',
        'Bearer realm=simple,scope=a',
        '  ,  Bearer  ,',
    ]):
        write("www_authenticate", f"header_{i}", v)


def dictionary():
    words = ['"jsonrpc"', '"2.0"', '"id"', '"method"', '"params"', '"result"', '"error"', '"code"',
             '"message"', '"data"', '"_meta"', '"name"', '"arguments"', '"uri"', '"cursor"',
             '"inputResponses"', '"requestState"', '"resultType"', '"input_required"',
             '"progressToken"', '"protocolVersion"', '"capabilities"', '"clientInfo"',
             '"2025-11-25"', '"2026-07-28"', '"2025-03-26"', '"initialize"', '"tools/call"',
             '"tools/list"', '"prompts/get"', '"resources/read"', '"server/discover"',
             '"subscriptions/listen"', '"notifications/initialized"', '"notifications/cancelled"',
             '"io.modelcontextprotocol/protocolVersion"', '"io.modelcontextprotocol/clientCapabilities"',
             '"io.modelcontextprotocol/clientInfo"', '"io.modelcontextprotocol/logLevel"',
             '"x-mcp-header"', '"properties"', '"type"', '"string"', '"integer"', '"boolean"',
             '"resource"', '"authorization_servers"', '"issuer"', '"token_endpoint"',
             "Mcp-Session-Id: ", "MCP-Protocol-Version: ", "Mcp-Method: ", "Mcp-Name: ",
             "Mcp-Param-", "Origin: ", "Host: ", "Content-Type: application/json",
             "Accept: application/json, text/event-stream", "$SESSION", "\n===\n", "=?base64?", "?=",
             "v1.", "true", "false", "null", "-9223372036854775808", "9007199254740993", "1e400",
             "{", "}", "[", "]", ":", ",", "\\u0000", "data: ", "event: ", "id: ", "retry: "]
    with open(os.path.join(os.path.dirname(ROOT), "mcp.dict"), "w") as f:
        f.write("# JSON-RPC, MCP and HTTP tokens for libFuzzer's -dict (generated by make_seeds.py).\n")
        for w in words:
            f.write('"' + w.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\x0A") + '"\n')


if __name__ == "__main__":
    shutil.rmtree(ROOT, ignore_errors=True)
    frames(); envelopes(); request_state(); mcp_header(); sse(); uri_template(); http(); oauth()
    www_authenticate(); dictionary()
    for t in sorted(os.listdir(ROOT)):
        print(t, len(os.listdir(os.path.join(ROOT, t))))
