"""End to end with the real `inmanta server`: it supervises the environment's `inmanta scheduler`, which runs real
`inmanta executor` processes. Versions go in through the REST API (auto_deploy releases them); deploy, repair,
dry-run go through the server's API (which hands them over as scheduler_request rows); outcomes are read from the database the scheduler writes."""
import time
import unittest

import harness
import server_fixture as sf

NULL = "std::testing::NullResource"


def rid(name, agent="internal"):
    return f"{NULL}[{agent},name={name}]"


class DeployThroughServerTest(unittest.TestCase):
    def setUp(self):
        self.srv = sf.Server(schedulers=True)
        self.addCleanup(self.srv.stop)
        _, self.env = self.srv.project_env("deploy")
        for k in ("autostart_agent_deploy_interval", "autostart_agent_repair_interval"):
            self.srv.ok("POST", f"/api/v2/environment_settings/{k}", {"value": "0"}, env=self.env)

    def sql(self, text):
        return harness.psql(self.srv.db, text)

    def request(self, kind, payload):
        self.sql(f"INSERT INTO scheduler_request (environment, kind, payload) VALUES ('{self.env}', '{kind}', "
                 f"'{payload}'); NOTIFY inmanta_scheduler, '{self.env}'")

    def status(self, r):
        return self.sql("SELECT CASE WHEN is_deploying THEN 'deploying' ELSE last_non_deploying_status END "
                        f"FROM resource_persistent_state WHERE resource_id = '{r}'")

    def deploys(self, r):
        return int(self.sql("SELECT count(*) FROM resourceaction a JOIN resourceaction_resource x ON "
                            f"x.resource_action_id = a.action_id WHERE x.resource_id = '{r}' AND a.action = 'deploy'"))

    def test_release_deploys_repair_and_dryrun(self):
        v, (code, body) = sf.put_version(self.srv, self.env, [
            dict(rid=rid("db"), name="db", agentname="internal", value="", fail=False, send_event=True),
            dict(rid=rid("app"), requires=[rid("db")], name="app", agentname="internal", value="", fail=False),
            dict(rid=rid("bad"), name="bad", agentname="internal", value="", fail=True)])
        self.assertEqual(code, 200, body)
        harness.wait_for(lambda: self.status(rid("app")) == "deployed" and self.status(rid("bad")) == "failed",
                         timeout=40, what="the scheduler child to deploy the version")
        self.assertEqual(self.sql("SELECT last_processed_model_version FROM scheduler"), str(v))
        # POST /api/v1/deploy without arguments is a repair (§17.10).
        self.srv.ok("POST", "/api/v1/deploy", {}, env=self.env)
        harness.wait_for(lambda: self.deploys(rid("app")) >= 2 and self.deploys(rid("db")) == 2, timeout=30)
        # Dry-run of the version.
        dr = self.srv.ok("POST", f"/api/v2/dryrun/{v}", env=self.env)["data"]["id"]
        harness.wait_for(lambda: self.sql(f"SELECT todo FROM dryrun WHERE id = '{dr}'") == "0", timeout=30,
                         what="the dry-run to finish")
        report = self.srv.ok("GET", f"/api/v2/dryrun/{v}/{dr}", env=self.env)["data"]
        entry = report["resources"][rid("db") + f",v={v}"]
        self.assertEqual(entry["diff_status"], "unmodified", report)
        self.assertTrue(entry["done"], report)
        self.assertEqual(report["todo"], 0)


if __name__ == "__main__":
    unittest.main()
