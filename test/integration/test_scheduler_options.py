"""Scheduler options and reports against real PostgreSQL and a real `inmanta scheduler` process with real
executor processes (orchestrator.md §6.10, §6.11, §15): `reset_deploy_progress_on_start` makes a restarted
scheduler redeploy everything (without it a compliant resource is left alone); a dry run of a failing handler
reports the pseudo attribute `handler` (current FAILED, desired = the error); the action log's lines carry the
upper-case level names."""
import json
import time
import unittest
import uuid

import harness
from deploy_support import DeployEnv, null_resource as nr, rid


class SchedulerOptionsTest(unittest.TestCase):
    def test_reset_deploy_progress_on_start(self):
        d = DeployEnv(self, {"autostart_agent_deploy_interval": "0", "autostart_agent_repair_interval": "0"})
        d.put_version(1, [nr("ok")])
        d.start()
        d.wait_status(rid("ok"), "deployed")
        d.stop()
        d.start()  # without the option: compliant, nothing to do
        d.wait_processed(1)
        time.sleep(1.0)
        self.assertEqual(len(d.actions(rid("ok"))), 1)
        d.stop()
        d.set_setting("reset_deploy_progress_on_start", True)
        sched = d.start()
        harness.wait_for(lambda: len(d.actions(rid("ok"))) == 2, timeout=30, what="a redeploy after the reset")
        d.wait_status(rid("ok"), "deployed")
        self.assertIn("reset_deploy_progress_on_start is set", sched.output())

    def test_dryrun_of_a_failing_handler_reports_the_handler_pseudo_attribute(self):
        d = DeployEnv(self, {"autostart_agent_deploy_interval": "0", "autostart_agent_repair_interval": "0"})
        d.put_version(1, [nr("bad", fail=True), nr("good")])
        d.start()
        d.wait_status(rid("bad"), "failed")
        d.wait_status(rid("good"), "deployed")
        levels = {m["level"] for a in d.actions(rid("bad")) + d.actions(rid("good")) for m in a[4]}
        self.assertTrue(levels and all(lv == lv.upper() for lv in levels), levels)
        self.assertIn("ERROR", levels)
        dr = str(uuid.uuid4())
        d.request("dryrun", {"id": dr, "version": 1})
        harness.wait_for(lambda: d.sql(f"SELECT todo FROM dryrun WHERE id = '{dr}'") == "0", timeout=30,
                         what="the dry run to finish")
        res = json.loads(d.sql(f"SELECT resources FROM dryrun WHERE id = '{dr}'"))
        bad = res[rid("bad") + ",v=1"]
        self.assertEqual(bad["diff_status"], "modified", bad)
        self.assertEqual(bad["changes"]["handler"]["current"], "FAILED", bad)
        self.assertIn("set to fail", bad["changes"]["handler"]["desired"], bad)
        self.assertEqual(res[rid("good") + ",v=1"]["diff_status"], "unmodified", res)


if __name__ == "__main__":
    unittest.main()
