"""orchestrator.md §17 against real PostgreSQL and a real `inmanta scheduler` process: skip on failure and
recovery, undefined blocking, a new version during a deploy and during a long repair, two releases back to back,
executor and scheduler killed mid-deploy, orphaning vs purging, a requires-only change, events, a paused agent,
dry-run and facts."""
import os
import signal
import time
import unittest
import uuid

import harness
from deploy_support import DeployEnv, null_resource as nr, rid, std_file


def wait(pred, timeout=20, what="condition"):
    return harness.wait_for(pred, timeout=timeout, what=what)


class HardPartsTest(unittest.TestCase):
    def test_17_1_dependency_fails_then_recovers(self):
        d = DeployEnv(self)
        d.put_version(1, [nr("db", fail=True), nr("app", requires=[rid("db")]), nr("web", requires=[rid("app")])])
        d.start()
        d.wait_status(rid("db"), "failed")
        d.wait_status(rid("app"), "skipped")
        d.wait_status(rid("web"), "skipped")
        self.assertEqual(d.rps(rid("app"), "blocked"), "TEMPORARILY_BLOCKED")
        self.assertEqual(d.rps(rid("app"), "last_handler_run"), "SKIPPED")
        # A user deploy leaves app alone.
        d.request("deploy", {"repair": False})
        wait(lambda: len(d.actions(rid("db"))) == 2)
        time.sleep(0.5)
        self.assertEqual(len(d.actions(rid("app"))), 1)
        # db fixed: app and web deploy at once.
        d.put_version(2, [nr("db"), nr("app", requires=[rid("db")]), nr("web", requires=[rid("app")])])
        d.wait_status(rid("web"), "deployed")
        self.assertEqual(d.rps(rid("app"), "blocked"), "NOT_BLOCKED")

    def test_17_2_undefined_blocks(self):
        d = DeployEnv(self)
        d.put_version(1, [nr("vm", undefined=True), nr("dns", requires=[rid("vm")]), nr("free")])
        d.start()
        d.wait_status(rid("free"), "deployed")
        self.assertEqual(d.status(rid("vm")), "undefined")
        self.assertEqual(d.status(rid("dns")), "skipped_for_undefined")
        d.request("deploy", {"repair": True})
        wait(lambda: len(d.actions(rid("free"))) == 2)
        self.assertEqual(d.actions(rid("vm")), [])
        self.assertEqual(d.actions(rid("dns")), [])
        d.put_version(2, [nr("vm"), nr("dns", requires=[rid("vm")]), nr("free")])
        d.wait_status(rid("dns"), "deployed")

    def test_17_3_new_version_during_a_deploy(self):
        d = DeployEnv(self)
        d.put_version(1, [nr("f", value="h1"), nr("g", requires=[rid("f")])])
        d.start(delay_ms=4000)  # long enough that v2 is processed while h1 runs, also on a loaded 2-core CI
        wait(lambda: d.status(rid("f")) == "deploying")
        d.put_version(2, [nr("f", value="h2"), nr("g", requires=[rid("f")])])
        d.wait_processed(2)
        # h1 finishes (no cancellation), is logged, and leaves f `available`.
        wait(lambda: len(d.actions(rid("f"))) >= 1 and d.actions(rid("f"))[0][3] is not None)
        first = d.actions(rid("f"))[0]
        self.assertEqual(first[0], 1)
        self.assertIn("stale", first[4][-1]["msg"])
        d.wait_status(rid("g"), "deployed", timeout=30)
        acts = d.actions(rid("f"))
        self.assertEqual([a[0] for a in acts], [1, 2])
        self.assertGreaterEqual(d.actions(rid("g"))[0][2], acts[1][3], "g waited for h2")
        self.assertEqual(d.rps(rid("f"), "last_deployed_version"), "2")

    def test_17_4_version_during_long_repair(self):
        d = DeployEnv(self)
        n = 60
        d.put_version(1, [nr(f"r{i}") for i in range(n)])
        d.start(delay_ms=100)  # a 6 s repair: v2 lands in its middle, also on a loaded 2-core CI
        wait(lambda: d.sql("SELECT count(*) FROM resource_persistent_state WHERE last_non_deploying_status = 'deployed'")
             == str(n), timeout=30)
        d.request("deploy", {"repair": True})
        wait(lambda: len(d.actions(rid("r0"))) == 2)
        v2 = [nr(f"r{i}", value="x" if i in (40, 50, 59) else "") for i in range(n)] + [nr("n1"), nr("n2")]
        d.put_version(2, v2)
        # At least every action (slow under load: up to 120 s), then exactly: an extra deploy fails here, not as a time-out.
        finished = "SELECT count(*) FROM resourceaction WHERE action = 'deploy' AND finished IS NOT NULL"
        wait(lambda: int(d.sql(finished)) >= 2 * n + 2, timeout=120, what=f"{2 * n + 2} finished deploy actions")
        self.assertEqual(int(d.sql(finished)), 2 * n + 2)
        # Actions started after v2 was processed carry version 2: the changed and new ones ran first, at
        # NEW_VERSION_DEPLOY, and the rest of the repair still ran after them.
        rows = d.rows("SELECT r.resource_id, a.messages->0->>'msg' FROM resourceaction a JOIN resourceaction_resource r "
                      "ON r.resource_action_id = a.action_id WHERE a.version = 2 ORDER BY a.started")
        five = {rid("r40"), rid("r50"), rid("r59"), rid("n1"), rid("n2")}
        self.assertEqual({r[0] for r in rows[:5]}, five, rows[:8])
        self.assertTrue(all("new version" in r[1] for r in rows[:5]), rows[:5])
        self.assertTrue(all("repair" in r[1] for r in rows[5:]), rows[5:8])
        self.assertGreater(len(rows), 5)

    def test_17_5_two_releases_back_to_back(self):
        d = DeployEnv(self)
        d.put_version(1, [nr("x"), nr("y")])
        d.start()
        d.wait_status(rid("x"), "deployed")
        d.stop()
        d.put_version(2, [nr("y")])
        d.put_version(3, [nr("x"), nr("y")])
        d.start()
        d.wait_processed(3)
        wait(lambda: len(d.actions(rid("x"))) == 2 and d.status(rid("x")) == "deployed")
        self.assertEqual(len(d.actions(rid("y"))), 1)
        self.assertEqual(d.rps(rid("x"), "orphaned_after"), "")

    def test_17_6_scheduler_killed_mid_deploy(self):
        d = DeployEnv(self)
        d.put_version(1, [nr("a"), nr("b", requires=[rid("a")])])
        d.start(delay_ms=3000)
        wait(lambda: d.status(rid("a")) == "deploying")
        d.kill()
        self.assertEqual(d.status(rid("a")), "deploying")   # rows stay deploying until restart
        d.start()
        d.wait_status(rid("b"), "deployed")
        acts = d.actions(rid("a"))
        self.assertEqual(len(acts), 2)
        # The restarted scheduler closes the interrupted action (docs/deploy.md, the restart rule): nothing is left
        # `deploying`, and the message names the cause.
        self.assertEqual(acts[0][1], "unavailable", acts[0])
        self.assertIsNotNone(acts[0][3], "the interrupted action is closed by the restarted scheduler")
        self.assertTrue(any("stopped before this deploy finished" in m["msg"] for m in acts[0][4]), acts[0][4])
        self.assertEqual(d.rps(rid("a"), "is_deploying"), "f")

    def test_17_6_executor_killed_mid_deploy(self):
        d = DeployEnv(self, {"autostart_agent_deploy_interval": "2"})
        out = os.path.join(self.tmp(), "f.txt")
        h = d.put_file(b"hello\n")
        # Hold the file table locked: the executor's get_file for the File's content waits, so the deploy is
        # in flight when we kill the executor.
        release = d.hold_lock("LOCK TABLE file IN ACCESS EXCLUSIVE MODE")
        d.put_version(1, [std_file(out, h), nr("n")])
        d.start()
        fid = f"std::File[internal,path={out}]"
        wait(lambda: d.status(fid) == "deploying", what="the File deploy to be in flight")
        time.sleep(0.3)
        pids = children(d.sched.pid)
        self.assertTrue(pids, "an executor child process is running")
        for p in pids:
            os.kill(p, signal.SIGKILL)
        d.wait_status(fid, "unavailable")
        first = d.actions(fid)[0]
        self.assertEqual(first[1], "unavailable")
        self.assertTrue(any("executor" in m["msg"] for m in first[4]), first[4])
        release()
        # Retried on the deploy interval by a new executor process.
        d.wait_status(fid, "deployed", timeout=30)
        with open(out) as f:
            self.assertEqual(f.read(), "hello\n")
        new = children(d.sched.pid)
        self.assertTrue(new and not set(new) & set(pids), (pids, new))

    def tmp(self):
        import shutil
        import tempfile
        t = tempfile.mkdtemp(prefix="inm-deploy-")
        self.addCleanup(shutil.rmtree, t, True)
        return t

    def test_17_7_orphan_not_deleted(self):
        d = DeployEnv(self)
        d.put_version(1, [nr("r"), nr("keep")])
        d.start()
        d.wait_status(rid("r"), "deployed")
        d.sql(f"INSERT INTO parameter (id, environment, name, value, source, resource_id) VALUES "
              f"('{uuid.uuid4()}', '{d.env}', 'ip', '1.2.3.4', 'fact', '{rid('r')}')")
        d.put_version(2, [nr("keep")])
        d.wait_processed(2)
        wait(lambda: d.status(rid("r")) == "orphaned")
        self.assertEqual(d.rps(rid("r"), "orphaned_after"), "1")
        self.assertEqual(len(d.actions(rid("r"))), 1)
        self.assertEqual(d.sql("SELECT count(*) FROM parameter"), "1", "facts kept")
        # Purging deletes the facts.
        purged = nr("r")
        purged["attributes"]["purged"] = True
        d.put_version(3, [nr("keep"), purged])
        wait(lambda: len(d.actions(rid("r"))) == 2 and d.status(rid("r")) == "deployed")
        self.assertEqual(d.rps(rid("r"), "orphaned_after"), "")

    def test_17_8_requires_only_change(self):
        d = DeployEnv(self)
        d.put_version(1, [nr("a"), nr("b")])
        d.start()
        d.wait_status(rid("b"), "deployed")
        d.put_version(2, [nr("a"), nr("b", requires=[rid("a")])])
        d.wait_processed(2)
        time.sleep(0.7)
        self.assertEqual(d.sql("SELECT count(*) FROM resourceaction WHERE action = 'deploy'"), "2")

    def test_17_9_events_force_dependents(self):
        d = DeployEnv(self)
        d.put_version(1, [nr("file", "fa"), nr("service", "sa", requires=[rid("file", "fa")]),
                          nr("deaf", "sa", requires=[rid("file", "fa")], receive_events=False)])
        d.start()
        d.wait_status(rid("service", "sa"), "deployed")
        d.wait_status(rid("deaf", "sa"), "deployed")
        # Repair only agent fa: file redeploys without a change, yet service (compliant) is forced.
        d.request("deploy", {"agents": ["fa"], "repair": True})
        wait(lambda: len(d.actions(rid("service", "sa"))) == 2)
        time.sleep(0.5)
        self.assertEqual(len(d.actions(rid("deaf", "sa"))), 1)
        self.assertIn("event", d.actions(rid("service", "sa"))[1][4][0]["msg"])

    def test_17_10_paused_agent_holds_dependents(self):
        d = DeployEnv(self)
        d.sql(f"INSERT INTO agent (environment, name, paused) VALUES ('{d.env}', 'sw1', true)")
        d.put_version(1, [nr("switch", "sw1"), nr("port", "sw2", requires=[rid("switch", "sw1")])])
        d.start()
        d.wait_processed(1)
        time.sleep(1.0)
        self.assertEqual(d.status(rid("port", "sw2")), "available")
        self.assertEqual(d.status(rid("switch", "sw1")), "available")
        d.sql(f"UPDATE agent SET paused = false WHERE environment = '{d.env}' AND name = 'sw1'")
        d.request("agents_changed")
        d.wait_status(rid("port", "sw2"), "deployed")
        self.assertGreaterEqual(d.actions(rid("port", "sw2"))[0][2], d.actions(rid("switch", "sw1"))[0][3])

    def test_halt_and_resume(self):
        d = DeployEnv(self)
        d.start()
        d.request("halt")
        time.sleep(0.5)
        d.put_version(1, [nr("a")])
        d.wait_processed(1)
        time.sleep(0.5)
        self.assertEqual(d.status(rid("a")), "available")
        d.request("resume")
        d.wait_status(rid("a"), "deployed")

    def test_dryrun_and_facts(self):
        d = DeployEnv(self)
        d.put_version(1, [nr("a"), nr("u", undefined=True)])
        d.start()
        d.wait_status(rid("a"), "deployed")
        dr = str(uuid.uuid4())
        d.request("dryrun", {"id": dr, "version": 1})
        wait(lambda: d.sql(f"SELECT todo FROM dryrun WHERE id = '{dr}'") == "0")
        import json
        res = json.loads(d.sql(f"SELECT resources FROM dryrun WHERE id = '{dr}'"))
        self.assertEqual(res[rid("a") + ",v=1"]["diff_status"], "unmodified")
        self.assertEqual(res[rid("u") + ",v=1"]["diff_status"], "undefined")
        self.assertEqual(d.sql(f"SELECT total FROM dryrun WHERE id = '{dr}'"), "2")
        self.assertEqual(len(d.actions(rid("a"), "dryrun")), 1)
        self.assertEqual(len(d.actions(rid("a"))), 1, "a dry-run deploys nothing")
        # A fact request runs the handler's facts() and records a getfact action.
        d.request("get_fact", {"resource_id": rid("a")})
        wait(lambda: len(d.actions(rid("a"), "getfact")) == 1)

    def test_restart_rebuilds_state(self):
        d = DeployEnv(self, {"autostart_agent_deploy_interval": "0"})
        d.put_version(1, [nr("ok"), nr("bad", fail=True), nr("dep", requires=[rid("bad")])])
        d.start()
        d.wait_status(rid("dep"), "skipped")
        d.stop()
        d.start()
        # Restart: `bad` is dirty and retried at start; `ok` is compliant and untouched; `dep` stays blocked.
        wait(lambda: len(d.actions(rid("bad"))) == 2)
        time.sleep(0.5)
        self.assertEqual(len(d.actions(rid("ok"))), 1)
        self.assertEqual(len(d.actions(rid("dep"))), 1)
        self.assertEqual(d.rps(rid("dep"), "blocked"), "TEMPORARILY_BLOCKED")


def children(pid):
    out = []
    for p in os.listdir("/proc"):
        if not p.isdigit():
            continue
        try:
            with open(f"/proc/{p}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            if int(fields[1]) == pid:
                out.append(int(p))
        except OSError:
            pass
    return out


if __name__ == "__main__":
    unittest.main()
