"""The autonomous server end to end: a real `inmanta server` (real PostgreSQL) whose environment points at a git
repository made by the test; POST /api/v1/notify makes the server clone/pull, compile and export to itself;
the version is stored (and released: auto_deploy), the reports are served, a second commit changes only the
changed resource, a broken commit fails with its diagnostics and the next notify still works, the cron compiles."""
import os
import shutil
import tempfile
import time
import unittest

import harness
from autonomous_util import Repo, model
from server_fixture import Server


class AutonomousServerTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="inm-autosrv-")
        self.repo = Repo(self.tmp)
        self.commit1 = self.repo.commit(model([("a", "false"), ("b", "false"), ("c", "false")]), "first")
        self.server = Server(server_extra="compile-timeout = 120\n")
        pid = self.server.ok("PUT", "/api/v2/project", {"name": "auto"})["data"]["id"]
        self.env = self.server.ok("PUT", "/api/v2/environment", {
            "project_id": pid, "name": "e", "repository": self.repo.path, "branch": "main"})["data"]["id"]

    def tearDown(self):
        self.server.stop()
        shutil.rmtree(self.tmp, ignore_errors=True)

    def reports(self):
        return self.server.ok("GET", "/api/v2/compilereport", env=self.env)["data"]

    def notify_and_wait(self, count, **params):
        q = "&".join(f"{k}={v}" for k, v in params.items())
        status, _ = self.server.call("POST", f"/api/v1/notify/{self.env}" + (f"?{q}" if q else ""))
        self.assertEqual(status, 200)
        harness.wait_for(lambda: len(self.reports()) >= count and all(c["completed"] for c in self.reports()),
                         timeout=90, what=f"{count} completed compile(s)")
        return self.reports()[0]  # newest first

    def test_notify_compiles_exports_and_reports(self):
        c1 = self.notify_and_wait(1)
        detail = self.server.ok("GET", f"/api/v2/compilereport/{c1['id']}")["data"]
        self.assertTrue(c1["success"], detail)
        self.assertEqual(c1["version"], 1)
        self.assertEqual([r["name"] for r in detail["reports"]],
                         ["Init", "Cloning repository", "Recompiling configuration model"])
        self.assertIn(self.commit1, detail["reports"][1]["outstream"])
        self.assertIn("Committed resources with version 1", detail["reports"][2]["outstream"])
        self.assertEqual(self.server.ok("GET", f"/api/v2/compiledata/{c1['id']}")["data"], {"errors": []})
        # The version is stored, names its commit, and auto_deploy released it.
        v = self.server.ok("GET", "/api/v1/version/1", env=self.env)
        self.assertEqual(v["model"]["version_info"]["export_metadata"]["commit"], self.commit1)
        self.assertTrue(v["model"]["released"])
        self.assertEqual(len(v["resources"]), 3)
        # Idle: HEAD answers 204; the queue is empty.
        self.assertEqual(self.server.call("HEAD", f"/api/v1/notify/{self.env}")[0], 204)
        self.assertEqual(self.server.ok("GET", "/api/v1/compilequeue", env=self.env)["queue"], [])

        # A second commit: only the changed resource differs between the versions.
        commit2 = self.repo.commit(model([("a", "false"), ("b", "true"), ("c", "false")]), "second")
        c2 = self.notify_and_wait(2)
        self.assertTrue(c2["success"])
        self.assertEqual(c2["version"], 2)
        detail = self.server.ok("GET", f"/api/v2/compilereport/{c2['id']}")["data"]
        self.assertEqual(detail["reports"][1]["name"], "Pulling updates")
        self.assertIn(commit2, detail["reports"][1]["outstream"])
        diff = self.server.ok("GET", "/api/v2/desiredstate/diff/1/2", env=self.env)["data"]
        changed = sorted(d["resource_id"] for d in diff if d["status"] != "unmodified")
        self.assertEqual(changed, ["std::testing::NullResource[a1,name=b]"], diff)

        # A broken commit: the compile fails with its diagnostics; no version; the next notify works.
        self.repo.commit(model([("a", "false")], extra="x = 1\nx = 2\n"), "broken")
        c3 = self.notify_and_wait(3)
        self.assertFalse(c3["success"])
        self.assertIsNone(c3["version"])
        errors = self.server.ok("GET", f"/api/v2/compiledata/{c3['id']}")["data"]["errors"]
        self.assertEqual(errors[0]["kind"], "DoubleSet")
        self.repo.commit(model([("a", "false")]), "fixed")
        c4 = self.notify_and_wait(4)
        self.assertTrue(c4["success"], self.server.ok("GET", f"/api/v2/compilereport/{c4['id']}")["data"])
        self.assertEqual(c4["version"], 3)

    def test_notify_errors_and_metadata(self):
        self.assertEqual(self.server.call("POST", "/api/v1/notify/00000000-0000-0000-0000-000000000001")[0], 404)
        self.assertEqual(self.server.call("POST", "/api/v1/notify/not-a-uuid")[0], 400)
        self.assertEqual(self.server.call("GET", "/api/v2/compilereport/00000000-0000-0000-0000-000000000001")[0], 404)
        status, _ = self.server.call("POST", f"/api/v1/notify/{self.env}",
                                     {"update": False, "metadata": {"type": "ci", "message": "from the pipeline"}})
        self.assertEqual(status, 200)
        harness.wait_for(lambda: self.reports() and self.reports()[0]["completed"], timeout=90, what="compile")
        c = self.reports()[0]
        self.assertTrue(c["success"])
        self.assertFalse(c["force_update"])
        self.assertEqual(c["metadata"]["type"], "ci")
        v = self.server.ok("GET", "/api/v1/version/1", env=self.env)
        self.assertEqual(v["model"]["version_info"]["export_metadata"]["message"], "from the pipeline")
        # `inmanta-cli compile list|show`: the table row, then the report by a prefix of its id, with its stages.
        import subprocess
        cli = [os.path.join(harness.BUILD, "bin", "inmanta-cli"), "--host", "127.0.0.1", "--port",
               str(self.server.port), "compile"]
        r = subprocess.run(cli + ["list", "-e", self.env], capture_output=True, text=True, timeout=60)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        row = [ln for ln in r.stdout.splitlines() if c["id"] in ln]
        self.assertEqual(len(row), 1, r.stdout)
        self.assertEqual([x.strip() for x in row[0].strip("|").split("|")][3:],
                         ["success", "1", "ci: from the pipeline"])
        r = subprocess.run(cli + ["show", "-e", self.env, c["id"][:8]], capture_output=True, text=True, timeout=60)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertIn(f"Compile {c['id']}: success", r.stdout)
        self.assertIn("== Recompiling configuration model (exit 0)", r.stdout)
        self.assertIn("    Committed resources with version 1", r.stdout)
        r = subprocess.run(cli + ["show", "-e", self.env, "zzz"], capture_output=True, text=True, timeout=60)
        self.assertEqual(r.returncode, 1, r.stdout + r.stderr)
        self.assertIn("no compile of this environment has an id starting with 'zzz'", r.stderr)

    def test_cli_recompile_update(self):
        import subprocess
        cli = os.path.join(harness.BUILD, "bin", "inmanta-cli")
        r = subprocess.run([cli, "--host", "127.0.0.1", "--port", str(self.server.port), "environment", "recompile",
                            self.env, "--update"], capture_output=True, text=True, timeout=60)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertIn("Update & Recompile triggered successfully", r.stdout)
        harness.wait_for(lambda: self.reports() and self.reports()[0]["completed"], timeout=90, what="compile")
        c = self.reports()[0]
        self.assertTrue(c["success"])
        self.assertTrue(c["force_update"])
        self.assertEqual(c["metadata"]["type"], "cli")

    def test_cron_setting_compiles(self):
        self.server.ok("POST", "/api/v2/environment_settings/auto_full_compile", {"value": "*/3 * * * * *"}, env=self.env)
        harness.wait_for(lambda: sum(1 for c in self.reports() if c["completed"] and c["success"]) >= 2,
                         timeout=60, what="two cron compiles")
        self.assertTrue(all(c["metadata"]["type"] == "schedule" for c in self.reports()))
        # Turning it off stops the compiles (the sweep rereads the setting).
        self.server.ok("DELETE", "/api/v2/environment_settings/auto_full_compile", env=self.env)
        time.sleep(6)
        n = len(self.reports())
        time.sleep(4)
        self.assertEqual(len(self.reports()), n)


