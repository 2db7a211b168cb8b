/*
 * The MCP tasks extension served from C (TASK-L01, TASK-M01..M03): tasks configured through the
 * builder's options JSON (`"tasks": {...}`), a tool made task-capable by `"taskSupport"` in its
 * JSON definition, and core running the task around the ordinary C handler:
 *   slow_echo  taskSupport "optional"; its handler hands the responder to a thread that answers
 *              "slow:<text>" after a short delay;
 *   must_task  "execution": {"taskSupport": "required"} (the listed form); answers "must:done"
 *              inline.
 * A tool with a bad taskSupport value is refused first (MCP_STATUS_INVALID_JSON). Then serves
 * stdio; driven by ffi/tests/c_task_server_suite.rs. Exits non-zero if the refusal did not
 * happen or a user-data finalizer did not run exactly once.
 */
#include "mcpcore.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static atomic_int registered;
static atomic_int finalized;

#define MAX_THREADS 64
static pthread_t threads[MAX_THREADS];
static int n_threads;
static pthread_mutex_t threads_lock = PTHREAD_MUTEX_INITIALIZER;

static void free_tag(void *p) {
  free(p);
  atomic_fetch_add(&finalized, 1);
}

static void *tag(void) {
  void *p = malloc(1);
  atomic_fetch_add(&registered, 1);
  return p;
}

/* Takes `errp`, not `err`: the error is read after the call that sets it has returned. */
static void check(mcp_status_t s, mcp_error_t **errp, const char *what) {
  mcp_error_t *err = *errp;
  if (s != MCP_STATUS_OK) {
    fprintf(stderr, "%s: %s: %s\n", what, mcp_status_str(s), err ? mcp_error_message(err, NULL) : "");
    mcp_error_free(err);
    exit(2);
  }
}

static void sleep_ms(long ms) {
  struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
  nanosleep(&ts, NULL);
}

/* The job a slow_echo call hands to its thread: the responder and the text to echo. */
typedef struct {
  mcp_responder_t *r;
  char text[256];
} job_t;

static void *slow_worker(void *arg) {
  job_t *job = arg;
  sleep_ms(100);
  char buf[512];
  int n = snprintf(buf, sizeof buf, "{\"content\":[{\"type\":\"text\",\"text\":\"slow:%s\"}]}", job->text);
  mcp_status_t s = mcp_responder_result(job->r, buf, (size_t)n);
  if (s != MCP_STATUS_OK) {
    fprintf(stderr, "slow_echo result: %s\n", mcp_status_str(s));
    exit(5);
  }
  free(job);
  return NULL;
}

/* Copy the `text` argument (the test sends no escapes; the input schema requires a string). */
static void text_arg(const char *params, size_t len, char *out, size_t cap) {
  out[0] = '\0';
  const char *key = "\"text\":\"";
  const char *p = params ? strstr(params, key) : NULL;
  if (p == NULL || (size_t)(p - params) >= len) return;
  p += strlen(key);
  size_t i = 0;
  while (p[i] != '"' && p[i] != '\0' && p[i] != '\\' && i + 1 < cap) {
    out[i] = p[i];
    i++;
  }
  out[i] = '\0';
}

static void h_slow_echo(void *ud, const mcp_request_t *req, mcp_responder_t *r) {
  (void)ud;
  job_t *job = malloc(sizeof *job);
  if (job == NULL) abort();
  job->r = r;
  size_t len = 0;
  const char *params = mcp_request_params_json(req, &len);
  text_arg(params, len, job->text, sizeof job->text);
  pthread_mutex_lock(&threads_lock);
  if (n_threads >= MAX_THREADS || pthread_create(&threads[n_threads], NULL, slow_worker, job) != 0) {
    fprintf(stderr, "could not start a thread\n");
    abort();
  }
  n_threads++;
  pthread_mutex_unlock(&threads_lock);
}

static void h_must_task(void *ud, const mcp_request_t *req, mcp_responder_t *r) {
  (void)ud;
  (void)req;
  const char *res = "{\"content\":[{\"type\":\"text\",\"text\":\"must:done\"}]}";
  mcp_responder_result(r, res, strlen(res));
}

static const char *OPTIONS = "{\"tasks\":{\"defaultTtlMs\":30000,\"maxTtlMs\":120000,\"pollIntervalMs\":50}}";
static const char *SLOW = "{\"name\":\"slow_echo\",\"taskSupport\":\"optional\",\"inputSchema\":{\"type\":\"object\","
                          "\"properties\":{\"text\":{\"type\":\"string\"}},\"required\":[\"text\"]}}";
/* The listed form, `execution.taskSupport`, is read too. */
static const char *MUST = "{\"name\":\"must_task\",\"execution\":{\"taskSupport\":\"required\"}}";
static const char *BAD = "{\"name\":\"bad\",\"taskSupport\":\"sometimes\"}";

int main(void) {
  mcp_error_t *err = NULL;
  mcp_runtime_t *rt = NULL;
  check(mcp_runtime_new(1, &rt, &err), &err, "runtime");
  mcp_server_builder_t *b = NULL;
  check(mcp_server_builder_new("c-task-server", 13, "1", 1, &b, &err), &err, "builder");
  check(mcp_server_builder_options_json(b, OPTIONS, strlen(OPTIONS), &err), &err, "options");

  /* The status is taken before `err` is read: argument evaluation order is unspecified. */
  mcp_status_t s = mcp_server_builder_add_tool(b, BAD, strlen(BAD), h_must_task, tag(), free_tag, &err);
  const char *msg = err ? mcp_error_message(err, NULL) : "";
  if (s != MCP_STATUS_INVALID_JSON || strstr(msg, "taskSupport") == NULL) {
    fprintf(stderr, "bad taskSupport: expected INVALID_JSON naming taskSupport, got %s: %s\n", mcp_status_str(s), msg);
    return 4;
  }
  mcp_error_free(err);
  err = NULL;

  check(mcp_server_builder_add_tool(b, SLOW, strlen(SLOW), h_slow_echo, tag(), free_tag, &err), &err, "slow_echo");
  check(mcp_server_builder_add_tool(b, MUST, strlen(MUST), h_must_task, tag(), free_tag, &err), &err, "must_task");
  mcp_server_t *server = NULL;
  check(mcp_server_builder_build(b, rt, &server, &err), &err, "build");
  s = mcp_server_serve_stdio(server, &err);
  if (s != MCP_STATUS_OK) {
    fprintf(stderr, "serve: %s\n", mcp_status_str(s));
    mcp_error_free(err);
  }
  /* Every worker has answered by now (serving ends after requests in flight); join them so no
   * thread outlives the library. */
  pthread_mutex_lock(&threads_lock);
  for (int i = 0; i < n_threads; i++) pthread_join(threads[i], NULL);
  pthread_mutex_unlock(&threads_lock);
  mcp_server_free(server);
  mcp_runtime_free(rt);
  int reg = atomic_load(&registered), fin = atomic_load(&finalized);
  if (reg != fin) {
    fprintf(stderr, "finalizers: %d registered, %d ran\n", reg, fin);
    return 3;
  }
  return s == MCP_STATUS_OK ? 0 : 1;
}
