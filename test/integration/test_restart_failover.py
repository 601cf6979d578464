"""Failover of autostarted agents after a server restart (docs/deploy.md "Failover", issue #28): `kill -9` of the
server while its scheduler's executor runs a slow Python handler, then a new server on the same port and
database. The killed server's scheduler gets SIGTERM (PR_SET_PDEATHSIG), finishes nothing within its stop grace
of 1 s and ends its executors; the new server's scheduler waits for the environment's scheduler lock, so it acts
only after the old executors are gone. Checked from markers the handler writes (pid, start, heartbeat, end) and
from the action log: every resource ends deployed, the interrupted one ran again, no two runs of one resource
overlapped in time (each run also checks at its start that no earlier unfinished run's process is alive), and the
interrupted action is closed as `unavailable` rather than left `deploying`. The first run takes 8 s, the others
0.3 s. Every process is stopped by PID."""
import glob
import json
import os
import shutil
import signal
import tempfile
import time
import unittest

import harness
import pyfixtures
from server_fixture import Server

SLEEP = 8  # seconds of the first handler run: longer than the stop grace (1 s) + the executor's shutdown grace (5 s)

PLUGINS = '''"""Test module of test_restart_failover.py: a Note whose handler runs slowly and leaves markers."""
import json
import os
import time
import uuid

from inmanta.agent.handler import CRUDHandler, HandlerContext, ResourcePurged, provider
from inmanta.resources import PurgeableResource, resource

MARKERS = os.environ.get("SLOW_MARKERS", "")  # set for the executors; the export only loads the module


@resource("slownote::Note", agent="agentname", id_attribute="path")
class Note(PurgeableResource):
    fields = ("path", "content")


def alive(pid):
    """Running, not a zombie: a killed executor whose parent (the scheduler) died too is reparented, and a
    reaper that is slow (or a container's PID 1 that never reaps) leaves it a zombie, which runs nothing."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


@provider("slownote::Note", name="note")
class NoteHandler(CRUDHandler):
    """Every run (a retry that finds nothing to change too) leaves a marker; the very first one is slow."""

    def read_resource(self, ctx: HandlerContext, resource: Note) -> None:
        name = os.path.basename(resource.path)
        # Another run of this resource that has not ended and whose process still lives: concurrent runs.
        overlap = []
        for other in os.listdir(MARKERS):
            if other.startswith(name + ".") and other.endswith(".json"):
                with open(os.path.join(MARKERS, other)) as f:
                    run = json.load(f)
                if "end" not in run and alive(run["pid"]):
                    overlap.append(run["pid"])
        self._run = {"pid": os.getpid(), "start": time.time(), "overlap": overlap}
        first = not [m for m in os.listdir(MARKERS) if m.endswith(".json")]
        self._marker = os.path.join(MARKERS, "%s.%s.json" % (name, uuid.uuid4().hex[:8]))
        self._save()
        # The very first run outlasts the old scheduler's stop grace and its executor's shutdown grace.
        deadline = self._run["start"] + (float(os.environ.get("SLOW_SECONDS", "8")) if first else 0.3)
        while time.time() < deadline:
            time.sleep(0.05)
            self._save()
        if not os.path.exists(resource.path):
            self._end()
            raise ResourcePurged()
        with open(resource.path) as f:
            resource.content = f.read()
        self._end()

    def _save(self):
        self._run["beat"] = time.time()
        with open(self._marker + ".tmp", "w") as f:
            json.dump(self._run, f)
        os.rename(self._marker + ".tmp", self._marker)

    def _end(self):
        self._run["end"] = time.time()
        self._save()

    def create_resource(self, ctx: HandlerContext, resource: Note) -> None:
        with open(resource.path, "w") as f:
            f.write(resource.content)
        ctx.set_created()

    def update_resource(self, ctx: HandlerContext, changes: dict, resource: Note) -> None:
        self.create_resource(ctx, resource)
        ctx.set_updated()

    def delete_resource(self, ctx: HandlerContext, resource: Note) -> None:
        os.unlink(resource.path)
        ctx.set_purged()
'''


def children(pid):
    try:
        with open(f"/proc/{pid}/task/{pid}/children") as f:
            return [int(x) for x in f.read().split()]
    except FileNotFoundError:
        return []


def kill_if_alive(pid):
    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


