"""Resource, parameter/fact, agent, deploy and dry-run endpoints against the real server. The scheduler's part
(deploy results, log lines) is simulated by writing the rows it owns (resource_persistent_state columns,
resourceaction) straight into the database, as the schema contract allows."""
import json
import unittest
import uuid

import server_fixture as sf
from test_server_api import psql

NULL = "std::testing::NullResource"


q = sf.q


class ServerResourcesTest(sf.ServerTestCase):

    def setUp(self):
        s = self.s
        self.pid, self.env = s.project_env("r" + uuid.uuid4().hex[:8])
        self.db = f"{NULL}[agent1,name=db]"
        self.app = f"{NULL}[agent1,name=app/x]"
        self.web = f"{NULL}[agent2,name=web]"
        self.u = f"{NULL}[agent2,name=u]"
        self.v, (status, _) = sf.put_version(s, self.env, [
            dict(rid=self.db, name="db"), dict(rid=self.app, name="app/x", requires=[self.db]),
            dict(rid=self.web, name="web", requires=[self.app]), dict(rid=self.u, name="<<undefined>>")],
            resource_state={self.u: "undefined"})
        assert status == 200
        # The scheduler deployed db and failed web.
        psql(s.db, f"UPDATE resource_persistent_state SET last_deployed_attribute_hash = current_intent_attribute_hash, "
                   f"last_non_deploying_status = CASE WHEN resource_id = '{self.db}' THEN 'deployed' ELSE 'failed' END, "
                   f"last_handler_run_at = now() WHERE environment = '{self.env}' AND resource_id IN ('{self.db}', '{self.web}')")
        aid = str(uuid.uuid4())
        msgs = json.dumps([{"level": "INFO", "msg": "Start run because new version", "args": [], "kwargs": {"reason": "new"},
                            "timestamp": "2026-01-01T00:00:01.000000+00:00"},
                           {"level": "ERROR", "msg": "handler failed", "args": [], "kwargs": {"traceback": "tb"},
                            "timestamp": "2026-01-01T00:00:02.000000+00:00"}])
        psql(s.db, f"INSERT INTO resourceaction (action_id, environment, version, resource_version_ids, action, started, finished, messages, status, change) "
                   f"VALUES ('{aid}', '{self.env}', {self.v}, ARRAY['{self.web},v={self.v}'], 'deploy', now(), now(), '{msgs}', 'failed', 'nochange'); "
                   f"INSERT INTO resourceaction_resource VALUES ('{self.env}', '{aid}', '{self.web}', {self.v})")

    def test_list_filter_sort_page_summary(self):
        s, env = self.s, self.env
        body = s.ok("GET", "/api/v2/resource?deploy_summary=True&limit=2&sort=resource_id_value.asc", env=env)
        self.assertEqual([r["id_details"]["resource_id_value"] for r in body["data"]], ["app/x", "db"])
        self.assertEqual(body["metadata"]["total"], 4)
        self.assertEqual((body["metadata"]["before"], body["metadata"]["after"]), (0, 2))
        summary = body["metadata"]["deploy_summary"]
        self.assertEqual(summary["total"], 4)
        self.assertEqual((summary["by_state"]["deployed"], summary["by_state"]["failed"], summary["by_state"]["available"],
                          summary["by_state"]["undefined"]), (1, 1, 1, 1))
        nxt = body["links"]["next"]
        page2 = s.ok("GET", nxt, env=env)
        self.assertEqual([r["id_details"]["resource_id_value"] for r in page2["data"]], ["u", "web"])
        self.assertNotIn("next", page2["links"])
        self.assertEqual(s.ok("GET", page2["links"]["prev"], env=env)["data"][0]["id_details"]["resource_id_value"], "app/x")
        statuses = {r["resource_id"]: r["status"] for r in s.ok("GET", "/api/v2/resource?limit=100", env=env)["data"]}
        self.assertEqual(statuses, {self.db: "deployed", self.app: "available", self.web: "failed", self.u: "undefined"})
        self.assertEqual([r["resource_id"] for r in s.ok("GET", "/api/v2/resource?filter.agent=agent2&sort=resource_id_value.desc", env=env)["data"]],
                         [self.web, self.u])
        self.assertEqual(len(s.ok("GET", "/api/v2/resource?filter.status=!deployed", env=env)["data"]), 3)
        self.assertEqual(s.call("GET", "/api/v2/resource?sort=bogus.asc", env=env)[0], 400)
        self.assertEqual(s.call("GET", "/api/v2/resource?filter.color=red", env=env)[0], 400)
        self.assertEqual(s.call("GET", "/api/v2/resource?limit=x", env=env)[0], 400)

    def test_details_history_logs(self):
        s, env = self.s, self.env
        d = s.ok("GET", f"/api/v2/resource/{q(self.web)}", env=env)["data"]
        self.assertEqual((d["status"], d["id_attribute"], d["id_attribute_value"], d["first_generated_version"]),
                         ("failed", "name", "web", self.v))
        self.assertEqual(d["requires_status"], {self.app: "available"})
        # %2F inside the id: routed on the raw path, decoded per segment.
        self.assertEqual(s.ok("GET", f"/api/v2/resource/{q(self.app)}", env=env)["data"]["id_attribute_value"], "app/x")
        self.assertEqual(s.call("GET", f"/api/v2/resource/{q(NULL + '[x,name=none]')}", env=env)[0], 404)
        # History: a new version with the same hash adds nothing, a changed one adds an entry.
        sf.put_version(s, env, [dict(rid=self.db, name="db"), dict(rid=self.app, name="app/x", requires=[self.db]),
                                dict(rid=self.web, name="web2", requires=[self.app])])
        sf.put_version(s, env, [dict(rid=self.db, name="db"), dict(rid=self.app, name="app/x"),
                                dict(rid=self.web, name="web2")])
        hist = s.ok("GET", f"/api/v2/resource/{q(self.web)}/history", env=env)["data"]
        self.assertEqual([h["attributes"]["name"] for h in hist], ["web2", "web"])
        self.assertEqual(len(s.ok("GET", f"/api/v2/resource/{q(self.app)}/history", env=env)["data"]), 1)
        logs = s.ok("GET", f"/api/v2/resource/{q(self.web)}/logs", env=env)["data"]
        self.assertEqual([l["msg"] for l in logs if l["action"] != "store"],
                         ["handler failed", "Start run because new version"])
        # Each version's store action carries the reference's message (issue #31).
        self.assertTrue(all(l["msg"].startswith("Successfully stored version ")
                            for l in logs if l["action"] == "store"))
        self.assertEqual(len([l for l in logs if l["action"] == "store"]), 3)
        self.assertEqual([l for l in logs if l["action"] != "store"][0]["kwargs"], {"traceback": "tb"})
        self.assertEqual(len(s.ok("GET", f"/api/v2/resource/{q(self.web)}/logs?filter.minimal_log_level=ERROR", env=env)["data"]), 1)
        # v1 resource with logs (§18 fields).
        r = s.ok("GET", f"/api/v1/resource/{q(self.web + ',v=' + str(self.v))}?logs=True", env=env)
        self.assertEqual(r["resource"]["resource_version_id"], f"{self.web},v={self.v}")
        deploy = [a for a in r["logs"] if a["action"] == "deploy"][0]
        self.assertEqual([m["msg"] for m in deploy["messages"]], ["Start run because new version", "handler failed"])
        self.assertTrue({"action_id", "action", "started", "finished", "messages"} <= set(deploy))
        self.assertNotIn("logs", s.ok("GET", f"/api/v1/resource/{q(self.web)}", env=env))
        self.assertEqual(s.call("GET", "/api/v1/resource/garbage", env=env)[0], 400)

    def test_parameters_and_facts(self):
        s, env = self.s, self.env
        psql(s.db, f"INSERT INTO unknownparameter (id, environment, name, source, resource_id, version) VALUES "
                   f"(gen_random_uuid(), '{env}', 'ip', 'fact', '{self.u}', {self.v})")
        p = s.ok("PUT", "/api/v1/parameter/ip", {"value": "10.0.0.1", "source": "fact", "resource_id": self.u}, env=env)["parameter"]
        self.assertEqual((p["value"], p["source"], p["resource_id"]), ("10.0.0.1", "fact", self.u))
        self.assertEqual(psql(s.db, f"SELECT resolved FROM unknownparameter WHERE environment = '{env}'"), "t")
        s.ok("PUT", "/api/v1/parameter/size", {"value": 3, "source": "user"}, env=env)
        self.assertEqual(s.ok("GET", f"/api/v1/parameter/ip?resource_id={q(self.u)}", env=env)["parameter"]["value"], "10.0.0.1")
        self.assertEqual(s.ok("GET", "/api/v1/parameter/size", env=env)["parameter"]["value"], "3")
        self.assertEqual(s.call("GET", "/api/v1/parameter/nope", env=env)[0], 404)
        self.assertEqual(s.call("PUT", "/api/v1/parameter/x", {"value": "1", "source": "bogus"}, env=env)[0], 400)
        self.assertEqual([f["name"] for f in s.ok("GET", "/api/v2/facts", env=env)["data"]], ["ip"])
        self.assertEqual([f["name"] for f in s.ok("GET", "/api/v2/parameters", env=env)["data"]], ["size"])
        self.assertEqual([f["name"] for f in s.ok("GET", f"/api/v2/resource/{q(self.u)}/facts", env=env)["data"]], ["ip"])
        self.assertEqual(len(s.ok("POST", "/api/v1/parameter", {}, env=env)["parameters"]), 2)
        s.ok("DELETE", "/api/v1/parameter/size", env=env)
        self.assertEqual(s.call("DELETE", "/api/v1/parameter/size", env=env)[0], 404)

    def test_agents_deploy(self):
        s, env = self.s, self.env
        agents = s.ok("GET", "/api/v2/agents", env=env)["data"]
        self.assertEqual([(a["name"], a["status"]) for a in agents], [("$__scheduler", "down"), ("agent1", "down"), ("agent2", "down")])
        s.ok("POST", "/api/v2/agent/agent1/pause", env=env)
        self.assertEqual([a["status"] for a in s.ok("GET", "/api/v2/agents", env=env)["data"] if a["name"] == "agent1"], ["paused"])
        s.ok("POST", "/api/v2/agents/unpause", env=env)
        self.assertFalse(any(a["paused"] for a in s.ok("GET", "/api/v2/agents", env=env)["data"]))
        self.assertEqual(s.call("POST", "/api/v2/agent/nope/pause", env=env)[0], 404)
        self.assertEqual(s.call("POST", "/api/v2/agent/agent1/explode", env=env)[0], 400)
        s.ok("POST", "/api/v2/actions/environment/halt", env=env)
        self.assertEqual(s.call("POST", "/api/v2/agent/agent1/unpause", env=env)[0], 409)
        s.ok("POST", "/api/v2/agent/agent1/keep_paused_on_resume", env=env)
        s.ok("POST", "/api/v2/actions/environment/resume", env=env)
        self.assertEqual({a["name"]: a["paused"] for a in s.ok("GET", "/api/v2/agents", env=env)["data"]}["agent1"], True)
        # Deploy / repair requests reach the scheduler queue.
        s.ok("POST", "/api/v1/deploy", {}, env=env)
        s.ok("POST", "/api/v1/deploy", {"agent_trigger_method": "push_incremental_deploy", "agents": ["agent2"]}, env=env)
        s.ok("POST", "/api/v2/deploy_filtered", {"agents": ["agent1"]}, env=env)
        self.assertEqual(psql(s.db, f"SELECT string_agg(payload::text, ';' ORDER BY id) FROM scheduler_request WHERE environment = '{env}' AND kind = 'deploy'"),
                         '{"agents": null, "repair": true};{"agents": ["agent2"], "repair": false};{"agents": ["agent1"], "repair": false}')
        self.assertEqual(s.call("POST", "/api/v1/deploy", {"agent_trigger_method": "pull"}, env=env)[0], 400)
        self.assertGreaterEqual(int(psql(s.db, f"SELECT count(*) FROM scheduler_request WHERE environment = '{env}' AND kind = 'agents_changed'")), 3)

    def test_dryrun(self):
        s, env = self.s, self.env
        d = s.ok("POST", f"/api/v2/dryrun/{self.v}", env=env)["data"]
        self.assertEqual((d["total"], d["todo"]), (4, 3))  # u is undefined: answered at once
        res = d["resources"]
        self.assertEqual(res[f"{self.u},v={self.v}"]["diff_status"], "undefined")
        self.assertEqual(psql(s.db, f"SELECT payload->>'id' FROM scheduler_request WHERE environment = '{env}' AND kind = 'dryrun'"), d["id"])
        self.assertEqual([x["id"] for x in s.ok("GET", f"/api/v2/dryrun/{self.v}", env=env)["data"]], [d["id"]])
        self.assertEqual(s.ok("GET", f"/api/v2/dryrun/{self.v}/{d['id']}", env=env)["data"]["id"], d["id"])
        self.assertEqual(s.ok("GET", f"/api/v1/dryrun/{d['id']}", env=env)["dryrun"]["model"], self.v)
        self.assertEqual(len(s.ok("GET", f"/api/v1/dryrun?version={self.v}", env=env)["dryruns"]), 1)
        self.assertEqual(s.call("POST", "/api/v2/dryrun/999", env=env)[0], 404)
        self.assertEqual(s.call("GET", f"/api/v2/dryrun/{self.v}/{uuid.uuid4()}", env=env)[0], 404)
        self.assertEqual(s.call("GET", f"/api/v2/dryrun/{self.v}/nope", env=env)[0], 400)


if __name__ == "__main__":
    unittest.main()
