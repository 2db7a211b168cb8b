/*
 * parity_server: the feature list of the cross-door parity check (scripts/parity.py), written
 * against the C ABI. The same list is written in Rust (server.rs), Python (server.py) and Node
 * (server.mjs); the four must answer the same requests identically in both eras. Serves stdio.
 *
 * A C handler answers with the result JSON itself; core shapes nothing for C, so each result
 * here is what the other doors' values become (a string: one text block; a structured value:
 * structuredContent plus its compact JSON as text; bytes with a MIME type: a base64 image).
 */
#include "mcpcore.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void reply(mcp_responder_t *responder, const char *json) {
  mcp_responder_result(responder, json, strlen(json));
}

/* The string value of "key" in compact JSON, unescaped no further than a JSON string body
 * (enough for the check's inputs, which carry no escapes). */
static size_t string_value(const char *json, const char *key, const char **start) {
  const char *p = strstr(json, key);
  if (p == NULL) return 0;
  p += strlen(key);
  const char *end = p;
  while (*end && *end != '"') end += (*end == '\\' && end[1]) ? 2 : 1;
  *start = p;
  return (size_t)(end - p);
}

static void echo(void *ud, const mcp_request_t *req, mcp_responder_t *responder) {
  (void)ud;
  const char *text = "";
  size_t n = string_value(mcp_request_params_json(req, NULL), "\"text\":\"", &text);
  char out[512];
  snprintf(out, sizeof out, "{\"content\":[{\"type\":\"text\",\"text\":\"%.*s\"}]}", (int)n, text);
  reply(responder, out);
}

static double number(const char *json, const char *key) {
  const char *p = strstr(json, key);
  return p ? strtod(p + strlen(key), NULL) : 0.0;
}

static void add(void *ud, const mcp_request_t *req, mcp_responder_t *responder) {
  (void)ud;
  const char *args = mcp_request_params_json(req, NULL);
  long long sum = (long long)number(args, "\"a\":") + (long long)number(args, "\"b\":");
  char out[256];
  snprintf(out, sizeof out,
           "{\"content\":[{\"type\":\"text\",\"text\":\"{\\\"sum\\\":%lld}\"}],"
           "\"structuredContent\":{\"sum\":%lld}}",
           sum, sum);
  reply(responder, out);
}

static void blocks(void *ud, const mcp_request_t *req, mcp_responder_t *responder) {
  (void)ud, (void)req;
  reply(responder, "{\"content\":[{\"type\":\"text\",\"text\":\"one\"},{\"type\":\"text\",\"text\":\"two\"}]}");
}

static void pixel(void *ud, const mcp_request_t *req, mcp_responder_t *responder) {
  (void)ud, (void)req;
  /* base64 of 89 50 4e 47 */
  reply(responder, "{\"content\":[{\"type\":\"image\",\"data\":\"iVBORw==\",\"mimeType\":\"image/png\"}]}");
}

static void refuse(void *ud, const mcp_request_t *req, mcp_responder_t *responder) {
  (void)ud, (void)req;
  reply(responder, "{\"content\":[{\"type\":\"text\",\"text\":\"no such item\"}],\"isError\":true}");
}

static void broken(void *ud, const mcp_request_t *req, mcp_responder_t *responder) {
  (void)ud, (void)req;
  const char *msg = "backend unavailable";
  mcp_responder_error(responder, -32000, msg, strlen(msg), NULL, 0);
}

static void greet(void *ud, const mcp_request_t *req, mcp_responder_t *responder) {
  (void)ud;
  const char *name = "";
  size_t n = string_value(mcp_request_params_json(req, NULL), "\"name\":\"", &name);
  char out[512];
  snprintf(out, sizeof out,
           "{\"messages\":[{\"role\":\"user\",\"content\":{\"type\":\"text\",\"text\":\"Hello, %.*s!\"}}]}",
           (int)n, name);
  reply(responder, out);
}

static void readme(void *ud, const mcp_request_t *req, mcp_responder_t *responder) {
  (void)ud, (void)req;
  reply(responder,
        "{\"contents\":[{\"uri\":\"parity://readme\",\"mimeType\":\"text/plain\",\"text\":\"parity fixture\"}]}");
}

