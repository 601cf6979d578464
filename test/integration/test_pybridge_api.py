"""The reference's handler API as real modules use it (pybridge/python/inmanta, docs/pybridge.md "Handler
API"): the test module test/integration/pymodules/pyapi, written for this project, runs in `inmanta executor
--python-code` spoken to over the raw executor protocol: file transfer through the executor's get_file/put_file
frames (get_file, stat_file, upload_file), the LocalIO methods (run with env merged and PYTHONPATH dropped,
hash_file, file_stat, chmod, chown, put, read, mkdir, rmdir, symlink, readlink, is_symlink, remove,
file_exists), provider selection with available() (one, none, several), the default list_changes
(check_resource + _diff over fields merged across base classes), fields_updated, get_client(), self._agent,
Config reads, and a handler exception reported as the reference reports it (no PostgreSQL; the executor is
stopped by PID). Then against a real server with its scheduler: the module's code sent as Inmanta 11.5.5's
exporter sends it (codebatched with absolute source paths) is laid out by module-relative path and deploys
through its handler; the store action carries "Successfully stored version N"; /api/v2/resource/<rid>/logs
honours limit and sort with the reference's defaults (server fixture: the server stops its scheduler, the
scheduler its executors)."""
import base64
import hashlib
import json
import os
import shutil
import subprocess
import tempfile
import unittest

import harness
import server_fixture as sf

MODULES = os.path.join(harness.ROOT, "test", "integration", "pymodules")
frame, read_frame = harness.frame, harness.read_frame


def sha1(data):
    return hashlib.sha1(data).hexdigest()


