/*
 * The in-memory C client: mcp_client_connect_in_memory on a C server of the same process, in
 * legacy, modern and auto mode (a unit test of a server needs no process and no socket), the
 * client's metrics text, plus its refusals. Prints one line per mode and `in_memory: ok`.
 */
#include "mcpcore.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int failures;

#define CHECK(cond)                                                    \
  do {                                                                 \
    if (!(cond)) {                                                     \
      fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond); \
      failures++;                                                      \
    }                                                                  \
  } while (0)

static void echo(void *user_data, const mcp_request_t *req, mcp_responder_t *responder) {
  (void)user_data;
  const char *args = mcp_request_params_json(req, NULL);
  const char *start = strstr(args, "\"text\":\"");
  const char *end = start ? strchr(start + 8, '"') : NULL;
  if (end == NULL) {
    mcp_responder_free(responder);
    return;
  }
  start += 8;
  char out[256];
  int w = snprintf(out, sizeof out, "{\"content\":[{\"type\":\"text\",\"text\":\"echo:%.*s\"}]}", (int)(end - start),
                   start);
  mcp_responder_result(responder, out, (size_t)w);
}

/* Connect in `mode`, call echo with `word`, print what was negotiated and answered. */
static void round_trip(mcp_runtime_t *rt, mcp_server_t *server, int32_t mode, const char *label, const char *word) {
  mcp_error_t *err = NULL;
  mcp_client_builder_t *b = NULL;
  CHECK(mcp_client_builder_new("c-test", 6, "1", 1, &b, NULL) == MCP_STATUS_OK);
  CHECK(mcp_client_builder_mode(b, mode, NULL) == MCP_STATUS_OK);
  const char *opts = "{\"metrics\":true}";
  CHECK(mcp_client_builder_options_json(b, opts, strlen(opts), NULL) == MCP_STATUS_OK);
  mcp_client_t *c = NULL;
  mcp_status_t s = mcp_client_connect_in_memory(rt, b, server, &c, &err);
  if (s != MCP_STATUS_OK) {
    fprintf(stderr, "%s: connect: %s %s\n", label, mcp_status_str(s), err ? mcp_error_message(err, NULL) : "");
    mcp_error_free(err);
    failures++;
    return;
  }
  char *version = NULL;
  CHECK(mcp_client_protocol_version(c, &version, NULL) == MCP_STATUS_OK);
  char args[64];
  int n = snprintf(args, sizeof args, "{\"text\":\"%s\"}", word);
  char *result = NULL;
  s = mcp_client_call_tool_blocking(c, "echo", 4, args, (size_t)n, NULL, &result, &err);
  CHECK(s == MCP_STATUS_OK);
  char expected[64];
  snprintf(expected, sizeof expected, "echo:%s", word);
  const char *text = result ? strstr(result, expected) : NULL;
  printf("%s: %s modern=%d %s\n", label, version ? version : "?", mcp_client_is_modern(c) ? 1 : 0,
         text ? expected : "(no answer)");
  /* The client's own metrics (the conventions' mcp.client.operation.duration, requests sent). */
  char *metrics = NULL;
  CHECK(mcp_client_metrics_text(c, &metrics, NULL) == MCP_STATUS_OK);
  CHECK(metrics != NULL &&
        strstr(metrics, "mcpcore_client_requests_total{mcp_method_name=\"tools/call\",gen_ai_tool_name=\"echo\"} 1") != NULL);
  CHECK(metrics != NULL && strstr(metrics, "mcp_client_operation_duration_seconds_count") != NULL);
  mcp_string_free(metrics);
  CHECK(mcp_client_metrics_text(NULL, &metrics, NULL) == MCP_STATUS_NULL_ARGUMENT);
  CHECK(mcp_client_metrics_text(c, NULL, NULL) == MCP_STATUS_NULL_ARGUMENT);
  mcp_string_free(result);
  mcp_string_free(version);
  mcp_error_free(err);
  CHECK(mcp_client_close(c, NULL) == MCP_STATUS_OK);
  CHECK(mcp_client_is_closed(c));
  mcp_client_free(c);
}

int main(void) {
  mcp_runtime_t *rt = NULL;
  CHECK(mcp_runtime_new(2, &rt, NULL) == MCP_STATUS_OK);
  mcp_server_builder_t *b = NULL;
  CHECK(mcp_server_builder_new("c-in-memory", 11, "1", 1, &b, NULL) == MCP_STATUS_OK);
  const char *tool = "{\"name\":\"echo\",\"inputSchema\":{\"type\":\"object\","
                     "\"properties\":{\"text\":{\"type\":\"string\"}},\"required\":[\"text\"]}}";
  CHECK(mcp_server_builder_add_tool(b, tool, strlen(tool), echo, NULL, NULL, NULL) == MCP_STATUS_OK);
  mcp_server_t *server = NULL;
  CHECK(mcp_server_builder_build(b, rt, &server, NULL) == MCP_STATUS_OK);
  if (server == NULL) return 1;

  round_trip(rt, server, MCP_CONNECT_MODE_LEGACY, "legacy", "legacy");
  round_trip(rt, server, MCP_CONNECT_MODE_MODERN, "modern", "modern");
  round_trip(rt, server, MCP_CONNECT_MODE_AUTO, "auto", "auto");

  /* Refusals: out-parameters untouched, the builder consumed all the same. */
  mcp_client_t *c = NULL;
  mcp_error_t *err = NULL;
  mcp_client_builder_t *cb = NULL;
  CHECK(mcp_client_builder_new("c-test", 6, "1", 1, &cb, NULL) == MCP_STATUS_OK);
  CHECK(mcp_client_connect_in_memory(rt, cb, NULL, &c, &err) == MCP_STATUS_NULL_ARGUMENT);
  CHECK(c == NULL && err != NULL && mcp_error_status(err) == MCP_STATUS_NULL_ARGUMENT);
  mcp_error_free(err);
  CHECK(mcp_client_connect_in_memory(rt, NULL, server, NULL, NULL) == MCP_STATUS_NULL_ARGUMENT);

  mcp_server_free(server);
  mcp_runtime_free(rt);
  if (failures) {
    fprintf(stderr, "in_memory: %d failure(s)\n", failures);
    return 1;
  }
  printf("in_memory: ok\n");
  return 0;
}
