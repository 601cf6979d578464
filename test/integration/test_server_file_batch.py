"""The push's bulk paths (issue #10, docs/server.md "File batches"): our `PUT /api/v1/files` extension (announced in
serverstatus' features with its limit; a wrong sha1 or bad base64 is a 400 naming the file and stores nothing of
the batch; over the limit is a 413; off with `[server] file_batch_size = 0`, where the route is absent and
`inmanta export` falls back to one upload per file), and the `store` action that no longer has a
resourceaction_resource row per resource (migration 004): the resource logs and the resource_actions filters
still find it, also after its version was deleted."""
import base64
import hashlib
import json
import os
import re
import shutil
import subprocess
import tempfile
import unittest
import uuid

import harness
import server_fixture as sf
import test_client_server as tcs
from test_server_push_perf import psql

NULL = "std::testing::NullResource"


def sha1(data):
    return hashlib.sha1(data).hexdigest()


def b64(data):
    return base64.b64encode(data).decode()


def feature(server):
    status = server.ok("GET", "/api/v1/serverstatus")["data"]
    return next((f for f in status["features"] if f.get("name") == "file_batch"), None)


class FileBatchTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.s = sf.Server(server_extra="file_batch_size = 4000\n")

    @classmethod
    def tearDownClass(cls):
        cls.s.stop()

    def setUp(self):
        self.pid, self.env = self.s.project_env("p" + uuid.uuid4().hex[:8])

    def test_announced_with_its_limit(self):
        f = feature(self.s)
        self.assertIsNotNone(f)
        self.assertEqual(f["value"], 4000)

    def test_batch_stored_and_served(self):
        blobs = [f"batch file {uuid.uuid4()} {i}\n".encode() * (i + 1) for i in range(5)] + [b"", b"\x00\xff\x10"]
        st, body = self.s.call("PUT", "/api/v1/files", {"files": {sha1(b): b64(b) for b in blobs}})
        self.assertEqual(st, 200, body)
        for b in blobs:
            self.assertEqual(self.s.ok("GET", f"/api/v1/file/{sha1(b)}")["content"], b64(b))
        missing = self.s.ok("POST", "/api/v1/file", {"files": [sha1(b) for b in blobs]})["files"]
        self.assertEqual(missing, [])
        # sent again (already stored): still 200
        st, body = self.s.call("PUT", "/api/v1/files", {"files": {sha1(b): b64(b) for b in blobs}})
        self.assertEqual(st, 200, body)

    def test_wrong_sha1_names_the_file_and_stores_nothing(self):
        good, bad = f"good {uuid.uuid4()}".encode(), f"bad {uuid.uuid4()}".encode()
        wrong = sha1(b"something else " + bad)
        st, body = self.s.call("PUT", "/api/v1/files", {"files": {sha1(good): b64(good), wrong: b64(bad)}})
        self.assertEqual(st, 400)
        self.assertIn(wrong, body["message"])
        self.assertIn(sha1(bad), body["message"])
        self.assertEqual(self.s.call("GET", f"/api/v1/file/{sha1(good)}")[0], 404)
        st, body = self.s.call("PUT", "/api/v1/files", {"files": {sha1(good): "***not base64***"}})
        self.assertEqual(st, 400)
        self.assertIn(sha1(good), body["message"])
        self.assertIn("base64", body["message"])
        st, body = self.s.call("PUT", "/api/v1/files", {"files": {sha1(good): 12}})
        self.assertEqual(st, 400)
        self.assertIn(sha1(good), body["message"])
        st, body = self.s.call("PUT", "/api/v1/files", {"files": ["x"]})
        self.assertEqual(st, 400)
        self.assertIn("'files'", body["message"])

    def test_over_the_limit_is_413(self):
        blobs = [f"{i} {uuid.uuid4()}".encode() * 40 for i in range(3)]  # ~1.9 KiB of base64 each
        st, body = self.s.call("PUT", "/api/v1/files", {"files": {sha1(b): b64(b) for b in blobs}})
        self.assertEqual(st, 413)
        self.assertIn("4000", body["message"])
        self.assertTrue(any(sha1(b) in body["message"] for b in blobs[1:] + blobs[:1]), body["message"])
        self.assertEqual(self.s.call("GET", f"/api/v1/file/{sha1(blobs[0])}")[0], 404)
        # the single-file route has no such limit
        st, body = self.s.call("PUT", f"/api/v1/file/{sha1(blobs[0])}",
                               {"id": sha1(blobs[0]), "content": b64(blobs[0] * 3)})
        self.assertEqual(st, 400)  # (wrong content for the id: the sha1 check, not a size limit)
        st, body = self.s.call("PUT", f"/api/v1/file/{sha1(blobs[0] * 3)}",
                               {"id": sha1(blobs[0] * 3), "content": b64(blobs[0] * 3)})
        self.assertEqual(st, 200, body)


class FileBatchOffTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.s = sf.Server(server_extra="file_batch_size = 0\n")

    @classmethod
    def tearDownClass(cls):
        cls.s.stop()

    def test_not_announced_and_absent(self):
        self.assertIsNone(feature(self.s))
        data = b"off"
        st, _ = self.s.call("PUT", "/api/v1/files", {"files": {sha1(data): b64(data)}})
        self.assertEqual(st, 404)


