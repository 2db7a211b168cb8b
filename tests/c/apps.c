/*
 * MCP Apps (EXT-03) from C through the ordinary registration calls: a ui:// resource registered
 * with mcp_server_builder_add_resource (core sets the app MIME type and completes the read
 * contents), a tool linked to it through "_meta.ui.resourceUri" in its JSON, and the refusals
 * (a ui:// resource with another MIME type at registration, a tool linked to an unregistered
 * UI resource at build). Then serves stdio; driven by ffi/tests/c_suite.rs. Exits non-zero if a
 * refusal did not happen or a user-data finalizer did not run exactly once.
 */
#include "mcpcore.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static atomic_int registered;
static atomic_int finalized;

static void free_tag(void *p) {
  free(p);
  atomic_fetch_add(&finalized, 1);
}

static void *tag(void) {
  void *p = malloc(1);
  atomic_fetch_add(&registered, 1);
  return p;
}

/* Takes `errp`, not `err`: the error is read after the call that sets it has returned (the
 * evaluation order of a call's arguments is unspecified). */
static void check(mcp_status_t s, mcp_error_t **errp, const char *what) {
  mcp_error_t *err = *errp;
  if (s != MCP_STATUS_OK) {
    fprintf(stderr, "%s: %s: %s\n", what, mcp_status_str(s), err ? mcp_error_message(err, NULL) : "");
    mcp_error_free(err);
    exit(2);
  }
}

/* Expect `s` to be INVALID_ARGUMENT with a message containing `needle`. */
static void refused(mcp_status_t s, mcp_error_t *err, const char *needle, const char *what) {
  const char *msg = err ? mcp_error_message(err, NULL) : "";
  if (s != MCP_STATUS_INVALID_ARGUMENT || strstr(msg, needle) == NULL) {
    fprintf(stderr, "%s: expected a refusal naming %s, got %s: %s\n", what, needle, mcp_status_str(s), msg);
    mcp_error_free(err);
    exit(4);
  }
  mcp_error_free(err);
}

/* The view: only the HTML; core adds the URI, the app MIME type and the resource's _meta.ui. */
static void h_view(void *ud, const mcp_request_t *req, mcp_responder_t *r) {
  (void)ud;
  (void)req;
  const char *res = "{\"contents\":[{\"text\":\"<!DOCTYPE html><p>from C</p>\"}]}";
  mcp_responder_result(r, res, strlen(res));
}

static void h_show(void *ud, const mcp_request_t *req, mcp_responder_t *r) {
  (void)ud;
  (void)req;
  const char *res = "{\"content\":[{\"type\":\"text\",\"text\":\"shown\"}]}";
  mcp_responder_result(r, res, strlen(res));
}

static const char *VIEW = "{\"uri\":\"ui://c/view\",\"name\":\"c_view\",\"_meta\":{\"ui\":{\"prefersBorder\":true,"
                          "\"csp\":{\"connectDomains\":[\"https://api.example\"]}}}}";
static const char *SHOW = "{\"name\":\"show\",\"_meta\":{\"ui\":{\"resourceUri\":\"ui://c/view\","
                          "\"visibility\":[\"model\",\"app\"]}}}";

/* A tool linked to a UI resource nobody registered: the build is refused. */
static void dangling_link_is_refused(mcp_runtime_t *rt) {
  mcp_error_t *err = NULL;
  mcp_server_builder_t *b = NULL;
  check(mcp_server_builder_new("dangling", 8, "1", 1, &b, &err), &err, "builder");
  check(mcp_server_builder_add_tool(b, SHOW, strlen(SHOW), h_show, tag(), free_tag, &err), &err, "show");
  mcp_server_t *server = NULL;
  /* The status is taken before `err` is read: argument evaluation order is unspecified. */
  mcp_status_t s = mcp_server_builder_build(b, rt, &server, &err);
  refused(s, err, "ui://c/view", "dangling link");
  err = NULL;
  if (server != NULL) {
    fprintf(stderr, "server_out written on failure\n");
    exit(4);
  }
}

int main(void) {
  mcp_error_t *err = NULL;
  mcp_runtime_t *rt = NULL;
  check(mcp_runtime_new(1, &rt, &err), &err, "runtime");
  dangling_link_is_refused(rt);

  mcp_server_builder_t *b = NULL;
  check(mcp_server_builder_new("c-apps-server", 13, "1", 1, &b, &err), &err, "builder");
  const char *bad = "{\"uri\":\"ui://c/bad\",\"name\":\"bad\",\"mimeType\":\"text/plain\"}";
  mcp_status_t s = mcp_server_builder_add_resource(b, bad, strlen(bad), h_view, tag(), free_tag, &err);
  refused(s, err, "text/html;profile=mcp-app", "ui:// with text/plain");
  err = NULL;
  /* Linking first is fine: links are checked when the server is built. */
  check(mcp_server_builder_add_tool(b, SHOW, strlen(SHOW), h_show, tag(), free_tag, &err), &err, "show");
  check(mcp_server_builder_add_resource(b, VIEW, strlen(VIEW), h_view, tag(), free_tag, &err), &err, "view");

  mcp_server_t *server = NULL;
  s = mcp_server_builder_build(b, rt, &server, &err);
  check(s, &err, "build");
  s = mcp_server_serve_stdio(server, &err);
  if (s != MCP_STATUS_OK) {
    fprintf(stderr, "serve: %s\n", mcp_status_str(s));
    mcp_error_free(err);
  }
  mcp_server_free(server);
  mcp_runtime_free(rt);
  int reg = atomic_load(&registered), fin = atomic_load(&finalized);
  if (reg != fin) {
    fprintf(stderr, "finalizers: %d registered, %d ran\n", reg, fin);
    return 3;
  }
  return s == MCP_STATUS_OK ? 0 : 1;
}
