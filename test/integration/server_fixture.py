"""Helpers for the server's integration tests: write a config for a fresh database, start `inmanta server` on a
free port, wait until /api/v2/health answers, and small request helpers (gzip, raw sockets) for the §18 rules.
Every server is a harness.Process, stopped by PID."""
import gzip
import json
import os
import socket
import tempfile
import unittest
import urllib.error
import urllib.parse

import harness


def write_config(db, port, pg_port=None, extra="", server_extra="", schedulers=False, state_dir=None):
    host, shared_port = harness.shared_cluster() if pg_port is None else ("127.0.0.1", pg_port)
    d = tempfile.mkdtemp(prefix="inm-srv-")
    path = os.path.join(d, "server.cfg")
    with open(path, "w") as f:
        f.write(f"[database]\nhost = {host}\nport = {shared_port}\nname = {db}\nusername = postgres\n"
                f"connection_pool_max_size = 4\n[server]\nbind-address = 127.0.0.1\nbind-port = {port}\n"
                f"start_schedulers = {'true' if schedulers else 'false'}\n{server_extra}[config]\nstate-dir = {state_dir or d}\n{extra}")
    return path


def healthy(base):
    try:
        return harness.http("GET", base + "/api/v2/health", timeout=5)[0] == 200
    except (urllib.error.URLError, ConnectionError, OSError):
        return False


class Server:
    """A running `inmanta server` on its own port."""

    def __init__(self, db=None, pg_port=None, extra="", port=None, wait=True, env=None, server_extra="", schedulers=False,
                 state_dir=None):
        self.db = db or harness.fresh_database("srv")
        self.port = port or harness.free_port()
        self.config = write_config(self.db, self.port, pg_port, extra, server_extra, schedulers, state_dir)
        self.base = f"http://127.0.0.1:{self.port}"
        self.proc = harness.Process([harness.INMANTA, "server", "-c", self.config], env=env)
        if wait:
            self.wait_healthy()

    def wait_healthy(self, timeout=30):
        def up():
            if not self.proc.alive():
                raise AssertionError("server exited:\n" + self.proc.output())
            return healthy(self.base)
        harness.wait_for(up, timeout, what="server health")

    def stop(self):
        return self.proc.stop()

    def call(self, method, path, body=None, env=None, headers=None, timeout=60):
        h = dict(headers or {})
        if env:
            h["X-Inmanta-Tid"] = env
        return harness.http(method, self.base + path, body, h, timeout=timeout)[:2]

    def ok(self, method, path, body=None, env=None, headers=None):
        status, data = self.call(method, path, body, env, headers)
        if status != 200:
            raise AssertionError(f"{method} {path} -> {status}: {data}")
        return data

    def project_env(self, name="env"):
        pid = self.ok("PUT", "/api/v2/project", {"name": "p-" + name})["data"]["id"]
        eid = self.ok("PUT", "/api/v2/environment", {"project_id": pid, "name": name})["data"]["id"]
        return pid, eid

    def raw(self, data):
        """Sends raw bytes on a fresh connection; returns (status, headers dict lower-case, body bytes)."""
        with socket.create_connection(("127.0.0.1", self.port), timeout=30) as s:
            s.sendall(data)
            chunks = []
            while True:
                b = s.recv(65536)
                if not b:
                    break
                chunks.append(b)
        resp = b"".join(chunks)
        head, _, body = resp.partition(b"\r\n\r\n")
        lines = head.decode("latin-1").split("\r\n")
        status = int(lines[0].split()[1])
        headers = {}
        for ln in lines[1:]:
            k, _, v = ln.partition(":")
            headers[k.strip().lower()] = v.strip()
        if headers.get("transfer-encoding") == "chunked":  # a streamed answer (GET /api/v1/version/<v>)
            body = dechunk(body)
        return status, headers, body


def dechunk(data):
    """The payload of a chunked body; AssertionError when its last chunk is missing (a truncated transfer)."""
    out, pos = bytearray(), 0
    while True:
        eol = data.find(b"\r\n", pos)
        if eol < 0:
            raise AssertionError("a chunked answer ended without its last chunk")
        size = int(data[pos:eol].split(b";")[0], 16)
        if size == 0:
            return bytes(out)
        if len(data) < eol + 2 + size + 2:
            raise AssertionError("a chunked answer ended without its last chunk")
        out += data[eol + 2:eol + 2 + size]
        pos = eol + 2 + size + 2


class ServerTestCase(unittest.TestCase):
    """A test class sharing one `inmanta server` (self.s) across its tests; each test makes its own environment."""

    @classmethod
    def setUpClass(cls):
        cls.s = Server()

    @classmethod
    def tearDownClass(cls):
        cls.s.stop()


def q(s):
    """A path segment percent-encoded with nothing safe, as Inmanta's clients send it (§18 rule 5)."""
    return urllib.parse.quote(s, safe="")


def resource(rid, version, requires=(), **attrs):
    """A put_version resource in the 11.5.5 form (versioned ids, a version key)."""
    r = {"id": f"{rid},v={version}", "version": version, "requires": [f"{q},v={version}" for q in requires],
         "send_event": False, "purged": False}
    r.update(attrs)
    return r


def put_version(server, env, resources, version=None, **extra):
    if version is None:
        version = server.ok("POST", "/api/v2/reserve_version", env=env)["data"]
    body = {"version": version, "resources": [resource(**r, version=version) if "rid" in r else r for r in resources],
            "resource_state": {}, "unknowns": [], "version_info": {"export_metadata": {"type": "api", "message": "test"}},
            "compiler_version": "0.1.0"}
    body.update(extra)
    return version, server.call("PUT", "/api/v1/version", body, env=env)
