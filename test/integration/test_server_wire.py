"""Spec §18 wire rules against the real server: gzip request bodies, exact `Content-Type: application/json`,
bodies read as JSON whatever their Content-Type, percent-encoded path segments, capitalised query booleans,
string-typed scalars, path parameters repeated in bodies with other types, case-insensitive tenant header,
status exactly 200, JSON error bodies with a message, and the request size limit (413 before the body is read)."""
import gzip
import json
import unittest
import uuid

import harness
import server_fixture as sf

NULL = "std::testing::NullResource"


class ServerWireTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.s = sf.Server(server_extra="max_request_size = 200000\n")

    @classmethod
    def tearDownClass(cls):
        cls.s.stop()

    def setUp(self):
        self.pid, self.env = self.s.project_env("w" + uuid.uuid4().hex[:8])

    def request(self, method, path, body=b"", headers=()):
        hdr = "".join(f"{k}: {v}\r\n" for k, v in headers)
        data = (f"{method} {path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Length: {len(body)}\r\n{hdr}\r\n").encode() + body
        return self.s.raw(data)

    def test_gzip_body_and_form_content_type(self):
        body = gzip.compress(json.dumps({"name": "gz-" + uuid.uuid4().hex}).encode())
        status, headers, raw = self.request("PUT", "/api/v2/project", body,
                                            [("Content-Encoding", "gzip"), ("Content-Type", "application/x-www-form-urlencoded")])
        self.assertEqual(status, 200)
        self.assertEqual(headers["content-type"], "application/json")
        self.assertTrue(json.loads(raw)["data"]["name"].startswith("gz-"))
        # A PUT without any Content-Type is JSON too.
        status, _, _ = self.request("PUT", "/api/v2/project", json.dumps({"name": "nt-" + uuid.uuid4().hex}).encode())
        self.assertEqual(status, 200)
        # A corrupt gzip body is a 400 with a message.
        status, headers, raw = self.request("PUT", "/api/v2/project", b"\x1f\x8bnot gzip", [("Content-Encoding", "gzip")])
        self.assertEqual(status, 400)
        self.assertIn("gzip", json.loads(raw)["message"])

    def test_gzip_put_version(self):
        v = self.s.ok("POST", "/api/v2/reserve_version", env=self.env)["data"]
        body = {"version": v, "resources": [sf.resource(f"{NULL}[a,name=n{i}]", v, name=f"n{i}") for i in range(50)],
                "resource_state": {}, "unknowns": [], "version_info": {}, "compiler_version": "x", "pip_config": None}
        status, headers, raw = self.request("PUT", "/api/v1/version", gzip.compress(json.dumps(body).encode()),
                                            [("Content-Encoding", "gzip"), ("X-Inmanta-Tid", self.env)])
        self.assertEqual(status, 200, raw)
        self.assertEqual(self.s.ok("GET", f"/api/v1/version/{v}", env=self.env)["model"]["total"], 50)

    def test_exact_content_type_on_success_and_errors(self):
        for path, expect in [("/api/v2/project", 200), ("/api/v2/project/" + str(uuid.uuid4()), 404), ("/api/v2/x", 404)]:
            status, headers, raw = self.request("GET", path)
            self.assertEqual(status, expect)
            self.assertEqual(headers["content-type"], "application/json")
            if status != 200:
                self.assertIsInstance(json.loads(raw)["message"], str)

    def test_errors_are_json_with_message(self):
        for method, path, body, headers, status in [
            ("PUT", "/api/v2/project", b"{not json", [], 400),
            ("PUT", "/api/v2/project", b"[1, 2]", [], 400),
            ("GET", "/api/v1/version/abc", b"", [("X-Inmanta-Tid", self.env)], 400),
            ("GET", "/api/v1/version?limit=x", b"", [("X-Inmanta-Tid", self.env)], 400),
            ("GET", "/api/v1/version", b"", [], 400),
            ("GET", "/api/v1/version", b"", [("X-Inmanta-Tid", "zzz")], 400),
            ("GET", "/api/v1/version", b"", [("X-Inmanta-Tid", str(uuid.uuid4()))], 404),
        ]:
            st, hdrs, raw = self.request(method, path, body, headers)
            self.assertEqual(st, status, (method, path, raw))
            msg = json.loads(raw)["message"]
            self.assertIsInstance(msg, str)
            self.assertTrue(msg)
        st, _, raw = self.request("GET", "/api/v1/version/abc", b"", [("X-Inmanta-Tid", self.env)])
        self.assertIn("'id'", json.loads(raw)["message"])

    def test_percent_encoded_segments(self):
        # %5F is '_': the segment is decoded before routing; %2F inside a segment stays inside it.
        status, _, raw = self.request("GET", "/api/v1/environment_settings/auto%5Fdeploy", headers=[("X-Inmanta-Tid", self.env)])
        self.assertEqual(status, 200)
        status, _, raw = self.request("GET", "/api/v1/environment_settings/auto%2Fdeploy", headers=[("X-Inmanta-Tid", self.env)])
        self.assertEqual(status, 404)
        self.assertIn("'auto/deploy'", json.loads(raw)["message"])
        status, _, _ = self.request("GET", f"/api/v2/environment/{self.env.replace('-', '%2D')}")
        self.assertEqual(status, 200)

    def test_case_insensitive_tenant_header_and_capitalised_booleans(self):
        sf.put_version(self.s, self.env, [dict(rid=f"{NULL}[a,name=x]", name="x")])
        for name in ("X-Inmanta-Tid", "x-inmanta-tid", "X-INMANTA-TID", "X-Inmanta-tid"):
            status, _, raw = self.request("GET", "/api/v1/version/1?include_logs=True", headers=[(name, self.env)])
            self.assertEqual(status, 200, name)
            self.assertIn("actions", json.loads(raw)["resources"][0])
        status, _, raw = self.request("GET", "/api/v1/version/1?include_logs=False", headers=[("X-Inmanta-Tid", self.env)])
        self.assertNotIn("actions", json.loads(raw)["resources"][0])
        status, _, raw = self.request("GET", "/api/v1/version/1?include_logs=Maybe", headers=[("X-Inmanta-Tid", self.env)])
        self.assertEqual(status, 400)
        self.assertIn("include_logs", json.loads(raw)["message"])

    def test_body_repeats_path_params_with_other_types(self):
        s = self.s
        s.ok("POST", "/api/v2/environment_settings/auto_deploy", {"value": False}, env=self.env)
        v, _ = sf.put_version(s, self.env, [dict(rid=f"{NULL}[a,name=x]", name="x")])
        # Release with {"id": "<v>"} (a string) as the 11.5.5 CLI sends it.
        status, body = s.call("POST", f"/api/v1/version/{v}", {"id": str(v), "push": "false"}, env=self.env)
        self.assertEqual(status, 200)
        self.assertTrue(body["model"]["released"])
        # Setting set with {"id": key, "value": "<string>"}: converted by the setting's type.
        s.ok("POST", "/api/v1/environment_settings/available_versions_to_keep", {"id": "available_versions_to_keep", "value": "12"}, env=self.env)
        self.assertEqual(s.ok("GET", "/api/v1/environment_settings/available_versions_to_keep", env=self.env)["value"], 12)
        # A body id that contradicts the path is refused.
        self.assertEqual(s.call("POST", f"/api/v1/version/{v}", {"id": v + 1}, env=self.env)[0], 400)

    def test_success_is_exactly_200(self):
        for method, path, body in [("PUT", "/api/v1/project", {"name": "c-" + uuid.uuid4().hex}),
                                   ("POST", "/api/v2/reserve_version", None),
                                   ("DELETE", "/api/v2/environment_settings/auto_deploy", None)]:
            status, _ = self.s.call(method, path, body, env=self.env)
            self.assertEqual(status, 200, path)

    def test_request_too_large(self):
        big = b'{"name": "' + b"x" * 300000 + b'"}'
        status, headers, raw = self.request("PUT", "/api/v2/project", big)
        self.assertEqual(status, 413)
        self.assertIn("max_request_size", json.loads(raw)["message"])
        # Refused on the announced length, before the body is sent.
        status, _, raw = self.s.raw(b"PUT /api/v2/project HTTP/1.1\r\nHost: x\r\nContent-Length: 900000000\r\n\r\n")
        self.assertEqual(status, 413)
        # A small gzip body that inflates beyond the limit.
        status, _, raw = self.request("PUT", "/api/v2/project", gzip.compress(big), [("Content-Encoding", "gzip")])
        self.assertEqual(status, 413)
        # The server still answers.
        self.assertTrue(sf.healthy(self.s.base))


if __name__ == "__main__":
    unittest.main()
