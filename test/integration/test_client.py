"""The wire format of our clients (`inmanta export` push and `inmanta-cli`) against a small recording HTTP server
on a free loopback port: paths and methods of the 11.5.5 export sequence, gzip bodies of 1 KiB and more, the
tenant and bearer headers, the put_version payload, the -d release, TLS with a self-signed certificate, and clear
errors (refused connections, 4xx messages). No PostgreSQL and no real server: the recorder answers what the
reference server would, so these tests check what we send.
"""
import base64
import gzip
import hashlib
import hmac
import json
import os
import re
import shutil
import ssl
import subprocess
import tempfile
import threading
import unittest
import urllib.parse
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import harness

ROOT = harness.ROOT
ENV = "6f0b1c2d-0000-4000-8000-000000000001"
PROJECT = "11111111-2222-4333-8444-555555555555"


class Recorder:
    """A threaded HTTP/1.1 server that records every request and answers with `route(req) -> (status, obj)`."""

    def __init__(self, route, certfile=None, keyfile=None):
        self.requests = []
        self.route = route
        rec = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *a):
                pass

            def handle_any(self):
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b""
                gz = self.headers.get("Content-Encoding") == "gzip"
                data = gzip.decompress(raw) if gz else raw
                path, _, qs = self.path.partition("?")
                req = {"method": self.command, "path": path, "query": urllib.parse.parse_qs(qs),
                       "headers": {k.lower(): v for k, v in self.headers.items()}, "raw_len": len(raw),
                       "len": len(data), "gzip": gz, "body": json.loads(data) if data else None}
                rec.requests.append(req)
                status, obj = rec.route(req)
                out = json.dumps(obj).encode() if obj is not None else b""
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(out)))
                    self.end_headers()
                    self.wfile.write(out)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (timeout test)

            do_GET = do_PUT = do_POST = do_DELETE = do_HEAD = handle_any

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        if certfile:
            ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            ctx.load_cert_chain(certfile, keyfile)
            self.server.socket = ctx.wrap_socket(self.server.socket, server_side=True)
        self.port = self.server.server_address[1]
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def paths(self):
        return [(r["method"], r["path"]) for r in self.requests]

    def find(self, method, path):
        for r in self.requests:
            if r["method"] == method and r["path"] == path:
                return r
        raise AssertionError(f"no {method} {path} among {self.paths()}")

    def stop(self):
        self.server.shutdown()
        self.server.server_close()


