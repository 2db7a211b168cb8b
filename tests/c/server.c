/*
 * A C server exercising the C ABI over stdio: synchronous and asynchronous (other-thread)
 * answers, cancellation, progress and logs, errors, abandoned responders, server->client requests
 * (callback and blocking twins), modern input_required, prompts, resources, templates, completion
 * and a custom method. Driven by ffi/tests/c_suite.rs over pipes; exits non-zero if any
 * user-data finalizer did not run exactly once.
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
static atomic_int cancel_answer_status = -1;
static atomic_int bad_json_status = -1;
static atomic_int bad_input_status = -1;

#define MAX_THREADS 64
static pthread_t threads[MAX_THREADS];
static int n_threads;
static pthread_mutex_t threads_lock = PTHREAD_MUTEX_INITIALIZER;

typedef struct {
  int tag;
} tag_t;

static void free_tag(void *p) {
  free(p);
  atomic_fetch_add(&finalized, 1);
}

static void sleep_ms(long ms) {
  struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
  nanosleep(&ts, NULL);
}

static void spawn(void *(*fn)(void *), void *arg) {
  pthread_mutex_lock(&threads_lock);
  if (n_threads < MAX_THREADS && pthread_create(&threads[n_threads], NULL, fn, arg) == 0) {
    n_threads++;
  } else {
    fprintf(stderr, "could not start a thread\n");
    abort();
  }
  pthread_mutex_unlock(&threads_lock);
}

/* Escape `s` as a JSON string body into `out` (bounded). */
static void json_escape(const char *s, size_t len, char *out, size_t cap) {
  size_t o = 0;
  for (size_t i = 0; i < len && o + 7 < cap; i++) {
    unsigned char c = (unsigned char)s[i];
    if (c == '"' || c == '\\') {
      out[o++] = '\\';
      out[o++] = (char)c;
    } else if (c < 0x20) {
      o += (size_t)snprintf(out + o, cap - o, "\\u%04x", c);
    } else {
      out[o++] = (char)c;
    }
  }
  out[o] = '\0';
}

static mcp_status_t answer_text(mcp_responder_t *r, const char *text) {
  char esc[2048];
  char buf[4096];
  json_escape(text, strlen(text), esc, sizeof esc);
  int n = snprintf(buf, sizeof buf, "{\"content\":[{\"type\":\"text\",\"text\":\"%s\"}]}", esc);
  return mcp_responder_result(r, buf, (size_t)n);
}

/* echo: answers inside the callback. */
static void h_echo(void *ud, const mcp_request_t *req, mcp_responder_t *r) {
  (void)ud;
  size_t len = 0;
  const char *params = mcp_request_params_json(req, &len);
  /* params is {"text":"..."}; answer the whole arguments object as text. */
  char buf[1024];
  snprintf(buf, sizeof buf, "%.*s", (int)len, params);
  answer_text(r, buf);
}

/* add: structured output validated by core against the output schema. */
static void h_add(void *ud, const mcp_request_t *req, mcp_responder_t *r) {
  (void)ud;
  const char *p = mcp_request_params_json(req, NULL);
  double a = 0, b = 0;
  const char *pa = strstr(p, "\"a\":");
  const char *pb = strstr(p, "\"b\":");
  if (pa) a = strtod(pa + 4, NULL);
  if (pb) b = strtod(pb + 4, NULL);
  char buf[256];
  int n = snprintf(buf, sizeof buf,
                   "{\"content\":[{\"type\":\"text\",\"text\":\"%g\"}],\"structuredContent\":{\"sum\":%g}}",
                   a + b, a + b);
  mcp_responder_result(r, buf, (size_t)n);
}

/* async_echo: the responder moves to another thread, which answers later. */
typedef struct {
  mcp_responder_t *r;
  char text[512];
} job_t;

static void *async_worker(void *arg) {
  job_t *job = arg;
  sleep_ms(20);
  char msg[600];
  snprintf(msg, sizeof msg, "async:%s", job->text);
  answer_text(job->r, msg);
  free(job);
  return NULL;
}

