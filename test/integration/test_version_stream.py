"""GET /api/v1/version/<v> streamed (issue #30 "Reads at 100k", docs/server.md "Reading a version"): the answer
is written as HTTP/1.1 chunks while the rows are read in batches of 1,000; its bytes parse to the same resources
as the tree-built answer (include_logs=True) across batch boundaries (0, 1 and 2 full batches, and one and a
half); a missing version is still a 404; and a database failure after the header (the server's backend
terminated while the answer is half written) ends the connection without the last chunk, so the client sees a
truncated transfer, never a short valid JSON, and the server logs it and goes on serving."""
import json
import socket
import time
import unittest

import harness
import server_fixture as sf

NULL = "std::testing::NullResource"


def resources(n, tag="x"):
    """n NullResources, each requiring its predecessor (a requires list to version in the answer)."""
    out = []
    for i in range(n):
        rid = f"{NULL}[agent{i % 3},name=r{i:06d}]"
        reqs = [f"{NULL}[agent{(i - 1) % 3},name=r{i - 1:06d}]"] if i else []
        out.append({"rid": rid, "requires": reqs, "name": f"r{i:06d}", "agentname": f"agent{i % 3}", "tag": tag,
                    "n": i, "f": 1.5, "nested": {"k": [1, "two", None]}, "purge_on_delete": False})
    return out


def dechunk(data):
    """(body, complete): the chunked body's payload and whether its last chunk (size 0) arrived."""
    body, pos = bytearray(), 0
    while True:
        eol = data.find(b"\r\n", pos)
        if eol < 0:
            return bytes(body), False
        size = int(data[pos:eol].split(b";")[0], 16)
        if size == 0:
            return bytes(body), data[eol + 2:eol + 4] == b"\r\n"
        start = eol + 2
        if len(data) < start + size + 2:
            body += data[start:]
            return bytes(body), False
        body += data[start:start + size]
        pos = start + size + 2


class VersionStreamTest(sf.ServerTestCase):
    def raw_get(self, path, env, pause=None):
        """GET over a socket with a small receive buffer; `pause(sock)` runs after the header arrived, before
        the body is read. Returns (status line, headers lower-case, raw body bytes until the server closed)."""
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        s.settimeout(60)
        try:
            s.connect(("127.0.0.1", self.s.port))
            s.sendall(f"GET {path} HTTP/1.1\r\nHost: x\r\nX-Inmanta-Tid: {env}\r\nConnection: close\r\n\r\n".encode())
            data = b""
            while b"\r\n\r\n" not in data:
                b = s.recv(4096)
                if not b:
                    break
                data += b
            head, _, rest = data.partition(b"\r\n\r\n")
            if pause:
                pause()
            chunks = [rest]
            while True:
                b = s.recv(1 << 16)
                if not b:
                    break
                chunks.append(b)
        finally:
            s.close()
        lines = head.decode("latin-1").split("\r\n")
        headers = {k.strip().lower(): v.strip() for k, _, v in (ln.partition(":") for ln in lines[1:])}
        return lines[0], headers, b"".join(chunks)

    def version_of(self, n):
        _, env = self.s.project_env(f"stream{n}")
        version, (status, answer) = sf.put_version(self.s, env, resources(n))
        self.assertEqual(status, 200, answer)
        return env, version

    def check_same_as_tree(self, n):
        env, version = self.version_of(n)
        line, headers, raw = self.raw_get(f"/api/v1/version/{version}", env)
        self.assertIn(" 200 ", line + " ")
        self.assertEqual(headers.get("transfer-encoding"), "chunked")
        self.assertNotIn("content-length", headers)
        body, complete = dechunk(raw)
        self.assertTrue(complete, f"n={n}: the last chunk is missing")
        streamed = json.loads(body)
        tree = self.s.ok("GET", f"/api/v1/version/{version}?include_logs=True", env=env)
        for r in tree["resources"]:
            del r["actions"]
        self.assertEqual(len(streamed["resources"]), n)
        self.assertEqual(streamed, tree, f"n={n}")
        if n:
            first = streamed["resources"][1 if n > 1 else 0]
            self.assertEqual(first["attributes"]["version"], version)
            self.assertTrue(all(q.endswith(f",v={version}") for q in first["attributes"]["requires"]))
        # urllib (the clients' way) reads the same JSON.
        self.assertEqual(self.s.ok("GET", f"/api/v1/version/{version}", env=env), streamed)

    def test_streamed_answer_equals_the_tree_built_one_across_batches(self):
        for n in (0, 1, 1000, 1500, 2000):
            with self.subTest(n=n):
                self.check_same_as_tree(n)

    def test_missing_version_is_still_a_404(self):
        _, env = self.s.project_env("missing")
        status, answer = self.s.call("GET", "/api/v1/version/7", env=env)
        self.assertEqual(status, 404, answer)
        self.assertIn("7", answer["message"])

    def test_database_failure_mid_answer_truncates_the_transfer(self):
        env, version = self.version_of(30000)  # ~10 MB: more than the socket buffers and the queue hold

        def kill_backend():
            # The producer blocks on the full queue while the client does not read; its backend holds the
            # cursor (the last statement a FETCH).
            def idle_cursor():
                return harness.psql(self.s.db, "SELECT count(*) FROM pg_stat_activity WHERE query LIKE "
                                               "'FETCH FORWARD%inm_version_answer%' AND pid <> pg_backend_pid()")
            harness.wait_for(lambda: idle_cursor() == "1", 20, what="the streaming backend")
            time.sleep(0.5)
            harness.psql(self.s.db, "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE query LIKE "
                                    "'FETCH FORWARD%inm_version_answer%' AND pid <> pg_backend_pid()")

        line, headers, raw = self.raw_get(f"/api/v1/version/{version}", env, pause=kill_backend)
        self.assertIn(" 200 ", line + " ")
        self.assertEqual(headers.get("transfer-encoding"), "chunked")
        body, complete = dechunk(raw)
        self.assertFalse(complete, "the answer must not end with the last chunk after a database failure")
        self.assertGreater(len(body), 1 << 20)
        self.assertTrue(body.startswith(b'{"model":'))
        with self.assertRaises(ValueError):
            json.loads(body)
        harness.wait_for(lambda: "answer_stream_failed" in self.s.proc.output(), 10, what="the log line")
        # The server goes on: the next read of the same version is whole (a fresh database connection).
        again = self.s.ok("GET", f"/api/v1/version/{version}", env=env)
        self.assertEqual(len(again["resources"]), 30000)


if __name__ == "__main__":
    unittest.main()
