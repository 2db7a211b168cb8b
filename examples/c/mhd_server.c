/*
 * mhd_server: an MCP endpoint mounted in libmicrohttpd, beside a route of the application's own.
 *
 *   GET  /health   -> {"status":"ok","cancelled":N}  (the application's route; N counts `wait`
 *                     handlers that saw their request cancelled)
 *   ANY  /mcp      -> the MCP endpoint (both protocol eras), one mcp_http_exchange_t per request
 *
 * Tools: echo {text} -> the text back; wait {} -> reports progress (so a modern answer becomes an
 * SSE stream), then waits until its request is cancelled (a client that goes away mid-stream).
 *
 * The daemon runs a thread per connection, so its callbacks may block:
 *   - the access handler feeds upload chunks to the exchange, ends the body, waits for the head
 *     and queues a response whose content reader pulls chunks from a queue that on_body fills;
 *   - while waiting, it also watches the client's socket: a client that hangs up ends the
 *     response with an error;
 *   - MHD's request-completed callback (its "free" callback for a request) reports a request
 *     that did not complete as a disconnect with mcp_http_exchange_cancel: core drops the
 *     exchange, which cancels a modern request's handler.
 *
 * Listens on 127.0.0.1 (port 0 = any free port), prints `port=N`, serves until stdin reaches EOF.
 *
 * Build (Debian: apt-get install libmicrohttpd-dev; see ffi/README.md):
 *   cc -std=c11 -Wall -Wextra -Iinclude examples/c/mhd_server.c target/debug/libmcpcore.a \
 *      -lmicrohttpd -lpthread -ldl -lm -o mhd_server
 */
#define _GNU_SOURCE /* POLLRDHUP */
#include "mcpcore.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static atomic_int cancelled_handlers;

/* ---- the MCP server's tools ---- */

static void echo(void *user_data, const mcp_request_t *req, mcp_responder_t *responder) {
  (void)user_data;
  /* Arguments are compact JSON validated against the schema: the escaped text is copied as is. */
  const char *args = mcp_request_params_json(req, NULL);
  const char *start = strstr(args, "\"text\":\"");
  if (start == NULL) {
    mcp_responder_free(responder);
    return;
  }
  start += 8;
  const char *end = start;
  while (*end && *end != '"') end += (*end == '\\' && end[1]) ? 2 : 1;
  size_t n = (size_t)(end - start), cap = n + 64;
  char *out = malloc(cap);
  if (out == NULL) {
    mcp_responder_free(responder);
    return;
  }
  int w = snprintf(out, cap, "{\"content\":[{\"type\":\"text\",\"text\":\"%.*s\"}]}", (int)n, start);
  mcp_responder_result(responder, out, (size_t)w);
  free(out);
}

/* The C API tells a handler about cancellation by mcp_responder_is_cancelled: this worker
 * checks it every 10 ms (for at most a minute) and counts what it saw. */
static void *wait_worker(void *arg) {
  mcp_responder_t *r = arg;
  for (int i = 0; i < 6000 && !mcp_responder_is_cancelled(r); i++) {
    struct timespec t = {0, 10 * 1000 * 1000};
    nanosleep(&t, NULL);
  }
  if (mcp_responder_is_cancelled(r)) {
    atomic_fetch_add(&cancelled_handlers, 1);
    mcp_responder_free(r); /* nobody waits for the answer any more */
  } else {
    const char *res = "{\"content\":[{\"type\":\"text\",\"text\":\"not cancelled\"}]}";
    mcp_responder_result(r, res, strlen(res));
  }
  return NULL;
}

static void wait_tool(void *user_data, const mcp_request_t *req, mcp_responder_t *responder) {
  (void)user_data;
  (void)req;
  mcp_responder_progress(responder, 1, 2, "waiting", 7, NULL);
  pthread_t t;
  if (pthread_create(&t, NULL, wait_worker, responder) != 0) {
    mcp_responder_free(responder);
    return;
  }
  pthread_detach(t);
}

/* ---- one request: the exchange's callbacks fill it, MHD's callbacks drain it ---- */

struct chunk {
  struct chunk *next;
  size_t len, off;
  char data[];
};

