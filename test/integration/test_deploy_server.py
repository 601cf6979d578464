"""End to end with the real `inmanta server`: it supervises the environment's `inmanta scheduler`, which runs real
`inmanta executor` processes. Versions go in through the REST API (auto_deploy releases them); deploy, repair,
dry-run go through the scheduler_request contract (the server has no routes for them yet); outcomes are read from the database the scheduler writes."""
import os
import subprocess
import time
import unittest

import harness
import server_fixture as sf

NULL = "std::testing::NullResource"


def rid(name, agent="internal"):
    return f"{NULL}[{agent},name={name}]"


class DeployThroughServerTest(unittest.TestCase):
    def setUp(self):
        self.srv = sf.Server(server_extra="")
        self.addCleanup(self.srv.stop)
        # This test wants the scheduler children: turn them back on if the fixture disabled them.
        if "start_schedulers = false" in open(self.srv.config).read():
            self.srv.stop()
            with open(self.srv.config) as f:
                text = f.read().replace("start_schedulers = false", "start_schedulers = true")
            with open(self.srv.config, "w") as f:
                f.write(text)
            self.srv.proc = harness.Process([harness.INMANTA, "server", "-c", self.srv.config])
            self.srv.wait_healthy()
        _, self.env = self.srv.project_env("deploy")
        for k in ("autostart_agent_deploy_interval", "autostart_agent_repair_interval"):
            self.srv.ok("POST", f"/api/v2/environment_settings/{k}", {"value": "0"}, env=self.env)

    def sql(self, text):
        host, port = harness.shared_cluster()
        return subprocess.run([os.path.join(harness.pg_bindir(), "psql"), "-h", host, "-p", str(port), "-U",
                               "postgres", "-d", self.srv.db, "-Atqc", text], capture_output=True, text=True,
                              check=True).stdout.strip()

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
        # The server has no deploy/dry-run routes yet: ask its scheduler child through the documented contract
        # (a scheduler_request row + NOTIFY), as those routes will.
        self.request("deploy", '{"repair": true}')
        harness.wait_for(lambda: self.deploys(rid("app")) >= 2 and self.deploys(rid("db")) == 2, timeout=30)
        # Dry-run of the version.
        import uuid
        dr = str(uuid.uuid4())
        self.request("dryrun", '{"id": "%s", "version": %d}' % (dr, v))
        harness.wait_for(lambda: self.sql(f"SELECT todo FROM dryrun WHERE id = '{dr}'") == "0", timeout=30,
                         what="the dry-run to finish")


if __name__ == "__main__":
    unittest.main()
