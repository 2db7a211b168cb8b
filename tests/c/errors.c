/*
 * Every error status path of the C ABI that needs no peer: NULL arguments, bad UTF-8, bad JSON,
 * refused options and registrations, consumed builders, out-params left untouched on failure,
 * finalizers run exactly once on every failure path, status names.
 */
#include "mcpcore.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int failures;
static atomic_int freed;

#define EXPECT(cond)                                                        \
  do {                                                                      \
    if (!(cond)) {                                                          \
      fprintf(stderr, "%s:%d: expectation failed: %s\n", __FILE__, __LINE__, #cond); \
      failures++;                                                           \
    }                                                                       \
  } while (0)

#define EXPECT_STATUS(expr, want)                                                             \
  do {                                                                                        \
    mcp_status_t got_ = (expr);                                                               \
    if (got_ != (want)) {                                                                     \
      fprintf(stderr, "%s:%d: %s returned %s, expected %s\n", __FILE__, __LINE__, #expr,     \
              mcp_status_str(got_), mcp_status_str(want));                                    \
      failures++;                                                                             \
    }                                                                                         \
  } while (0)

static void count_free(void *p) {
  (void)p;
  atomic_fetch_add(&freed, 1);
}

static void refuse_all(void *ud, const char *token, size_t len, mcp_token_verdict_t *verdict) {
  (void)ud;
  (void)token;
  (void)len;
  mcp_token_verdict_refuse(verdict, "no", 2);
}

static void never_called(void *ud, const mcp_request_t *req, mcp_responder_t *r) {
  (void)ud;
  (void)req;
  mcp_responder_free(r);
}

static mcp_server_builder_t *new_builder(void) {
  mcp_server_builder_t *b = NULL;
  EXPECT_STATUS(mcp_server_builder_new("t", 1, "1", 1, &b, NULL), MCP_STATUS_OK);
  return b;
}

/* The error object: status, message, code, data, and the status name. */
static void expect_error(mcp_error_t *err, mcp_status_t want, const char *needle) {
  EXPECT(err != NULL);
  if (err == NULL) return;
  EXPECT(mcp_error_status(err) == want);
  size_t len = 0;
  const char *msg = mcp_error_message(err, &len);
  EXPECT(msg != NULL && strlen(msg) == len);
  if (needle && (msg == NULL || strstr(msg, needle) == NULL)) {
    fprintf(stderr, "message %s lacks %s\n", msg ? msg : "(null)", needle);
    failures++;
  }
  EXPECT(mcp_error_jsonrpc_code(err) == 0);
  EXPECT(mcp_error_data_json(err, NULL) == NULL);
  mcp_error_free(err);
}

static void statuses(void) {
  EXPECT(strcmp(mcp_status_str(MCP_STATUS_OK), "MCP_STATUS_OK") == 0);
  EXPECT(strcmp(mcp_status_str(MCP_STATUS_WOULD_DEADLOCK), "MCP_STATUS_WOULD_DEADLOCK") == 0);
  EXPECT(strcmp(mcp_status_str(MCP_STATUS_PANIC), "MCP_STATUS_PANIC") == 0);
  EXPECT(strcmp(mcp_status_str(-1), "MCP_STATUS_UNKNOWN") == 0);
  EXPECT(strcmp(mcp_status_str(12345), "MCP_STATUS_UNKNOWN") == 0);
  /* Stable numbers. */
  EXPECT(MCP_STATUS_OK == 0 && MCP_STATUS_NULL_ARGUMENT == 1 && MCP_STATUS_INVALID_ARGUMENT == 2 &&
         MCP_STATUS_INVALID_UTF8 == 3 && MCP_STATUS_INVALID_JSON == 4 && MCP_STATUS_PROTOCOL == 5 &&
         MCP_STATUS_TRANSPORT == 6 && MCP_STATUS_TIMEOUT == 7 && MCP_STATUS_CANCELLED == 8 &&
         MCP_STATUS_CLOSED == 9 && MCP_STATUS_LIMIT_EXCEEDED == 10 && MCP_STATUS_WOULD_DEADLOCK == 11 &&
         MCP_STATUS_PANIC == 12 && MCP_STATUS_UNSUPPORTED == 13);
  /* MCP_STATUS_ALL lists every status in number order; each has a name. */
  static const mcp_status_t all[MCP_STATUS_COUNT] = MCP_STATUS_ALL;
  for (int i = 0; i < MCP_STATUS_COUNT; i++) {
    EXPECT((int)all[i] == i);
    EXPECT(strcmp(mcp_status_str(all[i]), "MCP_STATUS_UNKNOWN") != 0);
  }
  EXPECT(strcmp(mcp_status_str(MCP_STATUS_COUNT), "MCP_STATUS_UNKNOWN") == 0);
}

static void nulls(void) {
  mcp_error_t *err = NULL;
  EXPECT_STATUS(mcp_runtime_new(1, NULL, &err), MCP_STATUS_NULL_ARGUMENT);
  expect_error(err, MCP_STATUS_NULL_ARGUMENT, "runtime_out");

  /* Out-params are untouched on failure. */
  mcp_server_builder_t *sentinel = (mcp_server_builder_t *)(void *)&failures;
  mcp_server_builder_t *b = sentinel;
  err = NULL;
  EXPECT_STATUS(mcp_server_builder_new(NULL, 3, "1", 1, &b, &err), MCP_STATUS_NULL_ARGUMENT);
  EXPECT(b == sentinel);
  expect_error(err, MCP_STATUS_NULL_ARGUMENT, "name");
  EXPECT_STATUS(mcp_server_builder_new("t", 1, "1", 1, NULL, NULL), MCP_STATUS_NULL_ARGUMENT);

  EXPECT_STATUS(mcp_server_builder_instructions(NULL, "x", 1, NULL), MCP_STATUS_NULL_ARGUMENT);
  EXPECT_STATUS(mcp_server_builder_options_json(NULL, "{}", 2, NULL), MCP_STATUS_NULL_ARGUMENT);
  EXPECT_STATUS(mcp_server_builder_max_concurrency(NULL, 1), MCP_STATUS_NULL_ARGUMENT);
  EXPECT_STATUS(mcp_server_builder_build(NULL, NULL, NULL, NULL), MCP_STATUS_NULL_ARGUMENT);
  EXPECT_STATUS(mcp_server_serve_stdio(NULL, NULL), MCP_STATUS_NULL_ARGUMENT);
  EXPECT_STATUS(mcp_server_notify_list_changed(NULL, "tools", 5, NULL), MCP_STATUS_NULL_ARGUMENT);
  EXPECT_STATUS(mcp_server_notify_resource_updated(NULL, "x", 1, NULL), MCP_STATUS_NULL_ARGUMENT);
  EXPECT_STATUS(mcp_responder_result(NULL, "{}", 2), MCP_STATUS_NULL_ARGUMENT);
  EXPECT_STATUS(mcp_responder_error(NULL, -1, "m", 1, NULL, 0), MCP_STATUS_NULL_ARGUMENT);
  EXPECT_STATUS(mcp_responder_input_required(NULL, NULL, 0, "s", 1), MCP_STATUS_NULL_ARGUMENT);
  EXPECT_STATUS(mcp_responder_progress(NULL, 1, 1, NULL, 0, NULL), MCP_STATUS_NULL_ARGUMENT);
  EXPECT_STATUS(mcp_responder_log(NULL, 0, NULL, 0, "1", 1, NULL), MCP_STATUS_NULL_ARGUMENT);
  EXPECT_STATUS(mcp_responder_request_client(NULL, "ping", 4, NULL, 0, 0, NULL, NULL, NULL),
                MCP_STATUS_NULL_ARGUMENT);
  char *out = NULL;
  EXPECT_STATUS(mcp_responder_request_client_blocking(NULL, "ping", 4, NULL, 0, 0, &out, NULL),
                MCP_STATUS_NULL_ARGUMENT);
  EXPECT(out == NULL);
  EXPECT(!mcp_responder_is_cancelled(NULL));
  EXPECT(mcp_request_method(NULL, NULL) == NULL);
  EXPECT(mcp_request_params_json(NULL, NULL) == NULL);
  EXPECT(!mcp_request_is_modern(NULL));
  EXPECT(mcp_error_status(NULL) == MCP_STATUS_NULL_ARGUMENT);
  EXPECT(mcp_error_message(NULL, NULL) == NULL);
  EXPECT(mcp_error_jsonrpc_code(NULL) == 0);
  /* Free functions accept NULL. */
  mcp_responder_free(NULL);
  mcp_error_free(NULL);
  mcp_string_free(NULL);
  mcp_server_free(NULL);
  mcp_server_builder_free(NULL);
  mcp_runtime_free(NULL);
  mcp_server_shutdown(NULL);
}

static void utf8_and_json(void) {
  mcp_error_t *err = NULL;
  mcp_server_builder_t *b = NULL;
  const char bad[] = {'o', 'k', (char)0xff, 0};
  EXPECT_STATUS(mcp_server_builder_new(bad, 3, "1", 1, &b, &err), MCP_STATUS_INVALID_UTF8);
  EXPECT(b == NULL);
  expect_error(err, MCP_STATUS_INVALID_UTF8, "UTF-8");

  b = new_builder();
  err = NULL;
  EXPECT_STATUS(mcp_server_builder_instructions(b, bad, 3, &err), MCP_STATUS_INVALID_UTF8);
  expect_error(err, MCP_STATUS_INVALID_UTF8, NULL);
  /* Lengths are honoured: only the first byte of "x\xff" is read. */
  EXPECT_STATUS(mcp_server_builder_instructions(b, "x\xff", 1, NULL), MCP_STATUS_OK);

  err = NULL;
  EXPECT_STATUS(mcp_server_builder_options_json(b, "{not json", 9, &err), MCP_STATUS_INVALID_JSON);
  expect_error(err, MCP_STATUS_INVALID_JSON, NULL);
  err = NULL;
  EXPECT_STATUS(mcp_server_builder_options_json(b, "[1]", 3, &err), MCP_STATUS_INVALID_JSON);
  expect_error(err, MCP_STATUS_INVALID_JSON, "object");
  err = NULL;
  EXPECT_STATUS(mcp_server_builder_options_json(b, "{\"pageSiz\":3}", 13, &err), MCP_STATUS_INVALID_JSON);
  expect_error(err, MCP_STATUS_INVALID_JSON, "pageSiz");
  err = NULL;
  EXPECT_STATUS(mcp_server_builder_options_json(b, "{\"cacheScope\":\"world\"}", 22, &err),
                MCP_STATUS_INVALID_ARGUMENT);
  expect_error(err, MCP_STATUS_INVALID_ARGUMENT, "cacheScope");
  EXPECT_STATUS(mcp_server_builder_options_json(b, "{\"pageSize\":2,\"logging\":true}", 29, NULL), MCP_STATUS_OK);
  /* Limits use core's JSON shape: every knob settable, unknown keys and zero limits refused. */
  {
    const char *ok = "{\"limits\":{\"maxOutboundBytes\":65536,\"maxInflight\":8,\"stdioIdleSpinUs\":0}}";
    const char *unknown = "{\"limits\":{\"maxInflite\":8}}";
    const char *negative = "{\"limits\":{\"maxOutboundBytes\":-1}}";
    EXPECT_STATUS(mcp_server_builder_options_json(b, ok, strlen(ok), NULL), MCP_STATUS_OK);
    err = NULL;
    EXPECT_STATUS(mcp_server_builder_options_json(b, unknown, strlen(unknown), &err), MCP_STATUS_INVALID_JSON);
    expect_error(err, MCP_STATUS_INVALID_JSON, "maxInflite");
    err = NULL;
    EXPECT_STATUS(mcp_server_builder_options_json(b, negative, strlen(negative), &err), MCP_STATUS_INVALID_ARGUMENT);
    expect_error(err, MCP_STATUS_INVALID_ARGUMENT, "-1");
    const char *state = "{\"requestState\":{\"singleUse\":true,\"replayCacheCapacity\":64,\"ttlMs\":1000}}";
    const char *no_ttl = "{\"requestState\":{\"ttlMs\":0}}";
    EXPECT_STATUS(mcp_server_builder_options_json(b, state, strlen(state), NULL), MCP_STATUS_OK);
    err = NULL;
    EXPECT_STATUS(mcp_server_builder_options_json(b, no_ttl, strlen(no_ttl), &err), MCP_STATUS_INVALID_ARGUMENT);
    expect_error(err, MCP_STATUS_INVALID_ARGUMENT, "ttlMs");
    /* Every documented key of core's ServerOptions shape (the same JSON a Rust program applies). */
    const char *all =
        "{\"name\":\"n\",\"version\":\"2\",\"title\":\"T\",\"description\":\"D\",\"websiteUrl\":\"https://x\","
        "\"icons\":[],\"instructions\":\"I\",\"pageSize\":10,\"logging\":false,\"toolsListChanged\":false,"
        "\"promptsListChanged\":false,\"resourcesListChanged\":false,\"resourcesSubscribe\":false,"
        "\"extensions\":{\"a/b\":{}},\"cacheTtlMs\":5,\"cacheScope\":\"public\",\"legacyCacheHints\":true,"
        "\"maxConcurrency\":1,\"legacyInputShim\":false,\"stampServerInfo\":false,"
        "\"limits\":{\"maxJsonDepth\":32},\"requestState\":{\"audience\":\"a\"}}";
    EXPECT_STATUS(mcp_server_builder_options_json(b, all, strlen(all), NULL), MCP_STATUS_OK);
  }
  mcp_server_builder_free(b);
}

/* Registrations own user_data on every path: failures run the finalizer before returning. */
static void registrations(void) {
  mcp_runtime_t *rt = NULL;
  EXPECT_STATUS(mcp_runtime_new(1, &rt, NULL), MCP_STATUS_OK);
  mcp_error_t *err = NULL;
  mcp_server_builder_t *b = new_builder();
  atomic_store(&freed, 0);

  EXPECT_STATUS(mcp_server_builder_add_tool(b, "{bad", 4, never_called, NULL, count_free, &err),
                MCP_STATUS_INVALID_JSON);
  expect_error(err, MCP_STATUS_INVALID_JSON, "tool_json");
  EXPECT(atomic_load(&freed) == 1);

  EXPECT_STATUS(mcp_server_builder_add_tool(b, "{\"name\":\"t\"}", 12, NULL, NULL, count_free, NULL),
                MCP_STATUS_NULL_ARGUMENT);
  EXPECT(atomic_load(&freed) == 2);
  EXPECT_STATUS(mcp_server_builder_add_tool(NULL, "{\"name\":\"t\"}", 12, never_called, NULL, count_free, NULL),
                MCP_STATUS_NULL_ARGUMENT);
  EXPECT(atomic_load(&freed) == 3);
  err = NULL;
  EXPECT_STATUS(mcp_server_builder_add_tool(b, "{\"description\":\"no name\"}", 25, never_called, NULL, count_free, &err),
                MCP_STATUS_INVALID_JSON);
  expect_error(err, MCP_STATUS_INVALID_JSON, "name");
  EXPECT(atomic_load(&freed) == 4);
  EXPECT_STATUS(mcp_server_builder_add_method(b, "\xc3", 1, never_called, NULL, count_free, NULL),
                MCP_STATUS_INVALID_UTF8);
  EXPECT(atomic_load(&freed) == 5);

  /* A second registration under a taken name is refused at once: its user data is released
     before the call returns (exactly once), and the builder stays usable. */
  EXPECT_STATUS(mcp_server_builder_add_tool(b, "{\"name\":\"t\"}", 12, never_called, NULL, count_free, NULL),
                MCP_STATUS_OK);
  err = NULL;
  EXPECT_STATUS(mcp_server_builder_add_tool(b, "{\"name\":\"t\"}", 12, never_called, NULL, count_free, &err),
                MCP_STATUS_INVALID_ARGUMENT);
  expect_error(err, MCP_STATUS_INVALID_ARGUMENT, "duplicate");
  EXPECT(atomic_load(&freed) == 6);
  {
    const char *p = "{\"name\":\"p\"}";
    const char *r = "{\"uri\":\"a://b\",\"name\":\"b\"}";
    const char *t = "{\"uriTemplate\":\"a://{x}\",\"name\":\"x\"}";
    for (int round = 0; round < 2; round++) {
      mcp_status_t want = round == 0 ? MCP_STATUS_OK : MCP_STATUS_INVALID_ARGUMENT;
      EXPECT_STATUS(mcp_server_builder_add_prompt(b, p, strlen(p), never_called, NULL, count_free, NULL), want);
      EXPECT_STATUS(mcp_server_builder_add_resource(b, r, strlen(r), never_called, NULL, count_free, NULL), want);
      EXPECT_STATUS(mcp_server_builder_add_resource_template(b, t, strlen(t), never_called, NULL, count_free, NULL),
                    want);
      EXPECT_STATUS(mcp_server_builder_add_method(b, "x/y", 3, never_called, NULL, count_free, NULL), want);
    }
  }
  EXPECT(atomic_load(&freed) == 10);
  /* A built-in method name cannot be taken. */
  EXPECT_STATUS(mcp_server_builder_add_method(b, "tools/list", 10, never_called, NULL, count_free, NULL),
                MCP_STATUS_INVALID_ARGUMENT);
  EXPECT(atomic_load(&freed) == 11);
  /* A NUL byte (or any control character) inside a name is refused, not cut short. */
  {
    const char nul_tool[] = "{\"name\":\"a\\u0000b\"}";
    const char nul_method[] = {'x', '/', '\0', 'y'};
    err = NULL;
    EXPECT_STATUS(mcp_server_builder_add_tool(b, nul_tool, strlen(nul_tool), never_called, NULL, count_free, &err),
                  MCP_STATUS_INVALID_ARGUMENT);
    expect_error(err, MCP_STATUS_INVALID_ARGUMENT, "control");
    EXPECT_STATUS(mcp_server_builder_add_method(b, nul_method, sizeof nul_method, never_called, NULL, count_free,
                                                NULL),
                  MCP_STATUS_INVALID_ARGUMENT);
    EXPECT_STATUS(mcp_server_builder_add_method(b, "", 0, never_called, NULL, count_free, NULL),
                  MCP_STATUS_INVALID_ARGUMENT);
  }
  EXPECT(atomic_load(&freed) == 14);
  /* An invalid schema is refused at registration too. */
  {
    const char *bad_schema = "{\"name\":\"s\",\"inputSchema\":{\"type\":\"array\"}}";
    err = NULL;
    EXPECT_STATUS(mcp_server_builder_add_tool(b, bad_schema, strlen(bad_schema), never_called, NULL, count_free, &err),
                  MCP_STATUS_INVALID_ARGUMENT);
    expect_error(err, MCP_STATUS_INVALID_ARGUMENT, "s");
  }
  EXPECT(atomic_load(&freed) == 15);
  /* What was registered builds; the server's registrations are released when it is freed. */
  mcp_server_t *server = NULL;
  EXPECT_STATUS(mcp_server_builder_build(b, rt, &server, NULL), MCP_STATUS_OK);
  EXPECT(atomic_load(&freed) == 15);
  mcp_server_free(server);
  EXPECT(atomic_load(&freed) == 20);
  server = NULL;

  /* A zero limit is refused at build. */
  b = new_builder();
  EXPECT_STATUS(mcp_server_builder_options_json(b, "{\"limits\":{\"maxInflight\":0}}", 28, NULL), MCP_STATUS_OK);
  err = NULL;
  EXPECT_STATUS(mcp_server_builder_build(b, rt, &server, &err), MCP_STATUS_INVALID_ARGUMENT);
  expect_error(err, MCP_STATUS_INVALID_ARGUMENT, "max_inflight");

  /* A NULL runtime still consumes the builder. */
  b = new_builder();
  EXPECT_STATUS(mcp_server_builder_add_prompt(b, "{\"name\":\"p\"}", 12, never_called, NULL, count_free, NULL),
                MCP_STATUS_OK);
  EXPECT_STATUS(mcp_server_builder_build(b, NULL, &server, NULL), MCP_STATUS_NULL_ARGUMENT);
  EXPECT(atomic_load(&freed) == 21);

  /* A built server: its user data is released by mcp_server_free. */
  b = new_builder();
  EXPECT_STATUS(mcp_server_builder_add_tool(b, "{\"name\":\"t\"}", 12, never_called, NULL, count_free, NULL),
                MCP_STATUS_OK);
  EXPECT_STATUS(mcp_server_builder_set_completion(b, never_called, NULL, count_free, NULL), MCP_STATUS_OK);
  EXPECT_STATUS(mcp_server_builder_max_concurrency(b, 1), MCP_STATUS_OK);
  EXPECT_STATUS(mcp_server_builder_build(b, rt, &server, NULL), MCP_STATUS_OK);
  EXPECT(server != NULL);
  size_t told = 99;
  err = NULL;
  EXPECT_STATUS(mcp_server_notify_list_changed(server, "widgets", 7, &told), MCP_STATUS_INVALID_ARGUMENT);
  EXPECT(told == 99);
  EXPECT_STATUS(mcp_server_notify_list_changed(server, "tools", 5, &told), MCP_STATUS_OK);
  EXPECT(told == 0);
  EXPECT_STATUS(mcp_server_notify_resource_updated(server, "x://y", 5, &told), MCP_STATUS_OK);
  EXPECT(atomic_load(&freed) == 21);
  /* HTTP listener argument errors; out-param untouched. */
  mcp_listener_t *listener = NULL;
  err = NULL;
  EXPECT_STATUS(mcp_server_listen_http(server, "nowhere", 7, NULL, 0, &listener, &err), MCP_STATUS_INVALID_ARGUMENT);
  expect_error(err, MCP_STATUS_INVALID_ARGUMENT, "nowhere");
  err = NULL;
  EXPECT_STATUS(mcp_server_listen_http(server, "127.0.0.1:0", 11, "{\"pth\":1}", 9, &listener, &err),
                MCP_STATUS_INVALID_JSON);
  expect_error(err, MCP_STATUS_INVALID_JSON, "pth");
  EXPECT_STATUS(mcp_server_listen_http(server, "127.0.0.1:0", 11, "{\"allowedHosts\":\"all\"}", 22, &listener, NULL),
                MCP_STATUS_INVALID_ARGUMENT);
  EXPECT_STATUS(mcp_server_listen_http(NULL, "127.0.0.1:0", 11, NULL, 0, &listener, NULL), MCP_STATUS_NULL_ARGUMENT);
  EXPECT_STATUS(mcp_server_listen_http(server, "127.0.0.1:0", 11, NULL, 0, NULL, NULL), MCP_STATUS_NULL_ARGUMENT);
  EXPECT(listener == NULL);
  EXPECT(mcp_listener_port(NULL) == 0);
  mcp_listener_free(NULL);
  /* A real listener on port 0 reports its port; freeing it stops it. */
  EXPECT_STATUS(mcp_server_listen_http(server, "127.0.0.1:0", 11, NULL, 0, &listener, NULL), MCP_STATUS_OK);
  EXPECT(listener != NULL && mcp_listener_port(listener) != 0);
  mcp_listener_free(listener);
  /* Every connection limit and timeout of core's HttpOptions is settable; zero is refused. */
  {
    const char *knobs = "{\"maxConnections\":8,\"headerReadTimeoutMs\":500,\"bodyReadTimeoutMs\":500,"
                        "\"connectionIdleTimeoutMs\":500,\"writeStallTimeoutMs\":500,"
                        "\"uninitializedSessionTimeoutMs\":500,\"maxSessions\":4,\"allowedHosts\":\"auto\"}";
    const char *zero = "{\"writeStallTimeoutMs\":0}";
    listener = NULL;
    EXPECT_STATUS(mcp_server_listen_http(server, "127.0.0.1:0", 11, knobs, strlen(knobs), &listener, NULL),
                  MCP_STATUS_OK);
    EXPECT(listener != NULL && mcp_listener_port(listener) != 0);
    mcp_listener_free(listener);
    listener = NULL;
    err = NULL;
    EXPECT_STATUS(mcp_server_listen_http(server, "127.0.0.1:0", 11, zero, strlen(zero), &listener, &err),
                  MCP_STATUS_INVALID_ARGUMENT);
    expect_error(err, MCP_STATUS_INVALID_ARGUMENT, "write_stall_timeout");
    EXPECT(listener == NULL);
  }
  /* The authorizing listener needs a verifier and an `auth` object; its user data is released
     on every failure and once the listener is gone. Verdicts refuse NULL. */
  {
    const char *auth = "{\"auth\":{\"resource\":\"https://mcp.test/mcp\","
                       "\"authorizationServers\":[\"https://as.test\"]}}";
    listener = NULL;
    err = NULL;
    EXPECT_STATUS(mcp_server_listen_http_auth(server, "127.0.0.1:0", 11, auth, strlen(auth), NULL, NULL,
                                              count_free, &listener, &err),
                  MCP_STATUS_NULL_ARGUMENT);
    expect_error(err, MCP_STATUS_NULL_ARGUMENT, "verifier");
    err = NULL;
    EXPECT_STATUS(mcp_server_listen_http_auth(server, "127.0.0.1:0", 11, "{}", 2, refuse_all, NULL, count_free,
                                              &listener, &err),
                  MCP_STATUS_INVALID_ARGUMENT);
    expect_error(err, MCP_STATUS_INVALID_ARGUMENT, "auth");
    EXPECT(listener == NULL);
    EXPECT(atomic_load(&freed) == 23);
    EXPECT_STATUS(mcp_server_listen_http_auth(server, "127.0.0.1:0", 11, auth, strlen(auth), refuse_all, NULL,
                                              count_free, &listener, NULL),
                  MCP_STATUS_OK);
    EXPECT(listener != NULL && mcp_listener_port(listener) != 0);
    mcp_listener_free(listener);
    EXPECT_STATUS(mcp_token_verdict_accept(NULL, "{}", 2), MCP_STATUS_NULL_ARGUMENT);
    EXPECT_STATUS(mcp_token_verdict_refuse(NULL, NULL, 0), MCP_STATUS_NULL_ARGUMENT);
  }
  mcp_server_shutdown(server);
  mcp_server_shutdown(server);
  mcp_server_free(server);
  EXPECT(atomic_load(&freed) == 26);

  /* An unused builder releases its user data when freed. */
  b = new_builder();
  EXPECT_STATUS(mcp_server_builder_add_resource(b, "{\"uri\":\"a://b\",\"name\":\"b\"}", 26, never_called, NULL,
                                                count_free, NULL),
                MCP_STATUS_OK);
  mcp_server_builder_free(b);
  EXPECT(atomic_load(&freed) == 27);
  mcp_runtime_free(rt);
}

/* `*error_out` must be NULL on entry: a held error is never overwritten (and leaked). The call
   is refused untouched, and what it owns is still released (user data, a consumed builder). */
static void error_out_must_be_null(void) {
  mcp_runtime_t *rt = NULL;
  EXPECT_STATUS(mcp_runtime_new(1, &rt, NULL), MCP_STATUS_OK);
  mcp_error_t *held = NULL;
  EXPECT_STATUS(mcp_server_builder_new(NULL, 0, "1", 1, NULL, &held), MCP_STATUS_NULL_ARGUMENT);
  EXPECT(held != NULL);
  mcp_error_t *before = held;
  mcp_server_builder_t *b = NULL;
  EXPECT_STATUS(mcp_server_builder_new("t", 1, "1", 1, &b, &held), MCP_STATUS_INVALID_ARGUMENT);
  EXPECT(held == before && b == NULL);
  b = new_builder();
  atomic_store(&freed, 0);
  EXPECT_STATUS(mcp_server_builder_add_tool(b, "{\"name\":\"t\"}", 12, never_called, NULL, count_free, &held),
                MCP_STATUS_INVALID_ARGUMENT);
  EXPECT(held == before);
  EXPECT(atomic_load(&freed) == 1);
  EXPECT_STATUS(mcp_server_builder_add_tool(b, "{\"name\":\"t\"}", 12, never_called, NULL, count_free, NULL),
                MCP_STATUS_OK);
  mcp_server_t *server = NULL;
  EXPECT_STATUS(mcp_server_builder_build(b, rt, &server, &held), MCP_STATUS_INVALID_ARGUMENT);
  EXPECT(held == before && server == NULL);
  EXPECT(atomic_load(&freed) == 2); /* the builder was consumed all the same */
  /* The held error is intact. */
  EXPECT(mcp_error_status(held) == MCP_STATUS_NULL_ARGUMENT);
  mcp_error_free(held);
  mcp_runtime_free(rt);
}

int main(void) {
  statuses();
  error_out_must_be_null();
  nulls();
  utf8_and_json();
  registrations();
  if (failures) {
    fprintf(stderr, "%d failure(s)\n", failures);
    return 1;
  }
  puts("errors: ok");
  return 0;
}