static void h_async_echo(void *ud, const mcp_request_t *req, mcp_responder_t *r) {
  (void)ud;
  job_t *job = calloc(1, sizeof *job);
  job->r = r;
  size_t len = 0;
  const char *p = mcp_request_params_json(req, &len);
  snprintf(job->text, sizeof job->text, "%.*s", (int)len, p);
  spawn(async_worker, job);
}

/* wait_cancel: a thread polls for cancellation, then answers anyway (the answer is discarded). */
static void *cancel_worker(void *arg) {
  mcp_responder_t *r = arg;
  for (int i = 0; i < 10000 && !mcp_responder_is_cancelled(r); i++) sleep_ms(1);
  atomic_store(&cancel_answer_status, (int)answer_text(r, "too late"));
  return NULL;
}

static void h_wait_cancel(void *ud, const mcp_request_t *req, mcp_responder_t *r) {
  (void)ud;
  (void)req;
  spawn(cancel_worker, r);
}

/* last_status: what answering a cancelled request, answering bad JSON and asking for malformed
 * input returned. */
static void h_last_status(void *ud, const mcp_request_t *req, mcp_responder_t *r) {
  (void)ud;
  (void)req;
  for (int i = 0; i < 5000 && atomic_load(&cancel_answer_status) < 0; i++) sleep_ms(1);
  char buf[256];
  int c = atomic_load(&cancel_answer_status);
  int b = atomic_load(&bad_json_status);
  int i = atomic_load(&bad_input_status);
  snprintf(buf, sizeof buf, "cancel=%s bad_json=%s bad_input=%s", c < 0 ? "unset" : mcp_status_str(c),
           b < 0 ? "unset" : mcp_status_str(b), i < 0 ? "unset" : mcp_status_str(i));
  answer_text(r, buf);
}

/* progress: progress notifications and a log entry, then the result. */
static void h_progress(void *ud, const mcp_request_t *req, mcp_responder_t *r) {
  (void)ud;
  (void)req;
  bool sent1 = false, sent2 = false, logged = false;
  mcp_responder_progress(r, 1, 2, "half", 4, &sent1);
  mcp_responder_progress(r, 2, 2, NULL, 0, &sent2);
  mcp_responder_log(r, MCP_LOG_LEVEL_WARNING, "c", 1, "\"hello log\"", 11, &logged);
  char buf[128];
  snprintf(buf, sizeof buf, "progress=%d,%d log=%d", sent1, sent2, logged);
  answer_text(r, buf);
}

static void h_bad_json(void *ud, const mcp_request_t *req, mcp_responder_t *r) {
  (void)ud;
  (void)req;
  atomic_store(&bad_json_status, (int)mcp_responder_result(r, "{bad", 4));
}

/* bad_input: an input request core would refuse (ping cannot be asked of a client, MRTR-02). */
static void h_bad_input(void *ud, const mcp_request_t *req, mcp_responder_t *r) {
  (void)ud;
  (void)req;
  const char *ask = "{\"k\":{\"method\":\"ping\",\"params\":{}}}";
  atomic_store(&bad_input_status, (int)mcp_responder_input_required(r, ask, strlen(ask), NULL, 0));
}

static void h_abandon(void *ud, const mcp_request_t *req, mcp_responder_t *r) {
  (void)ud;
  (void)req;
  mcp_responder_free(r);
}

static void h_rpc_error(void *ud, const mcp_request_t *req, mcp_responder_t *r) {
  (void)ud;
  (void)req;
  const char *msg = "Invalid params: widget missing";
  mcp_responder_error(r, -32602, msg, strlen(msg), "{\"field\":\"widget\"}", 18);
}

/* deadlock: blocking functions refuse to run inside a callback. */
static void h_deadlock(void *ud, const mcp_request_t *req, mcp_responder_t *r) {
  (void)req;
  const mcp_server_t *server = *(const mcp_server_t *const *)ud;
  mcp_error_t *err = NULL;
  mcp_status_t s1 = mcp_server_serve_stdio(server, &err);
  int code_ok = err != NULL && mcp_error_status(err) == MCP_STATUS_WOULD_DEADLOCK;
  mcp_error_free(err);
  char *out = NULL;
  mcp_status_t s2 = mcp_responder_request_client_blocking(r, "ping", 4, NULL, 0, 1000, &out, NULL);
  char buf[256];
  snprintf(buf, sizeof buf, "serve=%s blocking=%s err=%d out=%s", mcp_status_str(s1), mcp_status_str(s2),
           code_ok, out == NULL ? "untouched" : "written");
  answer_text(r, buf);
}

