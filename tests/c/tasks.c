/*
 * The C task client against the scripted tasks server, driven by ffi/tests/c_client_suite.rs:
 *   tasks TASK_SERVER
 * In both eras (task-server modern / legacy over stdio): a synchronous answer despite asking for
 * a task, a task created with a ttl, waited for and its result read, input_required answered by
 * a C elicitation handler (callback form), cancel, a failed task's JSON-RPC error, a wait
 * timeout, an unknown task status; then the argument errors of the task functions.
 * Exits non-zero on the first failed check, or if a user-data finalizer did not run exactly once.
 */
#include "mcpcore.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
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

static void fail_err(int line, const char *what, mcp_status_t st, mcp_error_t *err) {
  fprintf(stderr, "tasks.c:%d: %s -> %s: %s\n", line, what, mcp_status_str((int)st),
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

/* Run a call taking a trailing `&err`; require `want`; returns the JSON-RPC code (or 0). */
static int64_t expect_fail(mcp_status_t st, mcp_status_t want, mcp_error_t *err, int line) {
  if (st != want) fail_err(line, "expected failure", st, err);
  CHECK(err != NULL && mcp_error_status(err) == want);
  int64_t code = mcp_error_jsonrpc_code(err);
  mcp_error_free(err);
  return code;
}
/* A completion that must not run (the call was refused before anything was sent). */
static atomic_int never_calls;
static void never_called(void *user_data, mcp_status_t status, const char *result_json,
                         size_t result_len, const mcp_error_t *error) {
  (void)user_data; (void)status; (void)result_json; (void)result_len; (void)error;
  atomic_fetch_add(&never_calls, 1);
}
/* The comma operator sequences the call before `err` is read. */
static mcp_status_t last_status;
#define FAILS(call, want) (last_status = (call), expect_fail(last_status, (want), err, __LINE__))

static int contains(const char *s, const char *needle) { return s && strstr(s, needle) != NULL; }

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

/* ---- completion waiter ---- */

typedef struct {
  pthread_mutex_t m;
  pthread_cond_t c;
  int done;
  mcp_status_t status;
  char *result;
} waiter_t;

static void on_done(void *ud, mcp_status_t status, const char *json, size_t len,
                    const mcp_error_t *error) {
  waiter_t *w = ud;
  pthread_mutex_lock(&w->m);
  w->status = status;
  if (status == MCP_STATUS_OK) {
    CHECK(json != NULL && error == NULL && strlen(json) == len);
    w->result = malloc(len + 1);
    memcpy(w->result, json, len + 1);
  } else {
    CHECK(json == NULL && error != NULL);
  }
  w->done++;
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
  CHECK(w->done == 1);
}

/* ---- the elicitation handler (answers a task's input_required) ---- */

static atomic_int n_elicited;

static void elicitation(void *ud, const char *method, size_t method_len, const char *params,
                        size_t params_len, mcp_client_responder_t *r) {
  CHECK(ud != NULL && strcmp(method, "elicitation/create") == 0);
  CHECK(strlen(method) == method_len && strlen(params) == params_len);
  CHECK(contains(params, "requestedSchema"));
  atomic_fetch_add(&n_elicited, 1);
  CHECK(mcp_client_responder_result(r, S("{\"action\":\"accept\",\"content\":{\"name\":\"C\"}}")) ==
        MCP_STATUS_OK);
}

/* ---- helpers ---- */

static mcp_runtime_t *rt;

/* The task id of a `{"kind":"task","task":{...}}` outcome (owned). */
static char *task_id_of(const char *outcome) {
  const char *p = strstr(outcome, "\"taskId\":\"");
  CHECK(p != NULL);
  p += strlen("\"taskId\":\"");
  const char *end = strchr(p, '"');
  CHECK(end != NULL);
  size_t n = (size_t)(end - p);
  char *id = malloc(n + 1);
  memcpy(id, p, n);
  id[n] = '\0';
  return id;
}

/* Call `tool` as a task; require a task outcome; returns its id (owned). */
static char *start_task(const mcp_client_t *c, const char *tool, const char *task_opts) {
  char *out = NULL;
  OK(mcp_client_call_tool_as_task_blocking(c, S(tool), NULL, 0, task_opts,
                                           task_opts ? strlen(task_opts) : 0, NULL, &out, &err));
  CHECK(contains(out, "\"kind\":\"task\""));
  char *id = task_id_of(out);
  mcp_string_free(out);
  return id;
}

static const char *FAST_WAIT = "{\"minPollIntervalMs\":1,\"maxPollIntervalMs\":50,\"timeoutMs\":20000}";

static void era_round(const char *server, const char *era) {
  mcp_client_builder_t *b = NULL;
  OK(mcp_client_builder_new(S("c-tasks"), S("0.1"), &b, &err));
  int modern = strcmp(era, "modern") == 0;
  CHECK(mcp_client_builder_mode(b, modern ? MCP_CONNECT_MODE_MODERN : MCP_CONNECT_MODE_LEGACY,
                                NULL) == MCP_STATUS_OK);
  OK(mcp_client_builder_on_request(b, S("elicitation/create"), elicitation, tag(), free_tag, &err));
  const char *args[] = {era};
  size_t lens[] = {strlen(era)};
  mcp_client_t *c = NULL;
  OK(mcp_client_connect_stdio(rt, b, S(server), args, lens, 1, NULL, 0, &c, &err));
  CHECK(mcp_client_is_modern(c) == modern);

  /* A synchronous answer despite asking for a task. */
  char *out = NULL;
  OK(mcp_client_call_tool_as_task_blocking(c, S("sync"), S("{\"a\":1}"), NULL, 0, NULL, &out,
                                           &err));
  CHECK(contains(out, "\"kind\":\"result\"") && contains(out, "sync sync"));
  mcp_string_free(out);

  /* A task with a ttl: waited for, then its result read. */
  char *id = start_task(c, "slow", "{\"ttlMs\":30000}");
  OK(mcp_client_wait_task_blocking(c, S(id), S(FAST_WAIT), NULL, &out, &err));
  CHECK(contains(out, "\"status\":\"completed\""));
  mcp_string_free(out);
  OK(mcp_client_task_result_blocking(c, S(id), NULL, &out, &err));
  CHECK(contains(out, "slow done"));
  mcp_string_free(out);
  free(id);

  /* input_required answered by the C handler, callback form. */
  int before = atomic_load(&n_elicited);
  waiter_t w;
  memset(&w, 0, sizeof w);
  pthread_mutex_init(&w.m, NULL);
  pthread_cond_init(&w.c, NULL);
  OK(mcp_client_call_tool_to_completion(c, S("ask"), NULL, 0, NULL, 0, S(FAST_WAIT), NULL,
                                        on_done, &w, &err));
  wait_done(&w);
  CHECK(w.status == MCP_STATUS_OK && contains(w.result, "hello C"));
  CHECK(atomic_load(&n_elicited) == before + 1);
  free(w.result);
  pthread_mutex_destroy(&w.m);
  pthread_cond_destroy(&w.c);

  /* A wait that times out leaves the task running; cancel ends it. */
  id = start_task(c, "hold", NULL);
  mcp_error_t *err = NULL;
  out = NULL;
  FAILS(mcp_client_wait_task_blocking(c, S(id), S("{\"timeoutMs\":50}"), NULL, &out, &err),
        MCP_STATUS_TIMEOUT);
  CHECK(out == NULL);
  OK(mcp_client_cancel_task_blocking(c, S(id), NULL, &out, &err));
  CHECK(modern ? strcmp(out, "{}") == 0 : contains(out, "\"status\":\"cancelled\""));
  mcp_string_free(out);
  OK(mcp_client_get_task_blocking(c, S(id), NULL, &out, &err));
  CHECK(contains(out, "\"status\":\"cancelled\"") && contains(out, "cancelled by request"));
  mcp_string_free(out);
  free(id);

  /* A failed task's JSON-RPC error; an unknown status is a protocol error, not a crash. */
  err = NULL;
  out = NULL;
  CHECK(FAILS(mcp_client_call_tool_to_completion_blocking(c, S("fail"), NULL, 0, NULL, 0, NULL, 0,
                                                          NULL, &out, &err),
              MCP_STATUS_PROTOCOL) == -32000);
  CHECK(out == NULL);
  err = NULL;
  FAILS(mcp_client_call_tool_as_task_blocking(c, S("badstatus"), NULL, 0, NULL, 0, NULL, &out,
                                              &err),
        MCP_STATUS_PROTOCOL);
  CHECK(out == NULL);
  mcp_client_free(c);
  printf("tasks %s: ok\n", era);
}

static void argument_errors(const char *server) {
  mcp_client_builder_t *b = NULL;
  OK(mcp_client_builder_new(S("c-tasks"), S("0.1"), &b, &err));
  const char *args[] = {"modern"};
  size_t lens[] = {6};
  mcp_client_t *c = NULL;
  OK(mcp_client_connect_stdio(rt, b, S(server), args, lens, 1, NULL, 0, &c, &err));
  char *out = NULL;
  mcp_error_t *err = NULL;
  FAILS(mcp_client_get_task_blocking(NULL, S("t"), NULL, &out, &err), MCP_STATUS_NULL_ARGUMENT);
  err = NULL;
  FAILS(mcp_client_get_task_blocking(c, NULL, 0, NULL, &out, &err), MCP_STATUS_NULL_ARGUMENT);
  err = NULL;
  FAILS(mcp_client_get_task_blocking(c, S("t"), NULL, NULL, &err), MCP_STATUS_NULL_ARGUMENT);
  err = NULL;
  FAILS(mcp_client_wait_task_blocking(c, S("t"), S("{\"nope\":1}"), NULL, &out, &err),
        MCP_STATUS_INVALID_JSON);
  err = NULL;
  FAILS(mcp_client_wait_task_blocking(c, S("t"),
                                      S("{\"minPollIntervalMs\":9,\"maxPollIntervalMs\":1}"), NULL,
                                      &out, &err),
        MCP_STATUS_INVALID_ARGUMENT);
  err = NULL;
  FAILS(mcp_client_call_tool_as_task_blocking(c, S("slow"), NULL, 0, S("{\"ttlMs\":-1}"), NULL,
                                              &out, &err),
        MCP_STATUS_INVALID_JSON);
  err = NULL;
  FAILS(mcp_client_call_tool_as_task_blocking(c, S("slow"), S("[1]"), NULL, 0, NULL, &out, &err),
        MCP_STATUS_INVALID_JSON);
  err = NULL;
  FAILS(mcp_client_cancel_task(c, S("t"), NULL, NULL, NULL, &err), MCP_STATUS_NULL_ARGUMENT);
  /* The callback forms build their operation with the same function as the blocking twins: the
     same inputs are refused with the same status, at once, and the callback never runs. */
  err = NULL;
  FAILS(mcp_client_get_task(c, NULL, 0, NULL, never_called, NULL, &err), MCP_STATUS_NULL_ARGUMENT);
  err = NULL;
  FAILS(mcp_client_wait_task(c, S("t"), S("{\"nope\":1}"), NULL, never_called, NULL, &err),
        MCP_STATUS_INVALID_JSON);
  err = NULL;
  FAILS(mcp_client_wait_task(c, S("t"), S("{\"minPollIntervalMs\":9,\"maxPollIntervalMs\":1}"),
                             NULL, never_called, NULL, &err),
        MCP_STATUS_INVALID_ARGUMENT);
  err = NULL;
  FAILS(mcp_client_call_tool_as_task(c, S("slow"), NULL, 0, S("{\"ttlMs\":-1}"), NULL,
                                     never_called, NULL, &err),
        MCP_STATUS_INVALID_JSON);
  err = NULL;
  FAILS(mcp_client_call_tool_to_completion(c, S("slow"), S("[1]"), NULL, 0, NULL, 0, NULL,
                                           never_called, NULL, &err),
        MCP_STATUS_INVALID_JSON);
  err = NULL;
  FAILS(mcp_client_call_tool_to_completion(c, S("slow"), NULL, 0, S("{\"ttlMs\":\"x\"}"), NULL,
                                           0, NULL, never_called, NULL, &err),
        MCP_STATUS_INVALID_JSON);
  err = NULL;
  FAILS(mcp_client_call_tool_to_completion_blocking(c, S("slow"), NULL, 0, NULL, 0,
                                                    S("{\"nope\":1}"), NULL, &out, &err),
        MCP_STATUS_INVALID_JSON);
  CHECK(atomic_load(&never_calls) == 0);
  CHECK(out == NULL);
  mcp_client_free(c);
}

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: tasks TASK_SERVER\n");
    return 2;
  }
  OK(mcp_runtime_new(2, &rt, &err));
  era_round(argv[1], "modern");
  era_round(argv[1], "legacy");
  argument_errors(argv[1]);
  mcp_runtime_free(rt);
  CHECK(atomic_load(&registered) == atomic_load(&finalized));
  printf("tasks: ok\n");
  return 0;
}