class RestartFailoverTest(unittest.TestCase):
    def test_kill_9_of_the_server_mid_deploy_retries_without_overlap(self):
        """The old scheduler (SIGTERM by the parent-death signal) records the interrupted action itself."""
        self.run_case(kill_scheduler=False)

    def test_kill_9_of_server_and_scheduler_mid_deploy_retries_without_overlap(self):
        """Server and scheduler killed at once (a crash): the new scheduler closes the open action."""
        self.run_case(kill_scheduler=True)

    def run_case(self, kill_scheduler):
        work = tempfile.mkdtemp(prefix="inm-restart-failover-")
        self.addCleanup(shutil.rmtree, work, True)
        markers = os.path.join(work, "markers")
        out = os.path.join(work, "out")
        os.makedirs(markers)
        os.makedirs(out)
        env = dict(os.environ, SLOW_MARKERS=markers, SLOW_SECONDS=str(SLEEP))
        extra = "[scheduler]\nstop_grace = 1\n"
        s = Server(schedulers=True, extra=extra, env=env)
        self.addCleanup(s.stop)
        _, e = s.project_env("restartfailover")
        for k in ("autostart_agent_deploy_interval", "autostart_agent_repair_interval"):
            s.ok("POST", f"/api/v2/environment_settings/{k}", {"value": "0"}, env=e)
        pyfixtures.write_module(os.path.join(work, "libs"), "slownote", pyfixtures.NOTE_MODEL % {"module": "slownote"},
                                PLUGINS)
        names = ["a", "b", "c"]
        main = "import slownote\n" + "".join(
            f'slownote::Note(path="{out}/{n}", content="{n}", agentname="slow")\n' for n in names)
        proj = pyfixtures.write_project(work, "restartfailover", main)
        pyfixtures.export_and_release(self, s, e, proj)

        def runs(name=None):
            """The handler runs, oldest first: [{pid, start, beat, end?, overlap}] (per resource when named)."""
            out_ = []
            for p in glob.glob(os.path.join(markers, "*.json")):
                try:
                    with open(p) as f:
                        r = json.load(f)
                except (OSError, ValueError):
                    continue
                r["name"] = os.path.basename(p).split(".")[0]
                out_.append(r)
            return sorted((r for r in out_ if name is None or r["name"] == name), key=lambda r: r["start"])

        # Kill the server (not its scheduler: that one gets the parent-death signal) while a run is at its start.
        running = harness.wait_for(lambda: next((r for r in runs() if "end" not in r and
                                                 time.time() - r["start"] < 1), None),
                                   timeout=90, what="a handler run to start")
        old = children(s.proc.pid)
        for pid in old:  # the old scheduler must never outlive the test
            self.addCleanup(kill_if_alive, pid)
        # The start of the action is recorded (the state a crash leaves behind).
        harness.wait_for(lambda: harness.psql(s.db, "SELECT count(*) FROM resourceaction WHERE environment = "
                                              f"'{e}' AND action = 'deploy' AND status = 'deploying'") == "1",
                         timeout=10, what="the running action's start to be written")
        if kill_scheduler:
            for pid in old:
                kill_if_alive(pid)
        s.proc.proc.kill()
        s.proc.proc.wait()
        killed = time.time()
        again = Server(db=s.db, port=s.port, schedulers=True, extra=extra, env=env)
        self.addCleanup(again.stop)

        def statuses():
            st, data = again.call("GET", "/api/v2/resource?limit=10", env=e)
            return sorted(r["status"] for r in data["data"]) if st == 200 else []
        harness.wait_for(lambda: statuses() == ["deployed"] * len(names), timeout=90,
                         what="every resource to be deployed under the restarted server")
        for n in names:
            with open(os.path.join(out, n)) as f:
                self.assertEqual(f.read(), n)

        # The interrupted run ended (its process was killed, or it finished within the executor's shutdown grace,
        # its result lost with the old scheduler) before its retry started.
        mine = runs(running["name"])
        self.assertGreaterEqual(len(mine), 2, f"the interrupted resource was not deployed again: {mine}")
        self.assertEqual(mine[0]["pid"], running["pid"])
        self.assertGreater(mine[1]["start"], killed)
        for n in names:
            rs = runs(n)
            for r in rs:
                self.assertEqual(r["overlap"], [], f"{n}: a run started while an earlier one was alive: {rs}")
            for r1, r2 in zip(rs, rs[1:]):
                self.assertLessEqual(r1.get("end", r1["beat"]), r2["start"], f"{n}: overlapping runs {rs}")
        sys_pids = {r["pid"] for r in runs()}
        self.assertGreaterEqual(len(sys_pids), 2, "the retry ran in the old executor")

        # The action log: nothing left `deploying`; the interrupted action is closed as unavailable.
        rows = harness.psql(s.db, "SELECT x.resource_id, a.status, a.finished IS NOT NULL, a.messages::text "
                            "FROM resourceaction a JOIN resourceaction_resource x ON x.resource_action_id = "
                            f"a.action_id WHERE a.environment = '{e}' AND a.action = 'deploy' ORDER BY a.started")
        acts = [line.split("|", 3) for line in rows.splitlines() if line]
        self.assertFalse([a for a in acts if a[1] == "deploying" or a[2] != "t"], acts)
        interrupted = [a for a in acts if a[0].endswith(f"/{running['name']}]") and a[1] != "deployed"]
        self.assertTrue(interrupted, acts)
        self.assertEqual(interrupted[0][1], "unavailable", acts)
        if kill_scheduler:
            self.assertIn("the scheduler that ran this deploy stopped before this deploy finished", interrupted[0][3])
        else:
            self.assertIn("was killed", interrupted[0][3])
            self.assertIn("while this resource was in flight", interrupted[0][3])


if __name__ == "__main__":
    unittest.main()
