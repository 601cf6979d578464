"""The action-log query, the handler helpers (events, did_dependency_change), the compliance report, the
scheduler's status and single facts against the real server (orchestrator.md §6.6, §13, §15). The scheduler's
part (deploy results, rps columns, the `scheduler` row) is simulated by writing the rows it owns straight into
the database, as the schema contract allows."""
import json
import time
import unittest
import uuid

import server_fixture as sf
from test_server_api import psql

NULL = "std::testing::NullResource"
FILE = "std::File"


q = sf.q


class ServerActionsTest(sf.ServerTestCase):

    def setUp(self):
        s = self.s
        self.pid, self.env = s.project_env("a" + uuid.uuid4().hex[:8])
        self.db = f"{NULL}[agent1,name=db]"
        self.app = f"{NULL}[agent1,name=app]"
        self.web = f"{NULL}[agent2,name=web]"
        self.f = f"{FILE}[agent2,path=/etc/motd]"
        self.u = f"{NULL}[agent2,name=u]"
        self.v, (status, body) = sf.put_version(s, self.env, [
            dict(rid=self.db, name="db"), dict(rid=self.app, name="app", requires=[self.db]),
            dict(rid=self.web, name="web", requires=[self.app, self.db]), dict(rid=self.f, path="/etc/motd"),
            dict(rid=self.u, name="<<undefined>>")], resource_state={self.u: "undefined"})
        assert status == 200, body

    def action(self, rid, started, change="nochange", status="deployed", levels=("INFO",), action="deploy", finished=True):
        """Inserts one action of `rid` (in version self.v) as the scheduler would; returns its id."""
        aid = str(uuid.uuid4())
        msgs = json.dumps([{"level": lv, "msg": f"{lv.lower()} line", "args": [], "kwargs": {}, "timestamp": started}
                           for lv in levels])
        fin = f"'{started}'::timestamptz + interval '1 second'" if finished else "NULL"
        psql(self.s.db,
             f"INSERT INTO resourceaction (action_id, environment, version, resource_version_ids, action, started, finished, "
             f"messages, status, change, changes) VALUES ('{aid}', '{self.env}', {self.v}, ARRAY['{rid},v={self.v}'], "
             f"'{action}', '{started}', {fin}, '{msgs}', '{status}', '{change}', '{{}}'); "
             f"INSERT INTO resourceaction_resource VALUES ('{self.env}', '{aid}', '{rid}', {self.v})")
        return aid

    def get(self, path):
        return self.s.ok("GET", path, env=self.env)

    def test_resource_actions_filters_and_paging(self):
        a1 = self.action(self.db, "2026-01-01T00:00:01+00:00", change="created")
        a2 = self.action(self.app, "2026-01-01T00:00:02+00:00", levels=("INFO", "ERROR"), status="failed")
        a3 = self.action(self.web, "2026-01-01T00:00:03+00:00", change="updated")
        a4 = self.action(self.f, "2026-01-01T00:00:04+00:00")
        a5 = self.action(self.db, "2026-01-01T00:00:05+00:00", action="dryrun")
        deploys = "/api/v2/resource_actions?resource_type=" + q(NULL)
        body = self.get(deploys)
        # The put's `store` action covers every resource: it is the newest.
        ids = [a["action_id"] for a in body["data"]]
        self.assertEqual(ids[1:], [a5, a3, a2, a1])
        self.assertEqual(body["data"][0]["action"], "store")
        self.assertEqual(body["data"][1]["resource_version_ids"], [f"{self.db},v={self.v}"])
        self.assertEqual([a["action_id"] for a in self.get(f"/api/v2/resource_actions?resource_type={q(FILE)}")["data"][1:]], [a4])
        self.assertEqual([a["action_id"] for a in self.get("/api/v2/resource_actions?agent=agent1")["data"][1:]], [a5, a2, a1])
        self.assertEqual([a["action_id"] for a in self.get("/api/v2/resource_actions?attribute=name&attribute_value=db")["data"][1:]], [a5, a1])
        self.assertEqual([a["action_id"] for a in self.get("/api/v2/resource_actions?log_severity=error")["data"]], [a2])
        # exclude_changes: repeated keys and comma lists; the store action has no change and stays.
        got = self.get("/api/v2/resource_actions?exclude_changes=nochange&exclude_changes=created")["data"]
        self.assertEqual([a["action_id"] for a in got][1:], [a3])
        got = self.get("/api/v2/resource_actions?exclude_changes=nochange,updated")["data"]
        self.assertEqual([a["action_id"] for a in got][1:], [a1])
        # Paging: limit 2, follow next to the end, then prev back.
        page = self.get("/api/v2/resource_actions?limit=2&agent=agent1")
        seen = [a["action_id"] for a in page["data"]]
        first = page
        while True:
            nxt = self.get(page["links"]["next"])
            if not nxt["data"]:
                break
            self.assertLessEqual(len(nxt["data"]), 2)
            seen += [a["action_id"] for a in nxt["data"]]
            page = nxt
        self.assertEqual(seen[1:], [a5, a2, a1])
        self.assertEqual(len(seen), 4)
        back = self.get(page["links"]["prev"])
        self.assertEqual([a["action_id"] for a in back["data"]], seen[-4:-2] if len(page["data"]) == 2 else seen[-3:-1])
        self.assertIn("agent=agent1", first["links"]["next"])
        # Bad input names the parameter.
        for bad, word in [("attribute=name", "attribute_value"), ("first_timestamp=2026-01-01&last_timestamp=2026-01-02", "only one"),
                          (f"action_id={a1}", "action_id"), ("limit=x", "limit"), ("limit=5000", "limit"),
                          ("log_severity=LOUD", "log_severity"), ("exclude_changes=bogus", "exclude_changes"),
                          ("last_timestamp=yesterday", "last_timestamp")]:
            status, body = self.s.call("GET", "/api/v2/resource_actions?" + bad, env=self.env)
            self.assertEqual(status, 400, bad)
            self.assertIn(word, body["message"], bad)
        self.assertEqual(self.s.call("GET", "/api/v2/resource_actions", env=str(uuid.uuid4()))[0], 404)

    def test_events_and_did_dependency_change(self):
        rvid = q(f"{self.web},v={self.v}")
        psql(self.s.db, f"UPDATE resource_persistent_state SET last_success = '2026-01-01T00:00:10+00:00' "
                        f"WHERE environment = '{self.env}' AND resource_id = '{self.web}'")
        self.action(self.db, "2026-01-01T00:00:05+00:00", change="updated")   # before web's last success
        b1 = self.action(self.db, "2026-01-01T00:00:11+00:00", change="nochange")
        self.action(self.app, "2026-01-01T00:00:12+00:00", change="updated", finished=False)  # still running
        self.action(self.app, "2026-01-01T00:00:13+00:00", action="dryrun", change="updated")
        events = self.get(f"/api/v2/resource/{rvid}/events")["data"]
        self.assertEqual(sorted(events), sorted([self.app, self.db]))
        self.assertEqual([a["action_id"] for a in events[self.db]], [b1])
        self.assertEqual(events[self.app], [])
        self.assertIs(self.get(f"/api/v2/resource/{rvid}/did_dependency_change")["data"], False)
        b2 = self.action(self.app, "2026-01-01T00:00:14+00:00", change="updated")
        self.assertEqual([a["action_id"] for a in self.get(f"/api/v2/resource/{rvid}/events")["data"][self.app]], [b2])
        self.assertIs(self.get(f"/api/v2/resource/{rvid}/did_dependency_change")["data"], True)
        # Never succeeded: every finished deploy of a dependency counts.
        psql(self.s.db, f"UPDATE resource_persistent_state SET last_success = NULL WHERE environment = '{self.env}'")
        self.assertEqual(len(self.get(f"/api/v2/resource/{rvid}/events")["data"][self.db]), 2)
        # A resource without requires has no events.
        self.assertEqual(self.get(f"/api/v2/resource/{q(self.db + f',v={self.v}')}/events")["data"], {})
        status, body = self.s.call("GET", f"/api/v2/resource/{q(self.web)}/events", env=self.env)
        self.assertEqual(status, 400)
        self.assertIn("version", body["message"])
        status, body = self.s.call("GET", f"/api/v2/resource/{q(self.web + ',v=99')}/did_dependency_change", env=self.env)
        self.assertEqual(status, 404)
        self.assertIn("v=99", body["message"])

    def test_compliance_report(self):
        e = self.env
        psql(self.s.db,
             f"UPDATE resource_persistent_state SET last_deployed_attribute_hash = current_intent_attribute_hash, "
             f"last_handler_run = 'SUCCESSFUL', last_handler_run_compliant = true, last_non_deploying_status = 'deployed', "
             f"last_handler_run_at = now(), last_deployed_version = {self.v} WHERE environment = '{e}' AND resource_id = '{self.db}'; "
             f"UPDATE resource_persistent_state SET last_deployed_attribute_hash = current_intent_attribute_hash, "
             f"last_handler_run = 'FAILED', last_non_deploying_status = 'failed' WHERE environment = '{e}' AND resource_id = '{self.web}'; "
             f"UPDATE resource_persistent_state SET last_deployed_attribute_hash = 'old', last_handler_run = 'SUCCESSFUL', "
             f"last_non_deploying_status = 'deployed' WHERE environment = '{e}' AND resource_id = '{self.f}'; "
             f"UPDATE resource_persistent_state SET last_deployed_attribute_hash = current_intent_attribute_hash, "
             f"last_handler_run = 'SUCCESSFUL', last_handler_run_compliant = false, last_non_deploying_status = 'non_compliant', "
             f"non_compliant_diff = '{{\"value\": {{\"current\": 1, \"desired\": 2}}}}' WHERE environment = '{e}' AND resource_id = '{self.app}'")
        report = self.get("/api/v2/compliance_report")["data"]
        self.assertEqual({k: v["compliance"] for k, v in report.items()},
                         {self.db: "compliant", self.web: "non_compliant", self.f: "has_update", self.app: "non_compliant",
                          self.u: "undefined"})
        self.assertEqual(report[self.app]["diff"], {"value": {"current": 1, "desired": 2}})
        self.assertEqual(report[self.db]["last_deployed_version"], self.v)
        self.assertEqual(report[self.db]["status"], "deployed")
        sub = self.s.ok("POST", "/api/v2/compliance_report", {"resource_ids": [self.db, f"{self.web},v={self.v}"]}, env=e)["data"]
        self.assertEqual(sorted(sub), sorted([self.db, self.web]))
        status, body = self.s.call("POST", "/api/v2/compliance_report", {"resource_ids": [f"{NULL}[agent1,name=nope]"]}, env=e)
        self.assertEqual(status, 404)
        self.assertIn("name=nope", body["message"])
        self.assertEqual(self.s.call("POST", "/api/v2/compliance_report", {"resource_ids": ["not an id"]}, env=e)[0], 400)
        self.assertEqual(self.s.call("POST", "/api/v2/compliance_report", {"resource_ids": "x"}, env=e)[0], 400)

    def test_scheduler_status(self):
        st = self.get("/api/v2/scheduler_status")["data"]
        self.assertFalse(st["scheduler_running"])  # start_schedulers = false in these tests
        self.assertEqual(st["latest_released_version"], self.v)
        self.assertIsNone(st["last_processed_model_version"])
        self.assertGreaterEqual(st["pending_requests"], 1)
        self.assertGreaterEqual(st["pending_by_kind"]["read_version"], 1)
        self.assertEqual(sum(st["resource_counts"].values()), 5)
        self.assertEqual(st["resource_counts"]["undefined"], 1)
        kinds = {d["kind"] for d in st["discrepancies"]}
        self.assertEqual(kinds, {"version_not_processed", "requests_waiting", "scheduler_down"})
        # The scheduler caught up and took its requests.
        psql(self.s.db, f"INSERT INTO scheduler VALUES ('{self.env}', {self.v}); DELETE FROM scheduler_request WHERE environment = '{self.env}'")
        st = self.get("/api/v2/scheduler_status")["data"]
        self.assertEqual(st["last_processed_model_version"], self.v)
        self.assertEqual(st["pending_requests"], 0)
        self.assertEqual({d["kind"] for d in st["discrepancies"]}, {"scheduler_down"})
        self.s.ok("POST", "/api/v2/actions/environment/halt", env=self.env)
        st = self.get("/api/v2/scheduler_status")["data"]
        self.assertTrue(st["halted"])
        self.assertEqual(st["paused_agents"], 2)
        self.assertEqual([d["kind"] for d in st["discrepancies"]], ["requests_waiting"])  # halt asked the scheduler

    def test_single_facts(self):
        s, e = self.s, self.env
        fact = s.ok("PUT", "/api/v1/parameter/length", {"value": "42", "source": "fact", "resource_id": self.db}, env=e)["parameter"]
        s.ok("PUT", "/api/v1/parameter/length", {"value": "7", "source": "user"}, env=e)
        self.assertEqual(self.get("/api/v2/facts/length")["data"]["value"], "42")
        self.assertEqual(self.get(f"/api/v2/facts/{fact['id']}")["data"]["resource_id"], self.db)
        self.assertEqual(self.get(f"/api/v2/resource/{q(self.db)}/facts/{fact['id']}")["data"]["value"], "42")
        self.assertEqual(self.get(f"/api/v2/resource/{q(self.db)}/facts/length")["data"]["name"], "length")
        status, body = s.call("GET", f"/api/v2/resource/{q(self.app)}/facts/length", env=e)
        self.assertEqual(status, 404)
        self.assertIn("length", body["message"])
        self.assertEqual(s.call("GET", "/api/v2/facts/nothing", env=e)[0], 404)


