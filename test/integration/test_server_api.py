"""The server's REST API against the real `inmanta server` binary and the run's PostgreSQL: projects and
environments (v1 and v2), settings, files, code upload, versions (put, release, list, get, delete,
desired state, diff), halt/resume and the scheduler hand-off rows, with their 4xx paths."""
import base64
import hashlib
import unittest
import uuid

import harness
import server_fixture as sf

NULL = "std::testing::NullResource"


psql = harness.psql  # (imported by the other test_server_* files)


class ServerApiTest(sf.ServerTestCase):

    def setUp(self):
        self.pid, self.env = self.s.project_env("e" + uuid.uuid4().hex[:8])

    # Projects and environments -------------------------------------------------------------------
    def test_projects_v1_v2(self):
        s = self.s
        p = s.ok("PUT", "/api/v1/project", {"name": "v1proj"})["project"]
        self.assertEqual(p["name"], "v1proj")
        self.assertEqual(p["environments"], [])
        self.assertEqual(s.call("PUT", "/api/v2/project", {"name": "v1proj"})[0], 409)
        self.assertIn(p["id"], [x["id"] for x in s.ok("GET", "/api/v1/project")["projects"]])
        self.assertEqual(s.ok("GET", f"/api/v2/project/{p['id']}")["data"]["name"], "v1proj")
        self.assertEqual(s.ok("POST", f"/api/v1/project/{p['id']}", {"name": "renamed"})["project"]["name"], "renamed")
        self.assertEqual(s.ok("POST", f"/api/v2/project/{p['id']}", {"name": "renamed2"})["data"]["name"], "renamed2")
        status, body = s.call("GET", f"/api/v2/project/{uuid.uuid4()}")
        self.assertEqual(status, 404)
        self.assertIn("not found", body["message"])
        status, body = s.call("GET", "/api/v2/project/not-a-uuid")
        self.assertEqual(status, 400)
        self.assertIn("'id'", body["message"])
        self.assertEqual(s.call("PUT", "/api/v2/project", {})[0], 400)
        pe = s.ok("PUT", "/api/v2/environment", {"project_id": p["id"], "name": "doomed"})["data"]["id"]
        self.assertEqual(psql(s.db, f"SELECT count(*) FROM agent WHERE environment = '{pe}'"), "1")
        self.assertEqual(s.call("DELETE", f"/api/v2/project/{p['id']}")[0], 200)
        self.assertEqual(s.call("DELETE", f"/api/v1/project/{p['id']}")[0], 404)
        # Agents have no foreign key to their environment (migration 006): deleted explicitly with it.
        self.assertEqual(psql(s.db, f"SELECT count(*) FROM agent WHERE environment = '{pe}'"), "0")
        # A chosen project id is kept.
        pid = str(uuid.uuid4())
        self.assertEqual(s.ok("PUT", "/api/v2/project", {"name": "chosen", "project_id": pid})["data"]["id"], pid)

    def test_environments_v1_v2(self):
        s = self.s
        e = s.ok("PUT", "/api/v1/environment", {"project_id": self.pid, "name": "other", "repository": "https://x/r.git",
                                               "branch": "main"})["environment"]
        self.assertEqual((e["project"], e["repo_url"], e["repo_branch"]), (self.pid, "https://x/r.git", "main"))
        v2 = s.ok("GET", f"/api/v2/environment/{e['id']}")["data"]
        self.assertEqual(v2["project_id"], self.pid)
        self.assertEqual(v2["settings"]["auto_deploy"], True)
        self.assertFalse(v2["halted"])
        self.assertIn(e["id"], [x["id"] for x in s.ok("GET", "/api/v1/environment")["environments"]])
        self.assertIn(e["id"], [x["id"] for x in s.ok("GET", "/api/v2/environment")["data"]])
        self.assertIn(e["id"], s.ok("GET", f"/api/v1/project/{self.pid}")["project"]["environments"])
        self.assertEqual(s.ok("POST", f"/api/v2/environment/{e['id']}", {"name": "other2", "description": "d"})["data"]["description"], "d")
        self.assertEqual(s.ok("POST", f"/api/v1/environment/{e['id']}", {"name": "other3"})["environment"]["name"], "other3")
        # 4xx: duplicate name in the project, unknown project, missing name, bad uuid, unknown id.
        self.assertEqual(s.call("PUT", "/api/v2/environment", {"project_id": self.pid, "name": "other3"})[0], 409)
        self.assertEqual(s.call("PUT", "/api/v2/environment", {"project_id": str(uuid.uuid4()), "name": "x"})[0], 404)
        status, body = s.call("PUT", "/api/v2/environment", {"project_id": self.pid})
        self.assertEqual(status, 400)
        self.assertIn("'name'", body["message"])
        status, body = s.call("PUT", "/api/v2/environment", {"project_id": self.pid, "name": 5})
        self.assertEqual(status, 400)
        self.assertIn("'name'", body["message"])
        self.assertEqual(s.call("GET", f"/api/v2/environment/{uuid.uuid4()}")[0], 404)
        chosen = str(uuid.uuid4())
        self.assertEqual(s.ok("PUT", "/api/v2/environment", {"project_id": self.pid, "name": "c", "environment_id": chosen})["data"]["id"], chosen)
        self.assertEqual(psql(s.db, f"SELECT count(*) FROM agent WHERE environment = '{e['id']}'"), "1")
        self.assertEqual(s.call("DELETE", f"/api/v2/environment/{e['id']}")[0], 200)
        self.assertEqual(s.call("GET", f"/api/v1/environment/{e['id']}")[0], 404)
        self.assertEqual(psql(s.db, f"SELECT count(*) FROM agent WHERE environment = '{e['id']}'"), "0")

    def test_protected_environment_refuses_delete_and_clear(self):
        s = self.s
        s.ok("POST", "/api/v2/environment_settings/protected_environment", {"value": True}, env=self.env)
        self.assertEqual(s.call("DELETE", f"/api/v2/environment/{self.env}")[0], 403)
        self.assertEqual(s.call("DELETE", f"/api/v2/decommission/{self.env}")[0], 403)
        s.ok("DELETE", "/api/v2/environment_settings/protected_environment", env=self.env)
        self.assertEqual(s.call("DELETE", f"/api/v2/decommission/{self.env}")[0], 200)

    def test_clear_keeps_environment_drops_versions(self):
        s = self.s
        sf.put_version(s, self.env, [dict(rid=f"{NULL}[a,name=x]", name="x")])
        self.assertEqual(s.ok("GET", "/api/v1/version", env=self.env)["count"], 1)
        s.ok("DELETE", f"/api/v2/decommission/{self.env}")
        self.assertEqual(s.ok("GET", "/api/v1/version", env=self.env)["count"], 0)
        self.assertEqual(s.ok("GET", f"/api/v2/environment/{self.env}")["data"]["id"], self.env)

    # Settings -------------------------------------------------------------------------------------
    def test_settings_typed(self):
        s, env = self.s, self.env
        all1 = s.ok("GET", "/api/v1/environment_settings", env=env)
        self.assertEqual(all1["settings"]["auto_deploy"], True)
        self.assertEqual(all1["metadata"]["auto_deploy"]["type"], "bool")
        self.assertEqual(all1["metadata"]["recompile_backoff"]["type"], "positive_float")
        self.assertEqual(all1["metadata"]["autostart_agent_map"]["type"], "dict")
        self.assertEqual(all1["metadata"]["agent_trigger_method_on_auto_deploy"]["type"], "enum")
        # Strings from the CLI are converted by type and read back typed.
        s.ok("POST", "/api/v1/environment_settings/auto_deploy", {"id": "auto_deploy", "value": "false"}, env=env)
        self.assertIs(s.ok("GET", "/api/v1/environment_settings/auto_deploy", env=env)["value"], False)
        s.ok("POST", "/api/v2/environment_settings/available_versions_to_keep", {"value": "7"}, env=env)
        self.assertEqual(s.ok("GET", "/api/v2/environment_settings/available_versions_to_keep", env=env)["data"]["settings"]["available_versions_to_keep"], 7)
        s.ok("POST", "/api/v2/environment_settings/recompile_backoff", {"value": "2.5"}, env=env)
        s.ok("POST", "/api/v2/environment_settings/autostart_agent_map", {"value": {"internal": "local:", "a": "local:"}}, env=env)
        s.ok("POST", "/api/v2/environment_settings/agent_trigger_method_on_auto_deploy", {"value": "push_full_deploy"}, env=env)
        v2 = s.ok("GET", "/api/v2/environment_settings", env=env)["data"]
        self.assertEqual(v2["settings"]["recompile_backoff"], 2.5)
        self.assertEqual(v2["settings"]["autostart_agent_map"]["a"], "local:")
        self.assertIn("definition", v2)
        # Invalid values name the setting; unknown keys are 404.
        for key, value in [("auto_deploy", "maybe"), ("available_versions_to_keep", "x"), ("recompile_backoff", -1),
                           ("agent_trigger_method_on_auto_deploy", "nope"), ("autostart_agent_map", 5)]:
            status, body = s.call("POST", f"/api/v2/environment_settings/{key}", {"value": value}, env=env)
            self.assertEqual(status, 400, key)
            self.assertIn(key, body["message"])
        status, body = s.call("POST", "/api/v1/environment_settings/no_such", {"value": 1}, env=env)
        self.assertEqual(status, 404)
        self.assertIn("no_such", body["message"])
        self.assertEqual(s.call("GET", "/api/v2/environment_settings/no_such", env=env)[0], 404)
        self.assertEqual(s.call("POST", "/api/v2/environment_settings/auto_deploy", {}, env=env)[0], 400)
        # Reset.
        s.ok("DELETE", "/api/v1/environment_settings/auto_deploy", env=env)
        self.assertIs(s.ok("GET", "/api/v1/environment_settings/auto_deploy", env=env)["value"], True)
        # Protected settings: set by project.yml, read-only through the API.
        s.ok("POST", "/api/v2/protected_environment_settings", {"settings": {"auto_deploy": "false"}}, env=env)
        self.assertIs(s.ok("GET", "/api/v1/environment_settings/auto_deploy", env=env)["value"], False)
        self.assertEqual(s.call("POST", "/api/v2/environment_settings/auto_deploy", {"value": True}, env=env)[0], 403)
        self.assertTrue(s.ok("GET", "/api/v2/environment_settings", env=env)["data"]["definition"]["auto_deploy"]["protected"])
        # A settings change asks the scheduler.
        self.assertGreaterEqual(int(psql(s.db, f"SELECT count(*) FROM scheduler_request WHERE environment = '{env}' AND kind = 'settings_changed'")), 5)

    def test_missing_or_bad_tenant(self):
        status, body = self.s.call("GET", "/api/v1/environment_settings")
        self.assertEqual(status, 400)
        self.assertIn("X-Inmanta-tid", body["message"])
        self.assertEqual(self.s.call("GET", "/api/v1/environment_settings", env="nope")[0], 400)
        self.assertEqual(self.s.call("GET", "/api/v1/environment_settings", env=str(uuid.uuid4()))[0], 404)

    # Files and code --------------------------------------------------------------------------------
    def test_files(self):
        s = self.s
        data = b"hello file " + uuid.uuid4().bytes
        h = hashlib.sha1(data).hexdigest()
        other = hashlib.sha1(b"never").hexdigest()
        self.assertEqual(sorted(s.ok("POST", "/api/v1/file", {"files": [h, other]})["files"]), sorted([h, other]))
        self.assertEqual(s.call("HEAD", f"/api/v1/file/{h}")[0], 404)
        s.ok("PUT", f"/api/v1/file/{h}", {"id": h, "content": base64.b64encode(data).decode()})
        self.assertEqual(s.ok("POST", "/api/v1/file", {"files": [h, other]})["files"], [other])
        self.assertEqual(s.call("HEAD", f"/api/v1/file/{h}")[0], 200)
        self.assertEqual(base64.b64decode(s.ok("GET", f"/api/v1/file/{h}")["content"]), data)
        status, body = s.call("PUT", f"/api/v1/file/{other}", {"content": base64.b64encode(b"wrong").decode()})
        self.assertEqual(status, 400)
        self.assertIn("sha1", body["message"])
        self.assertEqual(s.call("PUT", f"/api/v1/file/{h}", {"content": "!!!"})[0], 400)
        self.assertEqual(s.call("GET", f"/api/v1/file/{other}")[0], 404)
        self.assertEqual(s.call("POST", "/api/v1/file", {"files": "x"})[0], 400)

    def test_codebatched(self):
        s = self.s
        code = b"def handler(): pass\n" + uuid.uuid4().bytes
        h = hashlib.sha1(code).hexdigest()
        body = {"id": 3, "resources": {"std::File": {h: ["/p/plugins/__init__.py", "inmanta_plugins.std", ["jinja2"]]}}}
        status, msg = s.call("PUT", "/api/v1/codebatched/3", body, env=self.env)
        self.assertEqual(status, 400)  # the file was not uploaded
        self.assertIn(h, msg["message"])
        s.ok("PUT", f"/api/v1/file/{h}", {"id": h, "content": base64.b64encode(code).decode()})
        s.ok("PUT", "/api/v1/codebatched/3", body, env=self.env)
        self.assertEqual(psql(s.db, f"SELECT name || ':' || array_to_string(requirements, ',') FROM inmanta_module WHERE environment = '{self.env}'"), "std:jinja2")
        self.assertEqual(psql(s.db, f"SELECT python_module_name FROM module_files WHERE environment = '{self.env}'"), "inmanta_plugins.std")

    # Versions ---------------------------------------------------------------------------------------
    def test_put_version_bad_tail_fields(self):
        # The fields after the resources are checked alike by the whole-body and the streamed reader (this class
        # also runs with every body spooled, test_server_push_perf); nothing is stored on a 400.
        s, env = self.s, self.env
        res = [dict(rid=f"{NULL}[internal,name=t]", name="t")]
        for extra, needle in [({"unknowns": "x"}, "'unknowns' must be a list"),
                              ({"unknowns": [3]}, "'unknowns' must hold objects"),
                              ({"module_version_info": [1]}, "'module_version_info' must be an object")]:
            v, (status, body) = sf.put_version(s, env, res, **extra)
            self.assertEqual(status, 400, body)
            self.assertIn(needle, body["message"])
            self.assertEqual(psql(s.db, f"SELECT count(*) FROM configurationmodel WHERE environment = '{env}' AND version = {v}"), "0")

    def test_put_version_release_and_rps(self):
        s, env = self.s, self.env
        s.ok("POST", "/api/v2/environment_settings/auto_deploy", {"value": False}, env=env)
        v, (status, body) = sf.put_version(s, env, [
            dict(rid=f"{NULL}[internal,name=db]", name="db"),
            dict(rid=f"{NULL}[internal,name=app]", name="app", requires=[f"{NULL}[internal,name=db]"]),
            dict(rid=f"{NULL}[other,name=u]", name="<<undefined>>")],
            resource_state={f"{NULL}[other,name=u]": "undefined"},
            unknowns=[{"resource": f"{NULL}[other,name=u]", "parameter": "name", "source": "fact"}])
        self.assertEqual(status, 200, body)
        row = s.ok("GET", f"/api/v1/version/{v}", env=env)
        self.assertFalse(row["model"]["released"])
        self.assertEqual(row["model"]["result"], "pending")
        self.assertEqual(row["model"]["total"], 3)
        self.assertEqual(row["model"]["undeployable"], [f"{NULL}[other,name=u]"])
        self.assertEqual(len(row["unknowns"]), 1)
        app = [r for r in row["resources"] if r["resource_id"].endswith("name=app]")][0]
        self.assertEqual(app["attributes"]["requires"], [f"{NULL}[internal,name=db],v={v}"])
        # Stored attributes: unversioned requires; the hash ignores requires.
        self.assertEqual(psql(s.db, f"SELECT attributes->'requires'->>0 FROM resource WHERE environment = '{env}' AND resource_id LIKE '%name=app]'"),
                         f"{NULL}[internal,name=db]")
        self.assertEqual(psql(s.db, f"SELECT count(*) FROM resource_persistent_state WHERE environment = '{env}'"), "0")
        # Agents registered, with the scheduler pseudo-agent.
        self.assertEqual(psql(s.db, f"SELECT string_agg(name, ',' ORDER BY name) FROM agent WHERE environment = '{env}'"), "$__scheduler,internal,other")
        # Release: rps rows, scheduler request, 409 twice.
        rel = s.ok("POST", f"/api/v1/version/{v}", {"id": str(v), "push": False}, env=env)
        self.assertTrue(rel["model"]["released"])
        # All three rows new: the answer's counts come from the insert (u undefined: done and failed), the same
        # as a later read aggregates from the rows.
        counts = lambda m: {k: m[k] for k in ("done", "total", "deployed", "result", "status")}
        self.assertEqual(counts(rel["model"]), {"done": 1, "total": 3, "deployed": False, "result": "deploying",
                                                 "status": "deploying"})
        self.assertEqual(counts(s.ok("GET", f"/api/v1/version/{v}", env=env)["model"]), counts(rel["model"]))
        self.assertEqual(psql(s.db, f"SELECT string_agg(resource_id || '=' || blocked || '/' || last_handler_run, ';' ORDER BY resource_id) FROM resource_persistent_state WHERE environment = '{env}'"),
                         f"{NULL}[internal,name=app]=NOT_BLOCKED/NEW;{NULL}[internal,name=db]=NOT_BLOCKED/NEW;{NULL}[other,name=u]=BLOCKED/NEW")
        self.assertEqual(psql(s.db, f"SELECT count(*) FROM resource_persistent_state WHERE environment = '{env}' AND current_intent_attribute_hash IS NOT NULL"), "3")
        self.assertEqual(psql(s.db, f"SELECT payload->>'version' FROM scheduler_request WHERE environment = '{env}' AND kind = 'read_version'"), str(v))
        status, body = s.call("POST", f"/api/v1/version/{v}", {}, env=env)
        self.assertEqual(status, 409)
        self.assertIn("already released", body["message"])
        status, body = s.call("POST", "/api/v1/version/999", {}, env=env)
        self.assertEqual(status, 404)
        # An older version than the latest released one: 409.
        v2 = s.ok("POST", "/api/v2/reserve_version", env=env)["data"]
        v3, _ = sf.put_version(s, env, [dict(rid=f"{NULL}[internal,name=db]", name="db")])
        _, (st2, _) = sf.put_version(s, env, [dict(rid=f"{NULL}[internal,name=db]", name="db")], version=v2)
        self.assertEqual(st2, 200)
        self.assertEqual(s.call("POST", f"/api/v2/desiredstate/{v3}/promote", env=env)[0], 200)
        status, body = s.call("POST", f"/api/v2/desiredstate/{v2}/promote", env=env)
        self.assertEqual(status, 409)
        self.assertIn("older than the latest released", body["message"])
        # Desired-state statuses relative to the scheduler's processed version.
        psql(s.db, f"INSERT INTO scheduler VALUES ('{env}', {v3})")
        states = {d["version"]: d["status"] for d in s.ok("GET", "/api/v2/desiredstate", env=env)["data"]}
        self.assertEqual(states, {v: "retired", v2: "skipped_candidate", v3: "active"})
        labels = s.ok("GET", "/api/v2/desiredstate", env=env)["data"][0]["labels"]
        self.assertEqual(labels, [{"name": "api", "message": "test"}])
        self.assertEqual([d["version"] for d in s.ok("GET", "/api/v2/desiredstate?filter.status=active", env=env)["data"]], [v3])
        # Delete: the latest released version is refused.
        self.assertEqual(s.call("DELETE", f"/api/v1/version/{v3}", env=env)[0], 409)
        self.assertEqual(s.call("DELETE", f"/api/v1/version/{v2}", env=env)[0], 200)
        self.assertEqual(s.call("DELETE", f"/api/v1/version/{v2}", env=env)[0], 404)
        versions = s.ok("GET", "/api/v1/version?start=0&limit=1", env=env)
        self.assertEqual((versions["count"], len(versions["versions"]), versions["versions"][0]["version"]), (2, 1, v3))
        # A release over existing rows aggregates their deploy state (db deployed, cloud new and available).
        psql(s.db, f"UPDATE resource_persistent_state SET last_non_deploying_status = 'deployed' WHERE environment = '{env}' AND resource_id LIKE '%name=db]'")
        v4, _ = sf.put_version(s, env, [dict(rid=f"{NULL}[internal,name=db]", name="db"),
                                        dict(rid=f"{NULL}[internal,name=cloud]", name="cloud")])
        rel4 = s.ok("POST", f"/api/v1/version/{v4}", {"id": str(v4), "push": False}, env=env)["model"]
        self.assertEqual(counts(rel4), {"done": 1, "total": 2, "deployed": False, "result": "deploying",
                                         "status": "deploying"})
        self.assertEqual(counts(s.ok("GET", f"/api/v1/version/{v4}", env=env)["model"]), counts(rel4))

    def test_put_version_errors(self):
        s, env = self.s, self.env
        _, (status, body) = sf.put_version(s, env, [dict(rid=f"{NULL}[a,name=x]", name="x")], version=50)
        self.assertEqual(status, 400)
        self.assertIn("not reserved", body["message"])
        v, (status, _) = sf.put_version(s, env, [dict(rid=f"{NULL}[a,name=x]", name="x")])
        self.assertEqual(status, 200)
        _, (status, body) = sf.put_version(s, env, [dict(rid=f"{NULL}[a,name=x]", name="x")], version=v)
        self.assertEqual(status, 409)
        self.assertIn("already defined", body["message"])
        v = s.ok("POST", "/api/v2/reserve_version", env=env)["data"]
        for resources, extra, needle in [
            ([dict(rid=f"{NULL}[a,name=x]", name="x", requires=[f"{NULL}[a,name=missing]"])], {}, "not in this version"),
            ([{"id": "not an id", "requires": []}], {}, "resources[0].id"),
            ([dict(rid=f"{NULL}[a,name=x]", name="x"), dict(rid=f"{NULL}[a,name=x]", name="x")], {}, "duplicate"),
            ([dict(rid=f"{NULL}[a,name=x]", name="x")], {"resource_sets": {f"{NULL}[a,name=zz]": "s"}}, "resource_sets"),
            ("nope", {}, "'resources'"),
        ]:
            body = {"version": v, "resources": [sf.resource(**r, version=v) if "rid" in r else r for r in resources] if isinstance(resources, list) else resources}
            body.update(extra)
            status, msg = s.call("PUT", "/api/v1/version", body, env=env)
            self.assertEqual(status, 400, needle)
            self.assertIn(needle, msg["message"])
        self.assertEqual(s.call("PUT", "/api/v1/version", {"resources": []}, env=env)[0], 400)

    def test_auto_deploy_releases_and_export_d_gets_409(self):
        s, env = self.s, self.env
        v, (status, _) = sf.put_version(s, env, [dict(rid=f"{NULL}[a,name=x]", name="x")])
        self.assertTrue(s.ok("GET", f"/api/v1/version/{v}", env=env)["model"]["released"])
        self.assertEqual(s.call("POST", f"/api/v1/version/{v}", {}, env=env)[0], 409)

    def test_retention_keeps_latest_released(self):
        s, env = self.s, self.env
        s.ok("POST", "/api/v2/environment_settings/available_versions_to_keep", {"value": 2}, env=env)
        first, _ = sf.put_version(s, env, [dict(rid=f"{NULL}[a,name=x]", name="x")])
        s.ok("POST", "/api/v2/environment_settings/auto_deploy", {"value": False}, env=env)
        for i in range(3):
            sf.put_version(s, env, [dict(rid=f"{NULL}[a,name=x]", name=f"x{i}")])
        versions = sorted(v["version"] for v in s.ok("GET", "/api/v1/version", env=env)["versions"])
        self.assertEqual(versions, [first, first + 2, first + 3])

    def test_diff(self):
        s, env = self.s, self.env
        a, _ = sf.put_version(s, env, [dict(rid=f"{NULL}[a,name=x]", name="x", value={"k": [1, 2]}),
                                       dict(rid=f"{NULL}[a,name=gone]", name="gone"),
                                       dict(rid=f"{NULL}[a,name=same]", name="same")])
        b, _ = sf.put_version(s, env, [dict(rid=f"{NULL}[a,name=x]", name="x", value={"k": [1, 3]}),
                                       dict(rid=f"{NULL}[a,name=same]", name="same"),
                                       dict(rid=f"{NULL}[a,name=new]", name="new", flag=True)])
        d = s.ok("GET", f"/api/v2/desiredstate/diff/{a}/{b}", env=env)["data"]
        self.assertEqual([(x["resource_id"], x["status"]) for x in d],
                         [(f"{NULL}[a,name=gone]", "deleted"), (f"{NULL}[a,name=new]", "added"), (f"{NULL}[a,name=x]", "modified")])
        mod = d[2]["attributes"]
        self.assertEqual(list(mod), ["value"])
        self.assertEqual(mod["value"]["from_value_compare"], '{\n    "k": [\n        1,\n        2\n    ]\n}')
        self.assertEqual(d[1]["attributes"]["flag"]["to_value_compare"], "True")
        self.assertEqual(d[1]["attributes"]["flag"]["from_value_compare"], "")
        self.assertEqual(s.call("GET", f"/api/v2/desiredstate/diff/{b}/{a}", env=env)[0], 400)
        self.assertEqual(s.call("GET", f"/api/v2/desiredstate/diff/{a}/999", env=env)[0], 404)
        self.assertEqual(s.call("GET", f"/api/v2/desiredstate/diff/x/{a}", env=env)[0], 400)
        res = s.ok("GET", f"/api/v2/desiredstate/{b}", env=env)["data"]
        self.assertEqual(res[0]["id_details"]["attribute"], "name")
        self.assertEqual(s.call("GET", "/api/v2/desiredstate/999", env=env)[0], 404)

    def test_halt_resume(self):
        s, env = self.s, self.env
        sf.put_version(s, env, [dict(rid=f"{NULL}[a1,name=x]", name="x"), dict(rid=f"{NULL}[a2,name=y]", name="y")])
        psql(s.db, f"UPDATE agent SET paused = true WHERE environment = '{env}' AND name = 'a2'")
        s.ok("POST", "/api/v2/actions/environment/halt", env=env)
        self.assertTrue(s.ok("GET", f"/api/v2/environment/{env}")["data"]["halted"])
        self.assertEqual(psql(s.db, f"SELECT bool_and(paused) FROM agent WHERE environment = '{env}'"), "t")
        s.ok("POST", "/api/v2/actions/environment/resume", env=env)
        self.assertFalse(s.ok("GET", f"/api/v2/environment/{env}")["data"]["halted"])
        self.assertEqual(psql(s.db, f"SELECT string_agg(name || '=' || paused, ',' ORDER BY name) FROM agent WHERE environment = '{env}'"),
                         "$__scheduler=false,a1=false,a2=true")
        self.assertEqual(psql(s.db, f"SELECT string_agg(kind, ',' ORDER BY id) FROM scheduler_request WHERE environment = '{env}' AND kind IN ('halt', 'resume')"),
                         "halt,resume")

    def test_serverstatus_and_unknown_route(self):
        self.assertEqual(self.s.ok("GET", "/api/v1/serverstatus")["data"]["product"], "inmanta-cpp")
        status, body = self.s.call("GET", "/api/v2/nothing_here")
        self.assertEqual(status, 404)
        self.assertIn("/api/v2/nothing_here", body["message"])
        status, body = self.s.call("PATCH", "/api/v2/project")
        self.assertEqual(status, 405)


if __name__ == "__main__":
    unittest.main()
