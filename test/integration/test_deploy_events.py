"""Events and reload through the whole orchestrator (orchestrator.md §6.6, §17.9): a project with a test module
`pyreload` (two Python resources: `Note`, a file written by its handler with `send_event=true`, and `Watcher`,
which requires the note, is always in sync and whose handler `can_reload()` and appends a line to a log file in
`do_reload`) is exported to a real `inmanta server`; its scheduler and executor processes deploy it.
Checks: the watcher reloads once on its first deploy after the note was created; a repair (the note deploys
without a change, still sending its event) redeploys the watcher without a reload; a version that changes only
the note's content redeploys the unchanged watcher through the event and reloads it exactly once more; the
reload's log line is in the watcher's action log; a dry run after a manual change is read back as the
`{summary, diff}` report of §6.11. Every process is stopped by PID (server fixture)."""
import json
import os
import shutil
import subprocess
import tempfile
import unittest

import harness
import pyfixtures
import server_fixture as sf

MODEL = pyfixtures.NOTE_MODEL % {"module": "pyreload"} + '''
entity Watcher extends std::Resource:
  """Reloads (appends a line to `log`) when a dependency changed."""
  string name
  string log
  string agentname = "local"
end
implement Watcher using std::none
'''
WATCHER = '''

@resource("pyreload::Watcher", agent="agentname", id_attribute="name")
class Watcher(Resource):
    fields = ("name", "log")


@provider("pyreload::Watcher", name="watcher")
class WatcherHandler(CRUDHandler):
    def read_resource(self, ctx: HandlerContext, resource: Watcher) -> None:
        pass

    def can_reload(self) -> bool:
        return True

    def do_reload(self, ctx: HandlerContext, resource: Watcher) -> None:
        with open(resource.log, "a") as f:
            f.write("reload\\n")
'''
PLUGINS = pyfixtures.note_plugins("pyreload", doc="Test module of test_deploy_events.py.", extra=WATCHER)