class ServerActionRowsDeletedTest(sf.ServerTestCase):
    """Migration 005 dropped the foreign keys (and their ON DELETE CASCADE) of resourceaction and
    resourceaction_resource: deleting a version keeps its actions, deleting or clearing an environment and deleting
    a project delete both tables' rows themselves and leave no link row without its action."""
    setUp = ServerActionsTest.setUp
    action = ServerActionsTest.action

    def counts(self, env):
        return psql(self.s.db, f"SELECT (SELECT count(*) FROM resourceaction WHERE environment = '{env}') || ' ' || "
                               f"(SELECT count(*) FROM resourceaction_resource WHERE environment = '{env}')")

    def orphans(self):
        return psql(self.s.db, "SELECT count(*) FROM resourceaction_resource rar WHERE NOT EXISTS "
                               "(SELECT 1 FROM resourceaction ra WHERE ra.action_id = rar.resource_action_id)")

    def fill(self):
        """Three deploy actions besides the put's `store` action (which has no link rows since migration 004)."""
        for i, rid in enumerate((self.db, self.app, self.web)):
            self.action(rid, f"2026-01-01T00:00:0{i + 1}+00:00")

    def test_version_purge_keeps_actions(self):
        s = self.s
        self.fill()
        v2, (status, body) = sf.put_version(s, self.env, [dict(rid=self.db, name="db")])
        assert status == 200, body
        self.assertEqual(self.counts(self.env), "5 3")
        self.assertEqual(s.call("DELETE", f"/api/v1/version/{self.v}", env=self.env)[0], 200)
        self.assertEqual(self.counts(self.env), "5 3")
        self.assertEqual(self.orphans(), "0")

    def test_clear_delete_environment_and_project(self):
        s = self.s
        self.fill()
        pid2, env2 = s.project_env("b" + uuid.uuid4().hex[:8])
        _, (status, body) = sf.put_version(s, env2, [dict(rid=self.db, name="db")])
        assert status == 200, body
        env3 = s.ok("PUT", "/api/v2/environment", {"project_id": pid2, "name": "third"})["data"]["id"]
        for env in (env2, env3):
            aid = str(uuid.uuid4())
            psql(s.db, f"INSERT INTO resourceaction (action_id, environment, version, resource_version_ids, action, "
                       f"started, messages) VALUES ('{aid}', '{env}', 1, ARRAY['{self.db},v=1'], 'deploy', now(), '[]'); "
                       f"INSERT INTO resourceaction_resource VALUES ('{env}', '{aid}', '{self.db}', 1)")
        self.assertEqual(self.counts(self.env), "4 3")
        self.assertEqual(self.counts(env2), "2 1")
        self.assertEqual(self.counts(env3), "1 1")
        s.ok("DELETE", f"/api/v2/decommission/{self.env}")  # clear
        self.assertEqual(self.counts(self.env), "0 0")
        self.assertEqual(s.call("DELETE", f"/api/v2/environment/{env3}")[0], 200)
        self.assertEqual(self.counts(env3), "0 0")
        self.assertEqual(self.counts(env2), "2 1")
        self.assertEqual(s.call("DELETE", f"/api/v2/project/{pid2}")[0], 200)
        self.assertEqual(self.counts(env2), "0 0")
        self.assertEqual(s.call("DELETE", f"/api/v2/environment/{self.env}")[0], 200)
        self.assertEqual(psql(s.db, "SELECT count(*) FROM resourceaction"), "0")
        self.assertEqual(self.orphans(), "0")


