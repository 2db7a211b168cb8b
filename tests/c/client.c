/*
 * The C client against Rust servers, driven by ffi/tests/c_suite.rs:
 *   client DEMO_SERVER CLIENT_TEST_SERVER HTTP_URL
 * - demo-server over stdio in legacy, modern and auto mode: negotiation readers, list (one page
 *   and all), call, get, read, complete, arbitrary request, blocking and callback calls,
 *   cancellation (callback and blocking), a per-call timeout, progress and log notifications,
 *   WOULD_DEADLOCK inside callbacks, the server's JSON-RPC errors in mcp_error_t;
 * - client-test-server over stdio: sampling / elicitation / roots handlers written in C answering
 *   legacy server->client requests and modern input_required rounds (synchronously and from
 *   another thread), abandoned and invalid answers, list_changed notifications;
 * - demo-server over Streamable HTTP (auto and legacy);
 * - every argument error path of the client functions.
 * Exits non-zero on the first failed check, or if a user-data finalizer did not run exactly once.
 */
#include "mcpcore.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define S(str) (str), strlen(str)

#define CHECK(cond)                                                                   \
  do {                                                                                \
    if (!(cond)) {                                                                    \
      fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond);        \
      exit(1);                                                                        \
    }                                                                                 \
  } while (0)

/* Check a status; on mismatch print it and the error's message, then exit. */
#define EXPECT(expr, want)                                                            \
  do {                                                                                \
    mcp_status_t st_ = (expr);                                                        \
    if (st_ != (want)) {                                                              \
      fprintf(stderr, "%s:%d: %s -> %s, want %s\n", __FILE__, __LINE__, #expr,        \
              mcp_status_str((int)st_), mcp_status_str((int)(want)));                 \
      exit(1);                                                                        \
    }                                                                                 \
  } while (0)

static void fail_err(int line, const char *what, mcp_status_t st, mcp_error_t *err) {
  fprintf(stderr, "client.c:%d: %s -> %s: %s\n", line, what, mcp_status_str((int)st),
          err ? mcp_error_message(err, NULL) : "(no detail)");
  exit(1);
}