/* ask: a server->client sampling request; its completion answers the tool call. */
static void on_sampled(void *ud, mcp_status_t status, const char *json, size_t len, const mcp_error_t *err) {
  mcp_responder_t *r = ud;
  char buf[512];
  if (status == MCP_STATUS_OK) {
    snprintf(buf, sizeof buf, "sampled:%.*s", (int)len, json);
  } else if (status == MCP_STATUS_INPUT_REQUIRED) {
    /* 2026-07-28: fail this run; the engine asks the client and runs the handler again. */
    const char *msg = "input required";
    mcp_responder_error(r, -32603, msg, strlen(msg), NULL, 0);
    return;
  } else {
    snprintf(buf, sizeof buf, "failed:%s code=%lld msg=%s", mcp_status_str(status),
             (long long)mcp_error_jsonrpc_code(err), mcp_error_message(err, NULL));
  }
  answer_text(r, buf);
}

static void h_ask(void *ud, const mcp_request_t *req, mcp_responder_t *r) {
  (void)ud;
  (void)req;
  const char *params =
      "{\"messages\":[{\"role\":\"user\",\"content\":{\"type\":\"text\",\"text\":\"hi\"}}],\"maxTokens\":5}";
  mcp_status_t s = mcp_responder_request_client(r, "sampling/createMessage", 22, params, strlen(params), 5000,
                                                on_sampled, r, NULL);
  if (s != MCP_STATUS_OK) answer_text(r, mcp_status_str(s));
}

/* ask_blocking: a worker thread uses the blocking twin for roots/list. */
static void *roots_worker(void *arg) {
  mcp_responder_t *r = arg;
  char *out = NULL;
  mcp_error_t *err = NULL;
  mcp_status_t s = mcp_responder_request_client_blocking(r, "roots/list", 10, NULL, 0, 5000, &out, &err);
  char buf[512];
  snprintf(buf, sizeof buf, "roots:%s:%s", mcp_status_str(s), out ? out : mcp_error_message(err, NULL));
  mcp_string_free(out);
  mcp_error_free(err);
  answer_text(r, buf);
  return NULL;
}

static void h_ask_blocking(void *ud, const mcp_request_t *req, mcp_responder_t *r) {
  (void)ud;
  (void)req;
  spawn(roots_worker, r);
}

/* mrtr: modern input_required, then the retry reads inputResponses and the state. */
static void h_mrtr(void *ud, const mcp_request_t *req, mcp_responder_t *r) {
  (void)ud;
  size_t slen = 0;
  const char *responses = mcp_request_input_responses_json(req, NULL);
  const char *state = mcp_request_state(req, &slen);
  if (responses == NULL) {
    const char *ask =
        "{\"color\":{\"method\":\"elicitation/create\",\"params\":{\"message\":\"Pick a color\","
        "\"requestedSchema\":{\"type\":\"object\",\"properties\":{\"color\":{\"type\":\"string\"}}}}}}";
    mcp_responder_input_required(r, ask, strlen(ask), "round-1", 7);
    return;
  }
  char buf[512];
  snprintf(buf, sizeof buf, "state=%.*s modern=%d has_color=%d", (int)slen, state ? state : "",
           mcp_request_is_modern(req), strstr(responses, "\"blue\"") != NULL);
  answer_text(r, buf);
}

/* shutdown: mcp_server_shutdown from inside a callback makes mcp_server_serve_stdio return, after
 * draining: this request, answered after the shutdown was requested, still gets its answer. */
static void h_shutdown(void *ud, const mcp_request_t *req, mcp_responder_t *r) {
  (void)req;
  mcp_server_shutdown(*(const mcp_server_t *const *)ud);
  answer_text(r, "bye");
}

