"""Delta versions (issue #30, docs/server.md "Delta versions"): a version pushed as a delta against its base and
the same version pushed whole (into a second environment with the same history) answer every read endpoint the
same, modulo environment ids, uuids and time stamps; a delta against a stale, deleted, unknown or re-made base is
a 409 naming the base and stores nothing; deleting the base afterwards loses nothing of the delta version; a
plain put_version (as Inmanta's exporter sends it) still works around deltas; and `inmanta export` sends a
delta on its second push, falls back to the whole version when the server refuses it, and lands the same
version as a whole push."""
import json
import os
import re
import shutil
import subprocess
import tempfile
import unittest

import harness
import server_fixture as sf

NULL = "std::testing::NullResource"
UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
TIME = re.compile(r"\d{4}-\d\d-\d\d[T ]\d\d(:|%3A)\d\d[0-9.:%A-Fa-f+Z-]*")


def rid(name):
    return f"{NULL}[agent1,name={name}]"


def normalized(value):
    """The answer with uuids (environment, action and unknown ids) and time stamps replaced."""
    if isinstance(value, dict):
        return {k: normalized(v) for k, v in value.items()}
    if isinstance(value, list):
        return [normalized(v) for v in value]
    if isinstance(value, str):
        return UUID.sub("<uuid>", TIME.sub("<time>", value))
    return value


# Version 1: a <- b, undefined c <- d (skipped), e <- f in set s1, g alone.
V1 = {
    "a": {}, "b": {"requires": ["a"], "x": 1}, "c": {"undefined": True}, "d": {"requires": ["c"]},
    "e": {"set": "s1"}, "f": {"set": "s1", "requires": ["e"]}, "g": {},
}
# Version 2: b changed, c defined again, e moved to set s2 (f in s1 requires it: not suitable for partial
# compiles), g removed, h new (in s2, requires a), i new and undefined, j requires i.
V2 = {
    "a": {}, "b": {"requires": ["a"], "x": 2}, "c": {}, "d": {"requires": ["c"]},
    "e": {"set": "s2"}, "f": {"set": "s1", "requires": ["e"]}, "h": {"set": "s2", "requires": ["a"]},
    "i": {"undefined": True}, "j": {"requires": ["i"]},
}


def body_parts(model, version, names):
    """resources, resource_state and resource_sets of put_version for `names` of `model`."""
    resources, state, sets = [], {}, {}
    for n in names:
        spec = model[n]
        r = sf.resource(rid(n), version, [rid(q) for q in spec.get("requires", [])], name=n, agentname="agent1",
                        x=spec.get("x", 0), purge_on_delete=False, managed=True, fail=False)
        resources.append(r)
        if spec.get("undefined"):
            state[rid(n)] = "undefined"
        if spec.get("set"):
            sets[rid(n)] = spec["set"]
    return resources, state, sets


