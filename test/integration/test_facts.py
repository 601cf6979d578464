"""Fact expiry and renewal (orchestrator.md §6.12) against the real server, scheduler and executor: a Python
handler (pyfixtures' Note, with a `facts()` that counts its calls in a file) reports `length` (expires) or
`pinned` (expires=False). With `[server] fact-expire = 2`:

- `GET /api/v1/parameter/<name>?resource_id=R` answers 503 while the fact is unknown or expired and asks the
  agent; the value arrives and is served with 200; after the expiry a GET answers 503 again and refreshes it.
- with `fact-renew = 1` the renew round re-requests the expiring fact (its `updated` moves) and never the
  expires=false one (its handler is not called again).
Every process is stopped by PID (server fixture)."""
import base64
import hashlib
import os
import shutil
import tempfile
import time
import unittest

import harness
import pyfixtures
import server_fixture as sf

FACTS = '''
    def facts(self, ctx, resource):
        with open(resource.path + ".facts", "a") as f:
            f.write("x")
        if resource.content == "pinned":
            ctx.set_fact("pinned", "forever", expires=False)
            return {"pinned": "forever"}
        return {"length": str(len(resource.content))}
'''
PLUGINS = pyfixtures.note_plugins(doc="Handler of test_facts.py", extra=FACTS)


class FactsTest(unittest.TestCase):
    SERVER_EXTRA = ""

    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="inm-facts-")
        self.addCleanup(shutil.rmtree, self.dir, True)
        self.srv = sf.Server(schedulers=True, server_extra=self.SERVER_EXTRA)
        self.addCleanup(self.srv.stop)
        _, self.env = self.srv.project_env("facts")
        for k in ("autostart_agent_deploy_interval", "autostart_agent_repair_interval"):
            self.srv.ok("POST", f"/api/v2/environment_settings/{k}", {"value": "0"}, env=self.env)

    def deploy(self, *notes):
        """A released version of Notes {name: content} with the handler code; waits until all are deployed."""
        h = hashlib.sha1(PLUGINS.encode()).hexdigest()
        self.srv.ok("PUT", f"/api/v1/file/{h}", {"id": h, "content": base64.b64encode(PLUGINS.encode()).decode()})
        files = [{"name": "inmanta_plugins.pynote", "hash_value": h, "is_byte_code": False}]
        info = {"pynote": {"name": "pynote", "version": h, "requirements": [], "for_agents": ["local"],
                           "files_in_module": files}}
        rids = {}
        resources = []
        for name, content in notes:
            path = os.path.join(self.dir, name)
            rids[name] = f"pynote::Note[local,path={path}]"
            resources.append({"rid": rids[name], "path": path, "content": content})
        version, (status, body) = sf.put_version(self.srv, self.env, resources, module_version_info=info)
        self.assertEqual(status, 200, body)
        status, body = self.srv.call("POST", f"/api/v1/version/{version}", {}, env=self.env)
        self.assertIn(status, (200, 409), body)
        harness.wait_for(lambda: all(self.state(r) == "deployed" for r in rids.values()), timeout=90,
                         what="the notes to deploy")
        return rids

    def state(self, rid):
        return harness.psql(self.srv.db, "SELECT last_non_deploying_status FROM resource_persistent_state WHERE "
                            f"environment = '{self.env}' AND resource_id = '{rid}'")

    def get(self, name, rid):
        return self.srv.call("GET", f"/api/v1/parameter/{name}?resource_id={rid}", env=self.env)

    def updated(self, name, rid):
        return harness.psql(self.srv.db, f"SELECT updated FROM parameter WHERE environment = '{self.env}' AND "
                            f"name = '{name}' AND resource_id = '{rid}'")

    def calls(self, name):
        path = os.path.join(self.dir, name + ".facts")
        return len(open(path).read()) if os.path.exists(path) else 0

    def wait_value(self, name, rid):
        answers = []

        def ok():
            answers.append(self.get(name, rid))
            return answers[-1][0] == 200
        harness.wait_for(ok, timeout=30, what=f"fact {name} of {rid}")
        return answers[-1][1]["parameter"], answers[0]


class FactExpiryTest(FactsTest):
    SERVER_EXTRA = "fact-expire = 2\nfact-renew = 3600\nfact-resource-block = 2\n"

    def test_unknown_then_value_then_expired_refresh(self):
        rid = self.deploy(("a.txt", "hello"))["a.txt"]
        param, first = self.wait_value("length", rid)
        self.assertEqual(first[0], 503, first)
        self.assertIn("is not known yet", first[1]["message"])
        self.assertEqual((param["value"], param["source"], param["expires"]), ("5", "fact", True), param)
        calls, before = self.calls("a.txt"), self.updated("length", rid)
        self.assertEqual(calls, 1)
        time.sleep(2.5)  # older than fact-expire (and past fact-resource-block): no longer served
        status, body = self.get("length", rid)
        self.assertEqual(status, 503, body)
        self.assertIn("has expired", body["message"])
        param, _ = self.wait_value("length", rid)
        self.assertEqual(param["value"], "5")
        self.assertNotEqual(self.updated("length", rid), before)
        self.assertEqual(self.calls("a.txt"), 2)
        # Without a resource: a plain lookup, no expiry.
        status, body = self.srv.call("GET", "/api/v1/parameter/absent", env=self.env)
        self.assertEqual(status, 404, body)


class FactRenewTest(FactsTest):
    SERVER_EXTRA = "fact-expire = 2\nfact-renew = 1\nfact-resource-block = 0\n"

    def test_renew_moves_expiring_facts_only(self):
        rids = self.deploy(("a.txt", "hello"), ("p.txt", "pinned"))
        self.wait_value("length", rids["a.txt"])
        pinned, _ = self.wait_value("pinned", rids["p.txt"])
        self.assertEqual((pinned["value"], pinned["expires"]), ("forever", False), pinned)
        pinned_updated = self.updated("pinned", rids["p.txt"])
        first = self.updated("length", rids["a.txt"])
        harness.wait_for(lambda: self.updated("length", rids["a.txt"]) != first, timeout=20,
                         what="the renew round to refresh the expiring fact")
        harness.wait_for(lambda: self.calls("a.txt") >= 3, timeout=20, what="a second renewal")
        self.assertEqual(self.calls("p.txt"), 1, "the expires=false fact is never re-requested")
        self.assertEqual(self.updated("pinned", rids["p.txt"]), pinned_updated)
        status, body = self.get("pinned", rids["p.txt"])
        self.assertEqual(status, 200, body)
        self.assertIn("facts_renewed", self.srv.proc.output())


if __name__ == "__main__":
    unittest.main()
