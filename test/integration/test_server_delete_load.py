"""Deleting and clearing an environment under load (issue #25, migration 008): while threads upload versions
(put_version with handler code: file + codebatched), ask for deploys and repairs (the environment's scheduler writes
actions and resource states) and request compiles (the compile service writes compile/report rows and exports back
to the server), the environment is cleared and then deleted. Afterwards no row of any table with an `environment`
column names the deleted environment (the table list comes from information_schema, so a table added later is
covered), a clear leaves no row of a version that was cleared, and the server and its schedulers still work."""
import base64
import hashlib
import shutil
import tempfile
import threading
import time
import unittest

import harness
import server_fixture as sf
from autonomous_util import Repo, model

NULL = "std::testing::NullResource"


def rid(name):
    return f"{NULL}[a1,name={name}]"


class Load:
    """Writers into one environment on their own threads until stop(); counts the requests that succeeded."""

    def __init__(self, srv, env, tag):
        self.srv, self.env, self.tag = srv, env, tag
        self.done = threading.Event()
        self.ok = {"put": 0, "code": 0, "deploy": 0, "compile": 0}
        self.threads = [threading.Thread(target=t, daemon=True) for t in (self.put, self.deploy, self.compile)]
        for t in self.threads:
            t.start()

    def call(self, method, path, body=None, what=None):
        try:
            status, _ = self.srv.call(method, path, body, env=self.env, timeout=30)
        except OSError:
            return False
        if status == 200 and what:
            self.ok[what] += 1
        return status == 200

    def put(self):
        i = 0
        while not self.done.is_set():
            i += 1
            try:
                v = self.srv.ok("POST", "/api/v2/reserve_version", env=self.env)["data"]
            except (AssertionError, OSError):
                time.sleep(0.05)
                continue
            content = f"# {self.tag} {i}\n".encode()
            h = hashlib.sha1(content).hexdigest()
            self.call("PUT", f"/api/v1/file/{h}", {"id": h, "content": base64.b64encode(content).decode()})
            self.call("PUT", f"/api/v1/codebatched/{v}",
                      {"id": v, "resources": {NULL: {h: [f"plugins/m{i}.py", f"inmanta_plugins.m{self.tag}.x", []]}}},
                      "code")
            _, (status, _) = sf.put_version(self.srv, self.env, [
                dict(rid=rid(f"r{k}"), name=f"r{k}", agentname="a1", value=str(i), fail=False) for k in range(60)],
                version=v)
            if status == 200:
                self.ok["put"] += 1

    def deploy(self):
        while not self.done.is_set():
            self.call("POST", "/api/v1/deploy", {}, "deploy")  # a repair
            self.call("POST", "/api/v2/deploy", {"agent_trigger_method": "push_incremental_deploy"}, "deploy")
            time.sleep(0.05)

    def compile(self):
        while not self.done.is_set():
            self.call("POST", f"/api/v1/notify/{self.env}", None, "compile")
            time.sleep(0.3)

    def stop(self):
        self.done.set()
        for t in self.threads:
            t.join(60)


class DeleteUnderLoadTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="inm-delload-")
        self.addCleanup(shutil.rmtree, self.tmp, True)
        self.repo = Repo(self.tmp)
        self.repo.commit(model([("c1", "false"), ("c2", "false")]), "first")
        self.srv = sf.Server(schedulers=True, server_extra="compile-timeout = 60\n")
        self.addCleanup(self.srv.stop)
        self.pid = self.srv.ok("PUT", "/api/v2/project", {"name": "load"})["data"]["id"]

    def sql(self, text):
        return harness.psql(self.srv.db, text)

    def environment(self, name):
        env = self.srv.ok("PUT", "/api/v2/environment", {"project_id": self.pid, "name": name,
                                                         "repository": self.repo.path, "branch": "main"})["data"]["id"]
        for k, v in (("autostart_agent_deploy_interval", "0"), ("autostart_agent_repair_interval", "0"),
                     ("available_versions_to_keep", 100000)):
            self.srv.ok("POST", f"/api/v2/environment_settings/{k}", {"value": v}, env=env)
        return env

    def env_tables(self):
        rows = self.sql("SELECT table_name FROM information_schema.columns WHERE table_schema = 'public' AND "
                        "column_name = 'environment' AND table_name IN (SELECT table_name FROM "
                        "information_schema.tables WHERE table_type = 'BASE TABLE') ORDER BY 1")
        return rows.split()

    def left_of(self, env):
        """{table: rows} of every table with an environment column still naming `env`, plus report rows of its
        compiles (the report table is keyed by compile) and orphaned link/report rows."""
        tables = self.env_tables()
        self.assertIn("resource_persistent_state", tables)
        self.assertIn("resourceaction", tables)
        counts = " UNION ALL ".join(f"SELECT '{t}', count(*) FROM {t} WHERE environment::text = '{env}'"
                                    for t in tables)
        left = {}
        for line in self.sql(counts).splitlines():
            table, n = line.split("|")
            if int(n):
                left[table] = int(n)
        env_row = self.sql(f"SELECT count(*) FROM environment WHERE id = '{env}'")
        if env_row != "0":
            left["environment"] = int(env_row)
        orphans = self.sql("SELECT (SELECT count(*) FROM resourceaction_resource x WHERE NOT EXISTS (SELECT 1 FROM "
                           "resourceaction a WHERE a.action_id = x.resource_action_id)) || ' ' || (SELECT count(*) "
                           "FROM report r WHERE NOT EXISTS (SELECT 1 FROM compile c WHERE c.id = r.compile))")
        if orphans != "0 0":
            left["orphaned action links / reports"] = orphans
        return left

    def stale_after_clear(self, env):
        """Rows of `env` naming a version that does not exist (nothing purges versions here: only the clear
        removes them, so such a row was written for a version the clear deleted)."""
        cm = f"SELECT version FROM configurationmodel WHERE environment = '{env}'"
        checks = {
            "resource": f"SELECT count(*) FROM resource WHERE environment = '{env}' AND model NOT IN ({cm})",
            "resourceaction": f"SELECT count(*) FROM resourceaction WHERE environment = '{env}' AND version NOT IN ({cm})",
            "resourceaction_resource": f"SELECT count(*) FROM resourceaction_resource WHERE environment = '{env}' "
                                       f"AND resource_version NOT IN ({cm})",
            "resource_persistent_state": f"SELECT count(*) FROM resource_persistent_state WHERE environment = '{env}' "
                                         f"AND last_deployed_version IS NOT NULL AND last_deployed_version NOT IN ({cm})",
        }
        out = {}
        for name, q in checks.items():
            n = int(self.sql(q))
            if n:
                out[name] = n
        return out

    def quiet(self, load):
        load.stop()
        # Writers already in flight finish (the scheduler flushes; a compile's export is answered).
        time.sleep(3)

    def test_clear_and_delete_while_writing(self):
        srv = self.srv
        rounds = []
        for r in range(2):
            env = self.environment(f"load{r}")
            load = Load(srv, env, f"{r}a")
            time.sleep(4)
            srv.ok("DELETE", f"/api/v2/decommission/{env}")  # clear, under load
            time.sleep(2)
            self.quiet(load)
            self.assertGreater(load.ok["put"], 0, load.ok)
            self.assertGreater(load.ok["deploy"], 0, load.ok)
            # What the clear left behind belongs to versions stored after it.
            self.assertEqual(self.stale_after_clear(env), {}, f"round {r}")

            load = Load(srv, env, f"{r}b")
            time.sleep(4)
            self.assertGreater(int(self.sql(f"SELECT count(*) FROM resourceaction WHERE environment = '{env}' AND "
                                            "action = 'deploy'")), 0, "the scheduler deploys again after the clear")
            try:
                status = srv.call("DELETE", f"/api/v2/environment/{env}")[0]  # delete, under load
            except OSError as e:  # no answer at all: say whether the server lives, with its last lines
                raise AssertionError(f"DELETE environment got no answer ({e}); server alive: {srv.proc.alive()}\n"
                                     + srv.proc.output()[-4000:]) from e
            self.assertEqual(status, 200)
            time.sleep(1)
            self.quiet(load)
            rounds.append((env, load.ok))
            self.assertEqual(self.left_of(env), {}, f"round {r}: rows of the deleted environment remain ({load.ok})")
        # A compile still running for a deleted environment may take longer than quiet(): check again later.
        time.sleep(3)
        for env, _ in rounds:
            self.assertEqual(self.left_of(env), {})

        # Healthy: the server answers and a new environment's scheduler deploys a version.
        self.assertTrue(sf.healthy(srv.base))
        env = self.environment("after")
        _, (status, body) = sf.put_version(srv, env, [dict(rid=rid("z"), name="z", agentname="a1", value="",
                                                           fail=False)])
        self.assertEqual(status, 200, body)
        harness.wait_for(lambda: self.sql("SELECT last_non_deploying_status FROM resource_persistent_state WHERE "
                                          f"environment = '{env}'") == "deployed", timeout=40,
                         what="a deploy in a new environment")


if __name__ == "__main__":
    unittest.main()
