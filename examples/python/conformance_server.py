"""The conformance suite's server fixture (shared/conformance/FIXTURE.md) on the Python binding.

It mirrors the Rust fixture (examples/conformance/fixture.rs, examples/conformance_server.rs)
tool by tool: same names, texts, schemas, input keys and request states. Serves Streamable HTTP
on 127.0.0.1 with ``--port N`` (endpoint ``/mcp``; the suite's ``{port}``), stdio otherwise;
``--asgi --port N`` serves the same endpoint as an ASGI app (``server.asgi_app()``) under uvicorn.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import signal
import sys
from typing import Any, Dict, List, Optional, Tuple

from mcpcore import Context, Server, ToolResult
from mcpcore import _native

import conformance_tasks

#: 1×1 transparent PNG.
PNG_1X1 = (
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII="
)
#: A tiny WAV (RIFF header, no samples).
WAV_EMPTY = "UklGRiQAAABXQVZFZm10IBAAAAABAAEAQB8AAIA+AAACABAAZGF0YQAAAAA="

NO_ARGS: Dict[str, Any] = {"type": "object", "properties": {}}

# Cache hints: every list and read may be cached for 0 ms, privately (as the Rust fixture).
server = Server(
    "mcpcore-conformance",
    _native.__version__,
    options={"cacheTtlMs": 0, "cacheScope": "private"},
)


def compact(value: Any) -> str:
    """JSON as the Rust fixture prints it (no spaces)."""
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def tool(name: str, description: str, schema: Optional[Dict[str, Any]] = None) -> Any:
    return server.tool(name=name, description=description, input_schema=schema or NO_ARGS)


def elicit_req(message: str, props: Dict[str, Any], required: List[str]) -> Dict[str, Any]:
    schema = {"type": "object", "properties": props, "required": required}
    params = {"mode": "form", "message": message, "requestedSchema": schema}
    return {"method": "elicitation/create", "params": params}


def sampling_req(prompt: str, max_tokens: int) -> Dict[str, Any]:
    message = {"role": "user", "content": {"type": "text", "text": prompt}}
    return {
        "method": "sampling/createMessage",
        "params": {"messages": [message], "maxTokens": max_tokens},
    }


def roots_req() -> Dict[str, Any]:
    return {"method": "roots/list", "params": {}}


def answer(ctx: Context, key: str) -> Optional[Dict[str, Any]]:
    r = (ctx.input_responses or {}).get(key)
    return r if isinstance(r, dict) else None


def accepted_content(ctx: Context, key: str) -> Optional[Dict[str, Any]]:
    """An answered elicitation under ``key`` with ``accept`` and an object ``content``."""
    r = answer(ctx, key)
    if r is None or r.get("action") != "accept":
        return None
    c = r.get("content")
    return c if isinstance(c, dict) else None


def sampled_text(ctx: Context, key: str) -> Optional[str]:
    r = answer(ctx, key)
    c = r.get("content") if r else None
    if isinstance(c, list):
        c = c[0] if c else None
    t = c.get("text") if isinstance(c, dict) else None
    return t if isinstance(t, str) else None


def roots_count(ctx: Context, key: str) -> Optional[int]:
    r = answer(ctx, key)
    roots = r.get("roots") if r else None
    return len(roots) if isinstance(roots, list) else None


def name_of(ctx: Context, key: str) -> Optional[str]:
    c = accepted_content(ctx, key)
    n = c.get("name") if c else None
    return n if isinstance(n, str) else None


def text_block(text: str) -> Dict[str, Any]:
    return {"type": "text", "text": text}


# ---- legacy tools (both eras) ----


@tool("test_simple_text", "Returns simple text")
def simple_text() -> str:
    return "This is a simple text response for testing."


@tool("test_image_content", "Returns an image")
def image_content() -> ToolResult:
    return ToolResult([{"type": "image", "data": PNG_1X1, "mimeType": "image/png"}])


@tool("test_audio_content", "Returns audio")
def audio_content() -> ToolResult:
    return ToolResult([{"type": "audio", "data": WAV_EMPTY, "mimeType": "audio/wav"}])


def embedded(uri: str, mime: str, text: str) -> Dict[str, Any]:
    return {"type": "resource", "resource": {"uri": uri, "mimeType": mime, "text": text}}


@tool("test_embedded_resource", "Returns an embedded resource")
def embedded_resource() -> ToolResult:
    text = "This is an embedded resource content."
    return ToolResult([embedded("test://embedded-resource", "text/plain", text)])


@tool("test_multiple_content_types", "Returns text, image and resource")
def multiple_content_types() -> ToolResult:
    data = '{"test":"data","value":123}'
    return ToolResult(
        [
            text_block("Multiple content types test:"),
            {"type": "image", "data": PNG_1X1, "mimeType": "image/png"},
            embedded("test://mixed-content-resource", "application/json", data),
        ]
    )


@tool("test_tool_with_logging", "Logs during execution")
async def tool_with_logging(ctx: Context) -> str:
    steps = ["Tool execution started", "Tool processing data", "Tool execution completed"]
    for i, msg in enumerate(steps):
        if i > 0:
            await asyncio.sleep(0.05)
        ctx.log("info", msg, logger="conformance")
    return "Tool with logging executed successfully"


@tool("test_tool_with_progress", "Reports progress")
async def tool_with_progress(ctx: Context) -> str:
    for i, p in enumerate([0.0, 50.0, 100.0]):
        if i > 0:
            await asyncio.sleep(0.05)
        ctx.progress(p, 100.0, "progress")
    return "Tool with progress executed successfully"


@tool("test_error_handling", "Returns an error result")
def error_handling() -> ToolResult:
    text = "This tool intentionally returns an error for testing"
    return ToolResult([text_block(text)], is_error=True)


PROMPT_ARG = {"type": "object", "properties": {"prompt": {"type": "string"}}}
PROMPT_ARG["required"] = ["prompt"]


@tool("test_sampling", "Asks the client's LLM", PROMPT_ARG)
async def sampling(ctx: Context, **args: Any) -> str:
    prompt = args.get("prompt") if isinstance(args.get("prompt"), str) else ""
    r = await ctx.sample(prompt, 100)
    content = r.get("content")
    t = content.get("text", "") if isinstance(content, dict) else ""
    return f"LLM response: {t}"


MESSAGE_ARG = {"type": "object", "properties": {"message": {"type": "string"}}}
MESSAGE_ARG["required"] = ["message"]


def elicited(prefix: str, r: Dict[str, Any]) -> str:
    return f"{prefix}: action={r.get('action', '?')}, content={compact(r.get('content'))}"


@tool("test_elicitation", "Asks the user", MESSAGE_ARG)
async def elicitation(ctx: Context, **args: Any) -> str:
    message = args.get("message") if isinstance(args.get("message"), str) else ""
    props = {"response": {"type": "string", "description": "User's response"}}
    schema = {"type": "object", "properties": props, "required": ["response"]}
    return elicited("User response", await ctx.elicit(str(message), schema))


@tool("test_elicitation_sep1034_defaults", "Elicits a form with defaults")
async def elicitation_defaults(ctx: Context) -> str:
    status = ["active", "inactive", "pending"]
    props = {
        "name": {"type": "string", "description": "User name", "default": "John Doe"},
        "age": {"type": "integer", "description": "User age", "default": 30},
        "score": {"type": "number", "description": "User score", "default": 95.5},
        "status": {
            "type": "string",
            "description": "User status",
            "enum": status,
            "default": "active",
        },
        "verified": {"type": "boolean", "description": "Verification status", "default": True},
    }
    message = "Please review and update the form fields with defaults"
    r = await ctx.elicit(message, {"type": "object", "properties": props})
    return elicited("Elicitation completed", r)


def titled(values: List[Tuple[str, str]]) -> List[Dict[str, str]]:
    return [{"const": v, "title": t} for v, t in values]


@tool("test_elicitation_sep1330_enums", "Elicits the enum schema shapes")
async def elicitation_enums(ctx: Context) -> str:
    options = ["option1", "option2", "option3"]
    props = {
        "untitledSingle": {"type": "string", "description": "Select one option", "enum": options},
        "titledSingle": {
            "type": "string",
            "description": "Select one option with titles",
            "oneOf": titled(
                [
                    ("value1", "First Option"),
                    ("value2", "Second Option"),
                    ("value3", "Third Option"),
                ]
            ),
        },
        "legacyEnum": {
            "type": "string",
            "description": "Select one option (legacy)",
            "enum": ["opt1", "opt2", "opt3"],
            "enumNames": ["Option One", "Option Two", "Option Three"],
        },
        "untitledMulti": {
            "type": "array",
            "description": "Select multiple options",
            "minItems": 1,
            "maxItems": 3,
            "items": {"type": "string", "enum": options},
        },
        "titledMulti": {
            "type": "array",
            "description": "Select multiple options with titles",
            "minItems": 1,
            "maxItems": 3,
            "items": {
                "anyOf": titled(
                    [
                        ("value1", "First Choice"),
                        ("value2", "Second Choice"),
                        ("value3", "Third Choice"),
                    ]
                )
            },
        },
    }
    message = "Please select options from the enum fields"
    r = await ctx.elicit(message, {"type": "object", "properties": props})
    return elicited("Elicitation completed", r)


SCHEMA_2020_12 = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "$defs": {
        "address": {
            "$anchor": "addressDef",
            "type": "object",
            "properties": {"street": {"type": "string"}, "city": {"type": "string"}},
        }
    },
    "properties": {
        "name": {"type": "string"},
        "address": {"$ref": "#/$defs/address"},
        "contactMethod": {"type": "string", "enum": ["phone", "email"]},
        "phone": {"type": "string"},
        "email": {"type": "string"},
    },
    "allOf": [{"anyOf": [{"required": ["phone"]}, {"required": ["email"]}]}],
    "if": {"properties": {"contactMethod": {"const": "phone"}}},
    "then": {"required": ["phone"]},
    "else": {"required": ["email"]},
    "additionalProperties": False,
}


@tool("json_schema_2020_12_tool", "Tool with a JSON Schema 2020-12 input schema", SCHEMA_2020_12)
def json_schema_tool(**args: Any) -> str:
    return f"Received: {compact(args)}"


# ---- 2026-07-28 tools ----


@tool("test_missing_capability", "Needs the sampling capability")
def missing_capability(ctx: Context) -> str:
    ctx.require_client_capability("sampling")
    return "Success"


@tool("test_streaming_elicitation", "Streams notifications, then the result")
async def streaming_elicitation(ctx: Context) -> str:
    ctx.progress(1.0, 2.0, "streaming")
    await asyncio.sleep(0.02)
    ctx.progress(2.0, 2.0, "done")
    return "Streaming complete"


@tool("test_logging_tool", "Logs only when the request asked for a log level")
def logging_tool(ctx: Context) -> str:
    ctx.log("info", "log from test_logging_tool", logger="conformance")
    return "Logging tool executed"


@tool("test_trigger_tool_change", "Announces a tool list change")
def trigger_tool_change() -> str:
    return f"Tool list change announced to {server.notify_tools_changed()} subscribers"


@tool("test_trigger_prompt_change", "Announces a prompt list change")
def trigger_prompt_change() -> str:
    return f"Prompt list change announced to {server.notify_prompts_changed()} subscribers"


# ---- input_required (MRTR) tools ----

NAME = {"name": {"type": "string"}}


@tool("test_input_required_result_elicitation", "MRTR: asks for a name")
def mrtr_elicitation(ctx: Context) -> Any:
    name = name_of(ctx, "user_name")
    if name is not None:
        return f"Hello, {name}!"
    return ctx.input_required({"user_name": elicit_req("What is your name?", NAME, ["name"])})


@tool("test_input_required_result_sampling", "MRTR: asks the LLM")
def mrtr_sampling(ctx: Context) -> Any:
    t = sampled_text(ctx, "sample_request")
    if t is not None:
        return f"Sampling result: {t}"
    req = sampling_req("What is the capital of France?", 100)
    return ctx.input_required({"sample_request": req})


@tool("test_input_required_result_list_roots", "MRTR: asks for roots")
def mrtr_list_roots(ctx: Context) -> Any:
    n = roots_count(ctx, "roots_request")
    if n is not None:
        return f"Found {n} root(s)"
    return ctx.input_required({"roots_request": roots_req()})


CONFIRM = elicit_req("Please confirm", {"ok": {"type": "boolean"}}, ["ok"])


@tool("test_input_required_result_request_state", "MRTR: carries requestState")
def mrtr_request_state(ctx: Context) -> Any:
    if ctx.request_state == "state-ok" and accepted_content(ctx, "confirm") is not None:
        return "Confirmed with state-ok"
    return ctx.input_required({"confirm": CONFIRM}, request_state="state-ok")


@tool("test_input_required_result_multiple_inputs", "MRTR: three inputs at once")
def mrtr_multiple_inputs(ctx: Context) -> Any:
    name = name_of(ctx, "user_name")
    greeting = sampled_text(ctx, "greeting")
    roots = roots_count(ctx, "client_roots")
    if name is not None and greeting is not None and roots is not None:
        if ctx.request_state == "multi":
            return f"{greeting} {name}! ({roots} roots)"
    requests = {
        "user_name": elicit_req("What is your name?", NAME, ["name"]),
        "greeting": sampling_req("Generate a greeting", 50),
        "client_roots": roots_req(),
    }
    return ctx.input_required(requests, request_state="multi")


@tool("test_input_required_result_multi_round", "MRTR: two rounds")
def mrtr_multi_round(ctx: Context) -> Any:
    state = ctx.request_state
    step1 = accepted_content(ctx, "step1") is not None
    c2 = accepted_content(ctx, "step2")
    color = c2.get("color") if c2 else None
    color = color if isinstance(color, str) else None
    if state == "round2" and color is not None:
        return f"Completed after two rounds: {color}"
    if (state == "round1" and step1) or (state == "round2" and color is None):
        req = elicit_req("What is your favourite color?", {"color": {"type": "string"}}, ["color"])
        return ctx.input_required({"step2": req}, request_state="round2")
    req = elicit_req("Step 1: what is your name?", NAME, ["name"])
    return ctx.input_required({"step1": req}, request_state="round1")


@tool("test_input_required_result_tampered_state", "MRTR: integrity-protected state")
def mrtr_tampered_state(ctx: Context) -> Any:
    # Core seals requestState; a tampered one never reaches the handler (it answers an error).
    if ctx.request_state == "trusted" and accepted_content(ctx, "confirm") is not None:
        return "State verified"
    return ctx.input_required({"confirm": CONFIRM}, request_state="trusted")


@tool("test_input_required_result_capabilities", "MRTR: asks only for declared capabilities")
def mrtr_capabilities(ctx: Context) -> Any:
    if ctx.input_responses:
        return "Capabilities respected"
    caps = ctx.client_capabilities
    requests: Dict[str, Any] = {}
    if caps.get("elicitation") is not None:
        requests["user_name"] = elicit_req("What is your name?", NAME, ["name"])
    if caps.get("sampling") is not None:
        requests["sample"] = sampling_req("Say hi", 20)
    if caps.get("roots") is not None:
        requests["roots"] = roots_req()
    if not requests:
        return "No input capabilities declared"
    return ctx.input_required(requests)


@tool(
    "test_reconnection",
    "Closes its SSE stream mid-call; the result arrives on the resumed stream",
)
async def reconnection(ctx: Context) -> str:
    # Legacy SSE polling (SEP-1699): the client resumes with Last-Event-ID and gets the result.
    await asyncio.sleep(0.05)
    ctx.close_sse_stream()
    await asyncio.sleep(0.1)
    return "Reconnection test completed"


HEADER_PARAMS = {
    "type": "object",
    "properties": {
        "region": {"type": "string", "x-mcp-header": "Region"},
        "priority": {"type": "integer", "x-mcp-header": "Priority"},
        "verbose": {"type": "boolean", "x-mcp-header": "Verbose"},
    },
}


# Arguments mirrored as Mcp-Param-* headers (HTTP-14/15), for the server-side header checks.
@tool(
    "test_header_params",
    "Echoes arguments that clients mirror into Mcp-Param-* headers.",
    HEADER_PARAMS,
)
def header_params(**args: Any) -> str:
    return compact(args)


# ---- resources, prompts, completion ----


def contents(uri: str, mime: str, **body: Any) -> Dict[str, Any]:
    return {"contents": [dict(uri=uri, mimeType=mime, **body)]}


@server.resource(
    "test://static-text",
    name="static-text",
    mime_type="text/plain",
    description="A static text resource",
)
def static_text() -> Dict[str, Any]:
    text = "This is the content of the static text resource."
    return contents("test://static-text", "text/plain", text=text)


@server.resource(
    "test://static-binary",
    name="static-binary",
    mime_type="image/png",
    description="A static binary resource",
)
def static_binary() -> Dict[str, Any]:
    return contents("test://static-binary", "image/png", blob=PNG_1X1)


@server.resource(
    "test://watched-resource",
    name="watched-resource",
    mime_type="text/plain",
    description="A subscribable resource",
)
def watched_resource() -> Dict[str, Any]:
    return contents("test://watched-resource", "text/plain", text="Watched resource content")


@server.resource(
    "test://template/{id}/data",
    name="template-data",
    mime_type="application/json",
    description="Data by id",
)
def template_data(id: str, ctx: Context) -> Dict[str, Any]:
    body = {"id": id, "templateTest": True, "data": f"Data for ID: {id}"}
    return contents(ctx.name or "", "application/json", text=compact(body))


def user_text(text: str) -> Dict[str, Any]:
    return {"role": "user", "content": text_block(text)}


@server.prompt(name="test_simple_prompt", description="A simple prompt", arguments=[])
def simple_prompt() -> Dict[str, Any]:
    return {"messages": [user_text("This is a simple prompt for testing.")]}


@server.prompt(
    name="test_prompt_with_arguments",
    description="A prompt with arguments",
    arguments=[
        {"name": "arg1", "description": "First argument", "required": True},
        {"name": "arg2", "description": "Second argument", "required": True},
    ],
)
def prompt_with_arguments(arg1: str = "", arg2: str = "") -> Dict[str, Any]:
    return {"messages": [user_text(f"Prompt with arguments: arg1='{arg1}', arg2='{arg2}'")]}


@server.prompt(
    name="test_prompt_with_embedded_resource",
    description="A prompt with an embedded resource",
    arguments=[
        {"name": "resourceUri", "description": "URI of the resource to embed", "required": True}
    ],
)
def prompt_with_embedded_resource(resourceUri: str = "") -> Dict[str, Any]:
    text = "Embedded resource content for testing."
    resource = {"role": "user", "content": embedded(resourceUri, "text/plain", text)}
    return {"messages": [resource, user_text("Please process the embedded resource above.")]}


@server.prompt(name="test_prompt_with_image", description="A prompt with an image", arguments=[])
def prompt_with_image() -> Dict[str, Any]:
    image = {"type": "image", "data": PNG_1X1, "mimeType": "image/png"}
    return {
        "messages": [
            {"role": "user", "content": image},
            user_text("Please analyze the image above."),
        ]
    }


@server.prompt(
    name="test_input_required_result_prompt", description="MRTR on prompts/get", arguments=[]
)
def mrtr_prompt(ctx: Context) -> Any:
    c = accepted_content(ctx, "user_context")
    context = c.get("context") if c else None
    if isinstance(context, str):
        return {"messages": [user_text(f"Context: {context}")]}
    props = {"context": {"type": "string"}}
    req = elicit_req("What context should the prompt use?", props, ["context"])
    return ctx.input_required({"user_context": req})


@server.completion()
def complete(argument: Dict[str, Any]) -> Dict[str, Any]:
    prefix = argument.get("value") if isinstance(argument, dict) else None
    prefix = prefix if isinstance(prefix, str) else ""
    values = [v for v in ["paris", "park", "party"] if v.startswith(prefix)]
    return {"completion": {"values": values, "total": len(values), "hasMore": False}}


conformance_tasks.register(server)

# ---- main ----


async def serve_http(port: int) -> None:
    handle = await server.serve_http("127.0.0.1", port)
    print(f"conformance-server: listening on {handle.url}", file=sys.stderr, flush=True)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    await stop.wait()
    await handle.close()


def serve_asgi(port: int) -> None:
    """The endpoint as an ASGI app under uvicorn (which stops on SIGTERM/SIGINT). Mounted
    nowhere, it answers every path, ``/mcp`` included."""
    import uvicorn

    print(f"conformance-server: ASGI under uvicorn on http://127.0.0.1:{port}/mcp", file=sys.stderr)
    uvicorn.run(server.asgi_app(), host="127.0.0.1", port=port, log_level="warning")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, help="serve Streamable HTTP on 127.0.0.1:PORT")
    parser.add_argument("--asgi", action="store_true", help="serve it as an ASGI app (uvicorn)")
    args = parser.parse_args()
    if args.port is None:
        if args.asgi:
            parser.error("--asgi needs --port")
        server.run_stdio()
    elif args.asgi:
        serve_asgi(args.port)
    else:
        asyncio.run(serve_http(args.port))


if __name__ == "__main__":
    main()
