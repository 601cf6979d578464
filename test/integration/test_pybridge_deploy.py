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
import server_fixture as sf

MODULE_YML = "name: pynote\nversion: 1.0.0\n"
MODEL = '''entity Note extends std::PurgeableResource:
  """A text file kept by the Python handler pynote::Note."""
  string path
  string content
  string agentname = "local"
end
implement Note using std::none
'''
PLUGINS = '''"""Test module of test_pybridge_deploy.py."""
import os

from inmanta.agent.handler import CRUDHandler, HandlerContext, ResourcePurged, provider
from inmanta.resources import PurgeableResource, resource

CODE_TAG = "%(tag)s"


@resource("pynote::Note", agent="agentname", id_attribute="path")
class Note(PurgeableResource):
    fields = ("path", "content", "size")

    @staticmethod
    def get_size(exporter, obj):
        return len(obj.content)


@provider("pynote::Note", name="note")
class NoteHandler(CRUDHandler):
    def read_resource(self, ctx: HandlerContext, resource: Note) -> None:
        if not os.path.exists(resource.path):
            raise ResourcePurged()
        with open(resource.path) as f:
            resource.content = f.read()
        resource.size = len(resource.content)

    def create_resource(self, ctx: HandlerContext, resource: Note) -> None:
        with open(resource.path, "w") as f:
            f.write(resource.content)
        ctx.info("wrote %%(path)s", path=resource.path, size=resource.size, code=CODE_TAG)
        ctx.set_created()

    def update_resource(self, ctx: HandlerContext, changes: dict, resource: Note) -> None:
        with open(resource.path, "w") as f:
            f.write(resource.content)
        ctx.info("rewrote %%(path)s", path=resource.path, size=resource.size, code=CODE_TAG)
        ctx.set_updated()

    def delete_resource(self, ctx: HandlerContext, resource: Note) -> None:
        os.remove(resource.path)
        ctx.set_purged()
'''


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

    def write_project(self, content, tag):
        mod = os.path.join(self.dir, "libs", "pynote")
        os.makedirs(os.path.join(mod, "model"), exist_ok=True)
        os.makedirs(os.path.join(mod, "plugins"), exist_ok=True)
        with open(os.path.join(mod, "module.yml"), "w") as f:
            f.write(MODULE_YML)
        with open(os.path.join(mod, "model", "_init.cf"), "w") as f:
            f.write(MODEL)
        with open(os.path.join(mod, "plugins", "__init__.py"), "w") as f:
            f.write(PLUGINS % {"tag": tag})
        proj = os.path.join(self.dir, "project")
        os.makedirs(proj, exist_ok=True)
        with open(os.path.join(proj, "project.yml"), "w") as f:
            f.write("name: pydeploy\nmodulepath: %s\n" % os.path.join(self.dir, "libs"))
        with open(os.path.join(proj, "main.cf"), "w") as f:
            f.write('import pynote\npynote::Note(path="%s", content="%s")\n' % (self.target, content))
        return proj

    def export_and_release(self, content, tag):
        proj = self.write_project(content, tag)
        p = subprocess.run([harness.INMANTA, "export", "-e", self.env, "--server_address", "127.0.0.1",
                            "--server_port", str(self.srv.port)], cwd=proj, capture_output=True, text=True,
                           timeout=120)
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        v = int(self.sql(f"SELECT max(version) FROM configurationmodel WHERE environment = '{self.env}'"))
        # auto_deploy (default on) may have released it already; otherwise release it.
        status, body = self.srv.call("POST", f"/api/v1/version/{v}", {}, env=self.env)
        self.assertTrue(status == 200 or (status == 409 and "already released" in json.dumps(body)), body)
        return v

    def status(self):
        return self.sql("SELECT CASE WHEN is_deploying THEN 'deploying' ELSE last_non_deploying_status END "
                        f"FROM resource_persistent_state WHERE resource_id = '{self.rid}'")

    def deploy_logs(self, version):
        rows = self.sql("SELECT a.messages FROM resourceaction a JOIN resourceaction_resource x ON "
                        "x.resource_action_id = a.action_id WHERE x.resource_id = "
                        f"'{self.rid}' AND x.resource_version = {version} AND a.action = 'deploy'")
        return [m for line in rows.splitlines() if line for m in json.loads(line)]

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