class PythonHandlerApiTest(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="inm-pyapi-")
        self.addCleanup(shutil.rmtree, self.dir, True)
        env = dict(os.environ, INMANTA_PYAPI_GREETING="hi", PYTHONPATH="/nonexistent-pyapi", PYAPI_BASE="base")
        self.errlog = open(os.path.join(self.dir, "executor.stderr"), "w+b")
        self.addCleanup(self.errlog.close)
        self.proc = subprocess.Popen([harness.INMANTA, "executor", "--threads", "2", "--python-code", MODULES],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.errlog,
                                     env=env, cwd=self.dir)
        self.addCleanup(lambda: (self.proc.poll() is None and self.proc.kill(), self.proc.wait(),
                                 self.proc.stdin.close(), self.proc.stdout.close()))
        self.send({"type": "hello", "protocol": 1})
        hello = read_frame(self.proc.stdout)
        self.assertIsNotNone(hello, self.stderr())
        self.store = {}  # the "server's" file store the test answers get_file from
        self.offered = {}  # put_file frames received

    def stderr(self):
        self.errlog.seek(0)
        return self.errlog.read().decode(errors="replace")[-4000:]

    def send(self, msg):
        self.proc.stdin.write(frame(msg))
        self.proc.stdin.flush()

    def run_actions(self, requests):
        self.send({"type": "deploy", "requests": requests})
        got = {}
        while len(got) < len(requests):
            m = read_frame(self.proc.stdout)
            self.assertIsNotNone(m, "executor ended early (exit %s): %s" % (self.proc.poll(), self.stderr()))
            if m["type"] == "result":
                got[m["action_id"]] = m
            elif m["type"] == "get_file":
                content = self.store.get(m["hash"])
                answer = {"type": "file", "request": m["request"], "found": content is not None}
                if content is not None:
                    answer["content_base64"] = base64.b64encode(content).decode()
                self.send(answer)
            elif m["type"] == "put_file":
                self.offered[m["hash"]] = base64.b64decode(m["content_base64"])
        return got

    def act(self, rid, attrs, dry=False, aid="a"):
        return self.run_actions([{"action_id": aid, "id": rid + ",v=3", "attributes": attrs, "reason": "test",
                                  "dry_run": dry}])[aid]

    def tearDown(self):
        self.send({"type": "shutdown"})
        self.assertEqual(read_frame(self.proc.stdout)["type"], "bye")
        self.assertEqual(self.proc.wait(10), 0)

    def path(self, name):
        return os.path.join(self.dir, name)

    def test_file_transfer(self):
        content = b"from the server\n"
        self.store[sha1(content)] = content
        p = self.path("copy")
        rid = "pyapi::Copy[agent1,path=%s]" % p
        attrs = {"path": p, "hash": sha1(content), "permissions": "640", "purged": False, "send_event": False,
                 "purge_on_delete": False}
        r = self.act(rid, attrs)
        self.assertEqual((r["status"], r["change"]), ("deployed", "created"), r)
        with open(p, "rb") as f:
            self.assertEqual(f.read(), content)
        self.assertEqual(oct(os.stat(p).st_mode)[-3:], "640")
        # A local change: read_resource offers the current content (stat_file false -> upload_file), the
        # update fetches the desired content again.
        with open(p, "wb") as f:
            f.write(b"local edit\n")
        r = self.act(rid, attrs, aid="b")
        self.assertEqual((r["status"], r["change"]), ("deployed", "updated"), r)
        self.assertEqual(self.offered, {sha1(b"local edit\n"): b"local edit\n"})
        self.assertEqual(r["changes"]["hash"], {"current": sha1(b"local edit\n"), "desired": sha1(content)})
        with open(p, "rb") as f:
            self.assertEqual(f.read(), content)
        # A hash the server does not have: get_file gives None, the handler's own error fails the action.
        r = self.act(rid, dict(attrs, hash=sha1(b"missing")), aid="c")
        self.assertEqual(r["status"], "failed", r)

    def test_default_list_changes_and_fields_updated(self):
        p = self.path("value")
        with open(p, "w") as f:
            f.write("old")
        rid = "pyapi::Value[agent1,path=%s]" % p
        dry = self.act(rid, {"path": p, "value": "new", "send_event": False}, dry=True)
        self.assertEqual(dry["status"], "dry", dry)
        self.assertEqual(dry["changes"], {"value": {"current": "old", "desired": "new"}})
        with open(p) as f:
            self.assertEqual(f.read(), "old")
        r = self.act(rid, {"path": p, "value": "new", "send_event": False}, aid="b")
        self.assertEqual((r["status"], r["change"]), ("deployed", "updated"), r)
        with open(p) as f:
            self.assertEqual(f.read(), "new")
        same = self.act(rid, {"path": p, "value": "new", "send_event": False}, aid="c")
        self.assertEqual((same["status"], same["changes"]), ("deployed", {}), same)

    def test_provider_selection(self):
        def choice(mode, aid):
            p = self.path("choice-" + mode)
            r = self.act("pyapi::Choice[agent1,name=%s]" % mode, {"name": mode, "mode": mode, "path": p}, aid=aid)
            return r, p

        for mode in ("alpha", "beta"):
            r, p = choice(mode, mode)
            self.assertEqual(r["status"], "deployed", r)
            with open(p) as f:
                self.assertEqual(f.read(), mode)
        # No provider (none or several available): `unavailable`, as the reference's get_provider failure.
        r, p = choice("none", "n")
        self.assertEqual(r["status"], "unavailable", r)
        self.assertIn("Unable to find a handler for pyapi::Choice[agent1,name=none]", str(r["logs"]))
        self.assertIn("providers tried: alpha, beta; none is available", str(r["logs"]))
        r, p = choice("both", "b")
        self.assertEqual(r["status"], "unavailable", r)
        self.assertIn("More than one handler selected", str(r["logs"]))
        self.assertFalse(os.path.exists(p))
        # A dry run says so with the reference's pseudo attribute.
        dry = self.act("pyapi::Choice[agent1,name=none]", {"name": "none", "mode": "none", "path": p},
                       dry=True, aid="dn")
        self.assertEqual(dry["changes"], {"handler": {"current": "FAILED", "desired": "Unable to find a handler"}})
        self.assertIn("providers tried: alpha, beta; none is available", str(dry["logs"]))

    def test_io_client_agent_config(self):
        rid = "pyapi::Probe[agent7,name=p]"
        r = self.act(rid, {"name": "p", "dir": self.dir, "fail": None})
        self.assertEqual(r["status"], "deployed", r)
        seen = next(l["kwargs"] for l in r["logs"] if l["msg"] == "seen")
        self.assertEqual(seen["run"], ["merged:none:base", "e", 3])
        self.assertEqual(seen["hash"], sha1(b"hello"))
        self.assertEqual(seen["read"], "hello")
        self.assertTrue(seen["is_symlink"])
        self.assertEqual(seen["readlink"], os.path.join(self.dir, "sub", "f"))
        self.assertEqual(seen["perm"], 640)
        self.assertFalse(seen["is_remote"])
        self.assertFalse(seen["exists_after"])
        self.assertEqual(seen["uri"], ["ssh", {"python": "python3", "user": "u", "host": "h", "port": "22"}])
        self.assertEqual(seen["client_stat"], [True, 404])
        self.assertIn("list_environments is not supported here", seen["client_other"])
        self.assertEqual(seen["agent"], ["agent7", "local:"])
        self.assertEqual(seen["config"], ["hi", "dflt"])
        self.assertTrue(seen["action_id"] and seen["logger"] and seen["excpetion"])
        self.assertEqual(seen["id"], [rid + ",v=3", {"entity_type": "pyapi::Probe", "agent_name": "agent7",
                                                      "attribute": "name", "attribute_value": "p", "version": 7},
                                      True])

    def test_exception_reported_as_reference(self):
        r = self.act("pyapi::Probe[agent1,name=f]", {"name": "f", "dir": self.dir, "fail": "boom here"})
        self.assertEqual(r["status"], "failed", r)
        err = next(l for l in r["logs"] if l["level"] == "ERROR")
        self.assertEqual(err["kwargs"]["exception"], "Exception('boom here')")
        self.assertIn('raise Exception(resource.fail)', err["kwargs"]["traceback"])
        self.assertIn("Traceback (most recent call last)", err["kwargs"]["traceback"])


