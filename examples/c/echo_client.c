/*
 * echo_client: an MCP client written in C on top of libmcpcore. It connects to the C echo server
 * (examples/c/echo_server.c), lists its tools and calls them, printing the results.
 *
 *   echo_client SERVER [ARGS...]    spawn SERVER and talk MCP over its stdin/stdout
 *   echo_client --http URL          connect to a Streamable HTTP endpoint, e.g.
 *                                   `echo_server --http 127.0.0.1:8080` → http://127.0.0.1:8080/mcp
 *
 * Build (see ffi/README.md):
 *   cc -std=c11 -Wall -Wextra -Iinclude examples/c/echo_client.c target/debug/libmcpcore.a \
 *      -lpthread -ldl -lm -o echo_client
 */
#include "mcpcore.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int fail(const char *what, mcp_status_t status, mcp_error_t *err) {
  fprintf(stderr, "echo_client: %s: %s", what, mcp_status_str((int)status));
  if (err != NULL) {
    /* A server's JSON-RPC error keeps its code. */
    fprintf(stderr, " (code %lld): %s", (long long)mcp_error_jsonrpc_code(err),
            mcp_error_message(err, NULL));
  }
  fprintf(stderr, "\n");
  mcp_error_free(err);
  return 1;
}

/* Print every "name":"..." of a tools list (tool names come first in each definition). */
static void print_tool_names(const char *json) {
  printf("tools: ");
  const char *p = json;
  int first = 1;
  while ((p = strstr(p, "\"name\":\"")) != NULL) {
    p += 8;
    const char *end = strchr(p, '"');
    if (end == NULL) break;
    printf("%s%.*s", first ? "" : ", ", (int)(end - p), p);
    first = 0;
    p = end;
  }
  printf("\n");
}

/* Print the JSON value that follows `key` in `json` (an object or a string). */
static void print_member(const char *label, const char *json, const char *key) {
  const char *p = strstr(json, key);
  if (p == NULL) {
    printf("%s -> (missing %s in %s)\n", label, key, json);
    return;
  }
  p += strlen(key);
  const char *end = p;
  if (*p == '{') {
    int depth = 0;
    do {
      if (*end == '{') depth++;
      if (*end == '}') depth--;
      end++;
    } while (*end && depth > 0);
  } else {
    p++; /* opening quote */
    end = p;
    while (*end && *end != '"') end += (*end == '\\' && end[1]) ? 2 : 1;
  }
  printf("%s -> %.*s\n", label, (int)(end - p), p);
}

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: echo_client SERVER [ARGS...] | echo_client --http URL\n");
    return 2;
  }
  mcp_error_t *err = NULL;
  mcp_status_t s;
  mcp_runtime_t *runtime = NULL;
  if ((s = mcp_runtime_new(0, &runtime, &err)) != MCP_STATUS_OK) return fail("runtime", s, err);

  mcp_client_builder_t *builder = NULL;
  if ((s = mcp_client_builder_new("c-echo-client", 13, "1.0.0", 5, &builder, &err)) != MCP_STATUS_OK)
    return fail("builder", s, err);
  /* No answer may take longer than 30 s. */
  mcp_client_builder_request_timeout_ms(builder, 30000);

  mcp_client_t *client = NULL;
  if (argc == 3 && strcmp(argv[1], "--http") == 0) {
    s = mcp_client_connect_http(runtime, builder, argv[2], strlen(argv[2]), NULL, 0, &client, &err);
  } else {
    /* Arguments are NUL-terminated here, so no length array is needed. */
    s = mcp_client_connect_stdio(runtime, builder, argv[1], strlen(argv[1]),
                                 (const char *const *)(argv + 2), NULL, (size_t)(argc - 2), NULL,
                                 0, &client, &err);
  }
  if (s != MCP_STATUS_OK) return fail("connect", s, err); /* the builder was consumed */

  int code = 0;
  char *version = NULL, *result = NULL;
  if ((s = mcp_client_protocol_version(client, &version, &err)) != MCP_STATUS_OK) {
    code = fail("version", s, err);
    goto done;
  }
  printf("connected: protocol %s (%s era)\n", version, mcp_client_is_modern(client) ? "modern" : "legacy");
  mcp_string_free(version);

  if ((s = mcp_client_list_all_blocking(client, MCP_LIST_KIND_TOOLS, NULL, &result, &err)) !=
      MCP_STATUS_OK) {
    code = fail("tools/list", s, err);
    goto done;
  }
  print_tool_names(result);
  mcp_string_free(result);

  const char *args = "{\"text\":\"hello from C\"}";
  if ((s = mcp_client_call_tool_blocking(client, "echo", 4, args, strlen(args), NULL, &result,
                                         &err)) != MCP_STATUS_OK) {
    code = fail("echo", s, err);
    goto done;
  }
  print_member("echo", result, "\"text\":");
  mcp_string_free(result);

  args = "{\"op\":\"mul\",\"a\":6,\"b\":7}";
  if ((s = mcp_client_call_tool_blocking(client, "calculate", 9, args, strlen(args), NULL, &result,
                                         &err)) != MCP_STATUS_OK) {
    code = fail("calculate", s, err);
    goto done;
  }
  print_member("calculate", result, "\"structuredContent\":");
  mcp_string_free(result);

done:
  mcp_client_free(client); /* closes the connection (stdio: the server sees EOF and exits) */
  mcp_runtime_free(runtime);
  return code;
}
