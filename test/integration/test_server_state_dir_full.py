"""A full state dir (issue #25, docs/server.md "Life cycle"): the server's `[config] state-dir` holds the compile
service's checkouts (<state-dir>/server/<env>/compiler) and the executors' handler code. On a small tmpfs filled
up, a compile fails with a report naming "No space left on device" and the directory, uploads of files and
versions (stored in PostgreSQL) still answer 200 and lose nothing already stored, the server lives, and once space
is freed the next compile succeeds. Needs root and `mount -t tmpfs` (skipped with the reason otherwise); the mount
is removed at cleanup and the server stopped by PID."""
import base64
import hashlib
import json
import os
import shutil
import tempfile
import unittest

import harness
import server_fixture as sf
from autonomous_util import Repo, model
from test_server_disk_full import fill, mount_tmpfs


class StateDirFullTest(unittest.TestCase):
    def compiles(self, env):
        return json.loads(harness.psql(self.srv.db, "SELECT coalesce(json_agg(q), '[]') FROM (SELECT c.id, "
                                       "c.completed IS NOT NULL AS done, c.success, c.version, (SELECT json_agg(r.* "
                                       "ORDER BY r.started) FROM report r WHERE r.compile = c.id) AS reports FROM "
                                       f"compile c WHERE c.environment = '{env}' ORDER BY c.requested) q"))

    def compile_once(self, env):
        before = len(self.compiles(env))
        self.srv.ok("POST", f"/api/v1/notify/{env}", None)
        harness.wait_for(lambda: len(self.compiles(env)) > before and self.compiles(env)[-1]["done"], timeout=90,
                         what="the compile to finish")
        return self.compiles(env)[-1]

    def test_full_state_dir_fails_compiles_clearly_keeps_data_and_recovers(self):
        state = mount_tmpfs(self, "8m")
        tmp = tempfile.mkdtemp(prefix="inm-state-")
        self.addCleanup(shutil.rmtree, tmp, True)
        repo = Repo(tmp)
        repo.commit(model([("c1", "false"), ("c2", "false")]), "first")
        self.srv = srv = sf.Server(state_dir=state, server_extra="compile-timeout = 60\n")
        self.addCleanup(srv.stop)
        pid = srv.ok("PUT", "/api/v2/project", {"name": "statefull"})["data"]["id"]
        env = srv.ok("PUT", "/api/v2/environment", {"project_id": pid, "name": "e", "repository": repo.path,
                                                    "branch": "main"})["data"]["id"]
        stored, (status, body) = sf.put_version(srv, env, [dict(rid="std::testing::NullResource[a1,name=kept]",
                                                                name="kept", agentname="a1", value="", fail=False)])
        self.assertEqual(status, 200, body)

        filler = fill(state)
        failed = self.compile_once(env)
        self.assertFalse(failed["success"], failed)
        text = json.dumps(failed["reports"])
        self.assertIn("No space left on device", text)
        self.assertIn(state, text)
        self.assertTrue(srv.proc.alive(), srv.proc.output()[-3000:])

        # Uploads go to PostgreSQL: they succeed, and what was stored before is still there.
        content = b"# a file uploaded while the state dir is full\n"
        h = hashlib.sha1(content).hexdigest()
        self.assertEqual(srv.call("PUT", f"/api/v1/file/{h}", {"id": h, "content": base64.b64encode(content).decode()},
                                  env=env)[0], 200)
        v2, (status, body) = sf.put_version(srv, env, [dict(rid="std::testing::NullResource[a1,name=new]",
                                                            name="new", agentname="a1", value="", fail=False)])
        self.assertEqual(status, 200, body)
        got = srv.ok("GET", f"/api/v1/file/{h}", env=env)
        self.assertEqual(base64.b64decode(got["content"]), content)
        versions = {v["version"] for v in srv.ok("GET", "/api/v1/version", env=env)["versions"]}
        self.assertTrue({stored, v2} <= versions, versions)

        os.unlink(filler)
        ok = self.compile_once(env)
        self.assertTrue(ok["success"], json.dumps(ok)[-3000:])
        self.assertIsNotNone(ok["version"])
        self.assertTrue(srv.proc.alive())


if __name__ == "__main__":
    unittest.main()