/* whoami: request accessors. */
static void h_whoami(void *ud, const mcp_request_t *req, mcp_responder_t *r) {
  (void)ud;
  size_t ml = 0, nl = 0, il = 0, vl = 0;
  const char *m = mcp_request_method(req, &ml);
  const char *n = mcp_request_name(req, &nl);
  const char *id = mcp_request_id_json(req, &il);
  const char *v = mcp_request_protocol_version(req, &vl);
  const char *meta = mcp_request_meta_json(req, NULL);
  const char *caps = mcp_request_client_capabilities_json(req, NULL);
  char buf[1024];
  snprintf(buf, sizeof buf, "method=%.*s name=%.*s id=%.*s version=%.*s meta=%s caps=%s lens_ok=%d", (int)ml, m,
           (int)nl, n, (int)il, id, (int)vl, v ? v : "", meta ? meta : "none", caps,
           ml == strlen(m) && nl == strlen(n) && il == strlen(id));
  answer_text(r, buf);
}

static void h_prompt(void *ud, const mcp_request_t *req, mcp_responder_t *r) {
  (void)ud;
  char esc[512];
  size_t len = 0;
  const char *args = mcp_request_params_json(req, &len);
  json_escape(args, len, esc, sizeof esc);
  char buf[1024];
  int n = snprintf(buf, sizeof buf,
                   "{\"description\":\"A greeting\",\"messages\":[{\"role\":\"user\",\"content\":"
                   "{\"type\":\"text\",\"text\":\"greet %s\"}}]}",
                   esc);
  mcp_responder_result(r, buf, (size_t)n);
}

static void h_resource(void *ud, const mcp_request_t *req, mcp_responder_t *r) {
  (void)ud;
  char uri[512], text[512];
  size_t ul = 0, pl = 0;
  const char *u = mcp_request_name(req, &ul);
  const char *p = mcp_request_params_json(req, &pl);
  json_escape(u, ul, uri, sizeof uri);
  json_escape(p, pl, text, sizeof text);
  char buf[1400];
  int n = snprintf(buf, sizeof buf,
                   "{\"contents\":[{\"uri\":\"%s\",\"mimeType\":\"text/plain\",\"text\":\"vars=%s\"}]}", uri, text);
  mcp_responder_result(r, buf, (size_t)n);
}

static void h_complete(void *ud, const mcp_request_t *req, mcp_responder_t *r) {
  (void)ud;
  (void)req;
  const char *res = "{\"completion\":{\"values\":[\"alpha\",\"beta\"],\"total\":2,\"hasMore\":false}}";
  mcp_responder_result(r, res, strlen(res));
}

static void h_custom(void *ud, const mcp_request_t *req, mcp_responder_t *r) {
  (void)ud;
  size_t len = 0;
  const char *p = mcp_request_params_json(req, &len);
  mcp_responder_result(r, p, len);
}

static void check(mcp_status_t s, mcp_error_t *err, const char *what) {
  if (s != MCP_STATUS_OK) {
    fprintf(stderr, "%s: %s: %s\n", what, mcp_status_str(s), err ? mcp_error_message(err, NULL) : "");
    mcp_error_free(err);
    exit(2);
  }
}

static void *tag(int t) {
  tag_t *p = malloc(sizeof *p);
  p->tag = t;
  atomic_fetch_add(&registered, 1);
  return p;
}

#define ADD_TOOL(b, json, fn)                                                                    \
  do {                                                                                          \
    mcp_error_t *e_ = NULL;                                                                     \
    check(mcp_server_builder_add_tool(b, json, strlen(json), fn, tag(__LINE__), free_tag, &e_), e_, json); \
  } while (0)