class DeltaServerTest(sf.ServerTestCase):
    maxDiff = None

    def full(self, env, model):
        v = self.s.ok("POST", "/api/v2/reserve_version", env=env)["data"]
        resources, state, sets = body_parts(model, v, sorted(model))
        _, (status, data) = sf.put_version(self.s, env, resources, version=v, resource_state=state,
                                           resource_sets=sets)
        self.assertEqual(status, 200, data)
        return v

    def delta_body(self, env, base, token, old, new, version=None):
        v = version or self.s.ok("POST", "/api/v2/reserve_version", env=env)["data"]
        changed = [n for n in sorted(new) if n not in old or old[n] != new[n]]
        resources, state, sets = body_parts(new, v, changed)
        return v, {"version": v, "base_version": base, "base_token": token, "resources": resources,
                   "removed_resources": [rid(n) for n in sorted(old) if n not in new], "resource_state": state,
                   "resource_sets": sets, "unknowns": [], "compiler_version": "0.1.0",
                   "version_info": {"export_metadata": {"type": "api", "message": "test"}}}

    def base_of(self, env):
        return self.s.ok("GET", "/api/v2/version/delta_base", env=env)["data"]

    def reads(self, env, versions):
        """Every read endpoint's answer for the versions and their resources, normalized."""
        out = {}
        for v in versions:
            for path in (f"/api/v1/version/{v}", f"/api/v1/version/{v}?include_logs=true",
                         f"/api/v2/desiredstate/{v}"):
                out[path] = self.s.ok("GET", path, env=env)
        out["diff"] = self.s.ok("GET", f"/api/v2/desiredstate/diff/{versions[0]}/{versions[1]}", env=env)
        for path in ("/api/v1/version", "/api/v2/desiredstate", "/api/v2/resource?limit=1000",
                     "/api/v2/resource?limit=1000&deploy_summary=true&sort=status.desc",
                     "/api/v2/resource_actions"):
            out[path] = self.s.ok("GET", path, env=env)
        for n in sorted(set(V1) | set(V2)):
            for tail in ("", "/history"):
                status, data = self.s.call("GET", f"/api/v2/resource/{sf.q(rid(n))}{tail}", env=env)
                out[n + tail] = [status, data]
        return normalized(out)

    def test_feature_announced(self):
        features = self.s.ok("GET", "/api/v1/serverstatus")["data"]["features"]
        self.assertIn("delta_version", [f["name"] for f in features])
        _, env = self.s.project_env("feat")
        self.assertEqual(self.base_of(env), {"version": 0, "token": None})

    def test_delta_and_full_read_the_same(self):
        _, env_delta = self.s.project_env("delta")
        _, env_full = self.s.project_env("full")
        v1 = self.full(env_delta, V1)
        self.assertEqual(self.full(env_full, V1), v1)
        base = self.base_of(env_delta)
        self.assertEqual(base["version"], v1)
        v2, body = self.delta_body(env_delta, v1, base["token"], V1, V2)
        self.assertEqual(len(body["resources"]), 6)  # b, c, e, h, i, j
        answer = self.s.ok("PUT", "/api/v2/version/delta", body, env=env_delta)["data"]
        self.assertEqual(answer["version"], v2)
        self.assertEqual(answer["token"], self.base_of(env_delta)["token"])
        self.assertNotEqual(answer["token"], base["token"])
        self.assertEqual(self.full(env_full, V2), v2)
        model = self.s.ok("GET", f"/api/v1/version/{v2}", env=env_delta)["model"]
        self.assertEqual(model["total"], 9)
        self.assertEqual(model["undeployable"], [rid("i")])
        self.assertEqual(model["skipped_for_undeployable"], [rid("j")])
        self.assertFalse(model["is_suitable_for_partial_compiles"])
        delta_reads, full_reads = self.reads(env_delta, [v1, v2]), self.reads(env_full, [v1, v2])
        self.assertEqual(delta_reads.keys(), full_reads.keys())
        for key in delta_reads:
            self.assertEqual(delta_reads[key], full_reads[key], key)
        # A plain put_version, as Inmanta's exporter sends it, after a delta: still the same answers.
        v3 = self.full(env_delta, V1)
        self.assertEqual(self.full(env_full, V1), v3)
        self.assertEqual(self.reads(env_delta, [v2, v3]), self.reads(env_full, [v2, v3]))

    def test_stale_deleted_unknown_or_remade_base_is_refused(self):
        _, env = self.s.project_env("stale")
        v1 = self.full(env, V1)
        token1 = self.base_of(env)["token"]
        # Unknown base.
        v, body = self.delta_body(env, v1 + 50, token1, V1, V2)
        status, data = self.s.call("PUT", "/api/v2/version/delta", body, env=env)
        self.assertEqual(status, 409, data)
        self.assertIn(f"the delta's base version {v1 + 50} does not exist", data["message"])
        # Wrong token (the base was re-made, e.g. after a clear).
        v, body = self.delta_body(env, v1, "00000000-0000-0000-0000-000000000000", V1, V2, version=v)
        status, data = self.s.call("PUT", "/api/v2/version/delta", body, env=env)
        self.assertEqual(status, 409, data)
        self.assertIn(f"base version {v1} has content token", data["message"])
        # Stale base: another version landed after it.
        v2 = self.full(env, V2)
        v, body = self.delta_body(env, v1, token1, V1, V2)
        status, data = self.s.call("PUT", "/api/v2/version/delta", body, env=env)
        self.assertEqual(status, 409, data)
        self.assertIn(f"base version {v1} is no longer the latest version", data["message"])
        self.assertIn(f"(version {v2} is)", data["message"])
        # Deleted base (not released: auto_deploy off for the last one).
        self.s.ok("POST", "/api/v2/environment_settings/auto_deploy", {"value": False}, env=env)
        v3 = self.full(env, V1)
        token3 = self.base_of(env)["token"]
        self.s.ok("DELETE", f"/api/v1/version/{v3}", env=env)
        v, body = self.delta_body(env, v3, token3, V1, V2)
        status, data = self.s.call("PUT", "/api/v2/version/delta", body, env=env)
        self.assertEqual(status, 409, data)
        self.assertIn(f"the delta's base version {v3} does not exist", data["message"])
        # None of the refused deltas stored anything.
        listed = [x["version"] for x in self.s.ok("GET", "/api/v1/version", env=env)["versions"]]
        self.assertEqual(sorted(listed), [v1, v2])

    def test_bad_deltas_are_400_and_store_nothing(self):
        _, env = self.s.project_env("bad")
        v1 = self.full(env, V1)
        token = self.base_of(env)["token"]
        cases = [
            ({"x": {"requires": ["nothere"]}}, [], "requires " + rid("nothere") + ", which is not in this version"),
            ({}, ["a"], rid("b") + " requires " + rid("a") + ", which is not in this version"),
            ({}, ["zz"], "removed_resources names " + rid("zz") + ", which is not a resource of the base"),
            ({"b": {"x": 5}}, ["b"], "is both in 'resources' and in 'removed_resources'"),
        ]
        for changes, removed, message in cases:
            new = dict(V1, **changes)
            v, body = self.delta_body(env, v1, token, V1, new)
            body["removed_resources"] = [rid(n) for n in removed]
            status, data = self.s.call("PUT", "/api/v2/version/delta", body, env=env)
            self.assertEqual(status, 400, (changes, removed, data))
            self.assertIn(message, data["message"])
            self.assertEqual(self.s.call("GET", f"/api/v1/version/{v}", env=env)[0], 404)
        status, data = self.s.call("PUT", "/api/v2/version/delta", {"version": 9, "resources": []}, env=env)
        self.assertEqual(status, 400)
        self.assertIn("base_version", data["message"])

    def test_deleting_the_base_loses_nothing(self):
        _, env = self.s.project_env("chain")
        self.s.ok("POST", "/api/v2/environment_settings/auto_deploy", {"value": False}, env=env)
        v1 = self.full(env, V1)
        v2, body = self.delta_body(env, v1, self.base_of(env)["token"], V1, V2)
        self.s.ok("PUT", "/api/v2/version/delta", body, env=env)
        # A chain: v3 is a delta on v2 (back to V1's content).
        v3, body = self.delta_body(env, v2, self.base_of(env)["token"], V2, V1)
        self.s.ok("PUT", "/api/v2/version/delta", body, env=env)
        before = {v: self.s.ok("GET", f"/api/v1/version/{v}", env=env) for v in (v2, v3)}
        self.s.ok("DELETE", f"/api/v1/version/{v1}", env=env)
        self.assertEqual(self.s.ok("GET", f"/api/v1/version/{v2}", env=env), before[v2])
        self.s.ok("DELETE", f"/api/v1/version/{v2}", env=env)
        after = self.s.ok("GET", f"/api/v1/version/{v3}", env=env)
        self.assertEqual(after, before[v3])
        self.assertEqual(sorted(r["resource_id"] for r in after["resources"]), sorted(rid(n) for n in V1))
        self.s.ok("POST", f"/api/v1/version/{v3}", {"push": False}, env=env)
        ids = [r["resource_id"] for r in self.s.ok("GET", "/api/v2/resource?limit=1000", env=env)["data"]]
        self.assertEqual(sorted(ids), sorted(rid(n) for n in V1))


