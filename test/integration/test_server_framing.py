"""Strict HTTP/1.1 framing against the real server over raw sockets (docs/server.md "Request framing"): a request
whose length is ambiguous (Transfer-Encoding with Content-Length, a transfer coding other than one `chunked`, a
repeated Transfer-Encoding or Content-Length, a malformed chunk size) gets a 400 naming the cause and the
connection is closed, so the bytes behind it are never read as a second request (request smuggling); an oversized
header section gets a 431; the server answers normally afterwards, and valid keep-alive and chunked requests work."""
import json
import socket
import time
import unittest

import server_fixture as sf


def exchange(port, data, timeout=10):
    """Sends `data` on a fresh connection and reads until the server closes it (or `timeout`); returns
    (list of (status, body) answers, closed_by_server)."""
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as s:
        try:
            s.sendall(data)
        except (BrokenPipeError, ConnectionResetError):
            pass
        chunks, closed, deadline = [], False, time.time() + timeout
        while time.time() < deadline:
            try:
                b = s.recv(65536)
            except socket.timeout:
                break
            except ConnectionResetError:
                closed = True
                break
            if not b:
                closed = True
                break
            chunks.append(b)
    return parse_answers(b"".join(chunks)), closed


def parse_answers(raw):
    """Splits a byte stream of HTTP responses (Content-Length framed, as the server writes them)."""
    out = []
    while raw:
        head, sep, rest = raw.partition(b"\r\n\r\n")
        if not sep:
            break
        lines = head.decode("latin-1").split("\r\n")
        status = int(lines[0].split()[1])
        length = 0
        for ln in lines[1:]:
            k, _, v = ln.partition(":")
            if k.strip().lower() == "content-length":
                length = int(v.strip())
        body, raw = rest[:length], rest[length:]
        out.append((status, json.loads(body) if body else None))
    return out


SMUGGLED = b"GET /api/v2/project HTTP/1.1\r\nHost: x\r\n\r\n"


class FramingTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.s = sf.Server()

    @classmethod
    def tearDownClass(cls):
        cls.s.stop()

    def refused(self, data, status=400, words=()):
        """`data` gets exactly one answer, `status` with a message holding `words`, then the connection closes."""
        answers, closed = exchange(self.s.port, data)
        self.assertEqual(len(answers), 1, f"expected one answer, got {answers}")
        self.assertEqual(answers[0][0], status, answers)
        for w in words:
            self.assertIn(w, answers[0][1]["message"])
        self.assertTrue(closed, "the connection stays open after a framing error")
        self.assertEqual(self.s.call("GET", "/api/v2/health")[0], 200, "the server no longer answers")
        return answers[0][1]["message"]

    def test_valid_keep_alive_and_chunked_requests_are_answered(self):
        body = json.dumps({"name": "chunky"}).encode()
        chunked = (b"PUT /api/v2/project HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n" +
                   b"%x\r\n%s\r\n0\r\n\r\n" % (len(body), body))
        answers, _ = exchange(self.s.port, chunked + b"GET /api/v2/health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        self.assertEqual([a[0] for a in answers], [200, 200])
        self.assertEqual(answers[0][1]["data"]["name"], "chunky")

    def test_transfer_encoding_with_content_length_is_refused(self):
        for order in (b"Content-Length: 5\r\nTransfer-Encoding: chunked\r\n",
                      b"Transfer-Encoding: chunked\r\nContent-Length: 5\r\n"):
            self.refused(b"POST /api/v2/project HTTP/1.1\r\nHost: x\r\n" + order + b"\r\n0\r\n\r\n" + SMUGGLED,
                         words=["Content-Length"])

    def test_other_transfer_codings_are_refused(self):
        for te in (b"gzip", b"chunked, gzip", b"gzip, chunked", b"identity", b"chunked;x=1", b"xchunked"):
            self.refused(b"POST /api/v2/project HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: " + te +
                         b"\r\n\r\n0\r\n\r\n" + SMUGGLED, words=["Transfer-Encoding"])

    def test_repeated_transfer_encoding_or_content_length_is_refused(self):
        self.refused(b"POST /api/v2/project HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n"
                     b"Transfer-Encoding: chunked\r\n\r\n0\r\n\r\n" + SMUGGLED, words=["Transfer-Encoding"])
        self.refused(b"POST /api/v2/project HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: identity\r\n"
                     b"Transfer-Encoding: chunked\r\n\r\n0\r\n\r\n" + SMUGGLED, words=["Transfer-Encoding"])
        self.refused(b"POST /api/v2/project HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nContent-Length: 2\r\n\r\n{}"
                     + SMUGGLED, words=["Content-Length"])
        self.refused(b"POST /api/v2/project HTTP/1.1\r\nHost: x\r\nContent-Length: 2, 2\r\n\r\n{}" + SMUGGLED,
                     words=["Content-Length"])
        self.refused(b"POST /api/v2/project HTTP/1.1\r\nHost: x\r\nContent-Length: +2\r\n\r\n{}" + SMUGGLED)

    def test_transfer_encoding_in_http_1_0_is_refused(self):
        self.refused(b"POST /api/v2/project HTTP/1.0\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n" +
                     SMUGGLED, words=["HTTP/1.0"])

    def test_malformed_chunk_sizes_are_refused(self):
        for size in (b"zz", b"-1", b"0x5", b"ffffffffffffffffff", b" 5", b""):
            self.refused(b"PUT /api/v2/project HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n" + size +
                         b"\r\n{\"name\": \"x\"}\r\n0\r\n\r\n" + SMUGGLED, words=["chunk"])

    def test_oversized_headers_get_431_and_the_server_lives_on(self):
        one_field = b"GET /api/v2/health HTTP/1.1\r\nHost: x\r\nX-Big: " + b"a" * 70000 + b"\r\n\r\n"
        self.refused(one_field, status=431, words=["header"])
        many = b"GET /api/v2/health HTTP/1.1\r\nHost: x\r\n" + b"".join(b"X-F%d: %s\r\n" % (i, b"b" * 100)
                                                                      for i in range(1000)) + b"\r\n"
        self.refused(many, status=431, words=["header"])
        long_target = b"GET /api/v2/health?x=" + b"c" * 70000 + b" HTTP/1.1\r\nHost: x\r\n\r\n"
        self.refused(long_target, status=431)

    def test_malformed_request_lines_and_fields_are_400(self):
        self.refused(b"GET /api/v2/health HTTP/9.x\r\nHost: x\r\n\r\n" + SMUGGLED)
        self.refused(b"GET /api/v2/health HTTP/1.1\r\nBad Field: x\r\n\r\n" + SMUGGLED)
        self.refused(b"GET /api/v2/health HTTP/1.1\r\nX: a\x00b\r\n\r\n" + SMUGGLED)

    def test_bad_bytes_in_the_target_are_400_not_a_crash(self):
        answers, _ = exchange(self.s.port, b"GET /api/v2/project/%ff%fe HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        self.assertEqual(answers[0][0], 400)
        self.assertIn("UTF-8", answers[0][1]["message"])
        answers, _ = exchange(self.s.port, b"GET /api/v2/resource?limit=%00 HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        self.assertEqual(answers[0][0], 400)
        self.assertIn("'limit'", answers[0][1]["message"])
        self.assertIn("NUL", answers[0][1]["message"])


if __name__ == "__main__":
    unittest.main()
