#!/usr/bin/env python3
"""A stand-in server for bench/push when no `inmanta server` is available: answers the 11.5.5 export sequence
(reserve_version, file stat/upload, codebatched, put_version, release) without storing or parsing the version,
so what is timed is the client side. Usage: sink.py PORTFILE  (writes its port there, runs until killed)."""
import gzip
import json
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

version = [0]


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *a):
        pass

    def answer(self):
        n = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(n) if n else b""
        obj = None
        if self.path == "/api/v2/reserve_version":
            version[0] += 1
            obj = {"data": version[0]}
        elif self.path == "/api/v1/file" and self.command == "POST":
            if self.headers.get("Content-Encoding") == "gzip":
                raw = gzip.decompress(raw)
            obj = {"files": json.loads(raw)["files"]}      # everything is missing
        elif self.path.startswith("/api/v1/version/"):
            obj = {"model": {"version": int(self.path.rsplit("/", 1)[1]), "released": True}}
        out = json.dumps(obj).encode() if obj is not None else b""
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(out)))
        self.end_headers()
        self.wfile.write(out)

    do_GET = do_PUT = do_POST = answer


srv = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
with open(sys.argv[1], "w") as f:
    f.write(str(srv.server_address[1]))
srv.serve_forever()
