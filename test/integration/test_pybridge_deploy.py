"""Python `@provider` handlers deployed through the whole orchestrator (docs/pybridge.md, docs/deploy.md
"Blueprints"): a project with our test module `pynote` (a Python `@resource` with a mapper and a Python
CRUDHandler keeping a file) is exported with the real `inmanta export` to a real `inmanta server` whose
scheduler starts an executor with the version's code. Checks: the resource is deployed, the file written, the
handler's log line with its kwargs in the action log; a dry run through the server after a manual change reports
the Python handler's diff and writes nothing; a second version with changed content and changed handler code is
deployed by the new code (a new executor). Every process is stopped by PID (server fixture; the server stops
its scheduler, the scheduler its executors)."""
import json
import os
import shutil
import subprocess
import tempfile
import unittest

import harness
import pyfixtures
import server_fixture as sf

MODEL = pyfixtures.NOTE_MODEL % {"module": "pynote"}


def plugins(tag):
    """pynote with a `size` mapper; its handler logs the code version `tag` with each write."""
    return pyfixtures.note_plugins(
        doc="Test module of test_pybridge_deploy.py.", preamble=f"CODE_TAG = {tag!r}\n",
        fields=("path", "content", "size"),
        mappers="\n    @staticmethod\n    def get_size(exporter, obj):\n        return len(obj.content)\n",
        read_extra="        resource.size = len(resource.content)\n",
        on_create='        ctx.info("wrote %(path)s", path=resource.path, size=resource.size, code=CODE_TAG)',
        on_update='        ctx.info("rewrote %(path)s", path=resource.path, size=resource.size, code=CODE_TAG)')


class PythonHandlerDeployTest(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="inm-pydeploy-")
        self.addCleanup(shutil.rmtree, self.dir, True)
        self.srv = sf.Server(schedulers=True)
        self.addCleanup(self.srv.stop)
        _, self.env = self.srv.project_env("pydeploy")
        for k in ("autostart_agent_deploy_interval", "autostart_agent_repair_interval"):
            self.srv.ok("POST", f"/api/v2/environment_settings/{k}", {"value": "0"}, env=self.env)
        self.target = os.path.join(self.dir, "note.txt")
        self.rid = f"pynote::Note[local,path={self.target}]"

    def sql(self, text):
        return harness.psql(self.srv.db, text)

    def export_and_release(self, content, tag):
        pyfixtures.write_module(os.path.join(self.dir, "libs"), "pynote", MODEL, plugins(tag))
        proj = pyfixtures.write_project(self.dir, "pydeploy",
                                        'import pynote\npynote::Note(path="%s", content="%s")\n' % (self.target, content))
        return pyfixtures.export_and_release(self, self.srv, self.env, proj)

    def status(self):
        return self.sql("SELECT CASE WHEN is_deploying THEN 'deploying' ELSE last_non_deploying_status END "
                        f"FROM resource_persistent_state WHERE resource_id = '{self.rid}'")

    def deploy_logs(self, version):
        return pyfixtures.deploy_logs(self.srv.db, self.rid, version)

    def wait_deployed(self, version):
        harness.wait_for(lambda: self.status() == "deployed" and self.sql(
            "SELECT last_deployed_version FROM resource_persistent_state WHERE resource_id = "
            f"'{self.rid}'") == str(version), timeout=90, what=f"version {version} to be deployed")

    def test_export_deploy_dryrun_and_new_code(self):
        v1 = self.export_and_release("hello", "code-1")
        # The code of v1 is stored with the version: module pynote, its plugins/__init__.py with the path.
        stored = self.sql("SELECT f.file_path FROM version_code c JOIN module_files f ON f.environment = c.environment "
                          "AND f.inmanta_module_name = c.inmanta_module_name AND f.inmanta_module_version = "
                          f"c.inmanta_module_version WHERE c.environment = '{self.env}' AND c.cm_version = {v1}")
        self.assertEqual(stored, "plugins/__init__.py")

        self.wait_deployed(v1)
        with open(self.target) as f:
            self.assertEqual(f.read(), "hello")
        wrote = [m for m in self.deploy_logs(v1) if m.get("msg", "").startswith("wrote")]
        self.assertEqual(len(wrote), 1, self.deploy_logs(v1))
        self.assertEqual(wrote[0]["kwargs"], {"path": self.target, "size": 5, "code": "code-1"})
        self.assertEqual(wrote[0]["msg"], "wrote " + self.target)

        # Dry run after a manual change: the Python handler's diff, nothing written.
        with open(self.target, "w") as f:
            f.write("tampered")
        dr = self.srv.ok("POST", f"/api/v2/dryrun/{v1}", env=self.env)["data"]["id"]
        harness.wait_for(lambda: self.srv.ok("GET", f"/api/v2/dryrun/{v1}/{dr}", env=self.env)["data"]["todo"] == 0,
                         timeout=60, what="the dry run to finish")
        report = self.srv.ok("GET", f"/api/v2/dryrun/{v1}/{dr}", env=self.env)["data"]
        entry = report["resources"][f"{self.rid},v={v1}"]
        self.assertEqual(entry["diff_status"], "modified", report)
        self.assertEqual(entry["changes"], {"content": {"current": "tampered", "desired": "hello"},
                                            "size": {"current": 8, "desired": 5}}, report)
        with open(self.target) as f:
            self.assertEqual(f.read(), "tampered")

        # A second version with new content and new handler code: deployed by the new code.
        v2 = self.export_and_release("world!", "code-2")
        self.assertGreater(v2, v1)
        self.wait_deployed(v2)
        with open(self.target) as f:
            self.assertEqual(f.read(), "world!")
        rewrote = [m for m in self.deploy_logs(v2) if m.get("msg", "").startswith("rewrote")]
        self.assertEqual(len(rewrote), 1, self.deploy_logs(v2))
        self.assertEqual(rewrote[0]["kwargs"], {"path": self.target, "size": 6, "code": "code-2"})
        # Two blueprints laid out under the state dir, one per code version.
        state = open(self.srv.config).read().split("state-dir = ")[1].split("\n")[0].strip()
        code_dirs = sorted(d for d in os.listdir(os.path.join(state, "executor-code")) if d.startswith("py-"))
        self.assertEqual(len(code_dirs), 2, code_dirs)


if __name__ == "__main__":
    unittest.main()
