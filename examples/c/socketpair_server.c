/*
 * socketpair_server: an MCP server on a transport of the program's own, through
 * mcp_connection_t. One end of a socketpair is the server's connection: a reader thread feeds
 * what arrives to mcp_connection_feed, and the output callback writes the server's answers back.
 * The other end is a client writing newline-delimited JSON-RPC (as over stdio): a legacy
 * `initialize` and `tools/call` on one connection, a modern (2026-07-28) `tools/call` on a second.
 * Each answer is printed; the program checks them and prints `socketpair_server: ok`.
 *
 * Any byte stream works the same way (a serial line, a message bus, a TLS library's
 * plaintext side): feed what you read, write what the callback hands you.
 *
 * Build (see ffi/README.md):
 *   cc -std=c11 -Wall -Wextra -Iinclude examples/c/socketpair_server.c target/debug/libmcpcore.a \
 *      -lpthread -ldl -lm -o socketpair_server
 */
#define _POSIX_C_SOURCE 200809L
#include "mcpcore.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

static void echo(void *user_data, const mcp_request_t *req, mcp_responder_t *responder) {
  (void)user_data;
  const char *args = mcp_request_params_json(req, NULL);
  const char *start = strstr(args, "\"text\":\"");
  if (start == NULL) {
    mcp_responder_free(responder);
    return;
  }
  start += 8;
  const char *end = strchr(start, '"'); /* the client below sends no escapes */
  char out[512];
  int w = snprintf(out, sizeof out, "{\"content\":[{\"type\":\"text\",\"text\":\"echo:%.*s\"}]}",
                   (int)(end ? end - start : 0), start);
  mcp_responder_result(responder, out, (size_t)w);
}

/* ---- the server's side of the socket ---- */

/* Runs on a runtime thread, one call at a time: write everything (or report the peer gone). */
static bool on_output(void *user_data, const char *bytes, size_t len) {
  int fd = *(int *)user_data;
  while (len > 0) {
    ssize_t n = write(fd, bytes, len);
    if (n <= 0) return false; /* the peer is gone: core stops and cancels what is in flight */
    bytes += n;
    len -= (size_t)n;
  }
  return true;
}

struct pump {
  int fd;
  mcp_connection_t *conn;
};

/* Feed what the peer sends until it closes its end, then close the connection (answers still
 * in flight are written before mcp_connection_close returns). */
static void *read_loop(void *arg) {
  struct pump *p = arg;
  char buf[4096];
  ssize_t n;
  while ((n = read(p->fd, buf, sizeof buf)) > 0) {
    if (mcp_connection_feed(p->conn, buf, (size_t)n, NULL) != MCP_STATUS_OK) break;
  }
  mcp_connection_close(p->conn, NULL);
  shutdown(p->fd, SHUT_WR); /* the peer sees EOF after the last answer */
  return NULL;
}

static int fail(const char *what, mcp_status_t status, mcp_error_t *err) {
  fprintf(stderr, "socketpair_server: %s: %s: %s\n", what, mcp_status_str(status),
          err ? mcp_error_message(err, NULL) : "");
  mcp_error_free(err);
  return 1;
}

/* ---- the client's side ---- */

static void send_line(int fd, const char *line) {
  size_t len = strlen(line);
  if (write(fd, line, len) != (ssize_t)len || write(fd, "\n", 1) != 1) {
    perror("write");
    exit(1);
  }
}

/* Read answers until the one with `id`; print it; return 1 when it contains `want`. */
static int expect(FILE *in, int id, const char *want) {
  char *line = NULL;
  size_t cap = 0;
  char tag[32];
  snprintf(tag, sizeof tag, "\"id\":%d", id);
  int ok = 0;
  while (getline(&line, &cap, in) > 0) {
    if (strstr(line, tag) == NULL) continue; /* a notification, or another answer */
    printf("%s", line);
    ok = strstr(line, want) != NULL;
    break;
  }
  free(line);
  return ok;
}

/* One era per connection (a connection that completed `initialize` is legacy for good). */
static int talk(int fd, FILE *in, int modern) {
  if (modern) {
    /* A modern request carries its era in _meta: no handshake. */
    send_line(fd, "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/call\",\"params\":{\"name\":\"echo\","
                  "\"arguments\":{\"text\":\"modern\"},\"_meta\":{"
                  "\"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\","
                  "\"io.modelcontextprotocol/clientCapabilities\":{},"
                  "\"io.modelcontextprotocol/clientInfo\":{\"name\":\"c\",\"version\":\"1\"}}}}");
    return expect(in, 3, "echo:modern");
  }
  int ok = 1;
  send_line(fd, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{\"protocolVersion\":"
                "\"2025-11-25\",\"capabilities\":{},\"clientInfo\":{\"name\":\"c\",\"version\":\"1\"}}}");
  ok &= expect(in, 1, "\"c-socketpair\"");
  send_line(fd, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}");
  send_line(fd, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":{\"name\":\"echo\","
                "\"arguments\":{\"text\":\"legacy\"}}}");
  ok &= expect(in, 2, "echo:legacy");
  return ok;
}

/* Open a connection on one end of a fresh socketpair and talk to it from the other. */
static int session(mcp_server_t *server, int modern) {
  int sv[2];
  if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) != 0) {
    perror("socketpair");
    return 0;
  }
  mcp_error_t *err = NULL;
  struct pump p = {sv[0], NULL};
  mcp_status_t s = mcp_connection_open(server, on_output, &p.fd, NULL, &p.conn, &err);
  if (s != MCP_STATUS_OK) return !fail("open", s, err);
  pthread_t reader;
  if (pthread_create(&reader, NULL, read_loop, &p) != 0) return 0;
  FILE *in = fdopen(dup(sv[1]), "r");
  int ok = in != NULL && talk(sv[1], in, modern);
  shutdown(sv[1], SHUT_WR); /* end of input: the reader thread closes the connection */
  char rest[256];
  while (in && fread(rest, 1, sizeof rest, in) > 0) {
  }
  pthread_join(reader, NULL);
  if (in) fclose(in);
  mcp_connection_free(p.conn);
  close(sv[0]);
  close(sv[1]);
  return ok;
}

int main(void) {
  mcp_error_t *err = NULL;
  mcp_status_t s;
  mcp_runtime_t *runtime = NULL;
  if ((s = mcp_runtime_new(0, &runtime, &err)) != MCP_STATUS_OK) return fail("runtime", s, err);
  mcp_server_builder_t *builder = NULL;
  if ((s = mcp_server_builder_new("c-socketpair", 12, "1.0.0", 5, &builder, &err)) != MCP_STATUS_OK)
    return fail("builder", s, err);
  const char *tool = "{\"name\":\"echo\",\"inputSchema\":{\"type\":\"object\","
                     "\"properties\":{\"text\":{\"type\":\"string\"}},\"required\":[\"text\"]}}";
  if ((s = mcp_server_builder_add_tool(builder, tool, strlen(tool), echo, NULL, NULL, &err)) != MCP_STATUS_OK)
    return fail("tool", s, err);
  mcp_server_t *server = NULL;
  if ((s = mcp_server_builder_build(builder, runtime, &server, &err)) != MCP_STATUS_OK) return fail("build", s, err);
  int ok = session(server, 0) && session(server, 1);
  mcp_server_free(server);
  mcp_runtime_free(runtime);
  if (!ok) {
    fprintf(stderr, "socketpair_server: an answer was not as expected\n");
    return 1;
  }
  printf("socketpair_server: ok\n");
  return 0;
}