struct request {
  pthread_mutex_t mu;
  int refs; /* one for MHD (dropped in `completed`), one for mcpcore (dropped in on_end) */
  mcp_http_exchange_t *exchange;
  int wake[2]; /* a byte per event, so the MHD thread can poll() it beside the client's socket */
  int client_fd;
  int head_ready, ended;
  unsigned status;
  size_t header_count;
  char **names, **values;
  struct chunk *first, *last;
  mcp_status_t end_status;
};

static void unref(struct request *r) {
  pthread_mutex_lock(&r->mu);
  int left = --r->refs;
  pthread_mutex_unlock(&r->mu);
  if (left > 0) return;
  for (size_t i = 0; i < r->header_count; i++) {
    free(r->names[i]);
    free(r->values[i]);
  }
  free(r->names);
  free(r->values);
  while (r->first) {
    struct chunk *c = r->first;
    r->first = c->next;
    free(c);
  }
  close(r->wake[0]);
  close(r->wake[1]);
  pthread_mutex_destroy(&r->mu);
  free(r);
}

static void wake(struct request *r) {
  /* Non-blocking: a full pipe already holds a wake-up, and a runtime thread must not block. */
  ssize_t w = write(r->wake[1], "x", 1);
  (void)w;
}

static char *copy(const char *p, size_t n) {
  char *s = malloc(n + 1);
  if (s) {
    memcpy(s, p, n);
    s[n] = '\0';
  }
  return s;
}

static void on_head(void *user_data, uint16_t status, const mcp_http_header_t *headers, size_t count) {
  struct request *r = user_data;
  pthread_mutex_lock(&r->mu);
  r->status = status;
  r->names = calloc(count ? count : 1, sizeof(char *));
  r->values = calloc(count ? count : 1, sizeof(char *));
  for (size_t i = 0; r->names && r->values && i < count; i++) {
    r->names[i] = copy(headers[i].name, headers[i].name_len);
    r->values[i] = copy(headers[i].value, headers[i].value_len);
    r->header_count = i + 1;
  }
  r->head_ready = 1;
  pthread_mutex_unlock(&r->mu);
  wake(r);
}

static void on_body(void *user_data, const char *bytes, size_t len) {
  struct request *r = user_data;
  struct chunk *c = malloc(sizeof *c + len);
  if (c == NULL) return;
  c->next = NULL;
  c->len = len;
  c->off = 0;
  memcpy(c->data, bytes, len);
  pthread_mutex_lock(&r->mu);
  if (r->last) r->last->next = c;
  else r->first = c;
  r->last = c;
  pthread_mutex_unlock(&r->mu);
  wake(r);
}

static void on_end(void *user_data, mcp_status_t status) {
  struct request *r = user_data;
  pthread_mutex_lock(&r->mu);
  r->ended = 1;
  r->end_status = status;
  pthread_mutex_unlock(&r->mu);
  wake(r);
  unref(r); /* no callback of this exchange follows */
}

static const mcp_exchange_callbacks_t callbacks = {on_head, on_body, on_end};

/* Block until the exchange has news; 0 when the client hung up meanwhile. */
static int await_news(struct request *r) {
  struct pollfd p[2] = {{r->wake[0], POLLIN, 0}, {r->client_fd, POLLRDHUP, 0}};
  if (poll(p, 2, -1) < 0) return 1;
  if (p[1].revents & (POLLRDHUP | POLLHUP | POLLERR)) return 0;
  char buf[64];
  while (read(r->wake[0], buf, sizeof buf) > 0) {
  }
  return 1;
}

static ssize_t read_body(void *cls, uint64_t pos, char *buf, size_t max) {
  (void)pos;
  struct request *r = cls;
  for (;;) {
    pthread_mutex_lock(&r->mu);
    struct chunk *c = r->first;
    if (c) {
      size_t n = c->len - c->off < max ? c->len - c->off : max;
      memcpy(buf, c->data + c->off, n);
      c->off += n;
      if (c->off == c->len) {
        r->first = c->next;
        if (r->first == NULL) r->last = NULL;
        free(c);
      }
      pthread_mutex_unlock(&r->mu);
      return (ssize_t)n;
    }
    int ended = r->ended;
    mcp_status_t st = r->end_status;
    pthread_mutex_unlock(&r->mu);
    if (ended) return st == MCP_STATUS_OK ? MHD_CONTENT_READER_END_OF_STREAM : MHD_CONTENT_READER_END_WITH_ERROR;
    if (!await_news(r)) return MHD_CONTENT_READER_END_WITH_ERROR; /* the client went away */
  }
}