class CodebatchedAbsolutePathsTest(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="inm-pyapi-srv-")
        self.addCleanup(shutil.rmtree, self.dir, True)
        self.srv = sf.Server()
        self.addCleanup(self.srv.stop)
        self.srv.stop()
        with open(self.srv.config) as f:
            text = f.read().replace("start_schedulers = false", "start_schedulers = true")
        with open(self.srv.config, "w") as f:
            f.write(text)
        self.srv.proc = harness.Process([harness.INMANTA, "server", "-c", self.srv.config])
        self.srv.wait_healthy()
        _, self.env = self.srv.project_env("pyapi")
        for k in ("autostart_agent_deploy_interval", "autostart_agent_repair_interval"):
            self.srv.ok("POST", f"/api/v2/environment_settings/{k}", {"value": "0"}, env=self.env)

    def sql(self, text):
        host, port = harness.shared_cluster()
        return subprocess.run([os.path.join(harness.pg_bindir(), "psql"), "-h", host, "-p", str(port), "-U",
                               "postgres", "-d", self.srv.db, "-Atqc", text], capture_output=True, text=True,
                              check=True).stdout.strip()

    def test_exporter_paths_store_message_and_logs_paging(self):
        src = os.path.join(MODULES, "pyapi", "plugins", "__init__.py")
        with open(src, "rb") as f:
            code = f.read()
        h = sha1(code)
        self.srv.ok("PUT", f"/api/v1/file/{h}", {"id": h, "content": base64.b64encode(code).decode()})
        target = os.path.join(self.dir, "value.txt")
        rid = f"pyapi::Value[local,path={target}]"
        version = self.srv.ok("POST", "/api/v2/reserve_version", env=self.env)["data"]
        # Inmanta's exporter: {type: {sha1: [absolute source path, python module, requirements]}}.
        self.srv.ok("PUT", f"/api/v1/codebatched/{version}",
                    {"resources": {"pyapi::Value": {h: [src, "inmanta_plugins.pyapi", []]}}}, env=self.env)
        self.assertEqual(self.sql(f"SELECT file_path FROM module_files WHERE environment = '{self.env}'"),
                         "plugins/__init__.py")
        _, (status, body) = sf.put_version(self.srv, self.env, [{"rid": rid, "path": target, "value": "v1"}],
                                           version=version)
        self.assertEqual(status, 200, body)
        status, body = self.srv.call("POST", f"/api/v1/version/{version}", {}, env=self.env)
        self.assertTrue(status == 200 or (status == 409 and "already released" in json.dumps(body)), body)
        harness.wait_for(lambda: os.path.exists(target), timeout=90, what="the Python handler to write the file")
        with open(target) as f:
            self.assertEqual(f.read(), "v1")

        logs = harness.wait_for(
            lambda: [l for l in self.srv.ok("GET", f"/api/v2/resource/{sf.q(rid)}/logs", env=self.env)["data"]
                     if l["action"] == "deploy"] and
            self.srv.ok("GET", f"/api/v2/resource/{sf.q(rid)}/logs", env=self.env), timeout=30, what="logs")
        stored = [l for l in logs["data"] if l["action"] == "store"]
        self.assertEqual([l["msg"] for l in stored], [f"Successfully stored version {version}"])
        self.assertEqual(stored[0]["kwargs"], {"version": version})
        stamps = [l["timestamp"] for l in logs["data"]]
        self.assertEqual(stamps, sorted(stamps, reverse=True))  # default sort: timestamp.desc
        self.assertEqual(logs["metadata"]["page_size"], 1000)
        first = self.srv.ok("GET", f"/api/v2/resource/{sf.q(rid)}/logs?limit=1&sort=timestamp.asc", env=self.env)
        self.assertEqual(len(first["data"]), 1)
        self.assertEqual(first["data"][0]["msg"], f"Successfully stored version {version}")
        self.assertEqual(first["metadata"]["total"], len(logs["data"]))
        self.assertEqual(self.srv.call("GET", f"/api/v2/resource/{sf.q(rid)}/logs?sort=msg.up", env=self.env)[0], 400)


if __name__ == "__main__":
    unittest.main()
