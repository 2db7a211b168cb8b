/*
 * echo_server: an MCP server written in C on top of libmcpcore.
 *
 *   echo {text}                 -> the text back
 *   calculate {op, a, b}        -> structured {"value": a op b}; division by zero is a tool error
 *
 * Serves stdio (both protocol eras) until EOF, or with `--http ADDR` (e.g. 127.0.0.1:0) listens
 * for Streamable HTTP, prints `port=N` and serves until stdin reaches EOF. With
 * `--http ADDR --redis URL --request-state-key BASE64` it is one worker of a scale-out deployment:
 * every worker given the same Redis URL and key shares legacy sessions, single use of request
 * states and notifications (the `redis` and `requestState.keys` keys of the server options JSON),
 * so a load balancer may send any request to any of them. Without the key the server refuses to
 * build: no request-state key is ever kept in Redis.
 *
 * Build (see ffi/README.md):
 *   cc -std=c11 -Wall -Wextra -Iinclude examples/c/echo_server.c target/debug/libmcpcore.a \
 *      -lpthread -ldl -lm -o echo_server
 */
#include "mcpcore.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Arguments arrive as compact JSON validated against the input schema, so the escaped text of
 * "text" can be copied verbatim into the result (it is already a valid JSON string body). */
static void echo(void *user_data, const mcp_request_t *req, mcp_responder_t *responder) {
  (void)user_data;
  size_t len = 0;
  const char *args = mcp_request_params_json(req, &len);
  const char *start = strstr(args, "\"text\":\"");
  if (start == NULL) {
    const char *msg = "text is required";
    mcp_responder_error(responder, -32602, msg, strlen(msg), NULL, 0);
    return;
  }
  start += 8;
  const char *end = start;
  while (*end && *end != '"') end += (*end == '\\' && end[1]) ? 2 : 1;
  size_t n = (size_t)(end - start);
  size_t cap = n + 64;
  char *out = malloc(cap);
  if (out == NULL) {
    mcp_responder_free(responder); /* the client gets a generic internal error */
    return;
  }
  int w = snprintf(out, cap, "{\"content\":[{\"type\":\"text\",\"text\":\"%.*s\"}]}", (int)n, start);
  mcp_responder_result(responder, out, (size_t)w);
  free(out);
}

static double number(const char *json, const char *key) {
  const char *p = strstr(json, key);
  return p ? strtod(p + strlen(key), NULL) : 0.0;
}

static void calculate(void *user_data, const mcp_request_t *req, mcp_responder_t *responder) {
  (void)user_data;
  const char *args = mcp_request_params_json(req, NULL);
  double a = number(args, "\"a\":"), b = number(args, "\"b\":");
  double value;
  if (strstr(args, "\"op\":\"add\"")) {
    value = a + b;
  } else if (strstr(args, "\"op\":\"sub\"")) {
    value = a - b;
  } else if (strstr(args, "\"op\":\"mul\"")) {
    value = a * b;
  } else if (b == 0) {
    const char *err = "{\"content\":[{\"type\":\"text\",\"text\":\"division by zero\"}],\"isError\":true}";
    mcp_responder_result(responder, err, strlen(err));
    return;
  } else {
    value = a / b;
  }
  char out[256];
  int w = snprintf(out, sizeof out,
                   "{\"content\":[{\"type\":\"text\",\"text\":\"%.17g\"}],\"structuredContent\":{\"value\":%.17g}}",
                   value, value);
  mcp_responder_result(responder, out, (size_t)w);
}

static int fail(const char *what, mcp_status_t status, mcp_error_t *err) {
  fprintf(stderr, "echo_server: %s: %s: %s\n", what, mcp_status_str(status),
          err ? mcp_error_message(err, NULL) : "");
  mcp_error_free(err);
  return 1;
}

