"""Strict values against the real server (docs/server.md "Value validation"): query parameters of the listing
endpoints (limit, sort, filter.*, paging cursors, deploy_summary, timestamps) are checked per route and a bad one is
a 400 whose message names it, never a silent 200; body fields get their declared JSON types; NUL bytes are
refused, never truncated; integers beyond 64 bits name their field; put_version refuses ids whose `,v=` is not
the body's version and resource_state values other than available/undefined; ids with backslashes round-trip."""
import json
import unittest
import urllib.parse
import uuid

import server_fixture as sf

NULL = "std::testing::NullResource"


class StrictValuesTest(sf.ServerTestCase):
    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.pid, cls.env = cls.s.project_env("strict" + uuid.uuid4().hex[:6])
        # Resources spread over agents and values so sorting and paging have something to order.
        cls.rids = [f"{NULL}[agent{i % 3},name=n{i:02d}]" for i in range(9)]
        cls.version, (status, data) = sf.put_version(cls.s, cls.env, [{"rid": r, "name": r} for r in cls.rids])
        assert status == 200, data

    def bad(self, path, *words, method="GET", body=None, env=True):
        status, data = self.s.call(method, path, body, env=self.env if env else None)
        self.assertEqual(status, 400, f"{method} {path} -> {status}: {data}")
        for w in words:
            self.assertIn(w, data["message"], f"{path}: {data['message']}")
        return data["message"]

    def test_listing_limits_sorts_and_filters(self):
        for q, word in [("limit=0", "'limit'"), ("limit=1001", "'limit'"), ("limit=abc", "'limit'"),
                        ("limit=5.5", "'limit'"), ("limit=%2B5", "'limit'"), ("limit=99999999999999999999", "'limit'"),
                        ("limit=3&limit=4", "'limit'"), ("sort=name.asc", "'sort'"), ("sort=agent", "'sort'"),
                        ("sort=agent.up", "'sort'"), ("filter.nope=x", "filter.nope"),
                        ("filter.status=deployedd", "filter.status"), ("deploy_summary=maybe", "'deploy_summary'"),
                        ("last_id=x&first_id=y", "last_id"), ("last_id=not-an-id", "'last_id'")]:
            self.bad("/api/v2/resource?" + q, word)
        for path, q, word in [("/api/v2/resource_actions", "limit=-1", "'limit'"),
                              ("/api/v2/resource_actions", "limit=1x", "'limit'"),
                              ("/api/v2/resource_actions", "first_timestamp=yesterday", "'first_timestamp'"),
                              ("/api/v2/resource_actions", "log_severity=LOUD", "'log_severity'"),
                              ("/api/v2/resource_actions", "exclude_changes=nope", "'exclude_changes'"),
                              ("/api/v2/resource_actions", "filter.agent=x", "filter.agent"),
                              ("/api/v2/resource_actions", "agent=a&agent=b", "'agent'"),
                              ("/api/v2/desiredstate", "filter.status=bogus", "filter.status"),
                              ("/api/v2/desiredstate", "limit=0", "'limit'"),
                              ("/api/v2/desiredstate", "start=1", "'start'"),
                              ("/api/v2/agents", "sort=colour.asc", "'sort'"),
                              ("/api/v2/agents", "filter.status=sleepy", "filter.status"),
                              ("/api/v2/facts", "limit=x", "'limit'"),
                              ("/api/v2/parameters", "filter.source=moon", "filter.source"),
                              ("/api/v1/version", "start=-1", "'start'"),
                              ("/api/v1/version", "limit=ten", "'limit'"),
                              ("/api/v1/version/abc", "", "'id'"),
                              ("/api/v1/version/99999999999999999999", "", "'id'"),
                              (f"/api/v1/resource/{sf.q(self.rids[0] + ',v=1')}", "logs=perhaps", "'logs'")]:
            self.bad(path + ("?" + q if q else ""), word)

    def test_logs_filters(self):
        rid = sf.q(self.rids[0])
        for q, word in [("filter.minimal_log_level=LOUD", "filter.minimal_log_level"),
                        ("filter.action=explode", "filter.action"), ("filter.colour=red", "filter.colour"),
                        ("filter.timestamp=soon", "filter.timestamp"), ("limit=0", "'limit'"),
                        ("sort=level.asc", "'sort'"), ("last_id=x", "'last_id'")]:
            self.bad(f"/api/v2/resource/{rid}/logs?" + q, word)
        # Valid filters are accepted (the store action writes no log lines, so every answer is a page).
        for q in ("filter.action=store&filter.action=deploy", "filter.minimal_log_level=CRITICAL",
                  "filter.timestamp=ge:2000-01-01T00:00:00&filter.timestamp=lt:2100-01-01T00:00:00.5%2B00:00",
                  "filter.message=x&limit=1&sort=timestamp.asc"):
            page = self.s.ok("GET", f"/api/v2/resource/{rid}/logs?" + q, env=self.env)
            self.assertIsInstance(page["data"], list)

    def test_paging_with_sort_on_agent_and_status(self):
        for sort in ("agent.asc", "agent.desc", "status.asc", "resource_id_value.desc"):
            seen, url = [], f"/api/v2/resource?limit=2&sort={sort}"
            while url:
                page = self.s.ok("GET", url, env=self.env)
                seen += [r["resource_id"] for r in page["data"]]
                url = page["links"].get("next")
                self.assertLessEqual(len(seen), len(self.rids), f"{sort}: paging does not end")
            self.assertEqual(sorted(seen), sorted(self.rids), sort)
            self.assertEqual(len(set(seen)), len(seen), f"{sort}: a resource on two pages")
            # Walking back from the last page with `prev` gives the same rows.
            whole = self.s.ok("GET", f"/api/v2/resource?limit=100&sort={sort}", env=self.env)["data"]
            self.assertEqual(seen, [r["resource_id"] for r in whole], sort)
        # A cursor that is not in the listing: its value comes from the id (agent) or must be given (status).
        gone = sf.q(f"{NULL}[agent1,name=zz]")
        data = self.s.ok("GET", f"/api/v2/resource?limit=100&sort=agent.asc&last_id={gone}", env=self.env)["data"]
        self.assertEqual({r["id_details"]["agent"] for r in data}, {"agent2"})
        self.bad(f"/api/v2/resource?sort=status.asc&last_id={gone}", "'start'")
        data = self.s.ok("GET", f"/api/v2/resource?limit=100&sort=status.asc&start=a&last_id={gone}",
                         env=self.env)["data"]
        self.assertEqual(len(data), len(self.rids))  # every status sorts after "a"
        data = self.s.ok("GET", f"/api/v2/resource?limit=100&sort=status.asc&start=zzz&last_id={gone}",
                         env=self.env)["data"]
        self.assertEqual(data, [])

    def test_repeated_status_filters_are_alternatives(self):
        listed = self.s.ok("GET", "/api/v2/resource?limit=100", env=self.env)["data"]
        statuses = sorted({r["status"] for r in listed})
        q = "".join(f"&filter.status={s}" for s in statuses + ["failed"])
        page = self.s.ok("GET", "/api/v2/resource?deploy_summary=True" + q, env=self.env)
        self.assertEqual(page["metadata"]["total"], len(self.rids))
        self.assertIn("deploy_summary", page["metadata"])
        only_failed = self.s.ok("GET", "/api/v2/resource?filter.status=failed", env=self.env)
        self.assertEqual(only_failed["data"], [])
        q = "".join(f"&filter.status=!{s}" for s in statuses)
        self.assertEqual(self.s.ok("GET", "/api/v2/resource?limit=5" + q, env=self.env)["data"], [])

    def test_body_types_nul_and_wide_numbers(self):
        self.bad("/api/v2/project", "'name'", "string", method="PUT", body={"name": 5})
        self.bad("/api/v2/project", "'name'", "string", method="PUT", body={"name": ["x"]})
        msg = self.bad("/api/v2/project", "NUL", "name", method="PUT", body={"name": "a\u0000b"})
        self.assertNotIn("not valid JSON", msg)
        self.bad(f"/api/v2/project/{self.pid}", "NUL", method="POST", body={"name": "ok", "extra": {"k\u0000": 1}})
        # Nothing was stored under a truncated name.
        names = [p["name"] for p in self.s.ok("GET", "/api/v2/project")["data"]]
        self.assertNotIn("a", names)
        msg = self.bad("/api/v2/dryrun/1", method="POST", body={"id": 2 ** 64})
        self.assertIn("id", msg)
        self.assertNotIn("not valid JSON", msg)
        msg = self.bad(f"/api/v1/version/{2 ** 63}")
        self.assertIn("'id'", msg)
        self.bad("/api/v2/resource?limit=" + str(2 ** 64), "'limit'")

    def test_put_version_id_version_and_resource_state(self):
        _, env = self.s.project_env("pv" + uuid.uuid4().hex[:6])
        v = self.s.ok("POST", "/api/v2/reserve_version", env=env)["data"]
        base = {"version": v, "resource_state": {}, "unknowns": [], "version_info": {}, "compiler_version": "x"}
        wrong = dict(base, resources=[dict(sf.resource(f"{NULL}[a,name=w]", v), id=f"{NULL}[a,name=w],v={v + 7}")])
        status, data = self.s.call("PUT", "/api/v1/version", wrong, env=env)
        self.assertEqual(status, 400, data)
        self.assertIn(f"v={v + 7}" if f"v={v + 7}" in data["message"] else f"version {v + 7}", data["message"])
        self.assertIn("resources[0]", data["message"])
        key = dict(base, resources=[dict(sf.resource(f"{NULL}[a,name=w]", v), version=v + 1)])
        status, data = self.s.call("PUT", "/api/v1/version", key, env=env)
        self.assertEqual(status, 400, data)
        self.assertIn("resources[0].version", data["message"])
        for state in ("deployed", "skipped", 3):
            body = dict(base, resources=[sf.resource(f"{NULL}[a,name=s]", v)],
                        resource_state={f"{NULL}[a,name=s]": state})
            status, data = self.s.call("PUT", "/api/v1/version", body, env=env)
            self.assertEqual(status, 400, data)
            self.assertIn("resource_state", data["message"])
        # The same version is still free: none of the refused bodies stored anything.
        ok = dict(base, resources=[sf.resource(f"{NULL}[a,name=s]", v)], resource_state={f"{NULL}[a,name=s]": "available"})
        status, data = self.s.call("PUT", "/api/v1/version", ok, env=env)
        self.assertEqual(status, 200, data)

    # The reference's id grammar takes backslashes literally (docs/server.md "Value validation").
    def test_backslash_ids_round_trip(self):
        _, env = self.s.project_env("bs" + uuid.uuid4().hex[:6])
        rid = f"{NULL}[agent\\x,name=C:\\dir\\file]"
        odd = f"{NULL}[a,name=50%_off\\]"  # the reference's regex: the value is `50%_off\`
        v, (status, data) = sf.put_version(self.s, env, [{"rid": rid, "name": "C:\\dir\\file"},
                                                          {"rid": odd, "name": "x"}])
        self.assertEqual(status, 200, data)
        for r in (rid, odd):
            got = self.s.ok("GET", f"/api/v2/resource/{sf.q(r)}", env=env)["data"]
            self.assertEqual(got["resource_id"], r)
            logs = self.s.ok("GET", f"/api/v2/resource/{sf.q(r)}/logs", env=env)["data"]
            self.assertEqual({l["action"] for l in logs}, {"store"}, r)
            v1 = self.s.ok("GET", f"/api/v1/resource/{sf.q(r + f',v={v}')}?logs=true", env=env)
            self.assertEqual(v1["resource"]["resource_id"], r)
        listed = self.s.ok("GET", "/api/v2/resource?filter.resource_id_value=" + urllib.parse.quote("C:\\dir"),
                           env=env)["data"]
        self.assertEqual([r["resource_id"] for r in listed], [rid])


if __name__ == "__main__":
    unittest.main()
