"""The server's refuse paths under concurrent load (issue #25, docs/server.md "Request framing" and "Life cycle"):
over raw sockets, many clients at once send bodies over max_request_size (413, in memory and spooled), bodies
that stop mid-way (no answer), malformed chunked encodings (400), pipelined requests with a bad one behind good
ones, slow header senders (slowloris), and uploads into a full temp dir (507, on a small tmpfs; skipped with the
reason where mounting is not allowed). Every answer code is asserted, the server stays up, serves a normal
request at the end and exits 0 on SIGTERM, and its output holds no sanitizer report (run it against an ASan build with
`INM_BUILD=build-asan INM_REFUSE_ROUNDS=200`; the default round count keeps it under 30 s on the normal build)."""
import concurrent.futures
import json
import os
import random
import signal
import socket
import struct
import subprocess
import threading
import time
import unittest

import server_fixture as sf
from test_server_disk_full import fill, mount_tmpfs
from test_server_framing import parse_answers

ROUNDS = int(os.environ.get("INM_REFUSE_ROUNDS", "25"))
MAX = 65536  # max_request_size of the servers here
CONFIG = f"max_request_size = {MAX}\nrequest_spool_size = 1024\n"
SANITIZER_WORDS = ("AddressSanitizer", "runtime error:", "LeakSanitizer", "double free", "corruption")


