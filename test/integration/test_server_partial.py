"""PUT /api/v2/version/partial (orchestrator.md §3.7): exported resource sets replace their base version's
members, untouched sets and shared resources are kept, removed sets go, and the rules' 400s."""
import base64
import hashlib
import threading
import unittest
import uuid

import server_fixture as sf

NULL = "std::testing::NullResource"


def rid(name):
    return f"{NULL}[a,name={name}]"


def res(name, version=0, requires=(), **attrs):
    r = {"id": f"{rid(name)},v={version}", "version": version, "requires": [f"{rid(q)},v={version}" for q in requires],
         "name": name, "purged": False, "send_event": False}
    r.update(attrs)
    return r


class ServerPartialTest(sf.ServerTestCase):

    def setUp(self):
        s = self.s
        self.pid, self.env = s.project_env("p" + uuid.uuid4().hex[:8])
        s.ok("POST", "/api/v2/environment_settings/auto_deploy", {"value": False}, env=self.env)
        self.base, (status, body) = sf.put_version(
            s, self.env, [dict(rid=rid("a1"), name="a1"), dict(rid=rid("a2"), name="a2"), dict(rid=rid("b1"), name="b1"),
                          dict(rid=rid("shared"), name="shared")],
            resource_sets={rid("a1"): "A", rid("a2"): "A", rid("b1"): "B"})
        assert status == 200, body

    def partial(self, resources, sets, **extra):
        body = {"resources": resources, "resource_state": {}, "unknowns": [], "resource_sets": sets, "version_info": {}}
        body.update(extra)
        return self.s.call("PUT", "/api/v2/version/partial", body, env=self.env)

    def names(self, version):
        return sorted(r["attributes"]["name"] for r in self.s.ok("GET", f"/api/v1/version/{version}", env=self.env)["resources"])

    def test_replace_set_keep_others(self):
        status, body = self.partial([res("a1", x=1), res("a3", requires=["shared"]), res("new_shared")],
                                    {rid("a1"): "A", rid("a3"): "A"})
        self.assertEqual(status, 200, body)
        v = body["data"]
        self.assertEqual(v, self.base + 1)
        self.assertEqual(self.names(v), ["a1", "a3", "b1", "new_shared", "shared"])
        model = self.s.ok("GET", f"/api/v1/version/{v}", env=self.env)["model"]
        self.assertEqual(model["partial_base"], self.base)

    def test_removed_sets(self):
        status, body = self.partial([], {}, removed_resource_sets=["B"])
        self.assertEqual(status, 200, body)
        self.assertEqual(self.names(body["data"]), ["a1", "a2", "shared"])

    def test_rules(self):
        for resources, sets, needle in [
            ([res("b1")], {rid("b1"): "A"}, "which this partial export does not contain"),
            ([res("b1")], {}, "resource set 'B'"),
            ([res("shared", changed=True)], {}, "shared resource"),
            ([res("shared")], {rid("shared"): "A"}, "cannot move into"),
            ([res("x", requires=["nowhere"])], {}, "not in this version"),
        ]:
            status, body = self.partial(resources, sets)
            self.assertEqual(status, 400, needle)
            self.assertIn(needle, body["message"])
        # Moving between two sets that are both exported is fine.
        status, body = self.partial([res("a1"), res("b1")], {rid("a1"): "B", rid("b1"): "A"})
        self.assertEqual(status, 200, body)
        self.assertEqual(self.names(body["data"]), ["a1", "b1", "shared"])
        # A shared resource exported unchanged is fine (requires merged).
        status, body = self.partial([res("shared", requires=["a1"])], {})
        self.assertEqual(status, 200, body)
        shared = [r for r in self.s.ok("GET", f"/api/v1/version/{body['data']}", env=self.env)["resources"]
                  if r["resource_id"] == rid("shared")][0]
        self.assertEqual(shared["attributes"]["requires"], [f"{rid('a1')},v={body['data']}"])

    def test_concurrent_partials_serialise(self):
        """Several partial exports at once: all land, versions consecutive, no exported set lost."""
        results = []

        def export(name):
            results.append(self.partial([res(name)], {rid(name): name.upper()}))
        threads = [threading.Thread(target=export, args=(n,)) for n in ("c1", "c2", "c3", "c4")]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        self.assertEqual([r[0] for r in results], [200] * 4, results)
        versions = sorted(r[1]["data"] for r in results)
        self.assertEqual(versions, list(range(self.base + 1, self.base + 5)))
        self.assertEqual(self.names(versions[-1]), ["a1", "a2", "b1", "c1", "c2", "c3", "c4", "shared"])
        for v in versions[1:]:
            base = self.s.ok("GET", f"/api/v1/version/{v}", env=self.env)["model"]["partial_base"]
            self.assertEqual(base, v - 1)

    def test_module_code_must_match_base(self):
        s = self.s
        data = b"def handler(): pass\n"
        h = hashlib.sha1(data).hexdigest()
        s.ok("PUT", f"/api/v1/file/{h}", {"id": h, "content": base64.b64encode(data).decode()})

        def code(version):
            return {"mod": {"name": "mod", "version": version, "requirements": [], "for_agents": ["a"],
                            "files_in_module": [{"hash_value": h, "name": "inmanta_plugins.mod", "is_byte_code": False}]}}
        base, (status, body) = sf.put_version(s, self.env, [dict(rid=rid("a1"), name="a1")], resource_sets={rid("a1"): "A"},
                                              module_version_info=code("v1"))
        self.assertEqual(status, 200, body)
        status, body = self.partial([res("a1", x=2)], {rid("a1"): "A"}, module_version_info=code("v2"))
        self.assertEqual(status, 400)
        self.assertIn("module mod", body["message"])
        self.assertIn("v1", body["message"])
        status, body = self.partial([res("a1", x=2)], {rid("a1"): "A"}, module_version_info=code("v1"))
        self.assertEqual(status, 200, body)
        status, body = self.partial([res("a1", x=3)], {rid("a1"): "A"}, module_version_info=code("v2"),
                                    allow_handler_code_update=True)
        self.assertEqual(status, 200, body)
        # A module the base does not use may come with any code.
        other = code("v9")
        other["mod2"] = dict(other.pop("mod"), name="mod2")
        status, body = self.partial([res("a1", x=4)], {rid("a1"): "A"}, module_version_info=other)
        self.assertEqual(status, 200, body)
        status, body = self.partial([res("a1")], {rid("a1"): "A"}, allow_handler_code_update="maybe")
        self.assertEqual(status, 400)
        self.assertIn("allow_handler_code_update", body["message"])


if __name__ == "__main__":
    unittest.main()