/* ---- MHD callbacks ---- */

struct header_list {
  mcp_http_header_t *items;
  size_t count, cap;
};

static enum MHD_Result collect_header(void *cls, enum MHD_ValueKind kind, const char *key, const char *value) {
  (void)kind;
  struct header_list *l = cls;
  if (l->count < l->cap) {
    /* MHD keeps these strings for the connection's life; the exchange copies them anyway. */
    l->items[l->count++] = (mcp_http_header_t){key, strlen(key), value ? value : "", value ? strlen(value) : 0};
  }
  return MHD_YES;
}

static enum MHD_Result plain(struct MHD_Connection *c, unsigned status, const char *type, const char *body) {
  struct MHD_Response *resp = MHD_create_response_from_buffer(strlen(body), (void *)body, MHD_RESPMEM_MUST_COPY);
  if (resp == NULL) return MHD_NO;
  MHD_add_response_header(resp, "Content-Type", type);
  enum MHD_Result ok = MHD_queue_response(c, status, resp);
  MHD_destroy_response(resp);
  return ok;
}

static struct request *start(mcp_http_endpoint_t *endpoint, struct MHD_Connection *c, const char *method,
                             const char *url) {
  struct request *r = calloc(1, sizeof *r);
  if (r == NULL) return NULL;
  if (pipe2(r->wake, O_NONBLOCK | O_CLOEXEC) != 0) {
    free(r);
    return NULL;
  }
  pthread_mutex_init(&r->mu, NULL);
  r->refs = 2;
  r->client_fd = MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD)->connect_fd;
  int n = MHD_get_connection_values(c, MHD_HEADER_KIND, NULL, NULL);
  struct header_list l = {calloc(n > 0 ? (size_t)n : 1, sizeof(mcp_http_header_t)), 0, n > 0 ? (size_t)n : 0};
  if (l.items) MHD_get_connection_values(c, MHD_HEADER_KIND, collect_header, &l);
  /* MHD hands the path without its query; MCP's endpoint reads none. */
  mcp_error_t *err = NULL;
  mcp_status_t s = mcp_http_endpoint_exchange(endpoint, method, strlen(method), url, strlen(url), l.items, l.count,
                                              &callbacks, r, &r->exchange, &err);
  free(l.items);
  if (s != MCP_STATUS_OK) { /* no callback will run */
    fprintf(stderr, "mhd_server: exchange: %s\n", err ? mcp_error_message(err, NULL) : mcp_status_str(s));
    mcp_error_free(err);
    r->refs = 1;
    unref(r);
    return NULL;
  }
  return r;
}

static enum MHD_Result respond(struct MHD_Connection *c, struct request *r) {
  mcp_http_exchange_end(r->exchange, NULL);
  for (;;) {
    pthread_mutex_lock(&r->mu);
    int ready = r->head_ready, ended = r->ended;
    pthread_mutex_unlock(&r->mu);
    if (ready) break;
    if (ended || !await_news(r)) return MHD_NO; /* closes the connection; `completed` cancels */
  }
  struct MHD_Response *resp = MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, 16 * 1024, read_body, r, NULL);
  if (resp == NULL) return MHD_NO;
  pthread_mutex_lock(&r->mu);
  for (size_t i = 0; i < r->header_count; i++) MHD_add_response_header(resp, r->names[i], r->values[i]);
  unsigned status = r->status;
  pthread_mutex_unlock(&r->mu);
  enum MHD_Result ok = MHD_queue_response(c, status, resp);
  MHD_destroy_response(resp);
  return ok;
}

static enum MHD_Result access_handler(void *cls, struct MHD_Connection *c, const char *url, const char *method,
                                      const char *version, const char *upload_data, size_t *upload_data_size,
                                      void **con_cls) {
  (void)version;
  mcp_http_endpoint_t *endpoint = cls;
  struct request *r = *con_cls;
  if (r == NULL) {
    if (strcmp(url, "/health") == 0) {
      char body[64];
      snprintf(body, sizeof body, "{\"status\":\"ok\",\"cancelled\":%d}", atomic_load(&cancelled_handlers));
      return plain(c, MHD_HTTP_OK, "application/json", body);
    }
    if (strcmp(url, "/mcp") != 0) return plain(c, MHD_HTTP_NOT_FOUND, "text/plain", "Not Found");
    r = start(endpoint, c, method, url);
    if (r == NULL) return MHD_NO;
    *con_cls = r;
    return MHD_YES;
  }
  if (*upload_data_size > 0) {
    /* LIMIT_EXCEEDED or CLOSED: core has its answer (413, or an early refusal); the rest of the
     * body is read and dropped. */
    mcp_http_exchange_feed(r->exchange, upload_data, *upload_data_size, NULL);
    *upload_data_size = 0;
    return MHD_YES;
  }
  return respond(c, r);
}

