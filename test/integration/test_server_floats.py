"""Float attributes come back as floats (model/JsonNumbers.h keepFloatsInJsonb, docs/limits.md "Floats in
jsonb"). The server keeps resource attributes in jsonb, whose numeric type prints `1e+20` or `1.5e+300` as plain
digits without a `.`: before the fix a client, the diff and the executor's handlers saw an int where the model had
a float. Pushed through the API (both body readers: whole and streamed) and exported by the real compiler with a
Python handler that records what it is given; every value must read back as a Python float with the same value
from the version, the resource reads, the diff and the handler."""
import ast
import json
import math
import os
import shutil
import tempfile
import unittest
import uuid

import harness
import pyfixtures
import server_fixture as sf

NULL = "std::testing::NullResource"
# The values, as Python floats (json.dumps writes 1.5e+300, 1e+20, 1e+16, 2.5, 1.0, -0.0, 1.5e-300).
FLOATS = {"big": 1.5e300, "e20": 1e20, "e16": 1e16, "half": 2.5, "one": 1.0, "negzero": -0.0, "tiny": 1.5e-300,
          "huge": 1.7976931348623157e308}


class ApiFloatTest(sf.ServerTestCase):
    def setUp(self):
        self.pid, self.env = self.s.project_env("f" + uuid.uuid4().hex[:8])

    def assertFloats(self, attrs, want, where):
        for k, v in want.items():
            self.assertIs(type(attrs[k]), float, f"{where}: {k} = {attrs[k]!r}")
            self.assertEqual(attrs[k], v, f"{where}: {k}")

    def test_float_attributes_read_back_as_floats(self):
        s, env = self.s, self.env
        rid = f"{NULL}[internal,name=f]"
        v1, (status, body) = sf.put_version(s, env, [dict(rid=rid, name="f", nested={"l": [1e20, 2]}, **FLOATS)])
        self.assertEqual(status, 200, body)
        doubled = {k: v * 0.5 for k, v in FLOATS.items()}
        v2, (status, body) = sf.put_version(s, env, [dict(rid=rid, name="f", nested={"l": [1e20, 2]}, **doubled)])
        self.assertEqual(status, 200, body)

        attrs = s.ok("GET", f"/api/v1/version/{v1}", env=env)["resources"][0]["attributes"]
        self.assertFloats(attrs, FLOATS, "GET version")
        self.assertIs(type(attrs["nested"]["l"][0]), float)
        self.assertIs(type(attrs["nested"]["l"][1]), int)
        attrs = s.ok("GET", f"/api/v1/resource/{sf.q(rid + ',v=' + str(v2))}", env=env)["resource"]["attributes"]
        self.assertFloats(attrs, doubled, "GET v1 resource")
        hist = s.ok("GET", f"/api/v2/resource/{sf.q(rid)}/history", env=env)["data"]
        self.assertFloats(hist[-1]["attributes"], FLOATS, "resource history")

        diff = s.ok("GET", f"/api/v2/desiredstate/diff/{v1}/{v2}", env=env)["data"]
        changed = diff[0]["attributes"]
        # -0.0 * 0.5 == -0.0 and 1.5e-300 * 0.5 differ only where the value changed.
        for k in FLOATS:
            if FLOATS[k] == doubled[k]:
                continue
            self.assertIs(type(changed[k]["from_value"]), float, (k, changed[k]))
            self.assertEqual(changed[k]["from_value"], FLOATS[k], k)
            self.assertIs(type(changed[k]["to_value"]), float, (k, changed[k]))
            self.assertEqual(changed[k]["to_value"], doubled[k], k)
            self.assertEqual(changed[k]["from_value_compare"], str(FLOATS[k]), k)

        # What PostgreSQL holds: the integral ones as plain digits with ".0" (jsonb keeps the scale).
        text = harness.psql(s.db, f"SELECT attributes->>'e20' FROM resource WHERE environment = '{env}' "
                                  f"AND model = {v1}")
        self.assertEqual(text, "100000000000000000000.0")

    def test_diff_shows_a_float_int_change(self):
        """jsonb `=` calls float 1e16 and int 10000000000000000 (and 1.0 and 1) equal; the attribute hash, and so
        the deploy, does not: the diff lists such a resource as modified with those attributes, kinds kept."""
        s, env = self.s, self.env
        name = lambda n: f"{NULL}[internal,name={n}]"
        same = dict(rid=name("same"), name="same", x=1.5)
        before = [dict(rid=name("e16"), name="e16", v=1e16, w=3),
                  dict(rid=name("one"), name="one", v=1, nested={"l": [2.0, "x"]}),
                  dict(rid=name("zero"), name="zero", v=-0.0), same]
        after = [dict(rid=name("e16"), name="e16", v=10000000000000000, w=3),
                 dict(rid=name("one"), name="one", v=1.0, nested={"l": [2, "x"]}),
                 dict(rid=name("zero"), name="zero", v=0.0), same]
        v1, (status, body) = sf.put_version(s, env, before)
        self.assertEqual(status, 200, body)
        v2, (status, body) = sf.put_version(s, env, after)
        self.assertEqual(status, 200, body)
        # The hashes differ for all but `same` (the deploy would redeploy those three).
        hashes = harness.psql(s.db, f"SELECT count(DISTINCT attribute_hash) FROM resource WHERE environment = "
                                    f"'{env}' AND resource_id LIKE '%name=same]'")
        self.assertEqual(hashes, "1")

        diff = {d["resource_id"]: d for d in s.ok("GET", f"/api/v2/desiredstate/diff/{v1}/{v2}", env=env)["data"]}
        self.assertEqual(sorted(diff), [name("e16"), name("one"), name("zero")], diff)
        e16 = diff[name("e16")]
        self.assertEqual(e16["status"], "modified")
        self.assertEqual(list(e16["attributes"]), ["v"], e16)
        v = e16["attributes"]["v"]
        self.assertIs(type(v["from_value"]), float, v)
        self.assertIs(type(v["to_value"]), int, v)
        self.assertEqual((v["from_value_compare"], v["to_value_compare"]), ("1e+16", "10000000000000000"))
        one = diff[name("one")]["attributes"]
        self.assertEqual(sorted(one), ["nested", "v"], one)
        self.assertIs(type(one["v"]["from_value"]), int, one)
        self.assertIs(type(one["v"]["to_value"]), float, one)
        self.assertIs(type(one["nested"]["from_value"]["l"][0]), float, one)
        self.assertIs(type(one["nested"]["to_value"]["l"][0]), int, one)
        # -0.0 -> 0.0: jsonb keeps no sign, so no attribute can show it, but the hash changed: modified, listed.
        self.assertEqual(diff[name("zero")]["status"], "modified")
        self.assertEqual(diff[name("zero")]["attributes"], {})