static void complete(void *ud, const mcp_request_t *req, mcp_responder_t *responder) {
  (void)ud;
  static const char *names[] = {"alice", "albert", "bob"};
  const char *prefix = "";
  size_t n = string_value(mcp_request_params_json(req, NULL), "\"value\":\"", &prefix);
  char out[512];
  size_t w = (size_t)snprintf(out, sizeof out, "{\"completion\":{\"values\":[");
  int count = 0;
  for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
    if (strncmp(names[i], prefix, n) != 0) continue;
    w += (size_t)snprintf(out + w, sizeof out - w, "%s\"%s\"", count ? "," : "", names[i]);
    count++;
  }
  snprintf(out + w, sizeof out - w, "],\"total\":%d,\"hasMore\":false}}", count);
  reply(responder, out);
}

static int fail(const char *what, mcp_status_t status, mcp_error_t *err) {
  fprintf(stderr, "parity_server: %s: %s: %s\n", what, mcp_status_str(status),
          err ? mcp_error_message(err, NULL) : "");
  mcp_error_free(err);
  return 1;
}

#define NO_ARGS "\"inputSchema\":{\"type\":\"object\"}}"

int main(void) {
  mcp_error_t *err = NULL;
  mcp_status_t s;
  mcp_runtime_t *runtime = NULL;
  if ((s = mcp_runtime_new(0, &runtime, &err)) != MCP_STATUS_OK) return fail("runtime", s, err);
  mcp_server_builder_t *b = NULL;
  if ((s = mcp_server_builder_new("parity", 6, "1.0.0", 5, &b, &err)) != MCP_STATUS_OK) return fail("builder", s, err);

  struct { const char *json; mcp_handler_fn fn; } tools[] = {
      {"{\"name\":\"echo\",\"description\":\"Echo the text back.\",\"inputSchema\":{\"type\":\"object\","
       "\"properties\":{\"text\":{\"type\":\"string\"}},\"required\":[\"text\"]}}", echo},
      {"{\"name\":\"add\",\"description\":\"Add two numbers.\",\"inputSchema\":{\"type\":\"object\","
       "\"properties\":{\"a\":{\"type\":\"integer\"},\"b\":{\"type\":\"integer\"}},\"required\":[\"a\",\"b\"]},"
       "\"outputSchema\":{\"type\":\"object\",\"properties\":{\"sum\":{\"type\":\"integer\"}},\"required\":[\"sum\"]}}",
       add},
      {"{\"name\":\"blocks\",\"description\":\"Two text blocks.\"," NO_ARGS, blocks},
      {"{\"name\":\"pixel\",\"description\":\"A tiny PNG.\"," NO_ARGS, pixel},
      {"{\"name\":\"refuse\",\"description\":\"Fails as a tool (isError).\"," NO_ARGS, refuse},
      {"{\"name\":\"broken\",\"description\":\"Fails with a JSON-RPC error.\"," NO_ARGS, broken},
  };
  for (size_t i = 0; i < sizeof tools / sizeof *tools; i++) {
    s = mcp_server_builder_add_tool(b, tools[i].json, strlen(tools[i].json), tools[i].fn, NULL, NULL, &err);
    if (s != MCP_STATUS_OK) return fail("tool", s, err);
  }
  const char *prompt = "{\"name\":\"greet\",\"description\":\"Greet someone.\",\"arguments\":[{\"name\":\"name\","
                       "\"description\":\"Who to greet\",\"required\":true}]}";
  if ((s = mcp_server_builder_add_prompt(b, prompt, strlen(prompt), greet, NULL, NULL, &err)) != MCP_STATUS_OK)
    return fail("prompt", s, err);
  const char *resource = "{\"uri\":\"parity://readme\",\"name\":\"readme\",\"description\":\"About this server.\","
                         "\"mimeType\":\"text/plain\"}";
  if ((s = mcp_server_builder_add_resource(b, resource, strlen(resource), readme, NULL, NULL, &err)) != MCP_STATUS_OK)
    return fail("resource", s, err);
  if ((s = mcp_server_builder_set_completion(b, complete, NULL, NULL, &err)) != MCP_STATUS_OK)
    return fail("completion", s, err);

  mcp_server_t *server = NULL;
  if ((s = mcp_server_builder_build(b, runtime, &server, &err)) != MCP_STATUS_OK) return fail("build", s, err);
  s = mcp_server_serve_stdio(server, &err);
  int code = s == MCP_STATUS_OK ? 0 : fail("serve", s, err);
  mcp_server_free(server);
  mcp_runtime_free(runtime);
  return code;
}