static void completed(void *cls, struct MHD_Connection *c, void **con_cls, enum MHD_RequestTerminationCode toe) {
  (void)cls;
  (void)c;
  struct request *r = *con_cls;
  if (r == NULL) return;
  *con_cls = NULL;
  /* Not completed: the client went away (or the connection failed). Core drops the exchange,
   * which cancels a modern request's handler; a legacy one runs on for the session's replay. */
  if (toe != MHD_REQUEST_TERMINATED_COMPLETED_OK) mcp_http_exchange_cancel(r->exchange);
  mcp_http_exchange_free(r->exchange);
  unref(r);
}

static int fail(const char *what, mcp_status_t status, mcp_error_t *err) {
  fprintf(stderr, "mhd_server: %s: %s: %s\n", what, mcp_status_str(status), err ? mcp_error_message(err, NULL) : "");
  mcp_error_free(err);
  return 1;
}

int main(void) {
  mcp_error_t *err = NULL;
  mcp_status_t s;
  mcp_runtime_t *runtime = NULL;
  if ((s = mcp_runtime_new(0, &runtime, &err)) != MCP_STATUS_OK) return fail("runtime", s, err);
  mcp_server_builder_t *builder = NULL;
  if ((s = mcp_server_builder_new("c-mhd", 5, "1.0.0", 5, &builder, &err)) != MCP_STATUS_OK)
    return fail("builder", s, err);
  const char *echo_def =
      "{\"name\":\"echo\",\"inputSchema\":{\"type\":\"object\",\"properties\":{\"text\":{\"type\":\"string\"}},"
      "\"required\":[\"text\"]}}";
  const char *wait_def = "{\"name\":\"wait\",\"inputSchema\":{\"type\":\"object\"}}";
  if ((s = mcp_server_builder_add_tool(builder, echo_def, strlen(echo_def), echo, NULL, NULL, &err)) != MCP_STATUS_OK ||
      (s = mcp_server_builder_add_tool(builder, wait_def, strlen(wait_def), wait_tool, NULL, NULL, &err)) !=
          MCP_STATUS_OK)
    return fail("tool", s, err);
  mcp_server_t *server = NULL;
  if ((s = mcp_server_builder_build(builder, runtime, &server, &err)) != MCP_STATUS_OK) return fail("build", s, err);
  /* The listener's options JSON; `path` is left unset: MHD routes /mcp here. */
  mcp_http_endpoint_t *endpoint = NULL;
  if ((s = mcp_http_endpoint_new(server, "{}", 2, &endpoint, &err)) != MCP_STATUS_OK) return fail("endpoint", s, err);

  struct sockaddr_in addr;
  memset(&addr, 0, sizeof addr);
  addr.sin_family = AF_INET;
  addr.sin_port = htons(0);
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  struct MHD_Daemon *d = MHD_start_daemon(
      MHD_USE_THREAD_PER_CONNECTION | MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_ERROR_LOG, 0, NULL, NULL,
      access_handler, endpoint, MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&addr, MHD_OPTION_NOTIFY_COMPLETED,
      completed, NULL, MHD_OPTION_END);
  int code = 0;
  if (d == NULL) {
    fprintf(stderr, "mhd_server: MHD_start_daemon failed\n");
    code = 1;
  } else {
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(d, MHD_DAEMON_INFO_BIND_PORT);
    printf("port=%u\n", info ? (unsigned)info->port : 0u);
    fflush(stdout);
    char buf[256];
    while (fread(buf, 1, sizeof buf, stdin) > 0) {
    }
    MHD_stop_daemon(d); /* every request's `completed` has run when this returns */
  }
  mcp_http_endpoint_free(endpoint);
  mcp_server_free(server);
  mcp_runtime_free(runtime);
  return code;
}