class FakeOrchestrator:
    """The answers of a reference server for the export sequence and the CLI's calls, from in-memory state."""

    def __init__(self, version=7, known_files=()):
        self.version = version
        self.known = set(known_files)
        self.fail = {}  # (method, path) -> (status, message)
        self.projects = {PROJECT: {"id": PROJECT, "name": "demo"}}
        self.envs = {ENV: {"id": ENV, "name": "dev", "project": PROJECT, "repo_url": "", "repo_branch": "master"}}
        self.settings = {}
        self.params = {}

    def __call__(self, req):
        m, p, b = req["method"], req["path"], req["body"]
        if (m, p) in self.fail:
            status, msg = self.fail[(m, p)]
            return status, {"message": msg}
        model = {"date": "2026-11-24T01:00:00", "version": self.version, "released": True, "deployed": False,
                 "total": 3, "done": 3, "result": "success"}
        if (m, p) == ("POST", "/api/v2/reserve_version"):
            return 200, {"data": self.version}
        if (m, p) == ("POST", "/api/v1/file"):
            return 200, {"files": [h for h in b["files"] if h not in self.known]}
        if m == "PUT" and p.startswith("/api/v1/file/"):
            self.known.add(urllib.parse.unquote(p.rsplit("/", 1)[1]))
            return 200, None
        if m == "PUT" and p.startswith("/api/v1/codebatched/"):
            return 200, None
        if (m, p) == ("PUT", "/api/v1/version"):
            return 200, None
        if (m, p) == ("PUT", "/api/v2/version/partial"):
            return 200, {"data": 12}
        if m == "POST" and p.startswith("/api/v1/version/"):
            return 200, {"model": dict(model, version=int(p.rsplit("/", 1)[1]))}
        if (m, p) == ("GET", "/api/v1/version"):
            return 200, {"versions": [model, dict(model, version=self.version - 1, released=False, result="pending"),
                                      dict(model, version=self.version - 2, released=True, result="success")]}
        if m == "GET" and p.startswith("/api/v1/version/"):
            return 200, {"model": model, "resources": []}
        if (m, p) == ("GET", "/api/v1/project"):
            return 200, {"projects": list(self.projects.values())}
        if (m, p) == ("PUT", "/api/v1/project"):
            pid = str(uuid.uuid4())
            self.projects[pid] = {"id": pid, "name": b["name"]}
            return 200, {"project": self.projects[pid]}
        if m == "GET" and p.startswith("/api/v1/project/"):
            pid = urllib.parse.unquote(p.rsplit("/", 1)[1])
            if pid not in self.projects:
                return 404, {"message": f"Request or referenced resource does not exist: project {pid}"}
            return 200, {"project": self.projects[pid]}
        if (m, p) == ("GET", "/api/v1/environment"):
            return 200, {"environments": list(self.envs.values())}
        if (m, p) == ("PUT", "/api/v1/environment"):
            eid = str(uuid.uuid4())
            self.envs[eid] = {"id": eid, "name": b["name"], "project": b["project_id"], "repo_url": b["repository"],
                              "repo_branch": b["branch"]}
            return 200, {"environment": self.envs[eid]}
        if m == "GET" and p.startswith("/api/v1/environment/"):
            return 200, {"environment": self.envs[urllib.parse.unquote(p.rsplit("/", 1)[1])]}
        if m == "POST" and p.startswith("/api/v1/environment_settings/"):
            key = urllib.parse.unquote(p.rsplit("/", 1)[1])
            if key != "auto_deploy":
                return 404, {"message": f"{key} is not a valid setting"}
            self.settings[key] = b["value"] in (True, "true", "True")
            return 200, None
        if m == "GET" and p.startswith("/api/v1/environment_settings/"):
            key = urllib.parse.unquote(p.rsplit("/", 1)[1])
            return 200, {"value": self.settings.get(key, True), "metadata": {}}
        if m == "POST" and (p.startswith("/api/v2/agents/") or p.startswith("/api/v2/agent/")):
            return 200, None
        if (m, p) == ("POST", "/api/v1/parameter"):
            return 200, {"parameters": list(self.params.values()), "expire": 1800, "now": "2026-11-24T01:00:00.000000"}
        if m == "GET" and p.startswith("/api/v1/parameter/"):
            name = urllib.parse.unquote(p.rsplit("/", 1)[1])
            if name not in self.params:
                return 404, {"message": f"parameter {name} does not exist"}
            return 200, {"parameter": self.params[name]}
        if m == "PUT" and p.startswith("/api/v1/parameter/"):
            name = urllib.parse.unquote(p.rsplit("/", 1)[1])
            self.params[name] = {"name": name, "value": b["value"], "source": b["source"], "resource_id": "",
                                 "updated": "2026-11-24T01:00:00.000000", "metadata": b["metadata"]}
            return 200, {"parameter": self.params[name]}
        if (m, p) == ("POST", "/api/v2/environment_auth"):
            return 200, {"data": "tok-" + ",".join(b["client_types"])}
        return 404, {"message": f"no route {m} {p}"}


def run(args, cwd=None, check=True, env=None):
    proc = subprocess.run([harness.INMANTA] + args, cwd=cwd, capture_output=True, text=True, timeout=120, env=env)
    if check and proc.returncode != 0:
        raise AssertionError(f"{args} exited {proc.returncode}:\n{proc.stdout}\n{proc.stderr}")
    return proc


def cli(args, cwd=None, check=True):
    cli_bin = os.path.join(os.path.dirname(harness.INMANTA), "inmanta-cli")
    proc = subprocess.run([cli_bin] + args, cwd=cwd, capture_output=True, text=True, timeout=60)
    if check and proc.returncode != 0:
        raise AssertionError(f"inmanta-cli {args} exited {proc.returncode}:\n{proc.stdout}\n{proc.stderr}")
    return proc