def talk(port, data, pieces=1, close_after=None, reset=False, timeout=15):
    """Sends `data` (in `pieces` writes) on a fresh connection; stops after `close_after` bytes when set (then
    closes, with a RST when `reset`) and returns None; else reads until the server closes and returns the list of
    answer statuses (the server's reset after its answer counts as a close)."""
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as s:
        if reset:
            s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        if close_after is not None:
            data = data[:close_after]
        step = max(1, len(data) // pieces)
        try:
            for i in range(0, len(data), step):
                s.sendall(data[i:i + step])
        except (BrokenPipeError, ConnectionResetError):
            pass
        if close_after is not None:
            return None
        chunks = []
        try:
            while True:
                b = s.recv(65536)
                if not b:
                    break
                chunks.append(b)
        except ConnectionResetError:
            pass
    return statuses(b"".join(chunks))


def statuses(raw):
    """The status codes of the Content-Length framed answers in `raw`."""
    return [status for status, _ in parse_answers(raw)]


def request(method, path, body=b"", env=None, chunked=False, close=True, length=None):
    head = f"{method} {path} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
    if env:
        head += f"X-Inmanta-Tid: {env}\r\n"
    if close:
        head += "Connection: close\r\n"
    if chunked:
        head += "Transfer-Encoding: chunked\r\n\r\n"
        data = b"".join(b"%x\r\n%s\r\n" % (len(body[i:i + 8192]), body[i:i + 8192]) for i in range(0, len(body), 8192))
        return head.encode() + data + b"0\r\n\r\n"
    head += f"Content-Length: {len(body) if length is None else length}\r\n\r\n"
    return head.encode() + body


def version_body(version, pad):
    """A put_version of one resource whose value is `pad` bytes (spooled when over request_spool_size)."""
    rid = "std::testing::NullResource[internal,name=r]"
    return json.dumps({"version": version, "resources": [
        {"id": f"{rid},v={version}", "version": version, "requires": [], "send_event": False, "purged": False,
         "name": "r", "agentname": "internal", "value": "x" * pad, "fail": False}],
        "resource_state": {}, "unknowns": [], "version_info": {}, "compiler_version": "0.1.0"}).encode()


HEALTH = b"GET /api/v2/health HTTP/1.1\r\nHost: x\r\n\r\n"
BIG = b"{" + b" " * (MAX + 5000) + b"}"
PART = b'{"name": "' + b"p" * 20000 + b'"}'


def cases(env):
    """name -> (request bytes or a function making them, talk options, expected statuses or None for 'no answer
    expected')."""
    return {
        "413 announced, in memory": (request("POST", "/api/v2/project", BIG), {}, [413]),
        "413 announced, not sent": (request("POST", "/api/v2/project", length=10 ** 12), {}, [413]),
        "413 chunked, in memory": (request("POST", "/api/v2/project", BIG, chunked=True), {"pieces": 4}, [413]),
        "413 chunked, spooled": (request("PUT", "/api/v1/version", BIG, env, chunked=True), {"pieces": 4}, [413]),
        "413 announced, spooled route": (request("PUT", "/api/v1/version", BIG, env), {"pieces": 3}, [413]),
        "gone mid-body, in memory": (request("POST", "/api/v2/project", PART), {"close_after": 5000}, None),
        "gone mid-body, spooled": (request("PUT", "/api/v1/version", PART, env), {"close_after": 9000}, None),
        "reset mid-body, spooled": (request("PUT", "/api/v1/version", PART, env, chunked=True),
                                    {"close_after": 12000, "reset": True}, None),
        "gone mid-header": (b"PUT /api/v1/version HTTP/1.1\r\nHost: x\r\nContent-Le", {"close_after": 40}, None),
        "bad chunk size, in memory": (request("POST", "/api/v2/project", PART, close=False)
                                      .replace(b"Content-Length: %d" % len(PART), b"Transfer-Encoding: chunked")
                                      .replace(b"\r\n\r\n{", b"\r\nzz\r\n{", 1), {}, [400]),
        "bad chunk data, spooled": (request("PUT", "/api/v1/version", PART, env, chunked=True)
                                    .replace(b"\r\n2000\r\n", b"\r\n2000\r\n" + b"q" * 9000, 1), {"pieces": 2}, [400]),
        "pipelined, bad third": (HEALTH + HEALTH + b"POST /api/v2/project HTTP/1.1\r\nHost: x\r\nContent-Length: 1"
                                 b"\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n" + HEALTH, {}, [200, 200, 400]),
        "pipelined, good": (HEALTH * 4 + HEALTH.replace(b"\r\n\r\n", b"\r\nConnection: close\r\n\r\n"), {},
                            [200] * 5),
    }


class RefusePathsTest(unittest.TestCase):
    def hammer(self, srv, named, rounds):
        """Runs every case `rounds` times on 8 concurrent clients in a random order; returns {case: [bad results]}."""
        work = [name for name in named for _ in range(rounds)]
        random.Random(25).shuffle(work)

        def one(name):
            data, opts, want = named[name]
            try:
                data = data() if callable(data) else data
                got = talk(srv.port, data, **opts)
            except OSError as e:
                got = f"{type(e).__name__}: {e}"
            return name, got, want

        bad = {}
        with concurrent.futures.ThreadPoolExecutor(8) as pool:
            for name, got, want in pool.map(one, work):
                if got != want:
                    bad.setdefault(name, []).append(got)
        return bad

    def check_server(self, srv):
        self.assertTrue(srv.proc.alive(), "the server died:\n" + srv.proc.output()[-4000:])
        self.assertEqual(srv.call("GET", "/api/v2/health")[0], 200)
        # A clean stop too: exit-time destructors run after connections were refused mid-way.
        self.assertEqual(srv.stop(), 0, srv.proc.output()[-4000:])
        out = srv.proc.output()
        for w in SANITIZER_WORDS:
            self.assertNotIn(w, out, out[-6000:])

    def test_refusals_under_concurrent_load(self):
        srv = sf.Server(server_extra=CONFIG)
        self.addCleanup(srv.stop)
        _, env = srv.project_env("refuse")
        named = cases(env)
        named["spooled upload"] = (lambda: request("PUT", "/api/v1/version", version_body(
            srv.ok("POST", "/api/v2/reserve_version", env=env)["data"], 3000), env, chunked=True), {}, [200])
        started = time.time()
        bad = self.hammer(srv, named, ROUNDS)
        self.assertEqual({k: v[:3] for k, v in bad.items()}, {}, f"{sum(map(len, bad.values()))} wrong answers")
        self.check_server(srv)
        print(f"\n  {len(named) * ROUNDS} refuse-path requests in {time.time() - started:.1f} s")

    def test_sigterm_in_the_middle_of_refusals(self):
        """A stop while clients are refused, half-sent and lingering: the server exits 0 with no sanitizer report
        (a request in flight is answered or cut, never a crash at exit)."""
        srv = sf.Server(server_extra=CONFIG)
        self.addCleanup(srv.stop)
        _, env = srv.project_env("stop")
        named = cases(env)
        hammer = threading.Thread(target=self.hammer, args=(srv, named, ROUNDS * 4), daemon=True)
        hammer.start()
        time.sleep(1)
        os.kill(srv.proc.pid, signal.SIGTERM)
        try:
            rc = srv.proc.proc.wait(30)
        except subprocess.TimeoutExpired:
            rc = "still running 30 s after SIGTERM"
        hammer.join(60)
        out = srv.proc.output()
        self.assertEqual(rc, 0, out[-4000:])
        for w in SANITIZER_WORDS:
            self.assertNotIn(w, out, out[-6000:])

    def test_slow_header_senders_do_not_block_others(self):
        srv = sf.Server(server_extra=CONFIG)
        self.addCleanup(srv.stop)
        slow = []
        self.addCleanup(lambda: [s.close() for s in slow])
        for _ in range(60):
            s = socket.create_connection(("127.0.0.1", srv.port), timeout=15)
            s.sendall(b"GET /api/v2/health HTTP/1.1\r\nHost: x\r\nX-Slow: ")
            slow.append(s)
        for i in range(10):  # the slow clients trickle their header while others are served at once
            for s in slow:
                s.sendall(b"a")
            started = time.time()
            self.assertEqual(srv.call("GET", "/api/v2/health", timeout=5)[0], 200)
            self.assertLess(time.time() - started, 2)
            time.sleep(0.05)
        answered = 0  # half finish their header and get an answer, the rest just go away
        for i, s in enumerate(slow):
            if i % 2:
                s.close()
                continue
            s.sendall(b"\r\nConnection: close\r\n\r\n")
            data = b""
            while True:
                b = s.recv(65536)
                if not b:
                    break
                data += b
            answered += statuses(data) == [200]
        self.assertEqual(answered, 30)
        self.check_server(srv)

    def test_full_temp_dir_under_concurrent_uploads(self):
        tmp = mount_tmpfs(self, "4m")
        srv = sf.Server(env=dict(os.environ, TMPDIR=tmp), server_extra=CONFIG)
        self.addCleanup(srv.stop)
        _, env = srv.project_env("full")
        fill(tmp)
        version = srv.ok("POST", "/api/v2/reserve_version", env=env)["data"]
        body = version_body(version, 40000)
        named = {
            "507 announced": (request("PUT", "/api/v1/version", body, env), {"pieces": 3}, [507]),
            "507 chunked": (request("PUT", "/api/v1/version", body, env, chunked=True), {"pieces": 5}, [507]),
            "gone mid-body into a full dir": (request("PUT", "/api/v1/version", body, env), {"close_after": 20000},
                                              None),
            "in memory still served": (HEALTH.replace(b"\r\n\r\n", b"\r\nConnection: close\r\n\r\n"), {}, [200]),
        }
        bad = self.hammer(srv, named, ROUNDS)
        self.assertEqual({k: v[:3] for k, v in bad.items()}, {}, f"{sum(map(len, bad.values()))} wrong answers")
        self.check_server(srv)
        self.assertEqual([n for n in os.listdir(tmp) if n.startswith("inmanta-body-")], [])


if __name__ == "__main__":
    unittest.main()