class ServerRetentionAfterReleaseTest(sf.ServerTestCase):
    def test_release_purges_beyond_keep(self):
        s = self.s
        _, env = s.project_env("rel" + uuid.uuid4().hex[:6])
        s.ok("POST", "/api/v2/environment_settings/auto_deploy", {"value": False}, env=env)
        versions = [sf.put_version(s, env, [dict(rid=f"{NULL}[a,name=x]", name=f"x{i}")])[0] for i in range(4)]
        s.ok("POST", "/api/v2/environment_settings/available_versions_to_keep", {"value": 1}, env=env)
        self.assertEqual(len(s.ok("GET", "/api/v1/version", env=env)["versions"]), 4)  # a setting purges nothing
        s.ok("POST", f"/api/v2/desiredstate/{versions[2]}/promote", env=env)

        def left():
            return sorted(v["version"] for v in s.ok("GET", "/api/v1/version", env=env)["versions"])
        sf.harness.wait_for(lambda: left() == [versions[2], versions[3]], 10, what="retention after the release")


class ServerRetentionTimerTest(unittest.TestCase):
    """server.purge-versions-interval: the timer purges beyond available_versions_to_keep, keeping the latest
    released version and the version the scheduler works on; halted environments are left alone."""

    def test_timer_purges(self):
        s = sf.Server(server_extra="purge-versions-interval = 1\n")
        try:
            envs = []
            for name in ("keep", "halted"):
                _, env = s.project_env(name + uuid.uuid4().hex[:6])
                s.ok("POST", "/api/v2/environment_settings/auto_deploy", {"value": False}, env=env)
                versions = [sf.put_version(s, env, [dict(rid=f"{NULL}[a,name=x]", name=f"x{i}")])[0] for i in range(6)]
                s.ok("POST", f"/api/v1/version/{versions[2]}", env=env)
                psql(s.db, f"INSERT INTO scheduler VALUES ('{env}', {versions[1]})")
                envs.append((env, versions))
            s.ok("POST", "/api/v2/actions/environment/halt", env=envs[1][0])
            time.sleep(2)  # the timer has run with the default keep (100): nothing goes
            for env, versions in envs:
                self.assertEqual(len(s.ok("GET", "/api/v1/version", env=env)["versions"]), 6)
                s.ok("POST", "/api/v2/environment_settings/available_versions_to_keep", {"value": 2}, env=env)
            env, versions = envs[0]

            def purged():
                return sorted(v["version"] for v in s.ok("GET", "/api/v1/version", env=env)["versions"]) == \
                    sorted([versions[1], versions[2], versions[4], versions[5]])
            sf.harness.wait_for(purged, 10, what="the retention timer")
            self.assertEqual(len(s.ok("GET", "/api/v1/version", env=envs[1][0])["versions"]), 6)
            self.assertIn("versions_purged", s.proc.output())
        finally:
            s.stop()


if __name__ == "__main__":
    unittest.main()