class StreamedApiFloatTest(ApiFloatTest):
    @classmethod
    def setUpClass(cls):
        cls.s = sf.Server(server_extra="request_spool_size = 0\n")


MODEL = pyfixtures.NOTE_MODEL.replace("  string agentname", "".join(f"  float {k}\n" for k in FLOATS) +
                                      "  string agentname") % {"module": "pyfloat"}
# The model's literals: the language has no exponent, so plain digits (the compiler's floats are doubles).
LITERALS = {"big": "15" + "0" * 299 + ".0", "e20": "100000000000000000000.0", "e16": "10000000000000000.0",
            "half": "2.5", "one": "1.0", "negzero": "-0.0", "tiny": "0." + "0" * 299 + "15",
            "huge": "179769313486231570" + "0" * 291 + ".0"}


class ExportedFloatDeployTest(unittest.TestCase):
    """The real compiler's export and the frame the Python handler gets from the scheduler."""

    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="inm-floats-")
        self.addCleanup(shutil.rmtree, self.dir, True)
        self.srv = sf.Server(schedulers=True)
        self.addCleanup(self.srv.stop)
        _, self.env = self.srv.project_env("floats")
        for k in ("autostart_agent_deploy_interval", "autostart_agent_repair_interval"):
            self.srv.ok("POST", f"/api/v2/environment_settings/{k}", {"value": "0"}, env=self.env)
        self.target = os.path.join(self.dir, "note.txt")

    def test_exported_floats_reach_the_server_and_the_handler_as_floats(self):
        seen = self.target + ".seen"
        plugins = pyfixtures.note_plugins(
            module="pyfloat", fields=("path", "content") + tuple(FLOATS),
            preamble=f"FLOATS = {tuple(FLOATS)!r}\n",
            # Read back from the file: e16 differs (3e16), so a dry run reports it as a change of floats.
            read_extra="        resource.e16 = 3e16\n",
            on_create=f"        open({seen!r}, 'w').write(repr({{k: getattr(resource, k) for k in FLOATS}}))")
        pyfixtures.write_module(os.path.join(self.dir, "libs"), "pyfloat", MODEL, plugins)
        args = ", ".join(f"{k}={v}" for k, v in LITERALS.items())
        proj = pyfixtures.write_project(self.dir, "floats", 'import pyfloat\npyfloat::Note(path="%s", content="x", %s)\n'
                                        % (self.target, args))
        v = pyfixtures.export_and_release(self, self.srv, self.env, proj)
        attrs = self.srv.ok("GET", f"/api/v1/version/{v}", env=self.env)["resources"][0]["attributes"]
        for k, want in FLOATS.items():
            self.assertIs(type(attrs[k]), float, f"GET version: {k} = {attrs[k]!r}")
            self.assertEqual(attrs[k], want, k)
        harness.wait_for(lambda: os.path.exists(seen), timeout=90, what="the handler to deploy the note")
        harness.wait_for(lambda: open(seen).read().endswith("}"), timeout=10, what="the handler's record")
        got = ast.literal_eval(open(seen).read())
        for k, want in FLOATS.items():
            self.assertIs(type(got[k]), float, f"handler: {k} = {got[k]!r}")
            self.assertEqual(got[k], want, k)
        self.assertTrue(math.isfinite(got["huge"]))
        # -0.0: numeric has no negative zero, so the handler gets 0.0 (equal, unsigned; docs/limits.md).
        self.assertEqual(math.copysign(1.0, got["negzero"]), 1.0)

        # A dry run: the handler's changes (current 3e16 read back, desired 1e16) are floats in the report.
        dr = self.srv.ok("POST", f"/api/v2/dryrun/{v}", env=self.env)["data"]["id"]
        harness.wait_for(lambda: self.srv.ok("GET", f"/api/v2/dryrun/{v}/{dr}", env=self.env)["data"]["todo"] == 0,
                         timeout=60, what="the dry run to finish")
        report = self.srv.ok("GET", f"/api/v2/dryrun/{v}/{dr}", env=self.env)["data"]
        changes = list(report["resources"].values())[0]["changes"]
        self.assertEqual(list(changes), ["e16"], report)
        for side, want in (("current", 3e16), ("desired", 1e16)):
            self.assertIs(type(changes["e16"][side]), float, changes)
            self.assertEqual(changes["e16"][side], want)

        # A repair deploys the difference: the deploy action's changes hold the same floats.
        self.srv.ok("POST", "/api/v1/deploy", {}, env=self.env)
        query = ("SELECT changes FROM resourceaction WHERE environment = '%s' AND action = 'deploy' "
                 "AND changes::text LIKE '%%e16%%'" % self.env)
        harness.wait_for(lambda: harness.psql(self.srv.db, query), timeout=60, what="the repair's deploy action")
        changes = list(json.loads(harness.psql(self.srv.db, query).splitlines()[0]).values())[0]
        for side, want in (("current", 3e16), ("desired", 1e16)):
            self.assertIs(type(changes["e16"][side]), float, changes)
            self.assertEqual(changes["e16"][side], want)


if __name__ == "__main__":
    unittest.main()
