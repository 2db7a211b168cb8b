"""A benchmark sink for OTLP/HTTP exports (not a test): answers every POST 200, counts the
spans it was sent (one per `Span` message, field 2 of ScopeSpans, counted by a light scan),
and reports the count on GET /count. Writes its port to the file named by argv[1]."""

import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

SPANS = 0


def varint(b: bytes, i: int) -> tuple[int, int]:
    v = shift = 0
    while i < len(b):
        byte = b[i]
        i += 1
        v |= (byte & 0x7F) << shift
        if not byte & 0x80:
            break
        shift += 7
    return v, i


def fields(b: bytes):
    i = 0
    while i < len(b):
        key, i = varint(b, i)
        field, wire = key >> 3, key & 7
        if wire == 0:
            _, i = varint(b, i)
        elif wire == 1:
            i += 8
        elif wire == 5:
            i += 4
        elif wire == 2:
            n, i = varint(b, i)
            yield field, b[i : i + n]
            i += n
        else:
            return


def count(body: bytes) -> int:
    n = 0
    for f, rs in fields(body):
        if f == 1:
            for f2, ss in fields(rs):
                if f2 == 2:
                    n += sum(1 for f3, _ in fields(ss) if f3 == 2)
    return n


class Sink(BaseHTTPRequestHandler):
    def do_POST(self) -> None:  # noqa: N802 (http.server's name)
        global SPANS
        body = self.rfile.read(int(self.headers.get("content-length", "0")))
        SPANS += count(body)
        self.send_response(200)
        self.send_header("content-length", "0")
        self.end_headers()

    def do_GET(self) -> None:  # noqa: N802
        data = str(SPANS).encode()
        self.send_response(200)
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *_args: object) -> None:
        pass


server = ThreadingHTTPServer(("127.0.0.1", 0), Sink)
with open(sys.argv[1], "w", encoding="utf-8") as f:
    f.write(str(server.server_address[1]))
server.serve_forever()
