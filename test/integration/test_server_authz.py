"""Authorisation on every route (docs/server.md "Authorisation", "JWT rules"), against one real server with auth on.

The route table comes from the server itself (`inmanta server --list-routes`), so a new route is covered without
editing this file. Each route is called with each kind of token: none, api, agent, compiler (unscoped), a token
scoped to environment A calling environment B, a scoped token calling its own environment, and tokens that must be
refused outright (wrong issuer, wrong audience, expired, nbf in the future, a list-typed environment claim). A call
is "allowed" when its status is neither 401 nor 403 (the handler then answers 200, 400 or 404 for the placeholder
arguments). Unscoped and own-environment calls name a random environment that does not exist, so no call of the
matrix changes anything that exists."""
import base64
import hashlib
import hmac
import json
import os
import subprocess
import time
import unittest
import uuid

import harness
import server_fixture as sf
from test_server_ops import ISSUER, b64url, jwt

KEY = b64url(b"0123456789abcdef0123456789abcdef-authz-key")
NOW = int(time.time())


def bearer(claims):
    return {"Authorization": "Bearer " + jwt(KEY, claims)}


ALL_TYPES = "api,agent,compiler"
# Tokens every non-open route must refuse with 401.
INVALID = {
    "none": {},
    "wrong_iss": bearer({"iss": "https://elsewhere.example/", "urn:inmanta:ct": "api"}),
    "wrong_aud": bearer({"aud": ["https://elsewhere.example/"], "urn:inmanta:ct": "api"}),
    "expired": bearer({"exp": NOW - 60, "urn:inmanta:ct": "api"}),
    "nbf_future": bearer({"nbf": NOW + 3600, "urn:inmanta:ct": "api"}),
    "env_list": bearer({"urn:inmanta:ct": ALL_TYPES, "urn:inmanta:env": [str(uuid.uuid4())]}),
}


def raw_jwt(key, claims):
    """A token with exactly `claims` (no iss/aud defaults)."""
    head = b64url(json.dumps({"alg": "HS256", "typ": "JWT"}).encode())
    body = b64url(json.dumps(claims).encode())
    secret = base64.urlsafe_b64decode(key + "==")
    sig = b64url(hmac.new(secret, f"{head}.{body}".encode(), hashlib.sha256).digest())
    return f"{head}.{body}.{sig}"


class AuthzMatrixTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.s = sf.Server(server_extra="auth = true\n",
                          extra=f"[auth_jwt_default]\nalgorithm = HS256\nsign = true\nkey = {KEY}\nexpire = 0\n")
        cls.admin = bearer({"urn:inmanta:ct": "api"})
        pid = cls.s.ok("PUT", "/api/v2/project", {"name": "authz"}, headers=cls.admin)["data"]["id"]
        cls.env_a = cls.s.ok("PUT", "/api/v2/environment", {"project_id": pid, "name": "a"}, headers=cls.admin)["data"]["id"]
        cls.env_b = cls.s.ok("PUT", "/api/v2/environment", {"project_id": pid, "name": "b"}, headers=cls.admin)["data"]["id"]
        if os.environ.get("INM_AUTHZ_ROUTES"):  # a saved table, to run the matrix against an older server build
            with open(os.environ["INM_AUTHZ_ROUTES"]) as f:
                cls.routes = json.load(f)
            return
        out = subprocess.run([harness.INMANTA, "server", "-c", cls.s.config, "--list-routes"], capture_output=True,
                             text=True, timeout=60)
        if out.returncode != 0:
            raise AssertionError("inmanta server --list-routes failed:\n" + out.stderr)
        cls.routes = json.loads(out.stdout)

    @classmethod
    def tearDownClass(cls):
        cls.s.stop()

    def call(self, route, headers, env):
        """`route` with placeholder arguments, the environment (header or path parameter) set to `env`."""
        path = []
        for seg in route["path"].split("/")[1:]:
            if seg.startswith("<"):
                name = seg[1:-1]
                seg = env if route["environment"] == name else (str(uuid.uuid4()) if route["scope"] == "object" else "1")
            path.append(seg)
        h = dict(headers)
        h["X-Inmanta-tid"] = env
        body = {} if route["method"] in ("PUT", "POST") else None
        status, data = harness.http(route["method"], self.s.base + "/" + "/".join(path), body, h, timeout=60)[:2]
        return status, data

    def test_route_table_declares_every_policy(self):
        self.assertGreater(len(self.routes), 90)
        seen = set()
        for r in self.routes:
            key = (r["method"], r["path"])
            self.assertNotIn(key, seen, "route registered twice")
            seen.add(key)
            self.assertIn(r["scope"], {"open", "server", "project", "environment", "any-environment", "object"}, r)
            self.assertTrue(set(r["client_types"]) <= {"api", "agent", "compiler"} and r["client_types"], r)
            if r["scope"] == "environment":
                self.assertTrue(r["environment"] == "X-Inmanta-tid" or f"<{r['environment']}>" in r["path"], r)
        # Every family is in the table (the compile routes register after the others).
        for must in [("GET", "/api/v2/health"), ("PUT", "/api/v2/project"), ("GET", "/api/v2/environment"),
                     ("POST", "/api/v1/notify/<id>"), ("PUT", "/api/v1/file/<id>"), ("POST", "/api/v2/environment_auth"),
                     ("GET", "/api/v2/compilereport/<id>")]:
            self.assertIn(must, seen)

    def test_matrix(self):
        failures = []
        nowhere = str(uuid.uuid4())  # an environment that does not exist: the handlers answer 404 or 400
        kinds = {
            "api": (bearer({"urn:inmanta:ct": "api"}), nowhere),
            "agent": (bearer({"urn:inmanta:ct": "agent"}), nowhere),
            "compiler": (bearer({"urn:inmanta:ct": "compiler"}), nowhere),
            "scoped_own": (bearer({"urn:inmanta:ct": ALL_TYPES, "urn:inmanta:env": nowhere}), nowhere),
            "scoped_a_on_b": (bearer({"urn:inmanta:ct": ALL_TYPES, "urn:inmanta:env": self.env_a}), self.env_b),
        }
        kinds.update({k: (h, nowhere) for k, h in INVALID.items()})
        for r in self.routes:
            for kind, (headers, env) in kinds.items():
                status, data = self.call(r, headers, env)
                if r["scope"] == "open":
                    want = "allowed"
                elif kind in INVALID:
                    want = 401
                elif kind in ("api", "agent", "compiler"):
                    want = "allowed" if kind in r["client_types"] else 403
                elif r["scope"] in ("server", "project"):
                    want = 403
                elif kind == "scoped_a_on_b" and r["scope"] == "environment":
                    want = 403
                else:
                    want = "allowed"
                got_ok = status not in (401, 403) if want == "allowed" else status == want
                if got_ok and want == 403 and kind == "scoped_a_on_b" and r["method"] != "HEAD":
                    got_ok = f"scoped to environment {self.env_a}" in data.get("message", "")  # names the scope
                if not got_ok:
                    failures.append(f"{r['method']} {r['path']} [{r['scope']}] token {kind}: {status} "
                                    f"(want {want}) {data if isinstance(data, dict) else ''}")
        self.assertEqual(failures, [], "\n" + "\n".join(failures))

    def test_environment_a_token_cannot_touch_b(self):
        """The misuses that went through before: each is refused and B is untouched."""
        a = bearer({"urn:inmanta:ct": "api", "urn:inmanta:env": self.env_a})
        s = self.s
        for method, path, body in [("PUT", "/api/v2/project", {"name": "intruder"}),
                                   ("GET", "/api/v2/project", None),
                                   ("GET", "/api/v1/environment", None),
                                   ("PUT", "/api/v2/environment", {"project_id": str(uuid.uuid4()), "name": "x"}),
                                   ("POST", f"/api/v1/notify/{self.env_b}", {}),
                                   ("HEAD", f"/api/v1/notify/{self.env_b}", None)]:
            status, data = s.call(method, path, body, headers=a)
            self.assertEqual(status, 403, f"{method} {path}: {data}")
            if method != "HEAD":
                self.assertIn(f"scoped to environment {self.env_a}", data["message"])
        # The admin still sees both environments and the one project.
        names = sorted(e["name"] for e in s.ok("GET", "/api/v2/environment", headers=self.admin)["data"])
        self.assertEqual(names, ["a", "b"])
        self.assertEqual([p["name"] for p in s.ok("GET", "/api/v2/project", headers=self.admin)["data"]], ["authz"])
        # The own environment and the shared routes stay usable.
        self.assertEqual(s.call("GET", f"/api/v2/environment/{self.env_a}", headers=a)[0], 200)
        self.assertEqual(s.call("GET", "/api/v1/serverstatus", headers=a)[0], 200)
        self.assertEqual(s.call("POST", "/api/v1/file", {"files": []}, headers=a)[0], 200)

    def test_jwt_rules(self):
        """One refused token per rule, on a route the same token with good claims may call."""
        s, env = self.s, self.env_a
        good = {"urn:inmanta:ct": "api", "urn:inmanta:env": env, "exp": NOW + 3600, "nbf": NOW - 10, "iat": NOW}
        self.assertEqual(s.call("GET", "/api/v2/environment_settings", env=env, headers=bearer(good))[0], 200)
        self.assertEqual(s.call("GET", "/api/v2/environment_settings", env=env,
                                headers=bearer({**good, "aud": ISSUER}))[0], 200)  # a single-string aud
        cases = {
            "signature": ({"Authorization": "Bearer " + jwt(b64url(b"another-key-of-at-least-32-bytes!!"), good)}, "signature"),
            "no iss": ({"Authorization": "Bearer " + raw_jwt(KEY, {**good, "aud": [ISSUER]})}, "iss"),
            "iss number": (bearer({**good, "iss": 1}), "iss"),
            "unknown iss": (bearer({**good, "iss": "https://elsewhere.example/"}), "issuer"),
            "no aud": ({"Authorization": "Bearer " + raw_jwt(KEY, {**good, "iss": ISSUER})}, "aud"),
            "wrong aud": (bearer({**good, "aud": ["https://elsewhere.example/"]}), "audience"),
            "aud number": (bearer({**good, "aud": 7}), "aud"),
            "expired": (bearer({**good, "exp": NOW - 1}), "expired"),
            "exp string": (bearer({**good, "exp": str(NOW + 3600)}), "exp"),
            "exp bool": (bearer({**good, "exp": True}), "exp"),
            "nbf future": (bearer({**good, "nbf": NOW + 3600}), "nbf"),
            "nbf string": (bearer({**good, "nbf": "0"}), "nbf"),
            "env list": (bearer({**good, "urn:inmanta:env": [env]}), "urn:inmanta:env"),
            "env number": (bearer({**good, "urn:inmanta:env": 1}), "urn:inmanta:env"),
            "env not an id": (bearer({**good, "urn:inmanta:env": "all"}), "urn:inmanta:env"),
            "ct unknown": (bearer({**good, "urn:inmanta:ct": "api,root"}), "root"),
            "ct number": (bearer({**good, "urn:inmanta:ct": 1}), "urn:inmanta:ct"),
            "ct list of non-strings": (bearer({**good, "urn:inmanta:ct": [1]}), "urn:inmanta:ct"),
            "ct empty": (bearer({**good, "urn:inmanta:ct": ""}), "urn:inmanta:ct"),
        }
        for name, (headers, word) in cases.items():
            status, data = s.call("GET", "/api/v2/environment_settings", env=env, headers=headers)
            self.assertEqual(status, 401, f"{name}: {data}")
            self.assertIn(word, data["message"], name)


if __name__ == "__main__":
    unittest.main()
