/*
 * Changing a server while it serves, from C (mcp_server_add / _remove / _set_enabled), driven
 * by ffi/tests/c_suite.rs. A server built with {"dynamic": true} starts empty and serves
 * Streamable HTTP on 127.0.0.1; the C client of this program, in the legacy and the modern era:
 * - sees a tool added at run time and calls it; disabled, it is the unknown-tool error (-32602)
 *   and absent from tools/list; enabled, it answers again; replaced, the new handler answers and
 *   the old user data is released exactly once; removed, it is unknown again and its user data
 *   is released exactly once (a second removal reports that nothing was removed);
 * - calls a tool whose handler adds another tool from inside the callback, then calls that one;
 * - gets a prompt added at run time; its user data is released when the server is freed.
 * Bad inputs: a NULL server, an unknown kind, bad JSON, a tool definition core refuses, and a
 * server built without "dynamic" (the error names the option), each with its status and message,
 * their user data released before the call returns.
 * Prints "dynamic: ok"; exits non-zero on the first failed check, or if a finalizer did not run
 * exactly once.
 */
#include "mcpcore.h"

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
  fprintf(stderr, "dynamic.c:%d: %s -> %s: %s\n", line, what, mcp_status_str((int)st),
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

/* User data: a counter of its finalizer's runs (each must end at exactly 1). */
typedef struct {
  atomic_int freed;
  const char *text; /* what the tool answers */
} tag_t;

#define MAX_TAGS 32
static tag_t tags[MAX_TAGS];
static int ntags;
static const mcp_server_t *the_server;

static tag_t *tag(const char *text) {
  CHECK(ntags < MAX_TAGS);
  tag_t *t = &tags[ntags++];
  atomic_init(&t->freed, 0);
  t->text = text;
  return t;
}

static void free_tag(void *p) { atomic_fetch_add(&((tag_t *)p)->freed, 1); }

static int contains(const char *s, const char *needle) { return s && strstr(s, needle) != NULL; }

static void sleep_ms(long ms) {
  struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
  nanosleep(&ts, NULL);
}

/* Wait (bounded) until the tag's finalizer ran once: the server may still hold the handler for
 * a moment after the client got its last answer. It must never run twice. */
static void wait_freed(tag_t *t) {
  for (int i = 0; i < 3000 && atomic_load(&t->freed) == 0; i++) sleep_ms(10);
  CHECK(atomic_load(&t->freed) == 1);
}

/* A tool answering its tag's text. */
static void h_text(void *ud, const mcp_request_t *req, mcp_responder_t *r) {
  (void)req;
  char res[128];
  snprintf(res, sizeof res, "{\"content\":[{\"type\":\"text\",\"text\":\"%s\"}]}",
           ((tag_t *)ud)->text);
  CHECK(mcp_responder_result(r, S(res)) == MCP_STATUS_OK);
}

/* A tool that adds the tool "grown" from inside its own callback (on a runtime thread). */
static void h_grow(void *ud, const mcp_request_t *req, mcp_responder_t *r) {
  (void)ud;
  (void)req;
  OK(mcp_server_add(the_server, S("tool"), S("{\"name\":\"grown\"}"), h_text, tag("grown"),
                    free_tag, &err));
  const char *res = "{\"content\":[{\"type\":\"text\",\"text\":\"grew\"}]}";
  CHECK(mcp_responder_result(r, S(res)) == MCP_STATUS_OK);
}

static void h_prompt(void *ud, const mcp_request_t *req, mcp_responder_t *r) {
  (void)ud;
  (void)req;
  const char *res = "{\"messages\":[{\"role\":\"user\",\"content\":{\"type\":\"text\","
                    "\"text\":\"hello from a prompt added later\"}}]}";
  CHECK(mcp_responder_result(r, S(res)) == MCP_STATUS_OK);
}

static void add_tool(const char *name, const char *text) {
  char def[128];
  snprintf(def, sizeof def, "{\"name\":\"%s\",\"description\":\"added while serving\"}", name);
  OK(mcp_server_add(the_server, S("tool"), S(def), h_text, tag(text), free_tag, &err));
}

/* Call a tool; the owned result, or NULL with the JSON-RPC code in *code. */
static char *call(const mcp_client_t *c, const char *name, int32_t *code) {
  char *out = NULL;
  mcp_error_t *err = NULL;
  mcp_status_t st = mcp_client_call_tool_blocking(c, S(name), NULL, 0, NULL, &out, &err);
  if (st == MCP_STATUS_OK) {
    CHECK(err == NULL);
    return out;
  }
  CHECK(st == MCP_STATUS_PROTOCOL && out == NULL && err != NULL);
  *code = mcp_error_jsonrpc_code(err);
  CHECK(contains(mcp_error_message(err, NULL), name));
  mcp_error_free(err);
  return NULL;
}

static void expect_text(const mcp_client_t *c, const char *name, const char *text) {
  int32_t code = 0;
  char *out = call(c, name, &code);
  if (!contains(out, text)) {
    fprintf(stderr, "%s answered %s (code %d), expected %s\n", name, out ? out : "an error",
            (int)code, text);
    exit(1);
  }
  mcp_string_free(out);
}

static void expect_unknown(const mcp_client_t *c, const char *name) {
  int32_t code = 0;
  char *out = call(c, name, &code);
  CHECK(out == NULL && code == -32602);
}

static int listed(const mcp_client_t *c, const char *name) {
  char *out = NULL;
  OK(mcp_client_list_all_blocking(c, MCP_LIST_KIND_TOOLS, NULL, &out, &err));
  char needle[64];
  snprintf(needle, sizeof needle, "\"name\":\"%s\"", name);
  int found = contains(out, needle);
  mcp_string_free(out);
  return found;
}

static void set_enabled(const char *name, bool on) {
  bool found = false;
  OK(mcp_server_set_enabled(the_server, S("tool"), S(name), on, &found, &err));
  CHECK(found);
}

/* One era: the whole life of a tool added while serving. `n` makes the names distinct. */
static void scenario(const mcp_runtime_t *rt, const char *url, int mode, const char *n) {
  mcp_client_builder_t *b = NULL;
  OK(mcp_client_builder_new(S("c-dynamic"), S("0.1"), &b, &err));
  OK(mcp_client_builder_mode(b, mode, &err));
  mcp_client_t *c = NULL;
  OK(mcp_client_connect_http(rt, b, S(url), S("{\"listenStream\":false}"), &c, &err));

  char tool[32], grow[32];
  snprintf(tool, sizeof tool, "echo_%s", n);
  snprintf(grow, sizeof grow, "grow_%s", n);
  expect_unknown(c, tool);
  add_tool(tool, "v1");
  tag_t *v1 = &tags[ntags - 1];
  CHECK(listed(c, tool));
  expect_text(c, tool, "v1");

  set_enabled(tool, false);
  CHECK(!listed(c, tool));
  expect_unknown(c, tool);
  set_enabled(tool, true);
  expect_text(c, tool, "v1");

  add_tool(tool, "v2"); /* replaces v1 */
  tag_t *v2 = &tags[ntags - 1];
  expect_text(c, tool, "v2");
  wait_freed(v1);
  CHECK(atomic_load(&v2->freed) == 0);

  bool removed = false;
  OK(mcp_server_remove(the_server, S("tool"), S(tool), &removed, &err));
  CHECK(removed);
  expect_unknown(c, tool);
  wait_freed(v2);
  OK(mcp_server_remove(the_server, S("tool"), S(tool), &removed, &err));
  CHECK(!removed);
  bool found = true;
  OK(mcp_server_set_enabled(the_server, S("tool"), S(tool), true, &found, &err));
  CHECK(!found);

  /* A handler changing the server from inside its callback. */
  char def[64];
  snprintf(def, sizeof def, "{\"name\":\"%s\"}", grow);
  OK(mcp_server_add(the_server, S("tool"), S(def), h_grow, tag("grow"), free_tag, &err));
  expect_text(c, grow, "grew");
  expect_text(c, "grown", "grown");

  mcp_client_free(c);
}

/* A refused call: `want` with a message containing `needle`; the user data is released. */
static void refused(const mcp_server_t *s, const char *kind, const char *def, mcp_status_t want,
                    const char *needle) {
  tag_t *t = tag("refused");
  mcp_error_t *err = NULL;
  mcp_status_t st = mcp_server_add(s, S(kind), S(def), h_text, t, free_tag, &err);
  const char *msg = err ? mcp_error_message(err, NULL) : "";
  if (st != want || !contains(msg, needle)) {
    fprintf(stderr, "add %s %s: expected %s naming %s, got %s: %s\n", kind, def,
            mcp_status_str((int)want), needle, mcp_status_str((int)st), msg);
    exit(1);
  }
  CHECK(mcp_error_status(err) == want);
  mcp_error_free(err);
  CHECK(atomic_load(&t->freed) == 1); /* before the call returned */
}

static mcp_server_t *build(const mcp_runtime_t *rt, const char *options) {
  mcp_server_builder_t *b = NULL;
  OK(mcp_server_builder_new(S("c-dynamic"), S("1.0"), &b, &err));
  OK(mcp_server_builder_options_json(b, S(options), &err));
  mcp_server_t *s = NULL;
  OK(mcp_server_builder_build(b, rt, &s, &err));
  return s;
}

static void bad_inputs(const mcp_runtime_t *rt, const mcp_server_t *s) {
  refused(NULL, "tool", "{\"name\":\"x\"}", MCP_STATUS_NULL_ARGUMENT, "server");
  refused(s, "widget", "{\"name\":\"x\"}", MCP_STATUS_INVALID_ARGUMENT, "resourceTemplate");
  refused(s, "tool", "{\"name\":", MCP_STATUS_INVALID_JSON, "definition_json");
  refused(s, "tool", "[1]", MCP_STATUS_INVALID_JSON, "definition_json");
  refused(s, "tool", "{\"name\":\"\"}", MCP_STATUS_INVALID_ARGUMENT, "tool");
  refused(s, "tool", "{\"name\":\"x\",\"inputSchema\":{\"type\":7}}", MCP_STATUS_INVALID_ARGUMENT,
          "x");

  mcp_error_t *err = NULL;
  CHECK(mcp_server_remove(s, S("tools"), S("x"), NULL, &err) == MCP_STATUS_INVALID_ARGUMENT);
  CHECK(contains(mcp_error_message(err, NULL), "unknown item kind"));
  mcp_error_free(err);
  CHECK(mcp_server_set_enabled(NULL, S("tool"), S("x"), true, NULL, NULL) ==
        MCP_STATUS_NULL_ARGUMENT);
  CHECK(mcp_server_remove(s, S("tool"), NULL, 0, NULL, NULL) == MCP_STATUS_NULL_ARGUMENT);

  /* Without "dynamic", an empty server advertises no tools and cannot add one later. */
  mcp_server_t *fixed = build(rt, "{}");
  refused(fixed, "tool", "{\"name\":\"x\"}", MCP_STATUS_INVALID_ARGUMENT, "\"dynamic\": true");
  mcp_server_free(fixed);
}

int main(void) {
  mcp_runtime_t *rt = NULL;
  OK(mcp_runtime_new(2, &rt, &err));
  mcp_server_t *s = build(rt, "{\"dynamic\":true}");
  the_server = s;
  bad_inputs(rt, s);

  mcp_listener_t *l = NULL;
  OK(mcp_server_listen_http(s, S("127.0.0.1:0"), S("{\"shutdownDeadlineMs\":200}"), &l, &err));
  char url[64];
  snprintf(url, sizeof url, "http://127.0.0.1:%u/mcp", (unsigned)mcp_listener_port(l));
  scenario(rt, url, MCP_CONNECT_MODE_LEGACY, "legacy");

  OK(mcp_server_add(s, S("prompt"), S("{\"name\":\"greet\"}"), h_prompt, tag("prompt"), free_tag,
                    &err));
  tag_t *prompt = &tags[ntags - 1];
  scenario(rt, url, MCP_CONNECT_MODE_MODERN, "modern");
  {
    mcp_client_builder_t *b = NULL;
    OK(mcp_client_builder_new(S("c-dynamic"), S("0.1"), &b, &err));
    mcp_client_t *c = NULL;
    OK(mcp_client_connect_http(rt, b, S(url), S("{\"listenStream\":false}"), &c, &err));
    char *out = NULL;
    OK(mcp_client_get_prompt_blocking(c, S("greet"), NULL, 0, NULL, &out, &err));
    CHECK(contains(out, "added later"));
    mcp_string_free(out);
    mcp_client_free(c);
  }
  CHECK(atomic_load(&prompt->freed) == 0);

  mcp_listener_free(l);
  mcp_server_free(s);
  mcp_runtime_free(rt);
  for (int i = 0; i < ntags; i++) {
    if (atomic_load(&tags[i].freed) != 1) {
      fprintf(stderr, "user data %d (%s) released %d times\n", i, tags[i].text,
              atomic_load(&tags[i].freed));
      return 3;
    }
  }
  printf("dynamic: ok\n");
  return 0;
}