class EventsReloadTest(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="inm-events-")
        self.addCleanup(shutil.rmtree, self.dir, True)
        self.srv = sf.Server(server_extra="")
        self.addCleanup(self.srv.stop)
        if "start_schedulers = false" in open(self.srv.config).read():
            self.srv.stop()
            with open(self.srv.config) as f:
                text = f.read().replace("start_schedulers = false", "start_schedulers = true")
            with open(self.srv.config, "w") as f:
                f.write(text)
            self.srv.proc = harness.Process([harness.INMANTA, "server", "-c", self.srv.config])
            self.srv.wait_healthy()
        _, self.env = self.srv.project_env("events")
        for k in ("autostart_agent_deploy_interval", "autostart_agent_repair_interval"):
            self.srv.ok("POST", f"/api/v2/environment_settings/{k}", {"value": "0"}, env=self.env)
        self.note = os.path.join(self.dir, "note.txt")
        self.log = os.path.join(self.dir, "reloads.log")
        self.note_id = f"pyreload::Note[local,path={self.note}]"
        self.watcher_id = "pyreload::Watcher[local,name=w]"

    def sql(self, text):
        host, port = harness.shared_cluster()
        return subprocess.run([os.path.join(harness.pg_bindir(), "psql"), "-h", host, "-p", str(port), "-U",
                               "postgres", "-d", self.srv.db, "-Atqc", text], capture_output=True, text=True,
                              check=True).stdout.strip()

    def export_and_release(self, content):
        pyfixtures.write_module(os.path.join(self.dir, "libs"), "pyreload", MODEL, PLUGINS)
        proj = pyfixtures.write_project(
            self.dir, "events", 'import pyreload\nn = pyreload::Note(path="%s", content="%s", send_event=true)\n'
            'pyreload::Watcher(name="w", log="%s", requires=n)\n' % (self.note, content, self.log))
        return pyfixtures.export_and_release(self, self.srv, self.env, proj)

    def reloads(self):
        if not os.path.exists(self.log):
            return 0
        with open(self.log) as f:
            return len(f.read().splitlines())

    def deploys(self, rid):
        """Finished deploy actions of `rid`, oldest first: (version, status, change, messages)."""
        rows = self.sql("SELECT json_build_array(x.resource_version, a.status, a.change, a.messages) FROM "
                        "resourceaction a JOIN resourceaction_resource x ON x.resource_action_id = a.action_id "
                        f"WHERE x.resource_id = '{rid}' AND a.action = 'deploy' AND a.finished IS NOT NULL "
                        "ORDER BY a.started")
        return [json.loads(line) for line in rows.splitlines() if line]

    def idle(self):
        return self.sql(f"SELECT count(*) FROM resource_persistent_state WHERE environment = '{self.env}' AND "
                        "(is_deploying OR last_deployed_attribute_hash IS DISTINCT FROM "
                        "current_intent_attribute_hash)") == "0"

    def wait_deploys(self, rid, count, what):
        harness.wait_for(lambda: len(self.deploys(rid)) >= count and self.idle(), timeout=90, what=what)

    def test_reload_once_after_a_dependency_changed(self):
        v1 = self.export_and_release("one")
        self.wait_deploys(self.watcher_id, 1, "the watcher's first deploy")
        note = self.deploys(self.note_id)
        self.assertEqual([(d[0], d[1], d[2]) for d in note], [(v1, "deployed", "created")], note)
        self.assertEqual(self.reloads(), 1, self.deploys(self.watcher_id))
        watcher = self.deploys(self.watcher_id)
        self.assertEqual(len(watcher), 1, watcher)
        reload_lines = [m for m in watcher[0][3] if m["msg"].startswith("Reloading")]
        self.assertEqual(len(reload_lines), 1, watcher[0][3])
        self.assertEqual(reload_lines[0]["level"], "INFO")

        # A repair: the note deploys without a change, its event redeploys the watcher, no reload.
        self.srv.ok("POST", "/api/v1/deploy", {}, env=self.env)
        self.wait_deploys(self.note_id, 2, "the note's repair")
        self.wait_deploys(self.watcher_id, 2, "the watcher's repair")
        self.assertEqual(self.deploys(self.note_id)[-1][2], "nochange")
        self.assertEqual(self.reloads(), 1, self.deploys(self.watcher_id))

        # A version changing only the note: the unchanged watcher is redeployed by the event and reloads once.
        before = len(self.deploys(self.watcher_id))
        v2 = self.export_and_release("two")
        harness.wait_for(lambda: any(d[0] == v2 and d[2] == "updated" for d in self.deploys(self.note_id)),
                         timeout=90, what="the note's update")
        self.wait_deploys(self.watcher_id, before + 1, "the watcher's event deploy")
        with open(self.note) as f:
            self.assertEqual(f.read(), "two")
        watcher = self.deploys(self.watcher_id)
        self.assertEqual(self.reloads(), 2, watcher)
        self.assertTrue(any("Reloading" in m["msg"] for m in watcher[-1][3]), watcher[-1][3])
        self.assertIn("event", watcher[-1][3][0]["msg"] + json.dumps(watcher[-1][3][0].get("kwargs")), watcher[-1])

        # A dry run after a manual change, read back in the report shape of §6.11 (summary + diff).
        with open(self.note, "w") as f:
            f.write("tampered")
        dr = self.srv.ok("POST", f"/api/v2/dryrun/{v2}", env=self.env)["data"]["id"]
        harness.wait_for(lambda: self.srv.ok("GET", f"/api/v2/dryrun/{v2}/{dr}", env=self.env)["data"]["todo"] == 0,
                         timeout=60, what="the dry run to finish")
        report = self.srv.ok("GET", f"/api/v2/dryrun/{v2}/{dr}", env=self.env)["data"]
        self.assertEqual(report["summary"]["id"], dr)
        self.assertEqual(report["summary"]["model"], v2)
        self.assertEqual((report["summary"]["total"], report["summary"]["todo"]), (2, 0), report)
        diff = {d["resource_id"]: d for d in report["diff"]}
        self.assertEqual(diff[self.note_id]["status"], "modified", report)
        self.assertEqual(diff[self.note_id]["attributes"]["content"],
                         {"from_value": "tampered", "to_value": "two", "from_value_compare": "tampered",
                          "to_value_compare": "two"}, report)
        self.assertEqual(diff[self.watcher_id], {"resource_id": self.watcher_id, "status": "unmodified",
                                                 "attributes": {}}, report)
        with open(self.note) as f:
            self.assertEqual(f.read(), "tampered")


if __name__ == "__main__":
    unittest.main()
