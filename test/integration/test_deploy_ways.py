"""The five ways to deploy of seed 001 against real PostgreSQL and a real `inmanta scheduler` process (with its
in-process NullResource executor): deploy of changes, self-healing on the repair interval, retry on the deploy
interval, user deploy, user repair; plus ordering across agents and the action log."""
import time
import unittest

from deploy_support import DeployEnv, null_resource as nr, rid


class DeployWaysTest(unittest.TestCase):
    def test_deploy_of_changes_in_order_and_only_what_changed(self):
        d = DeployEnv(self)
        d.put_version(1, [nr("db", "dbhost"), nr("web", "webhost", requires=[rid("db", "dbhost")]), nr("x")])
        d.start(delay_ms=200)
        for r in (rid("db", "dbhost"), rid("web", "webhost"), rid("x")):
            d.wait_status(r, "deployed")
        db, web = d.actions(rid("db", "dbhost")), d.actions(rid("web", "webhost"))
        self.assertEqual(len(db), 1)
        self.assertGreaterEqual(web[0][2], db[0][3], "web started before db finished (ordering across agents)")
        msgs = [m["msg"] for m in web[0][4]]
        self.assertEqual(msgs[0], "Start run because a new version was released")
        self.assertTrue(msgs[-1].startswith("End run"), msgs)
        self.assertEqual(d.sql("SELECT last_processed_model_version FROM scheduler"), "1")
        # v2 changes only x: exactly one new deploy.
        d.put_version(2, [nr("db", "dbhost"), nr("web", "webhost", requires=[rid("db", "dbhost")]), nr("x", value="2")])
        d.wait_processed(2)
        harness_wait(lambda: len(d.actions(rid("x"))) == 2 and d.status(rid("x")) == "deployed")
        d.settle(0.5)
        self.assertEqual(len(d.actions(rid("db", "dbhost"))), 1)
        self.assertEqual(len(d.actions(rid("web", "webhost"))), 1)
        self.assertEqual(d.rps(rid("x"), "last_deployed_version"), "2")

    def test_a_long_deploy_appends_its_finish_lines_to_the_started_row(self):
        # A deploy running past the scheduler's 300 ms hold-back is written as a started row first; its finish
        # then appends its lines to that row as json text (DeployWriter.cpp, migration 007).
        d = DeployEnv(self)
        d.put_version(1, [nr("slow")])
        d.start(delay_ms=1500)
        harness_wait(lambda: len(d.actions(rid("slow"))) == 1, timeout=10)
        started = d.actions(rid("slow"))[0]
        self.assertIsNone(started[3], "the action row was written only when the deploy finished")
        self.assertEqual([m["msg"] for m in started[4]], ["Start run because a new version was released"])
        d.wait_status(rid("slow"), "deployed")
        (row,) = d.actions(rid("slow"))
        msgs = [m["msg"] for m in row[4]]
        self.assertEqual(msgs[0], "Start run because a new version was released")
        self.assertEqual(msgs.count(msgs[0]), 1, msgs)
        self.assertTrue(msgs[-1].startswith("End run"), msgs)
        self.assertGreaterEqual(len(msgs), 2)
        self.assertTrue(all(set(m) >= {"level", "msg", "args", "kwargs", "timestamp"} for m in row[4]), row[4])
        self.assertEqual(d.sql(f"SELECT json_typeof(a.messages) FROM resourceaction a WHERE a.environment = "
                               f"'{d.env}' AND a.action = 'deploy'"), "array")

    def test_self_healing_on_the_repair_interval(self):
        d = DeployEnv(self, {"autostart_agent_repair_interval": "1"})
        d.put_version(1, [nr("a")])
        d.start()
        d.wait_status(rid("a"), "deployed")
        harness_wait(lambda: len(d.actions(rid("a"))) >= 3, timeout=10)
        reasons = [a[4][0]["msg"] for a in d.actions(rid("a"))]
        self.assertIn("Start run because the repair interval elapsed", reasons)

    def test_retry_on_the_deploy_interval(self):
        d = DeployEnv(self, {"autostart_agent_deploy_interval": "1"})
        d.put_version(1, [nr("bad", fail=True), nr("good")])
        d.start()
        d.wait_status(rid("bad"), "failed")
        harness_wait(lambda: len(d.actions(rid("bad"))) >= 3, timeout=10)
        self.assertEqual(len(d.actions(rid("good"))), 1, "a compliant resource is not retried")
        self.assertIn("deploy interval", d.actions(rid("bad"))[-1][4][0]["msg"])
        # Fixed in a new version: deployed, retries stop.
        d.put_version(2, [nr("bad"), nr("good")])
        d.wait_status(rid("bad"), "deployed")
        n = len(d.actions(rid("bad")))
        time.sleep(2.5)
        self.assertEqual(len(d.actions(rid("bad"))), n)

    def test_user_deploy_retries_only_non_compliant(self):
        d = DeployEnv(self)
        d.put_version(1, [nr("bad", fail=True), nr("good")])
        d.start()
        d.wait_status(rid("bad"), "failed")
        d.wait_status(rid("good"), "deployed")
        d.request("deploy", {"agents": None, "repair": False})
        harness_wait(lambda: len(d.actions(rid("bad"))) == 2)
        d.settle(0.5)
        self.assertEqual(len(d.actions(rid("good"))), 1)
        self.assertIn("a user requested a deploy", d.actions(rid("bad"))[-1][4][0]["msg"])
        # The handler's own lines, from the real executor process, are in the action log.
        msgs = [m["msg"] for m in d.actions(rid("bad"))[-1][4]]
        self.assertTrue(any(m.startswith("Executor process ") for m in msgs), msgs)
        self.assertEqual(sum(m.startswith("Start run") for m in msgs), 1, msgs)  # once per deploy (#29)

    def test_user_repair_reruns_everything(self):
        d = DeployEnv(self)
        d.put_version(1, [nr("bad", fail=True), nr("good"), nr("other", "agent2")])
        d.start()
        d.wait_status(rid("good"), "deployed")
        d.wait_status(rid("other", "agent2"), "deployed")
        d.request("deploy", {"agents": ["internal"], "repair": True})
        harness_wait(lambda: len(d.actions(rid("good"))) == 2 and len(d.actions(rid("bad"))) == 2)
        d.settle(0.5)
        self.assertEqual(len(d.actions(rid("other", "agent2"))), 1, "the repair was scoped to agent internal")


def harness_wait(pred, timeout=20):
    import harness
    harness.wait_for(pred, timeout=timeout)


if __name__ == "__main__":
    unittest.main()