class ClientTestBase(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="inm-client-")
        self.fake = FakeOrchestrator()
        self.rec = None

    def tearDown(self):
        if self.rec:
            self.rec.stop()
        shutil.rmtree(self.tmp, ignore_errors=True)

    def start(self, **kw):
        self.rec = Recorder(self.fake, **kw)
        return self.rec.port

    def quickstart(self):
        dst = os.path.join(self.tmp, "quickstart")
        shutil.copytree(os.path.join(ROOT, "examples", "quickstart"), dst)
        return dst


class ExportPushTest(ClientTestBase):
    def test_full_export_sequence_and_payload(self):
        port = self.start()
        project = self.quickstart()
        # One file is already on the server: only the others are uploaded.
        p = run(["export", "-e", ENV, "--server_address", "127.0.0.1", "--server_port", str(port),
                 "--token", "secret-token", "-d", "-m", '{"message": "from the test", "type": "api"}'], cwd=project)
        self.assertIn("Committed resources with version 7", p.stdout)
        paths = self.rec.paths()
        self.assertEqual(paths[0], ("POST", "/api/v2/reserve_version"))
        # the probe for our extensions (file batches, delta versions: docs/server.md), before the file stat;
        # this fake announces neither
        self.assertEqual(paths[1], ("GET", "/api/v1/serverstatus"))
        self.assertEqual(paths[2], ("POST", "/api/v1/file"))
        uploads = [x for x in paths if x[0] == "PUT" and x[1].startswith("/api/v1/file/")]
        self.assertEqual(paths[3 + len(uploads):], [("PUT", "/api/v1/codebatched/7"), ("PUT", "/api/v1/version"),
                                                    ("POST", "/api/v1/version/7")])
        for r in self.rec.requests:
            self.assertEqual(r["headers"].get("x-inmanta-tid"), ENV, r["path"])
            self.assertEqual(r["headers"].get("authorization"), "Bearer secret-token")
            if r["len"] >= 1024:
                self.assertTrue(r["gzip"], f"{r['path']} sent {r['len']} bytes without gzip")
            elif r["len"]:
                self.assertFalse(r["gzip"])
        # Files: every stated hash uploaded as base64 content whose sha1 is that hash.
        stat = self.rec.find("POST", "/api/v1/file")["body"]["files"]
        self.assertEqual(len(uploads), len(stat))
        self.assertGreater(len(stat), 0)
        for r in self.rec.requests:
            if r["method"] == "PUT" and r["path"].startswith("/api/v1/file/"):
                h = r["path"].rsplit("/", 1)[1]
                self.assertEqual(r["body"]["id"], h)
                self.assertEqual(hashlib.sha1(base64.b64decode(r["body"]["content"])).hexdigest(), h)
        code = self.rec.find("PUT", "/api/v1/codebatched/7")["body"]
        self.assertEqual(code["id"], 7)
        self.assertIn("std::File", code["resources"])
        put = self.rec.find("PUT", "/api/v1/version")
        self.assertTrue(put["gzip"])
        body = put["body"]
        self.assertEqual(body["version"], 7)
        self.assertEqual(set(body), {"version", "resources", "resource_state", "resource_sets", "unknowns",
                                     "version_info", "compiler_version", "pip_config"})
        self.assertEqual(body["version_info"]["export_metadata"],
                         {"message": "from the test", "type": "api", "inmanta:compile:state": "success"})
        self.assertEqual(len(body["resources"]), 22)  # the quickstart's resources
        for res in body["resources"]:
            self.assertTrue(res["id"].endswith(",v=7"), res["id"])
            self.assertEqual(res["version"], 7)
            self.assertNotIn("undefined", res)
            for dep in res["requires"]:
                self.assertTrue(dep.endswith(",v=7"), dep)
        self.assertTrue(any(res["requires"] for res in body["resources"]))
        self.assertEqual(body["resource_state"], {})
        release = self.rec.find("POST", "/api/v1/version/7")["body"]
        self.assertEqual(release, {"id": 7, "push": False})

    def test_known_files_are_not_uploaded_and_no_release_without_d(self):
        project = self.quickstart()
        art = os.path.join(self.tmp, "a.json")
        run(["export", "-j", art], cwd=project)
        files = sorted(json.load(open(art))["files"])
        self.fake.known = set(files[:2])
        port = self.start()
        run(["export", "-e", ENV, "--server_address", "127.0.0.1", "--server_port", str(port)], cwd=project)
        uploaded = sorted(r["path"].rsplit("/", 1)[1] for r in self.rec.requests
                          if r["method"] == "PUT" and r["path"].startswith("/api/v1/file/"))
        self.assertEqual(uploaded, files[2:])
        self.assertNotIn("authorization", self.rec.requests[0]["headers"])
        self.assertFalse(any(m == "POST" and p.startswith("/api/v1/version/") for m, p in self.rec.paths()))
        meta = self.rec.find("PUT", "/api/v1/version")["body"]["version_info"]["export_metadata"]
        self.assertEqual(meta["type"], "manual")
        self.assertTrue(meta["message"].startswith("Manual compile on "))

    def test_a_hash_listed_twice_is_uploaded_once(self):
        # A server that lists a missing file twice gets one upload of it, and the counts stay sane.
        project = self.quickstart()
        inner = self.fake

        def doubled(req):
            status, body = inner(req)
            if (req["method"], req["path"]) == ("POST", "/api/v1/file"):
                body = {"files": body["files"] + body["files"]}
            return status, body
        self.fake = doubled
        port = self.start()
        p = run(["-vv", "export", "-e", ENV, "--server_address", "127.0.0.1", "--server_port", str(port)],
                cwd=project)
        uploaded = [r["path"].rsplit("/", 1)[1] for r in self.rec.requests
                    if r["method"] == "PUT" and r["path"].startswith("/api/v1/file/")]
        self.assertGreater(len(uploaded), 0)
        self.assertEqual(len(uploaded), len(set(uploaded)))
        self.assertEqual(set(uploaded), set(self.rec.find("POST", "/api/v1/file")["body"]["files"]))
        m = re.search(r"uploading (\d+) files \((\d+) already on the server", p.stderr)
        self.assertIsNotNone(m, p.stderr)
        self.assertEqual((int(m.group(1)), int(m.group(2))), (len(uploaded), 0))

    def test_undefined_resources_and_resource_sets(self):
        port = self.start()
        d = os.path.join(ROOT, "test", "lang", "export")
        env = dict(os.environ)
        env.pop("INM_EXPORT_TEST_UNSET", None)
        run(["export", "-f", "undefined_resources.cf", "-e", ENV, "--server_address", "127.0.0.1",
             "--server_port", str(port)], cwd=d, env=env)
        body = self.rec.find("PUT", "/api/v1/version")["body"]
        self.assertEqual(body["resource_state"], {"std::File[h1,path=/etc/unknown.conf]": "undefined"})
        self.rec.requests.clear()
        run(["export", "-f", "resource_sets.cf", "-e", ENV, "--server_address", "127.0.0.1",
             "--server_port", str(port)], cwd=d)
        sets = self.rec.find("PUT", "/api/v1/version")["body"]["resource_sets"]
        self.assertTrue(sets)
        for rid, name in sets.items():
            self.assertNotIn(",v=", rid)
            self.assertIsInstance(name, str)

    def test_partial_export(self):
        port = self.start()
        project = self.quickstart()
        p = run(["export", "-e", ENV, "--server_address", "127.0.0.1", "--server_port", str(port), "--partial",
                 "--delete-resource-set", "old-set"], cwd=project)
        self.assertIn("Committed resources with version 12", p.stdout)
        self.assertNotIn(("POST", "/api/v2/reserve_version"), self.rec.paths())
        body = self.rec.find("PUT", "/api/v2/version/partial")["body"]
        self.assertEqual(body["removed_resource_sets"], ["old-set"])
        self.assertNotIn("version", body)
        self.assertTrue(all(r["id"].endswith(",v=0") for r in body["resources"]))

    def test_config_file_instead_of_flags(self):
        port = self.start()
        project = self.quickstart()
        with open(os.path.join(project, ".inmanta"), "w") as f:
            f.write(f"[config]\nenvironment={ENV}\n[compiler_rest_transport]\nhost=127.0.0.1\nport={port}\n"
                    "token=from-file\n")
        p = run(["export"], cwd=project)
        self.assertIn("Committed resources with version 7", p.stdout)
        self.assertEqual(self.rec.requests[0]["headers"]["authorization"], "Bearer from-file")

    def test_pip_config_retry(self):
        self.fake.fail[("PUT", "/api/v1/version")] = (400, "Invalid request: unexpected field pip_config")
        port = self.start()
        project = self.quickstart()

        def once_then_ok(req, inner=self.fake):
            if (req["method"], req["path"]) == ("PUT", "/api/v1/version") and "pip_config" not in req["body"]:
                return 200, None
            return inner(req)

        self.rec.route = once_then_ok
        run(["export", "-e", ENV, "--server_address", "127.0.0.1", "--server_port", str(port)], cwd=project)
        puts = [r for r in self.rec.requests if (r["method"], r["path"]) == ("PUT", "/api/v1/version")]
        self.assertEqual(len(puts), 2)
        self.assertIn("pip_config", puts[0]["body"])
        self.assertNotIn("pip_config", puts[1]["body"])

    def test_errors(self):
        project = self.quickstart()
        port = harness.free_port()
        p = run(["export", "-e", ENV, "--server_address", "127.0.0.1", "--server_port", str(port)], cwd=project,
                check=False)
        self.assertEqual(p.returncode, 1)
        self.assertIn(f"cannot connect to 127.0.0.1:{port}: Connection refused", p.stderr)
        self.fake.fail[("PUT", "/api/v1/version")] = (400, "Invalid request: resource_sets refer to unknown ids")
        port = self.start()
        p = run(["export", "-e", ENV, "--server_address", "127.0.0.1", "--server_port", str(port)], cwd=project,
                check=False)
        self.assertEqual(p.returncode, 1)
        self.assertIn("Invalid request: resource_sets refer to unknown ids (HTTP 400, PUT /api/v1/version", p.stderr)
        self.assertNotIn("Committed", p.stdout)
        p = run(["export"], cwd=project, check=False)
        self.assertEqual(p.returncode, 1)
        self.assertIn("no server configured", p.stderr)
        p = run(["export", "--server_address", "127.0.0.1"], cwd=project, check=False)
        self.assertIn("no environment to export to", p.stderr)
        p = run(["export", "-e", ENV, "--server_port", "99999"], cwd=project, check=False)
        self.assertIn("not a TCP port", p.stderr)

    def test_tls(self):
        cert = os.path.join(self.tmp, "cert.pem")
        key = os.path.join(self.tmp, "key.pem")
        subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj",
                        "/CN=localhost", "-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1", "-keyout", key,
                        "-out", cert], check=True, capture_output=True)
        port = self.start(certfile=cert, keyfile=key)
        project = self.quickstart()
        base = ["export", "-e", ENV, "--server_address", "localhost", "--server_port", str(port), "--ssl"]
        p = run(base + ["--ssl-ca-cert", cert], cwd=project)
        self.assertIn("Committed resources with version 7", p.stdout)
        self.assertEqual(self.rec.paths()[-1], ("PUT", "/api/v1/version"))
        # Without the CA the self-signed certificate is refused.
        p = run(base, cwd=project, check=False)
        self.assertEqual(p.returncode, 1)
        self.assertIn("TLS handshake with localhost:", p.stderr)
        self.assertIn("certificate verify failed", p.stderr)
        # inmanta-cli over TLS too.
        c = cli(["--host", "localhost", "--port", str(port), "--ssl", "--ssl-ca-cert", cert, "project", "list"])
        self.assertIn("demo", c.stdout)