if __name__ == "__main__":
    unittest.main()


class AutonomousServerAuthTest(unittest.TestCase):
    """With server.auth on, the server's compiler exports with the env-scoped token it is given."""

    def test_notify_with_auth(self):
        from test_server_ops import b64url, jwt
        key = b64url(b"0123456789abcdef0123456789abcdef-auto-key")
        tmp = tempfile.mkdtemp(prefix="inm-autoauth-")
        server = Server(server_extra="auth = true\n",
                        extra=f"[auth_jwt_default]\nalgorithm = HS256\nsign = true\n"
                              f"client_types = agent,compiler,api\nkey = {key}\nexpire = 0\n")
        try:
            repo = Repo(tmp)
            commit = repo.commit(model([("a", "false")]), "first")
            admin = {"Authorization": "Bearer " + jwt(key, {"urn:inmanta:ct": "api"})}
            pid = server.ok("PUT", "/api/v2/project", {"name": "auth"}, headers=admin)["data"]["id"]
            env = server.ok("PUT", "/api/v2/environment", {"project_id": pid, "name": "e", "repository": repo.path,
                                                          "branch": "main"}, headers=admin)["data"]["id"]
            self.assertEqual(server.call("POST", f"/api/v1/notify/{env}")[0], 401)
            self.assertEqual(server.call("POST", f"/api/v1/notify/{env}", headers=admin)[0], 200)
            reports = lambda: server.ok("GET", "/api/v2/compilereport", env=env, headers=admin)["data"]
            harness.wait_for(lambda: reports() and reports()[0]["completed"], timeout=90, what="compile")
            c = reports()[0]
            detail = server.ok("GET", f"/api/v2/compilereport/{c['id']}", headers=admin)["data"]
            self.assertTrue(c["success"], detail)
            self.assertEqual(c["version"], 1)
            cmd = detail["reports"][-1]["command"]
            self.assertIn("--token <token>", cmd)
            v = server.ok("GET", "/api/v1/version/1", env=env, headers=admin)
            self.assertEqual(v["model"]["version_info"]["export_metadata"]["commit"], commit)
        finally:
            server.stop()
            shutil.rmtree(tmp, ignore_errors=True)