MODEL = """import std
import std::testing
a = std::testing::NullResource(name="a", agentname="agent1")
std::testing::NullResource(name="b", agentname="agent1", requires=a)
{extra}
"""


class DeltaExportTest(sf.ServerTestCase):
    """`inmanta export` against a server: the second push is a delta, a refused delta falls back to the whole
    version, and a delta-pushed version reads as the same version pushed whole."""

    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="inm-delta-")
        self.addCleanup(shutil.rmtree, self.tmp, ignore_errors=True)

    def project(self, name, extra):
        d = os.path.join(self.tmp, name)
        os.makedirs(d, exist_ok=True)
        with open(os.path.join(d, "project.yml"), "w") as f:
            f.write(f"name: {name}\nmodulepath: libs\ndownloadpath: libs\n")
        with open(os.path.join(d, "main.cf"), "w") as f:
            f.write(MODEL.format(extra=extra))
        return d

    def export(self, project, env, delta=True):
        e = dict(os.environ, INMANTA_EXPORT_DELTA="1" if delta else "0")
        p = subprocess.run([harness.INMANTA, "-vv", "export", "-e", env, "--server_address", "127.0.0.1",
                            "--server_port", str(self.s.port)], cwd=project, capture_output=True, text=True,
                           timeout=300, env=e)
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr + self.s.proc.output()[-2000:])
        return int(re.search(r"Committed resources with version (\d+)", p.stdout).group(1)), p.stderr

    def test_second_export_is_a_delta_and_reads_as_a_full_one(self):
        _, env_delta = self.s.project_env("xd")
        _, env_full = self.s.project_env("xf")
        extra1 = 'std::testing::NullResource(name="c", agentname="agent2")\n' \
                 'std::testing::NullResource(name="gone", agentname="agent1")'
        extra2 = 'std::testing::NullResource(name="c", agentname="agent2", fail=true)\n' \
                 'std::testing::NullResource(name="new", agentname="agent3")'
        pd, pf = self.project("pd", extra1), self.project("pf", extra1)
        v1, err = self.export(pd, env_delta)
        self.assertNotIn("as a delta", err)
        self.assertEqual(self.export(pf, env_full, delta=False)[0], v1)
        for p in (pd, pf):
            with open(os.path.join(p, "main.cf"), "w") as f:
                f.write(MODEL.format(extra=extra2))
        v2, err = self.export(pd, env_delta)
        self.assertIn(f"pushed version {v2} as a delta against version {v1} (2 new or changed, 1 removed)", err)
        self.assertEqual(self.export(pf, env_full, delta=False)[0], v2)
        for path in (f"/api/v1/version/{v2}", f"/api/v2/desiredstate/{v2}", f"/api/v2/desiredstate/diff/{v1}/{v2}",
                     "/api/v1/version", "/api/v2/resource?limit=1000"):
            a = normalized(self.s.ok("GET", path, env=env_delta))
            b = normalized(self.s.ok("GET", path, env=env_full))
            if path == "/api/v1/version":  # export metadata names the project folder
                for x in a["versions"] + b["versions"]:
                    x.pop("version_info")
            self.assertEqual(a, b, path)
        # Nothing changed: an empty delta still makes a new, equal version.
        v3, err = self.export(pd, env_delta)
        self.assertIn(f"as a delta against version {v2} (0 new or changed, 0 removed)", err)
        ids = lambda v: sorted(r["resource_id"] for r in self.s.ok("GET", f"/api/v1/version/{v}", env=env_delta)
                               ["resources"])
        self.assertEqual(ids(v3), ids(v2))

    def test_refused_delta_falls_back_to_the_whole_version(self):
        _, env = self.s.project_env("xr")
        pd = self.project("pr", "")
        v1, _ = self.export(pd, env)
        # The exporter's memory now names a resource the server's version does not have: its delta removes it,
        # the server refuses (400), and the whole version goes up instead.
        state = os.path.join(pd, ".inmanta_export", env + ".state")
        with open(state, "a") as f:
            f.write("R\t" + "0" * 32 + "\t\t" + NULL + "[agent1,name=phantom]\n")
        v2, err = self.export(pd, env)
        self.assertIn(f"the server refused the delta against version {v1}", err)
        self.assertIn("pushing the whole version", err)
        self.assertIn("phantom", err)
        got = self.s.ok("GET", f"/api/v1/version/{v2}", env=env)
        self.assertEqual(sorted(r["resource_id"] for r in got["resources"]),
                         [f"{NULL}[agent1,name=a]", f"{NULL}[agent1,name=b]"])
        # The base is gone (a newer version from another client): a whole push, saying why.
        sf.put_version(self.s, env, [])
        v4, err = self.export(pd, env)
        self.assertIn("pushing the whole version", err)
        self.assertNotIn("as a delta", err)
        # And the next one is a delta again.
        _, err = self.export(pd, env)
        self.assertIn(f"as a delta against version {v4}", err)


if __name__ == "__main__":
    unittest.main()