int main(void) {
  mcp_error_t *err = NULL;
  mcp_runtime_t *rt = NULL;
  check(mcp_runtime_new(2, &rt, &err), err, "runtime");
  mcp_server_builder_t *b = NULL;
  check(mcp_server_builder_new("c-test-server", 13, "1.2.3", 5, &b, &err), err, "builder");
  check(mcp_server_builder_instructions(b, "Test server written in C.", 25, &err), err, "instructions");
  const char *opts = "{\"title\":\"C test server\",\"limits\":{\"shutdownGraceMs\":500}}";
  check(mcp_server_builder_options_json(b, opts, strlen(opts), &err), err, "options");

  static const mcp_server_t *server_slot = NULL;
  ADD_TOOL(b, "{\"name\":\"echo\",\"inputSchema\":{\"type\":\"object\",\"properties\":{\"text\":{\"type\":\"string\"}},\"required\":[\"text\"]}}", h_echo);
  ADD_TOOL(b, "{\"name\":\"add\",\"inputSchema\":{\"type\":\"object\",\"properties\":{\"a\":{\"type\":\"number\"},\"b\":{\"type\":\"number\"}},\"required\":[\"a\",\"b\"]},\"outputSchema\":{\"type\":\"object\",\"properties\":{\"sum\":{\"type\":\"number\"}},\"required\":[\"sum\"]}}", h_add);
  /* Takes any arguments: a tool without inputSchema takes none (as core's Tool::new). */
  ADD_TOOL(b, "{\"name\":\"async_echo\",\"inputSchema\":{\"type\":\"object\"}}", h_async_echo);
  ADD_TOOL(b, "{\"name\":\"wait_cancel\"}", h_wait_cancel);
  ADD_TOOL(b, "{\"name\":\"last_status\"}", h_last_status);
  ADD_TOOL(b, "{\"name\":\"progress\"}", h_progress);
  ADD_TOOL(b, "{\"name\":\"bad_json\"}", h_bad_json);
  ADD_TOOL(b, "{\"name\":\"bad_input\"}", h_bad_input);
  ADD_TOOL(b, "{\"name\":\"abandon\"}", h_abandon);
  ADD_TOOL(b, "{\"name\":\"rpc_error\"}", h_rpc_error);
  ADD_TOOL(b, "{\"name\":\"ask\"}", h_ask);
  ADD_TOOL(b, "{\"name\":\"ask_blocking\"}", h_ask_blocking);
  ADD_TOOL(b, "{\"name\":\"mrtr\"}", h_mrtr);
  ADD_TOOL(b, "{\"name\":\"whoami\"}", h_whoami);
  /* deadlock gets the server slot as user data, without a finalizer. */
  check(mcp_server_builder_add_tool(b, "{\"name\":\"deadlock\"}", 19, h_deadlock, (void *)&server_slot, NULL, &err),
        err, "deadlock");

  check(mcp_server_builder_add_tool(b, "{\"name\":\"shutdown\"}", 19, h_shutdown, (void *)&server_slot, NULL, &err),
        err, "shutdown");

  const char *prompt = "{\"name\":\"greet\",\"arguments\":[{\"name\":\"who\",\"required\":true}]}";
  check(mcp_server_builder_add_prompt(b, prompt, strlen(prompt), h_prompt, tag(1), free_tag, &err), err, "prompt");
  const char *res = "{\"uri\":\"c://readme\",\"name\":\"readme\",\"mimeType\":\"text/plain\"}";
  check(mcp_server_builder_add_resource(b, res, strlen(res), h_resource, tag(2), free_tag, &err), err, "resource");
  const char *tpl = "{\"uriTemplate\":\"c://notes/{id}\",\"name\":\"note\"}";
  check(mcp_server_builder_add_resource_template(b, tpl, strlen(tpl), h_resource, tag(3), free_tag, &err), err,
        "template");
  check(mcp_server_builder_set_completion(b, h_complete, tag(4), free_tag, &err), err, "completion");
  check(mcp_server_builder_add_method(b, "c/echo", 6, h_custom, tag(5), free_tag, &err), err, "method");

  mcp_server_t *server = NULL;
  check(mcp_server_builder_build(b, rt, &server, &err), err, "build");
  server_slot = server;

  mcp_status_t s = mcp_server_serve_stdio(server, &err);
  if (s != MCP_STATUS_OK) {
    fprintf(stderr, "serve: %s\n", mcp_status_str(s));
    mcp_error_free(err);
  }

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