/* Run a call taking a trailing `&err`; require MCP_STATUS_OK. */
#define OK(call)                                                                      \
  do {                                                                                \
    mcp_error_t *err = NULL;                                                          \
    mcp_status_t st_ = (call);                                                        \
    if (st_ != MCP_STATUS_OK) fail_err(__LINE__, #call, st_, err);                    \
    CHECK(err == NULL);                                                               \
  } while (0)

static atomic_int registered;
static atomic_int finalized;

static void *tag(void) {
  atomic_fetch_add(&registered, 1);
  return malloc(16);
}

static void free_tag(void *p) {
  free(p);
  atomic_fetch_add(&finalized, 1);
}

static int contains(const char *s, const char *needle) { return s && strstr(s, needle) != NULL; }

static void sleep_ms(long ms) {
  struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
  nanosleep(&ts, NULL);
}

/* Wait (bounded) until *counter reaches n. */
static void wait_count(atomic_int *counter, int n, const char *what) {
  for (int i = 0; i < 12000 && atomic_load(counter) < n; i++) sleep_ms(10);
  if (atomic_load(counter) < n) {
    fprintf(stderr, "timed out waiting for %s\n", what);
    exit(1);
  }
}

/* ---- completion waiter ---- */

typedef struct {
  pthread_mutex_t m;
  pthread_cond_t c;
  int done;
  int calls;
  mcp_status_t status;
  char *result;
  int64_t code;
  /* what a blocking call made inside the callback returned */
  mcp_status_t nested;
  const mcp_client_t *client;
} waiter_t;

static void waiter_init(waiter_t *w, const mcp_client_t *client) {
  memset(w, 0, sizeof *w);
  pthread_mutex_init(&w->m, NULL);
  pthread_cond_init(&w->c, NULL);
  w->client = client;
  w->nested = MCP_STATUS_OK;
}

static void waiter_destroy(waiter_t *w) {
  free(w->result);
  pthread_mutex_destroy(&w->m);
  pthread_cond_destroy(&w->c);
}

static void on_done(void *ud, mcp_status_t status, const char *json, size_t len,
                    const mcp_error_t *error) {
  waiter_t *w = ud;
  mcp_status_t nested = MCP_STATUS_OK;
  if (w->client) {
    /* A blocking call inside a callback must refuse instead of deadlocking. */
    char *out = NULL;
    nested = mcp_client_list_blocking(w->client, MCP_LIST_KIND_TOOLS, NULL, 0, NULL, &out, NULL);
    CHECK(out == NULL);
  }
  pthread_mutex_lock(&w->m);
  w->calls++;
  w->status = status;
  w->nested = nested;
  if (status == MCP_STATUS_OK) {
    CHECK(json != NULL && error == NULL && strlen(json) == len);
    w->result = malloc(len + 1);
    memcpy(w->result, json, len + 1);
  } else {
    CHECK(json == NULL && error != NULL);
    CHECK(mcp_error_status(error) == status);
    w->code = mcp_error_jsonrpc_code(error);
  }
  w->done = 1;
  pthread_cond_broadcast(&w->c);
  pthread_mutex_unlock(&w->m);
}

static void wait_done(waiter_t *w) {
  struct timespec deadline;
  clock_gettime(CLOCK_REALTIME, &deadline);
  deadline.tv_sec += 120;
  pthread_mutex_lock(&w->m);
  while (!w->done) {
    if (pthread_cond_timedwait(&w->c, &w->m, &deadline) == ETIMEDOUT) {
      fprintf(stderr, "timed out waiting for a completion\n");
      exit(1);
    }
  }
  pthread_mutex_unlock(&w->m);
  sleep_ms(20); /* a second (wrong) invocation would show in `calls` */
  CHECK(w->calls == 1);
}

/* ---- notifications and progress ---- */

static atomic_int n_log;
static atomic_int n_list_changed;
static atomic_int notif_nested = -1;
static const mcp_client_t *notif_client;

static void on_notification(void *ud, const char *method, size_t method_len, const char *params,
                            size_t params_len) {
  CHECK(ud != NULL && strlen(method) == method_len && strlen(params) == params_len);
  if (strcmp(method, "notifications/message") == 0 && contains(params, "from C")) {
    atomic_fetch_add(&n_log, 1);
  }
  if (strcmp(method, "notifications/tools/list_changed") == 0) {
    atomic_fetch_add(&n_list_changed, 1);
    if (notif_client) {
      char *out = NULL;
      atomic_store(&notif_nested, (int)mcp_client_call_tool_blocking(
                                      notif_client, S("echo"), NULL, 0, NULL, &out, NULL));
    }
  }
}

typedef struct {
  atomic_int count;
  const mcp_cancel_token_t *cancel_on_first;
} progress_t;

static void on_progress(void *ud, double progress, double total, const char *msg, size_t len) {
  progress_t *p = ud;
  CHECK(progress > 0 && total == 4.0 && msg != NULL && strlen(msg) == len);
  if (atomic_fetch_add(&p->count, 1) == 0 && p->cancel_on_first) {
    mcp_cancel_token_cancel(p->cancel_on_first);
  }
}

/* ---- client handlers (sampling / elicitation / roots) ---- */

static atomic_int roots_mode; /* 0 answer, 1 abandon, 2 invalid JSON */
static atomic_int roots_bad_status = -1;
static atomic_int n_handled;

static void sampling(void *ud, const char *method, size_t method_len, const char *params,
                     size_t params_len, mcp_client_responder_t *r) {
  CHECK(ud != NULL && strcmp(method, "sampling/createMessage") == 0);
  CHECK(strlen(method) == method_len && strlen(params) == params_len);
  CHECK(contains(params, "\"maxTokens\":10"));
  /* Non-consuming NULL check first. */
  CHECK(mcp_client_responder_result(NULL, S("{}")) == MCP_STATUS_NULL_ARGUMENT);
  const char *res =
      "{\"role\":\"assistant\",\"content\":{\"type\":\"text\",\"text\":\"sampled by C\"},"
      "\"model\":\"c-model\"}";
  atomic_fetch_add(&n_handled, 1);
  CHECK(mcp_client_responder_result(r, S(res)) == MCP_STATUS_OK);
}

static void *answer_elicitation(void *arg) {
  mcp_client_responder_t *r = arg;
  sleep_ms(5);
  const char *res = "{\"action\":\"accept\",\"content\":{\"name\":\"C\"}}";
  CHECK(mcp_client_responder_result(r, S(res)) == MCP_STATUS_OK);
  return NULL;
}

#define MAX_THREADS 32
static pthread_t threads[MAX_THREADS];
static atomic_int n_threads;

static void elicitation(void *ud, const char *method, size_t method_len, const char *params,
                        size_t params_len, mcp_client_responder_t *r) {
  (void)method_len;
  (void)params_len;
  CHECK(ud != NULL && strcmp(method, "elicitation/create") == 0);
  CHECK(contains(params, "requestedSchema"));
  atomic_fetch_add(&n_handled, 1);
  /* Answer later, from another thread. */
  int i = atomic_fetch_add(&n_threads, 1);
  CHECK(i < MAX_THREADS);
  CHECK(pthread_create(&threads[i], NULL, answer_elicitation, r) == 0);
}

static void roots(void *ud, const char *method, size_t method_len, const char *params,
                  size_t params_len, mcp_client_responder_t *r) {
  (void)method_len;
  (void)params;
  (void)params_len;
  CHECK(ud != NULL && strcmp(method, "roots/list") == 0);
  atomic_fetch_add(&n_handled, 1);
  switch (atomic_load(&roots_mode)) {
    case 1:
      mcp_client_responder_free(r);
      break;
    case 2:
      atomic_store(&roots_bad_status, (int)mcp_client_responder_result(r, S("{\"roots\":")));
      break;
    default:
      CHECK(mcp_client_responder_result(r, S("{\"roots\":[{\"uri\":\"file:///tmp\",\"name\":\"tmp\"}]}")) ==
            MCP_STATUS_OK);
  }
}

/* ---- helpers ---- */

static mcp_runtime_t *rt;

static mcp_client_builder_t *builder(int mode) {
  mcp_client_builder_t *b = NULL;
  OK(mcp_client_builder_new(S("c-client"), S("0.1"), &b, &err));
  EXPECT(mcp_client_builder_mode(b, mode, NULL), MCP_STATUS_OK);
  OK(mcp_client_builder_on_notification(b, on_notification, tag(), free_tag, &err));
  return b;
}

static mcp_client_t *connect_stdio(mcp_client_builder_t *b, const char *prog) {
  mcp_client_t *c = NULL;
  OK(mcp_client_connect_stdio(rt, b, S(prog), NULL, NULL, 0, NULL, 0, &c, &err));
  CHECK(c != NULL);
  return c;
}

/* Blocking tools/call returning the owned result JSON. */
static char *call(const mcp_client_t *c, const char *tool, const char *args) {
  char *out = NULL;
  OK(mcp_client_call_tool_blocking(c, S(tool), args, args ? strlen(args) : 0, NULL, &out, &err));
  CHECK(out != NULL);
  return out;
}

static void expect_result(const mcp_client_t *c, const char *tool, const char *args,
                          const char *needle) {
  char *out = call(c, tool, args);
  if (!contains(out, needle)) {
    fprintf(stderr, "%s(%s) = %s; missing %s\n", tool, args ? args : "", out, needle);
    exit(1);
  }
  mcp_string_free(out);
}

static void expect_reader(mcp_status_t (*f)(const mcp_client_t *, char **, mcp_error_t **),
                          const mcp_client_t *c, const char *needle) {
  char *out = NULL;
  OK(f(c, &out, &err));
  if (!contains(out, needle)) {
    fprintf(stderr, "reader gave %s; missing %s\n", out ? out : "(null)", needle);
    exit(1);
  }
  mcp_string_free(out);
}

/* ---- the demo server, one era ---- */

static void demo_round(mcp_client_t *c, int modern) {
  CHECK(mcp_client_is_modern(c) == (modern != 0));
  CHECK(!mcp_client_is_closed(c));
  expect_reader(mcp_client_protocol_version, c, modern ? "2026-07-28" : "2025-11-25");
  expect_reader(mcp_client_server_info_json, c, "\"name\":\"mcpcore-demo\"");
  expect_reader(mcp_client_server_capabilities_json, c, "\"tools\"");
  expect_reader(mcp_client_instructions, c, "A demo server");
  expect_reader(mcp_client_negotiation_json, c, "capabilities");

  char *out = NULL;
  OK(mcp_client_list_blocking(c, MCP_LIST_KIND_TOOLS, NULL, 0, NULL, &out, &err));
  CHECK(contains(out, "\"name\":\"echo\"") && contains(out, "\"name\":\"slow\""));
  mcp_string_free(out);
  OK(mcp_client_list_all_blocking(c, MCP_LIST_KIND_RESOURCE_TEMPLATES, NULL, &out, &err));
  CHECK(contains(out, "demo://notes/{id}"));
  mcp_string_free(out);
  OK(mcp_client_list_all_blocking(c, MCP_LIST_KIND_PROMPTS, NULL, &out, &err));
  CHECK(contains(out, "\"greet\""));
  mcp_string_free(out);

  expect_result(c, "echo", "{\"text\":\"hi from C\"}", "\"text\":\"hi from C\"");
  expect_result(c, "add", "{\"a\":2,\"b\":3}", "\"sum\":5.0");

  OK(mcp_client_get_prompt_blocking(c, S("greet"), S("{\"name\":\"Ada\"}"), NULL, &out, &err));
  CHECK(contains(out, "Say hello to Ada."));
  mcp_string_free(out);
  OK(mcp_client_read_resource_blocking(c, S("demo://notes/7"), NULL, &out, &err));
  CHECK(contains(out, "note 7"));
  mcp_string_free(out);
  OK(mcp_client_complete_blocking(c, S("{\"type\":\"ref/prompt\",\"name\":\"greet\"}"), S("name"),
                                  S("b"), NULL, 0, NULL, &out, &err));
  CHECK(contains(out, "\"values\":[\"bob\"]"));
  mcp_string_free(out);
  OK(mcp_client_request_blocking(c, S("resources/list"), NULL, 0, NULL, &out, &err));
  CHECK(contains(out, "demo://readme"));
  mcp_string_free(out);

  /* The server's JSON-RPC error reaches mcp_error_t. */
  mcp_error_t *err = NULL;
  out = NULL;
  EXPECT(mcp_client_call_tool_blocking(c, S("no-such-tool"), NULL, 0, NULL, &out, &err),
         MCP_STATUS_PROTOCOL);
  CHECK(out == NULL && err != NULL);
  CHECK(mcp_error_status(err) == MCP_STATUS_PROTOCOL);
  CHECK(mcp_error_jsonrpc_code(err) == -32602);
  CHECK(contains(mcp_error_message(err, NULL), "no-such-tool"));
  mcp_error_free(err);
  err = NULL;
  EXPECT(mcp_client_request_blocking(c, S("no/such/method"), NULL, 0, NULL, &out, &err),
         MCP_STATUS_PROTOCOL);
  CHECK(mcp_error_jsonrpc_code(err) == -32601);
  mcp_error_free(err);
  /* An internal failure is a generic -32603 (no detail leaks). */
  err = NULL;
  EXPECT(mcp_client_call_tool_blocking(c, S("fail"), NULL, 0, NULL, &out, &err),
         MCP_STATUS_PROTOCOL);
  CHECK(mcp_error_jsonrpc_code(err) == -32603);
  CHECK(!contains(mcp_error_message(err, NULL), "hunter2"));
  mcp_error_free(err);

  /* Log notifications reach the notification callback (before the call returns). */
  int logs = atomic_load(&n_log);
  OK(mcp_client_set_log_level_blocking(c, MCP_LOG_LEVEL_DEBUG, NULL, &out, &err));
  mcp_string_free(out);
  expect_result(c, "log", "{\"level\":\"warning\",\"message\":\"from C\"}", "sent");
  wait_count(&n_log, logs + 1, "a log notification");

  /* A callback call; a blocking call inside its callback gets WOULD_DEADLOCK. */
  waiter_t w;
  waiter_init(&w, c);
  OK(mcp_client_call_tool(c, S("echo"), S("{\"text\":\"async\"}"), NULL, on_done, &w, &err));
  wait_done(&w);
  CHECK(w.status == MCP_STATUS_OK && contains(w.result, "\"text\":\"async\""));
  CHECK(w.nested == MCP_STATUS_WOULD_DEADLOCK);
  waiter_destroy(&w);

  /* The callback also carries the server's error. */
  waiter_init(&w, NULL);
  OK(mcp_client_get_prompt(c, S("nope"), NULL, 0, NULL, on_done, &w, &err));
  wait_done(&w);
  CHECK(w.status == MCP_STATUS_PROTOCOL && w.code == -32602);
  waiter_destroy(&w);

  /* Cancellation of a callback call: cancel once progress shows the call is running. */
  mcp_cancel_token_t *tok = NULL;
  OK(mcp_cancel_token_new(&tok, &err));
  mcp_call_options_t *opts = NULL;
  OK(mcp_call_options_new(&opts, &err));
  progress_t *prog = calloc(1, sizeof *prog);
  OK(mcp_call_options_on_progress(opts, on_progress, prog, free, &err));
  EXPECT(mcp_call_options_cancel_token(opts, tok), MCP_STATUS_OK);
  waiter_init(&w, NULL);
  /* Progress comes every ms/4: the first after 2 s, the end after 8 s. */
  OK(mcp_client_call_tool(c, S("slow"), S("{\"ms\":8000}"), opts, on_done, &w, &err));
  mcp_call_options_free(opts); /* the pending call keeps what it needs */
  wait_count(&prog->count, 1, "progress of slow");
  CHECK(!mcp_cancel_token_is_cancelled(tok));
  mcp_cancel_token_cancel(tok);
  CHECK(mcp_cancel_token_is_cancelled(tok));
  wait_done(&w);
  CHECK(w.status == MCP_STATUS_CANCELLED);
  waiter_destroy(&w);
  /* A call started with a cancelled token ends cancelled at once. */
  OK(mcp_call_options_new(&opts, &err));
  EXPECT(mcp_call_options_cancel_token(opts, tok), MCP_STATUS_OK);
  EXPECT(mcp_client_call_tool_blocking(c, S("echo"), S("{\"text\":\"x\"}"), opts, &out, NULL),
         MCP_STATUS_CANCELLED);
  mcp_call_options_free(opts);
  mcp_cancel_token_free(tok);

  /* Cancellation of a blocking call: the progress callback cancels the token. */
  OK(mcp_cancel_token_new(&tok, &err));
  OK(mcp_call_options_new(&opts, &err));
  progress_t *prog2 = calloc(1, sizeof *prog2);
  prog2->cancel_on_first = tok;
  OK(mcp_call_options_on_progress(opts, on_progress, prog2, free, &err));
  EXPECT(mcp_call_options_cancel_token(opts, tok), MCP_STATUS_OK);
  out = NULL;
  EXPECT(mcp_client_call_tool_blocking(c, S("slow"), S("{\"ms\":8000}"), opts, &out, NULL),
         MCP_STATUS_CANCELLED);
  CHECK(out == NULL);
  mcp_call_options_free(opts);
  mcp_cancel_token_free(tok);

  /* A per-call timeout. */
  OK(mcp_call_options_new(&opts, &err));
  EXPECT(mcp_call_options_timeout_ms(opts, 200), MCP_STATUS_OK);
  err = NULL;
  EXPECT(mcp_client_call_tool_blocking(c, S("slow"), S("{\"ms\":40000}"), opts, &out, &err),
         MCP_STATUS_TIMEOUT);
  CHECK(mcp_error_status(err) == MCP_STATUS_TIMEOUT);
  mcp_error_free(err);
  err = NULL;
  mcp_call_options_free(opts);

  /* Argument errors on a live client: nothing is sent, out-params stay untouched. */
  char *sentinel = (char *)&w;
  out = sentinel;
  EXPECT(mcp_client_call_tool_blocking(c, S("echo"), S("{bad"), NULL, &out, &err),
         MCP_STATUS_INVALID_JSON);
  CHECK(out == sentinel && mcp_error_status(err) == MCP_STATUS_INVALID_JSON);
  mcp_error_free(err);
  EXPECT(mcp_client_call_tool_blocking(c, S("echo"), S("[1]"), NULL, &out, NULL),
         MCP_STATUS_INVALID_JSON);
  EXPECT(mcp_client_call_tool_blocking(c, S("\xff\xfe"), NULL, 0, NULL, &out, NULL),
         MCP_STATUS_INVALID_UTF8);
  EXPECT(mcp_client_call_tool_blocking(c, NULL, 0, NULL, 0, NULL, &out, NULL),
         MCP_STATUS_NULL_ARGUMENT);
  EXPECT(mcp_client_call_tool_blocking(c, S("echo"), NULL, 0, NULL, NULL, NULL),
         MCP_STATUS_NULL_ARGUMENT);
  EXPECT(mcp_client_list_blocking(c, 42, NULL, 0, NULL, &out, NULL), MCP_STATUS_INVALID_ARGUMENT);
  EXPECT(mcp_client_set_log_level_blocking(c, 99, NULL, &out, NULL), MCP_STATUS_INVALID_ARGUMENT);
  EXPECT(mcp_client_complete_blocking(c, NULL, 0, S("a"), S("b"), NULL, 0, NULL, &out, NULL),
         MCP_STATUS_NULL_ARGUMENT);
  EXPECT(mcp_client_complete_blocking(c, S("{}"), S("a"), S("b"), S("\"ctx\""), NULL, &out, NULL),
         MCP_STATUS_INVALID_JSON);
  EXPECT(mcp_client_request_blocking(c, S("x"), S("nul"), NULL, &out, NULL), MCP_STATUS_INVALID_JSON);
  EXPECT(mcp_client_read_resource_blocking(c, S("\xc3"), NULL, &out, NULL), MCP_STATUS_INVALID_UTF8);
  CHECK(out == sentinel);
  EXPECT(mcp_client_call_tool(c, S("echo"), NULL, 0, NULL, NULL, NULL, NULL),
         MCP_STATUS_NULL_ARGUMENT);
  EXPECT(mcp_client_list(c, -1, NULL, 0, NULL, on_done, &w, NULL), MCP_STATUS_INVALID_ARGUMENT);
  EXPECT(mcp_client_list(NULL, 0, NULL, 0, NULL, on_done, &w, NULL), MCP_STATUS_NULL_ARGUMENT);
}

/* ---- client-test-server: handlers in C, legacy and modern ---- */

static mcp_client_builder_t *handler_builder(int mode) {
  mcp_client_builder_t *b = builder(mode);
  OK(mcp_client_builder_on_request(b, S("sampling/createMessage"), sampling, tag(), free_tag,
                                   &err));
  OK(mcp_client_builder_on_request(b, S("elicitation/create"), elicitation, tag(), free_tag,
                                   &err));
  OK(mcp_client_builder_on_request(b, S("roots/list"), roots, tag(), free_tag, &err));
  return b;
}

static void handlers_legacy(const char *server) {
  mcp_client_t *c = connect_stdio(handler_builder(MCP_CONNECT_MODE_LEGACY), server);
  CHECK(!mcp_client_is_modern(c));
  /* The client declared what it handles. */
  expect_result(c, "echo", "{\"text\":\"caps\"}", "\"sampling\":{}");
  /* Legacy server->client requests, answered by the C handlers. */
  expect_result(c, "ask", "{\"kind\":\"sample\"}", "sampled by C");
  expect_result(c, "ask", "{\"kind\":\"elicit\"}", "\"action\":\"accept\"");
  expect_result(c, "ask", "{\"kind\":\"roots\"}", "file:///tmp");
  /* An abandoned responder and an invalid answer reach the server as -32603. */
  atomic_store(&roots_mode, 1);
  expect_result(c, "ask", "{\"kind\":\"roots\"}", "\"isError\":true");
  atomic_store(&roots_mode, 2);
  expect_result(c, "ask", "{\"kind\":\"roots\"}", "\"isError\":true");
  CHECK(atomic_load(&roots_bad_status) == MCP_STATUS_INVALID_JSON);
  atomic_store(&roots_mode, 0);

  /* list_changed reaches the notification callback, where a blocking call is refused. */
  notif_client = c;
  int seen = atomic_load(&n_list_changed);
  expect_result(c, "poke", NULL, "poked");
  wait_count(&n_list_changed, seen + 1, "notifications/tools/list_changed");
  CHECK(atomic_load(&notif_nested) == MCP_STATUS_WOULD_DEADLOCK);
  notif_client = NULL;

  OK(mcp_client_close(c, &err));
  CHECK(mcp_client_is_closed(c));
  char *out = NULL;
  mcp_error_t *err = NULL;
  EXPECT(mcp_client_call_tool_blocking(c, S("echo"), NULL, 0, NULL, &out, &err), MCP_STATUS_CLOSED);
  mcp_error_free(err);
  waiter_t w;
  waiter_init(&w, NULL);
  EXPECT(mcp_client_call_tool(c, S("echo"), NULL, 0, NULL, on_done, &w, NULL), MCP_STATUS_CLOSED);
  waiter_destroy(&w);
  mcp_client_free(c);
}

static void handlers_modern(const char *server) {
  mcp_client_t *c = connect_stdio(handler_builder(MCP_CONNECT_MODE_MODERN), server);
  CHECK(mcp_client_is_modern(c));
  int before = atomic_load(&n_handled);
  /* input_required rounds answered by the C handlers; the state comes back intact. */
  expect_result(c, "ask", "{\"kind\":\"elicit\"}", "\"stateOk\":true");
  expect_result(c, "ask", "{\"kind\":\"sample\"}", "sampled by C");
  expect_result(c, "ask", "{\"kind\":\"roots\"}", "file:///tmp");
  expect_result(c, "rounds", "{\"n\":2}", "done after 2 rounds");
  CHECK(atomic_load(&n_handled) == before + 5);
  /* Callback form drives the rounds too. */
  waiter_t w;
  waiter_init(&w, NULL);
  OK(mcp_client_call_tool(c, S("ask"), S("{\"kind\":\"elicit\"}"), NULL, on_done, &w, &err));
  wait_done(&w);
  CHECK(w.status == MCP_STATUS_OK && contains(w.result, "\"stateOk\":true"));
  waiter_destroy(&w);
  /* A handler that abandons its responder fails the call with -32603. */
  atomic_store(&roots_mode, 1);
  mcp_error_t *err = NULL;
  char *out = NULL;
  EXPECT(mcp_client_call_tool_blocking(c, S("ask"), S("{\"kind\":\"roots\"}"), NULL, &out, &err),
         MCP_STATUS_PROTOCOL);
  CHECK(mcp_error_jsonrpc_code(err) == -32603);
  mcp_error_free(err);
  atomic_store(&roots_mode, 0);
  mcp_client_free(c);

  /* Declared but unhandled: typed calls report INPUT_REQUIRED with the raw result, request()
   * returns it. */
  mcp_client_builder_t *b = builder(MCP_CONNECT_MODE_MODERN);
  OK(mcp_client_builder_options_json(b, S("{\"extraCapabilities\":{\"elicitation\":{}}}"), &err));
  c = connect_stdio(b, server);
  err = NULL;
  mcp_status_t st = mcp_client_call_tool_blocking(c, S("rounds"), S("{\"n\":1}"), NULL, &out, &err);
  if (st != MCP_STATUS_INPUT_REQUIRED) fail_err(__LINE__, "rounds without handlers", st, err);
  size_t len = 0;
  const char *data = mcp_error_data_json(err, &len);
  CHECK(contains(data, "\"resultType\":\"input_required\"") && strlen(data) == len);
  CHECK(contains(data, "inputRequests"));
  mcp_error_free(err);
  OK(mcp_client_request_blocking(c, S("tools/call"), S("{\"name\":\"rounds\",\"arguments\":{\"n\":1}}"),
                                 NULL, &out, &err));
  CHECK(contains(out, "input_required"));
  mcp_string_free(out);
  mcp_client_free(c);
}

/* ---- error paths that need no server ---- */

static void argument_errors(const char *demo) {
  mcp_client_builder_t *b = NULL;
  mcp_error_t *err = NULL;
  mcp_client_t *c = NULL;
  EXPECT(mcp_client_builder_new(NULL, 0, S("1"), &b, NULL), MCP_STATUS_NULL_ARGUMENT);
  EXPECT(mcp_client_builder_new(S("\xff"), S("1"), &b, NULL), MCP_STATUS_INVALID_UTF8);
  EXPECT(mcp_client_builder_new(S("n"), S("1"), NULL, NULL), MCP_STATUS_NULL_ARGUMENT);
  CHECK(b == NULL);
  OK(mcp_client_builder_new(S("n"), S("1"), &b, &err));
  {
    mcp_error_t *mode_err = NULL;
    EXPECT(mcp_client_builder_mode(b, 7, &mode_err), MCP_STATUS_INVALID_ARGUMENT);
    CHECK(mode_err != NULL && mcp_error_status(mode_err) == MCP_STATUS_INVALID_ARGUMENT);
    CHECK(contains(mcp_error_message(mode_err, NULL), "7"));
    mcp_error_free(mode_err);
  }
  EXPECT(mcp_client_builder_mode(NULL, 0, NULL), MCP_STATUS_NULL_ARGUMENT);
  EXPECT(mcp_client_builder_request_timeout_ms(NULL, 1), MCP_STATUS_NULL_ARGUMENT);
  EXPECT(mcp_client_builder_options_json(b, S("{\"mode\":\"sideways\"}"), NULL),
         MCP_STATUS_INVALID_ARGUMENT);
  EXPECT(mcp_client_builder_options_json(b, S("{\"nope\":1}"), &err), MCP_STATUS_INVALID_JSON);
  CHECK(contains(mcp_error_message(err, NULL), "nope"));
  mcp_error_free(err);
  err = NULL;
  EXPECT(mcp_client_builder_options_json(b, S("[]"), NULL), MCP_STATUS_INVALID_JSON);
  EXPECT(mcp_client_builder_options_json(b, S("{\"mode\":\"legacy\",\"requestTimeoutMs\":60000}"), NULL),
         MCP_STATUS_OK);
  /* Every key the header documents, in core's options shape. */
  OK(mcp_client_builder_options_json(
      b,
      S("{\"mode\":\"auto\",\"clientInfo\":{\"name\":\"n\",\"version\":\"1\"},"
        "\"extraCapabilities\":{},\"sendClientInfo\":true,\"logLevel\":\"info\","
        "\"requestTimeoutMs\":0,\"probeTimeoutMs\":5000,\"maxMessageBytes\":4194304,"
        "\"maxJsonDepth\":64,\"maxMrtrRounds\":10,\"cachedDiscovery\":null,\"cache\":false,"
        "\"validateStructuredContent\":true,\"elicitationModes\":[\"form\",\"url\"],"
        "\"protocolVersion\":null}"),
      &err));
  EXPECT(mcp_client_builder_options_json(b, S("{\"maxMessageBytes\":0}"), NULL),
         MCP_STATUS_INVALID_ARGUMENT);
  EXPECT(mcp_client_builder_options_json(b, S("{\"logLevel\":\"loud\"}"), NULL),
         MCP_STATUS_INVALID_ARGUMENT);
  /* Registrations take the user data in every case: failures run the finalizer. */
  EXPECT(mcp_client_builder_on_request(b, S("roots/list"), NULL, tag(), free_tag, NULL),
         MCP_STATUS_NULL_ARGUMENT);
  EXPECT(mcp_client_builder_on_request(b, "", 0, roots, tag(), free_tag, NULL),
         MCP_STATUS_INVALID_ARGUMENT);
  EXPECT(mcp_client_builder_on_request(NULL, S("roots/list"), roots, tag(), free_tag, NULL),
         MCP_STATUS_NULL_ARGUMENT);
  EXPECT(mcp_client_builder_on_notification(b, NULL, tag(), free_tag, NULL),
         MCP_STATUS_NULL_ARGUMENT);
  CHECK(atomic_load(&finalized) == 4);
  /* Replacing a registration releases the earlier one. */
  OK(mcp_client_builder_on_request(b, S("roots/list"), roots, tag(), free_tag, &err));
  OK(mcp_client_builder_on_request(b, S("roots/list"), roots, tag(), free_tag, &err));
  CHECK(atomic_load(&finalized) == 5);
  mcp_client_builder_free(b);
  CHECK(atomic_load(&finalized) == 6);
  mcp_client_builder_free(NULL);

  /* Connect errors; the builder is consumed on every path. */
  OK(mcp_client_builder_new(S("n"), S("1"), &b, &err));
  OK(mcp_client_builder_on_request(b, S("roots/list"), roots, tag(), free_tag, &err));
  EXPECT(mcp_client_connect_stdio(NULL, b, S(demo), NULL, NULL, 0, NULL, 0, &c, NULL),
         MCP_STATUS_NULL_ARGUMENT);
  CHECK(atomic_load(&finalized) == 7);
  EXPECT(mcp_client_connect_stdio(rt, NULL, S(demo), NULL, NULL, 0, NULL, 0, NULL, NULL),
         MCP_STATUS_NULL_ARGUMENT);
  EXPECT(mcp_client_connect_stdio(rt, NULL, S("\xff"), NULL, NULL, 0, NULL, 0, &c, NULL),
         MCP_STATUS_INVALID_UTF8);
  EXPECT(mcp_client_connect_stdio(rt, NULL, S(demo), NULL, NULL, 2, NULL, 0, &c, NULL),
         MCP_STATUS_NULL_ARGUMENT);
  const char *bad_args[] = {"ok", NULL};
  EXPECT(mcp_client_connect_stdio(rt, NULL, S(demo), bad_args, NULL, 2, NULL, 0, &c, NULL),
         MCP_STATUS_NULL_ARGUMENT);
  const char *utf8_args[] = {"\xff"};
  EXPECT(mcp_client_connect_stdio(rt, NULL, S(demo), utf8_args, NULL, 1, NULL, 0, &c, NULL),
         MCP_STATUS_INVALID_UTF8);
  EXPECT(mcp_client_connect_stdio(rt, NULL, S(demo), NULL, NULL, 0, S("{\"cwd\":1}"), &c, NULL),
         MCP_STATUS_INVALID_JSON);
  EXPECT(mcp_client_connect_stdio(rt, NULL, S(demo), NULL, NULL, 0, S("{\"stderr\":\"x\"}"), &c, NULL),
         MCP_STATUS_INVALID_ARGUMENT);
  EXPECT(mcp_client_connect_stdio(rt, NULL, S(demo), NULL, NULL, 0, S("{\"program\":\"x\"}"), &c, NULL),
         MCP_STATUS_INVALID_JSON);
  err = NULL;
  /* The spawn fails (TRANSPORT), or, where exec failures surface late (under valgrind), the
   * process is gone before the handshake (CLOSED). */
  mcp_status_t st = mcp_client_connect_stdio(rt, NULL, S("/nonexistent/mcp-server"), NULL, NULL, 0,
                                             NULL, 0, &c, &err);
  CHECK(st == MCP_STATUS_TRANSPORT || st == MCP_STATUS_CLOSED);
  CHECK(mcp_error_status(err) == st);
  mcp_error_free(err);
  /* A modern version pinned with legacy mode is refused before anything is spawned. */
  OK(mcp_client_builder_new(S("n"), S("1"), &b, &err));
  OK(mcp_client_builder_options_json(b, S("{\"mode\":\"legacy\",\"protocolVersion\":\"2026-07-28\"}"),
                                     &err));
  EXPECT(mcp_client_connect_stdio(rt, b, S(demo), NULL, NULL, 0, NULL, 0, &c, NULL),
         MCP_STATUS_INVALID_ARGUMENT);
  EXPECT(mcp_client_connect_http(rt, NULL, S("ftp://x"), NULL, 0, &c, NULL),
         MCP_STATUS_INVALID_ARGUMENT);
  EXPECT(mcp_client_connect_http(rt, NULL, S("http://127.0.0.1:1/mcp"), S("{\"headers\":[]}"), &c,
                                 NULL),
         MCP_STATUS_INVALID_JSON);
  EXPECT(mcp_client_connect_http(rt, NULL, S("http://127.0.0.1:1/mcp"), S("{\"maxConnection\":8}"),
                                 &c, NULL),
         MCP_STATUS_INVALID_JSON);
  EXPECT(mcp_client_connect_http(rt, NULL, S("http://127.0.0.1:1/mcp"), S("{\"maxConnections\":1}"),
                                 &c, NULL),
         MCP_STATUS_INVALID_ARGUMENT);
  /* A refused connection names the OS error. */
  err = NULL;
  EXPECT(mcp_client_connect_http(rt, NULL, S("http://127.0.0.1:1/mcp"), NULL, 0, &c, &err),
         MCP_STATUS_TRANSPORT);
  CHECK(contains(mcp_error_message(err, NULL), "os error"));
  mcp_error_free(err);
  err = NULL;
  EXPECT(mcp_client_connect_http(rt, NULL, NULL, 0, NULL, 0, &c, NULL), MCP_STATUS_NULL_ARGUMENT);
  CHECK(c == NULL);

  /* Readers and handles with NULL. */
  char *out = NULL;
  EXPECT(mcp_client_protocol_version(NULL, &out, NULL), MCP_STATUS_NULL_ARGUMENT);
  EXPECT(mcp_client_instructions(NULL, &out, NULL), MCP_STATUS_NULL_ARGUMENT);
  CHECK(!mcp_client_is_modern(NULL) && mcp_client_is_closed(NULL));
  EXPECT(mcp_client_close(NULL, NULL), MCP_STATUS_NULL_ARGUMENT);
  mcp_client_free(NULL);
  EXPECT(mcp_cancel_token_new(NULL, NULL), MCP_STATUS_NULL_ARGUMENT);
  mcp_cancel_token_cancel(NULL);
  CHECK(!mcp_cancel_token_is_cancelled(NULL));
  mcp_cancel_token_free(NULL);
  EXPECT(mcp_call_options_new(NULL, NULL), MCP_STATUS_NULL_ARGUMENT);
  EXPECT(mcp_call_options_timeout_ms(NULL, 1), MCP_STATUS_NULL_ARGUMENT);
  mcp_call_options_t *opts = NULL;
  OK(mcp_call_options_new(&opts, &err));
  {
    mcp_error_t *level_err = NULL;
    EXPECT(mcp_call_options_log_level(opts, 8, &level_err), MCP_STATUS_INVALID_ARGUMENT);
    CHECK(level_err != NULL && mcp_error_status(level_err) == MCP_STATUS_INVALID_ARGUMENT);
    mcp_error_free(level_err);
  }
  EXPECT(mcp_call_options_meta_json(opts, S("{"), NULL), MCP_STATUS_INVALID_JSON);
  EXPECT(mcp_call_options_meta_json(opts, S("{\"k\":1}"), NULL), MCP_STATUS_OK);
  OK(mcp_call_options_json(opts, S("{\"timeoutMs\":500,\"logLevel\":\"debug\",\"meta\":{\"k\":1},"
                                   "\"noCache\":true}"),
                           &err));
  EXPECT(mcp_call_options_json(opts, S("{\"timeout\":1}"), &err), MCP_STATUS_INVALID_JSON);
  CHECK(contains(mcp_error_message(err, NULL), "timeout"));
  mcp_error_free(err);
  err = NULL;
  EXPECT(mcp_call_options_json(opts, S("{\"logLevel\":\"loud\"}"), NULL), MCP_STATUS_INVALID_ARGUMENT);
  EXPECT(mcp_call_options_json(opts, S("[]"), NULL), MCP_STATUS_INVALID_JSON);
  EXPECT(mcp_call_options_json(NULL, S("{}"), NULL), MCP_STATUS_NULL_ARGUMENT);
  EXPECT(mcp_call_options_on_progress(NULL, on_progress, tag(), free_tag, NULL),
         MCP_STATUS_NULL_ARGUMENT);
  mcp_call_options_free(opts);
  mcp_call_options_free(NULL);
  EXPECT(mcp_client_responder_result(NULL, S("{}")), MCP_STATUS_NULL_ARGUMENT);
  EXPECT(mcp_client_responder_error(NULL, -1, S("x"), NULL, 0), MCP_STATUS_NULL_ARGUMENT);
  mcp_client_responder_free(NULL);
  CHECK(atomic_load(&finalized) == 8);
}

static void http(const char *url) {
  /* auto: the demo server speaks the modern era over HTTP too. */
  mcp_client_t *c = NULL;
  OK(mcp_client_connect_http(rt, builder(MCP_CONNECT_MODE_AUTO), S(url),
                             S("{\"headers\":{\"X-Test\":\"c\"},\"listenStream\":true,"
                               "\"postTimeoutMs\":30000,\"maxConnections\":4,"
                               "\"poolIdleTimeoutMs\":90000}"),
                             &c, &err));
  CHECK(mcp_client_is_modern(c));
  expect_result(c, "echo", "{\"text\":\"over http\"}", "over http");
  /* Call options set from JSON. */
  mcp_call_options_t *opts = NULL;
  OK(mcp_call_options_new(&opts, &err));
  OK(mcp_call_options_json(opts, S("{\"timeoutMs\":10000,\"logLevel\":\"info\",\"meta\":{\"k\":1}}"),
                           &err));
  char *res = NULL;
  OK(mcp_client_call_tool_blocking(c, S("echo"), S("{\"text\":\"json options\"}"), opts, &res, &err));
  CHECK(contains(res, "json options"));
  mcp_string_free(res);
  mcp_call_options_free(opts);
  char *out = NULL;
  OK(mcp_client_list_all_blocking(c, MCP_LIST_KIND_TOOLS, NULL, &out, &err));
  CHECK(contains(out, "\"add\""));
  mcp_string_free(out);
  waiter_t w;
  waiter_init(&w, c);
  OK(mcp_client_call_tool(c, S("add"), S("{\"a\":1,\"b\":2}"), NULL, on_done, &w, &err));
  wait_done(&w);
  CHECK(w.status == MCP_STATUS_OK && contains(w.result, "\"sum\":3.0"));
  CHECK(w.nested == MCP_STATUS_WOULD_DEADLOCK);
  waiter_destroy(&w);
  mcp_client_free(c);

  OK(mcp_client_connect_http(rt, builder(MCP_CONNECT_MODE_LEGACY), S(url), NULL, 0, &c, &err));
  CHECK(!mcp_client_is_modern(c));
  expect_reader(mcp_client_protocol_version, c, "2025-11-25");
  expect_result(c, "echo", "{\"text\":\"legacy http\"}", "legacy http");
  mcp_client_free(c);
}

/* ---- shutdown with a request in flight ---- */

static _Atomic(mcp_responder_t *) held;

static void hold(void *ud, const mcp_request_t *req, mcp_responder_t *r) {
  (void)ud;
  (void)req;
  atomic_store(&held, r); /* answered by nobody: the server is shut down under it */
}

/* A request in flight when the listener is freed: past shutdownDeadlineMs the server answers it
 * with a JSON-RPC error (not a bare 503), and the C client's call ends with MCP_STATUS_CLOSED. */
static void shutdown_in_flight(void) {
  mcp_server_builder_t *sb = NULL;
  OK(mcp_server_builder_new(S("hold"), S("1"), &sb, &err));
  OK(mcp_server_builder_add_tool(sb, S("{\"name\":\"hold\"}"), hold, NULL, NULL, &err));
  mcp_server_t *server = NULL;
  OK(mcp_server_builder_build(sb, rt, &server, &err));
  mcp_listener_t *l = NULL;
  OK(mcp_server_listen_http(server, S("127.0.0.1:0"), S("{\"shutdownDeadlineMs\":200}"), &l, &err));
  char url[64];
  snprintf(url, sizeof url, "http://127.0.0.1:%u/mcp", (unsigned)mcp_listener_port(l));
  for (int mode = MCP_CONNECT_MODE_LEGACY; mode <= MCP_CONNECT_MODE_MODERN; mode++) {
    if (mode == MCP_CONNECT_MODE_MODERN) {
      /* A fresh listener: the first one is gone. */
      OK(mcp_server_listen_http(server, S("127.0.0.1:0"), S("{\"shutdownDeadlineMs\":200}"), &l, &err));
      snprintf(url, sizeof url, "http://127.0.0.1:%u/mcp", (unsigned)mcp_listener_port(l));
    }
    mcp_client_t *c = NULL;
    OK(mcp_client_connect_http(rt, builder(mode), S(url), NULL, 0, &c, &err));
    waiter_t w;
    waiter_init(&w, NULL);
    OK(mcp_client_call_tool(c, S("hold"), NULL, 0, NULL, on_done, &w, &err));
    for (int i = 0; i < 12000 && atomic_load(&held) == NULL; i++) sleep_ms(10);
    CHECK(atomic_load(&held) != NULL);
    mcp_listener_free(l); /* waits out the deadline, then answers the request */
    wait_done(&w);
    if (w.status != MCP_STATUS_CLOSED) {
      fprintf(stderr, "mode %d: in-flight call ended with %s\n", mode, mcp_status_str((int)w.status));
      exit(1);
    }
    mcp_responder_free(atomic_exchange(&held, NULL)); /* the handler still owned it */
    waiter_destroy(&w);
    mcp_client_free(c);
  }
  mcp_server_free(server);
}

/* ---- freeing the runtime inside a callback ---- */

static mcp_runtime_t *rt2;
static atomic_int freed_in_callback;

static void free_all_on_done(void *ud, mcp_status_t status, const char *json, size_t len,
                             const mcp_error_t *error) {
  (void)json;
  (void)len;
  (void)error;
  CHECK(status == MCP_STATUS_OK);
  /* Both are allowed here and return at once: the client closes in the background, and the last
   * reference to the runtime stops its threads without joining them (never a deadlock). */
  mcp_client_free((mcp_client_t *)ud);
  mcp_runtime_free(rt2);
  atomic_store(&freed_in_callback, 1);
}

static void runtime_free_in_callback(const char *demo) {
  OK(mcp_runtime_new(1, &rt2, &err));
  mcp_client_t *c = NULL;
  OK(mcp_client_connect_stdio(rt2, NULL, S(demo), NULL, NULL, 0, S("{\"stderr\":\"null\"}"), &c, &err));
  OK(mcp_client_call_tool(c, S("echo"), S("{\"text\":\"x\"}"), NULL, free_all_on_done, c, &err));
  wait_count(&freed_in_callback, 1, "the callback that frees the runtime");
}

/* "stderr": "capture" keeps what the server writes to its standard error for mcp_client_stderr;
 * other modes have nothing to read (NULL). */
static void stderr_capture(const char *server, const char *demo) {
  const char *args[] = {"--print-cwd-env"};
  mcp_client_t *c = NULL;
  OK(mcp_client_connect_stdio(rt, builder(MCP_CONNECT_MODE_LEGACY), S(server), args, NULL, 1,
                              S("{\"stderr\":\"capture\",\"env\":{\"CLIENT_TEST_VAR\":\"from-c\"}}"),
                              &c, &err));
  char *text = NULL;
  for (int i = 0; i < 1500 && !contains(text, "env=from-c"); i++) {
    mcp_string_free(text);
    text = NULL;
    sleep_ms(10);
    OK(mcp_client_stderr(c, &text, &err));
    CHECK(text != NULL);
  }
  CHECK(contains(text, "env=from-c"));
  mcp_string_free(text);
  EXPECT(mcp_client_stderr(c, NULL, NULL), MCP_STATUS_NULL_ARGUMENT);
  EXPECT(mcp_client_stderr(NULL, &text, NULL), MCP_STATUS_NULL_ARGUMENT);
  mcp_client_free(c);

  c = NULL;
  OK(mcp_client_connect_stdio(rt, NULL, S(demo), NULL, NULL, 0, S("{\"stderr\":\"null\"}"), &c, &err));
  text = (char *)&c; /* a sentinel: the reader writes NULL */
  OK(mcp_client_stderr(c, &text, &err));
  CHECK(text == NULL);
  mcp_client_free(c);
}

int main(int argc, char **argv) {
  if (argc != 4) {
    fprintf(stderr, "usage: client DEMO_SERVER CLIENT_TEST_SERVER HTTP_URL\n");
    return 2;
  }
  const char *demo = argv[1], *test_server = argv[2], *url = argv[3];
  OK(mcp_runtime_new(2, &rt, &err));

  argument_errors(demo);

  /* The demo server in each mode; auto adopts the modern era. */
  mcp_client_t *c = connect_stdio(builder(MCP_CONNECT_MODE_LEGACY), demo);
  demo_round(c, 0);
  mcp_client_free(c);
  c = connect_stdio(builder(MCP_CONNECT_MODE_MODERN), demo);
  demo_round(c, 1);
  mcp_client_free(c);
  /* auto, no builder, explicit arguments and spawn options */
  const char *no_args[] = {NULL};
  OK(mcp_client_connect_stdio(rt, NULL, S(demo), no_args, NULL, 0,
                              S("{\"stderr\":\"null\",\"env\":{\"MCP_C_SUITE\":\"1\"},"
                                "\"envClear\":false,\"closeGraceMs\":2000,\"termGraceMs\":2000}"),
                              &c, &err));
  CHECK(mcp_client_is_modern(c));
  expect_result(c, "echo", "{\"text\":\"auto\"}", "auto");
  mcp_client_free(c);

  handlers_legacy(test_server);
  handlers_modern(test_server);
  stderr_capture(test_server, demo);
  shutdown_in_flight();
  runtime_free_in_callback(demo);
  http(url);

  for (int i = 0; i < atomic_load(&n_threads); i++) pthread_join(threads[i], NULL);
  mcp_runtime_free(rt);
  if (atomic_load(&finalized) != atomic_load(&registered)) {
    fprintf(stderr, "finalizers: %d of %d ran\n", atomic_load(&finalized), atomic_load(&registered));
    return 1;
  }
  printf("client: ok\n");
  return 0;
}