int main(int argc, char **argv) {
  if (argc == 4 || argc == 6 || argc > 7 || (argc >= 5 && strcmp(argv[3], "--redis") != 0) ||
      (argc == 7 && strcmp(argv[5], "--request-state-key") != 0)) {
    fprintf(stderr, "usage: echo_server [--http ADDR [--redis URL [--request-state-key BASE64]]]\n");
    return 2;
  }
  mcp_error_t *err = NULL;
  mcp_status_t s;
  mcp_runtime_t *runtime = NULL;
  if ((s = mcp_runtime_new(0, &runtime, &err)) != MCP_STATUS_OK) return fail("runtime", s, err);

  mcp_server_builder_t *builder = NULL;
  if ((s = mcp_server_builder_new("c-echo", 6, "1.0.0", 5, &builder, &err)) != MCP_STATUS_OK)
    return fail("builder", s, err);

  const char *echo_tool =
      "{\"name\":\"echo\",\"description\":\"Echo the given text back.\","
      "\"inputSchema\":{\"type\":\"object\",\"properties\":{\"text\":{\"type\":\"string\"}},"
      "\"required\":[\"text\"],\"additionalProperties\":false}}";
  if ((s = mcp_server_builder_add_tool(builder, echo_tool, strlen(echo_tool), echo, NULL, NULL, &err)) != MCP_STATUS_OK)
    return fail("echo", s, err);

  const char *calc_tool =
      "{\"name\":\"calculate\",\"description\":\"Apply op (add, sub, mul, div) to a and b.\","
      "\"inputSchema\":{\"type\":\"object\",\"properties\":{\"op\":{\"enum\":[\"add\",\"sub\",\"mul\",\"div\"]},"
      "\"a\":{\"type\":\"number\"},\"b\":{\"type\":\"number\"}},\"required\":[\"op\",\"a\",\"b\"]},"
      "\"outputSchema\":{\"type\":\"object\",\"properties\":{\"value\":{\"type\":\"number\"}},\"required\":[\"value\"]}}";
  if ((s = mcp_server_builder_add_tool(builder, calc_tool, strlen(calc_tool), calculate, NULL, NULL, &err)) !=
      MCP_STATUS_OK)
    return fail("calculate", s, err);

  /* `--redis URL`: the option that selects the Redis backplane, with the request-state key every
   * worker shares (without it the build is refused, naming `requestState.keys`). Both go into
   * JSON strings as they are, so one with a quote or a backslash is refused rather than escaped. */
  if (argc >= 5) {
    const char *url = argv[4];
    const char *key = argc == 7 ? argv[6] : NULL;
    char opts[768];
    int n = key ? snprintf(opts, sizeof opts,
                           "{\"redis\":\"%s\",\"requestState\":{\"keys\":[{\"id\":\"k1\",\"key\":\"%s\"}]}}",
                           url, key)
                : snprintf(opts, sizeof opts, "{\"redis\":\"%s\"}", url);
    if (strpbrk(url, "\"\\") != NULL || (key && strpbrk(key, "\"\\") != NULL) || n < 0 ||
        (size_t)n >= sizeof opts) {
      fprintf(stderr, "echo_server: unusable --redis URL or --request-state-key\n");
      return 2;
    }
    if ((s = mcp_server_builder_options_json(builder, opts, (size_t)n, &err)) != MCP_STATUS_OK)
      return fail("options", s, err);
  }

  mcp_server_t *server = NULL;
  if ((s = mcp_server_builder_build(builder, runtime, &server, &err)) != MCP_STATUS_OK) return fail("build", s, err);

  int code = 0;
  if (argc >= 3 && strcmp(argv[1], "--http") == 0) {
    mcp_listener_t *listener = NULL;
    const char *opts = "{\"path\":\"/mcp\"}";
    s = mcp_server_listen_http(server, argv[2], strlen(argv[2]), opts, strlen(opts), &listener, &err);
    if (s != MCP_STATUS_OK) {
      code = fail("listen", s, err);
    } else {
      printf("port=%u\n", (unsigned)mcp_listener_port(listener));
      fflush(stdout);
      while (getchar() != EOF) {
      }
      mcp_listener_free(listener);
    }
  } else {
    s = mcp_server_serve_stdio(server, &err);
    code = s == MCP_STATUS_OK ? 0 : fail("serve", s, err);
  }
  mcp_server_free(server);
  mcp_runtime_free(runtime);
  return code;
}