class CliTest(ClientTestBase):
    def base(self):
        return ["--host", "127.0.0.1", "--port", str(self.rec.port)]

    def test_projects_and_environments(self):
        self.start()
        c = cli(self.base() + ["project", "create", "-n", "infra"])
        self.assertRegex(c.stdout, r"\| Name +\| infra +\|")
        self.assertEqual(self.rec.find("PUT", "/api/v1/project")["body"], {"name": "infra"})
        c = cli(self.base() + ["--json", "project", "list"])
        self.assertEqual(sorted(p["name"] for p in json.loads(c.stdout)), ["demo", "infra"])
        c = cli(self.base() + ["project", "list"])
        lines = c.stdout.splitlines()
        self.assertTrue(lines[0].startswith("+-") and lines[2].startswith("+="), c.stdout)
        self.assertEqual(len({len(l) for l in lines}), 1, "table lines are aligned")
        # Environment by project name, then listed with its project's name.
        c = cli(self.base() + ["environment", "create", "-n", "prod", "-p", "infra"])
        body = self.rec.find("PUT", "/api/v1/environment")["body"]
        self.assertEqual(body["name"], "prod")
        self.assertEqual(body["branch"], "master")
        c = cli(self.base() + ["environment", "list"])
        self.assertRegex(c.stdout, r"\| infra +\| [0-9a-f-]{36} \| prod ")
        c = cli(self.base() + ["environment", "show", "dev", "--format", "{name}:{repo_branch}"])
        self.assertEqual(c.stdout.strip(), "dev:master")
        # save: .inmanta with the environment and both transport sections
        c = cli(self.base() + ["environment", "save", "dev"], cwd=self.tmp)
        cfg = open(os.path.join(self.tmp, ".inmanta")).read()
        self.assertIn(f"[config]\nenvironment={ENV}\n", cfg)
        self.assertIn(f"[compiler_rest_transport]\nhost=127.0.0.1\nport={self.rec.port}\n", cfg)
        self.assertIn(f"[cmdline_rest_transport]\nhost=127.0.0.1\nport={self.rec.port}\n", cfg)
        # and then inmanta-cli in that directory needs no --host/--port
        c = cli(["project", "list"], cwd=self.tmp)
        self.assertIn("demo", c.stdout)

    def test_settings_agents_versions_tokens(self):
        self.start()
        cli(self.base() + ["environment", "setting", "set", "-e", "dev", "-k", "auto_deploy", "-o", "false"])
        r = self.rec.find("POST", "/api/v1/environment_settings/auto_deploy")
        self.assertEqual(r["body"], {"id": "auto_deploy", "value": "false"})
        self.assertEqual(r["headers"]["x-inmanta-tid"], ENV)
        c = cli(self.base() + ["environment", "setting", "get", "-e", ENV, "-k", "auto_deploy"])
        self.assertEqual(c.stdout.strip(), "False")
        c = cli(self.base() + ["environment", "setting", "set", "-e", "dev", "-k", "nope", "-o", "1"], check=False)
        self.assertEqual(c.returncode, 1)
        self.assertIn("Error: nope is not a valid setting", c.stderr)
        cli(self.base() + ["agent", "pause", "-e", "dev", "--all"])
        self.assertEqual(self.rec.requests[-1]["path"], "/api/v2/agents/pause")
        cli(self.base() + ["agent", "unpause", "-e", "dev", "--agent", "web/1"])
        self.assertEqual(self.rec.requests[-1]["path"], "/api/v2/agent/web%2F1/unpause")
        c = cli(self.base() + ["agent", "pause", "-e", "dev"], check=False)
        self.assertEqual(c.returncode, 2)
        c = cli(self.base() + ["version", "list", "-e", "dev"])
        self.assertRegex(c.stdout, r"\| 7 +\| True ")
        self.assertIn("Versions released before version 7 are retired", c.stdout)  # version 5 is one
        c = cli(self.base() + ["version", "release", "-e", "dev", "--push", "--full", "6"])
        self.assertEqual(self.rec.requests[-1]["body"],
                         {"id": "6", "push": True, "agent_trigger_method": "push_full_deploy"})
        c = cli(self.base() + ["monitor", "-e", "dev"])
        self.assertIn("Complete: 3/3", c.stdout)
        c = cli(self.base() + ["param", "set", "-e", "dev", "--name", "db/host", "--value", "10.0.0.1"])
        self.assertEqual(self.rec.requests[-2]["path"], "/api/v1/parameter/db%2Fhost")  # looked up first (404)
        self.assertEqual(self.rec.requests[-1]["body"], {"id": "db/host", "value": "10.0.0.1", "source": "user",
                                                         "resource_id": "", "metadata": {}})
        c = cli(self.base() + ["param", "list", "-e", "dev"])
        self.assertRegex(c.stdout, r"\| +\| db/host \| user ")
        c = cli(self.base() + ["param", "get", "-e", "dev", "--name", "db/host"])
        self.assertIn("10.0.0.1", c.stdout)
        c = cli(self.base() + ["token", "create", "-e", "dev", "--api", "--compiler"])
        self.assertEqual(c.stdout.strip(), "Token: tok-api,compiler")

    def test_errors(self):
        port = harness.free_port()
        c = cli(["--host", "127.0.0.1", "--port", str(port), "project", "list"], check=False)
        self.assertEqual(c.returncode, 1)
        self.assertIn(f"cannot connect to 127.0.0.1:{port}", c.stderr)
        self.start()
        c = cli(self.base() + ["project", "show", "00000000-0000-4000-8000-000000000000"], check=False)
        self.assertEqual(c.returncode, 1)
        self.assertIn("Request or referenced resource does not exist", c.stderr)
        c = cli(self.base() + ["project", "show", "no-such-name"], check=False)
        self.assertIn("no project with id or name 'no-such-name'", c.stderr)
        c = cli(self.base() + ["frobnicate"], check=False)
        self.assertEqual(c.returncode, 2)
        # environment save never overwrites an existing .inmanta without a terminal to confirm
        with open(os.path.join(self.tmp, ".inmanta"), "w") as f:
            f.write("[config]\nenvironment=keep-me\n")
        c = cli(self.base() + ["environment", "save", "dev"], cwd=self.tmp, check=False)
        self.assertEqual(c.returncode, 1)
        self.assertIn(".inmanta exists", c.stderr)
        self.assertIn("keep-me", open(os.path.join(self.tmp, ".inmanta")).read())

    def test_request_timeout(self):
        def slow(req, inner=self.fake):
            import time
            time.sleep(3)
            return inner(req)

        self.start()
        self.rec.route = slow
        with open(os.path.join(self.tmp, ".inmanta"), "w") as f:
            f.write(f"[cmdline_rest_transport]\nhost=127.0.0.1\nport={self.rec.port}\nrequest_timeout=1\n")
        c = cli(["project", "list"], cwd=self.tmp, check=False)
        self.assertEqual(c.returncode, 1)
        self.assertIn(f"no answer within 1 s from 127.0.0.1:{self.rec.port}", c.stderr)

    def test_token_bootstrap(self):
        key = base64.urlsafe_b64encode(os.urandom(32)).decode().rstrip("=")
        cfg = os.path.join(self.tmp, "server.cfg")
        with open(cfg, "w") as f:
            f.write(f"[auth_jwt_default]\nalgorithm=HS256\nsign=true\nclient_types=agent,compiler,api\nkey={key}\n"
                    "expire=0\nissuer=https://localhost:8888/\naudience=https://localhost:8888/\n")
        c = cli(["-c", cfg, "token", "bootstrap"])
        token = c.stdout.strip().split("Token: ")[1]
        head, claims, sig = token.split(".")

        def unb64(s):
            return base64.urlsafe_b64decode(s + "=" * (-len(s) % 4))

        expect = hmac.new(unb64(key), f"{head}.{claims}".encode(), hashlib.sha256).digest()
        self.assertEqual(unb64(sig), expect)
        self.assertEqual(json.loads(unb64(head))["alg"], "HS256")
        c = json.loads(unb64(claims))
        self.assertEqual(c["urn:inmanta:ct"], "api,compiler,agent")
        self.assertEqual(c["exp"] - c["iat"], 3600)
        self.assertNotIn("urn:inmanta:env", c)
        self.assertEqual(c["iss"], "https://localhost:8888/")
        p = cli(["-c", os.path.join(self.tmp, "missing.cfg"), "token", "bootstrap"], check=False)
        self.assertEqual(p.returncode, 1)


if __name__ == "__main__":
    unittest.main()