class StoreActionTest(unittest.TestCase):
    """The store action of a version is found through the version's resource rows (no per-resource rows)."""
    @classmethod
    def setUpClass(cls):
        cls.s = sf.Server()

    @classmethod
    def tearDownClass(cls):
        cls.s.stop()

    def setUp(self):
        self.pid, self.env = self.s.project_env("p" + uuid.uuid4().hex[:8])
        self.s.ok("POST", "/api/v2/environment_settings/auto_deploy", {"value": False}, env=self.env)

    def logs(self, rid):
        return self.s.ok("GET", f"/api/v1/resource/{sf.q(rid)}?logs=true", env=self.env)["logs"]

    def test_store_action_readers(self):
        a, b = f"{NULL}[agent1,name=a]", f"{NULL}[agent2,name=b]"
        v1, (st, body) = sf.put_version(self.s, self.env, [{"rid": a, "name": "a"}, {"rid": b, "name": "b"}])
        self.assertEqual(st, 200, body)
        v2, (st, body) = sf.put_version(self.s, self.env, [{"rid": a, "name": "a", "value": "2"}])
        self.assertEqual(st, 200, body)
        # released, so the v1 resource endpoint (which carries the logs) knows both resources
        for v in (v1, v2):
            self.s.ok("POST", f"/api/v1/version/{v}", {"push": False}, env=self.env)
        # no resourceaction_resource rows for store actions
        self.assertEqual(psql(self.s.db, "SELECT count(*) FROM resourceaction_resource rar JOIN resourceaction ra "
                                         "ON ra.action_id = rar.resource_action_id WHERE ra.action = 'store'").strip(),
                         "0")
        la = [(x["action"], x["version"]) for x in self.logs(a)]
        self.assertEqual(sorted(la), [("store", v1), ("store", v2)])
        lb = [(x["action"], x["version"]) for x in self.logs(b)]
        self.assertEqual(lb, [("store", v1)])

        def actions(**filters):
            qs = "&".join(f"{k}={sf.q(str(v))}" for k, v in filters.items())
            return sorted(x["version"] for x in
                          self.s.ok("GET", f"/api/v2/resource_actions?{qs}", env=self.env)["data"]
                          if x["action"] == "store")
        self.assertEqual(actions(), [v1, v2])
        self.assertEqual(actions(agent="agent2"), [v1])
        self.assertEqual(actions(agent="agent1"), [v1, v2])
        self.assertEqual(actions(agent="agent9"), [])
        self.assertEqual(actions(resource_type=NULL), [v1, v2])
        self.assertEqual(actions(resource_type="std::File"), [])
        self.assertEqual(actions(attribute="value", attribute_value="2"), [v2])
        ra = self.s.ok("GET", f"/api/v2/resource_actions?agent=agent2", env=self.env)["data"]
        self.assertEqual(sorted(ra[0]["resource_version_ids"]), sorted([f"{a},v={v1}", f"{b},v={v1}"]))
        # the version deleted: its store action is still in a's logs (through resource_version_ids)
        st, body = self.s.call("DELETE", f"/api/v1/version/{v1}", env=self.env)
        self.assertEqual(st, 200, body)
        self.assertEqual(self.s.call("GET", f"/api/v1/version/{v1}", env=self.env)[0], 404)
        self.assertEqual([(x["action"], x["version"]) for x in self.logs(a)], [("store", v2), ("store", v1)])
        # (b is in no version any more: the resource endpoint does not know it)
        self.assertEqual(self.s.call("GET", f"/api/v1/resource/{sf.q(b)}?logs=true", env=self.env)[0], 404)


@unittest.skipUnless(os.path.exists(harness.INMANTA) and tcs.has_server(), "the binary has no `server` verb yet")
class ExportFileBatchTest(unittest.TestCase):
    """`inmanta export -d` uses the batches when announced and falls back to single uploads when not."""
    start_server = tcs.ClientServerTest.start_server
    _port_open = tcs.ClientServerTest._port_open
    setUp = tcs.ClientServerTest.setUp
    tearDown = tcs.ClientServerTest.tearDown
    cli = tcs.ClientServerTest.cli

    def push(self, extra):
        self.start_server(extra)
        self.cli(["project", "create", "-n", "fb"])
        env = json.loads(self.cli(["--json", "environment", "create", "-n", "dev", "-p", "fb"]).stdout)["id"]
        self.cli(["environment", "setting", "set", "-e", "dev", "-k", "auto_deploy", "-o", "false"])
        project = os.path.join(self.tmp, "quickstart")
        shutil.copytree(os.path.join(harness.ROOT, "examples", "quickstart"), project)
        p = subprocess.run([harness.INMANTA, "-vvv", "export", "-e", env, "--server_address", "127.0.0.1",
                            "--server_port", str(self.port), "-d"], cwd=project, capture_output=True, text=True,
                           timeout=600)
        self.assertEqual(p.returncode, 0, p.stderr[-3000:] + self.server.output()[-2000:])
        m = re.search(r"uploading (\d+) files \((\d+) already on the server; (\d+) batches\)", p.stderr)
        self.assertTrue(m, p.stderr[-3000:])
        uploaded, batches = int(m.group(1)), int(m.group(3))
        self.assertGreater(uploaded, 0)
        log = self.server.output()
        singles = len(re.findall(r'"?path"?[=:] ?"?/api/v1/file/', log))
        return uploaded, batches, singles, log

    def test_batched(self):
        uploaded, batches, singles, log = self.push("")
        self.assertGreaterEqual(batches, 1)
        self.assertIn("/api/v1/files", log)
        self.assertEqual(singles, 0, log[-2000:])

    def test_fallback_without_the_feature(self):
        uploaded, batches, singles, log = self.push("[server]\nfile_batch_size = 0\n")
        self.assertEqual(batches, 0)
        self.assertNotIn("/api/v1/files", log)
        self.assertEqual(singles, uploaded, log[-2000:])


if __name__ == "__main__":
    unittest.main()
