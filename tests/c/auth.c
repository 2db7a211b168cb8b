/*
 * OAuth from C, driven by ffi/tests/c_auth_suite.rs:
 *   auth ISSUER_URL
 * (a) a server protected with mcp_server_listen_http_auth and a C verifier that accepts one
 *     token (as principal "alice") and refuses every other: a C client presenting that token
 *     reaches the tool, whose handler sees the principal via mcp_request_principal_json (and the
 *     request's headers via mcp_request_headers_json); a wrong
 *     token and no token are refused with HTTP 401; an unprotected listener has no principal.
 * (b) a C client with mcp_client_builder_on_authorize and an `auth` object runs the whole
 *     authorization code flow against the scripted authorization server at ISSUER_URL (run by
 *     the Rust harness, which checks what it saw) and then reaches the protected tool; a browser
 *     step that refuses (returns 0) fails the connection with MCP_STATUS_TRANSPORT.
 * Prints "resource URL" for the harness, exits non-zero on the first failed check.
 */
#include "mcpcore.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define S(str) (str), strlen(str)

#define CHECK(cond)                                                                   \
  do {                                                                                \
    if (!(cond)) {                                                                    \
      fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond);        \
      exit(1);                                                                        \
    }                                                                                 \
  } while (0)

static void fail_err(int line, const char *what, mcp_status_t st, mcp_error_t *err) {
  fprintf(stderr, "auth.c:%d: %s -> %s: %s\n", line, what, mcp_status_str((int)st),
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

static const char GOOD[] = "good-token";
static const char REDIRECT[] = "http://127.0.0.1:9/callback";

static atomic_int accepted, refused, browsed;
static mcp_runtime_t *rt;

static int contains(const char *s, const char *needle) { return s && strstr(s, needle) != NULL; }

/* The verifier: one token speaks for alice, every other is refused. */
static void verify(void *ud, const char *token, size_t len, mcp_token_verdict_t *verdict) {
  (void)ud;
  CHECK(strlen(token) == len);
  if (len == strlen(GOOD) && memcmp(token, GOOD, len) == 0) {
    const char *p = "{\"subject\":\"alice\",\"scopes\":[\"mcp:tools\"],\"clientId\":\"c-app\"}";
    CHECK(mcp_token_verdict_accept(verdict, S(p)) == MCP_STATUS_OK);
    atomic_fetch_add(&accepted, 1);
  } else {
    CHECK(mcp_token_verdict_refuse(verdict, S("unknown token")) == MCP_STATUS_OK);
    atomic_fetch_add(&refused, 1);
  }
}

/* The tool answers with the principal and the HTTP request headers it sees (null when none)
 * as structured content. */
static void whoami(void *ud, const mcp_request_t *req, mcp_responder_t *r) {
  (void)ud;
  size_t len = 0, hlen = 0;
  const char *p = mcp_request_principal_json(req, &len);
  const char *h = mcp_request_headers_json(req, &hlen);
  const char *pre = "{\"content\":[{\"type\":\"text\",\"text\":\"ok\"}],\"structuredContent\":"
                    "{\"principal\":";
  size_t plen = p ? len : 4;
  hlen = h ? hlen : 4;
  char *out = malloc(strlen(pre) + plen + strlen(",\"headers\":") + hlen + 3);
  CHECK(out != NULL);
  strcpy(out, pre);
  strncat(out, p ? p : "null", plen);
  strcat(out, ",\"headers\":");
  strncat(out, h ? h : "null", hlen);
  strcat(out, "}}");
  CHECK(mcp_responder_result(r, S(out)) == MCP_STATUS_OK);
  free(out);
}

static mcp_client_builder_t *builder(void) {
  mcp_client_builder_t *b = NULL;
  OK(mcp_client_builder_new(S("c-auth"), S("0.1"), &b, &err));
  return b;
}

/* Connect with these options, call whoami, return the owned result. */
static char *whoami_via(const char *url, mcp_client_builder_t *b, const char *options) {
  mcp_client_t *c = NULL;
  OK(mcp_client_connect_http(rt, b, S(url), S(options), &c, &err));
  char *out = NULL;
  OK(mcp_client_call_tool_blocking(c, S("whoami"), S("{}"), NULL, &out, &err));
  mcp_client_free(c);
  return out;
}

/* A connection that must be refused with HTTP 401. */
static void refused_with(const char *url, const char *options) {
  mcp_client_t *c = NULL;
  mcp_error_t *err = NULL;
  mcp_status_t st = mcp_client_connect_http(rt, builder(), S(url), S(options), &c, &err);
  CHECK(st == MCP_STATUS_TRANSPORT && c == NULL && err != NULL);
  const char *m = mcp_error_message(err, NULL);
  if (!contains(m, "401")) {
    fprintf(stderr, "refusal without 401: %s\n", m);
    exit(1);
  }
  mcp_error_free(err);
}

static mcp_listener_t *listen_auth(const mcp_server_t *server, const char *addr,
                                   const char *resource, const char *issuer) {
  char opts[512];
  snprintf(opts, sizeof opts,
           "{\"shutdownDeadlineMs\":200,\"auth\":{\"resource\":\"%s\","
           "\"authorizationServers\":[\"%s\"],\"scopesSupported\":[\"mcp:tools\"]}}",
           resource, issuer);
  mcp_listener_t *l = NULL;
  OK(mcp_server_listen_http_auth(server, S(addr), S(opts), verify, NULL, NULL, &l, &err));
  return l;
}

/* (a) a static token: accepted, seen by the handler; others refused. */
static void static_tokens(const mcp_server_t *server, const char *issuer) {
  mcp_listener_t *l = listen_auth(server, "127.0.0.1:0", "http://127.0.0.1/mcp", issuer);
  char url[64];
  snprintf(url, sizeof url, "http://127.0.0.1:%u/mcp", (unsigned)mcp_listener_port(l));
  char *out = whoami_via(url, builder(),
                         "{\"listenStream\":false,\"headers\":{\"Authorization\":\"Bearer good-token\"}}");
  if (!contains(out, "\"subject\":\"alice\"") || !contains(out, "\"mcp:tools\"") ||
      !contains(out, "\"clientId\":\"c-app\"") || !contains(out, "\"authorization\":\"Bearer good-token\"")) {
    fprintf(stderr, "whoami = %s\n", out);
    exit(1);
  }
  mcp_string_free(out);
  CHECK(atomic_load(&accepted) > 0 && atomic_load(&refused) == 0);
  refused_with(url, "{\"listenStream\":false,\"headers\":{\"Authorization\":\"Bearer forged\"}}");
  CHECK(atomic_load(&refused) > 0);
  int before = atomic_load(&accepted) + atomic_load(&refused);
  refused_with(url, "{\"listenStream\":false}");
  CHECK(atomic_load(&accepted) + atomic_load(&refused) == before); /* no token, no callback */
  mcp_listener_free(l);

  /* The same server unprotected: the handler sees no principal. */
  OK(mcp_server_listen_http(server, S("127.0.0.1:0"), S("{\"shutdownDeadlineMs\":200}"), &l, &err));
  snprintf(url, sizeof url, "http://127.0.0.1:%u/mcp", (unsigned)mcp_listener_port(l));
  out = whoami_via(url, builder(), "{\"listenStream\":false,\"headers\":{\"X-Tenant\":\"acme\"}}");
  CHECK(contains(out, "\"principal\":null"));
  /* The handler sees the HTTP request's headers (mcp_request_headers_json), names in lower case. */
  if (!contains(out, "\"x-tenant\":\"acme\"") || !contains(out, "\"host\":\"127.0.0.1:")) {
    fprintf(stderr, "whoami headers = %s\n", out);
    exit(1);
  }
  mcp_string_free(out);
  mcp_listener_free(l);
}

/* The value of query parameter `name` in `url` (copied into `out`). */
static int query_param(const char *url, const char *name, char *out, size_t cap) {
  char key[32];
  snprintf(key, sizeof key, "%s=", name);
  const char *p = strstr(url, key);
  while (p && p[-1] != '?' && p[-1] != '&') p = strstr(p + 1, key);
  if (!p) return 0;
  p += strlen(key);
  size_t n = strcspn(p, "&");
  if (n >= cap) return 0;
  memcpy(out, p, n);
  out[n] = '\0';
  return 1;
}

/* The browser step: check the authorization request, answer with a code for its state. */
static size_t browser(void *ud, const char *url, size_t url_len, char *redirect_out,
                      size_t cap) {
  const char *issuer = ud;
  CHECK(strlen(url) == url_len);
  atomic_fetch_add(&browsed, 1);
  char state[128];
  CHECK(strncmp(url, issuer, strlen(issuer)) == 0);
  CHECK(contains(url, "code_challenge_method=S256") && contains(url, "resource="));
  CHECK(query_param(url, "state", state, sizeof state));
  int n = snprintf(redirect_out, cap, "%s?code=c-code&state=%s&iss=%s", REDIRECT, state, issuer);
  CHECK(n > 0 && (size_t)n < cap);
  return (size_t)n;
}

/* A user who closes the browser: the connection fails, nothing is redeemed. */
static size_t closed_browser(void *ud, const char *url, size_t url_len, char *redirect_out,
                             size_t cap) {
  (void)ud;
  (void)url;
  (void)url_len;
  (void)redirect_out;
  (void)cap;
  atomic_fetch_add(&browsed, 1);
  return 0;
}

/* (b) the authorization code flow with the C browser step. */
static void authorization_code(const mcp_server_t *server, const char *issuer) {
  /* The resource must name the listener's URL: find a free port, then listen there. */
  mcp_listener_t *probe = NULL;
  OK(mcp_server_listen_http(server, S("127.0.0.1:0"), S("{\"shutdownDeadlineMs\":200}"), &probe, &err));
  unsigned port = mcp_listener_port(probe);
  mcp_listener_free(probe);
  char addr[32], url[64];
  snprintf(addr, sizeof addr, "127.0.0.1:%u", port);
  snprintf(url, sizeof url, "http://127.0.0.1:%u/mcp", port);
  mcp_listener_t *l = listen_auth(server, addr, url, issuer);
  printf("resource %s\n", url);
  fflush(stdout);
  mcp_client_builder_t *b = builder();
  OK(mcp_client_builder_on_authorize(b, browser, (void *)issuer, NULL, &err));
  char opts[256];
  snprintf(opts, sizeof opts, "{\"listenStream\":false,\"auth\":{\"redirectUri\":\"%s\"}}",
           REDIRECT);
  int before = atomic_load(&accepted);
  char *out = whoami_via(url, b, opts);
  CHECK(contains(out, "\"subject\":\"alice\""));
  mcp_string_free(out);
  CHECK(atomic_load(&browsed) == 1 && atomic_load(&accepted) > before);

  b = builder();
  OK(mcp_client_builder_on_authorize(b, closed_browser, NULL, NULL, &err));
  mcp_client_t *c = NULL;
  mcp_error_t *err = NULL;
  CHECK(mcp_client_connect_http(rt, b, S(url), S(opts), &c, &err) == MCP_STATUS_TRANSPORT);
  CHECK(c == NULL && err != NULL && atomic_load(&browsed) == 2);
  mcp_error_free(err);
  mcp_listener_free(l);
}

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: auth ISSUER_URL\n");
    return 2;
  }
  const char *issuer = argv[1];
  OK(mcp_runtime_new(2, &rt, &err));
  mcp_server_builder_t *sb = NULL;
  OK(mcp_server_builder_new(S("c-auth"), S("1"), &sb, &err));
  OK(mcp_server_builder_add_tool(sb, S("{\"name\":\"whoami\",\"inputSchema\":{\"type\":\"object\"}}"),
                                 whoami, NULL, NULL, &err));
  mcp_server_t *server = NULL;
  OK(mcp_server_builder_build(sb, rt, &server, &err));

  static_tokens(server, issuer);
  authorization_code(server, issuer);

  mcp_server_free(server);
  mcp_runtime_free(rt);
  printf("auth: ok\n");
  return 0;
}
