"""Operating the server: SIGKILL and restart without data loss, graceful SIGTERM, PostgreSQL stopped and
started under a running server (503 meanwhile, recovery without restart), two servers on one database (the
second refuses), migrations (idempotent, newer schema refused), a 10k-resource put_version, JWT auth, TLS,
the web console files and the scheduler supervisor."""
import base64
import hashlib
import hmac
import json
import os
import signal
import ssl
import subprocess
import tempfile
import threading
import time
import unittest
import urllib.request
import uuid

import harness
import server_fixture as sf

NULL = "std::testing::NullResource"


def psql_port(port, db, sql):
    return harness.psql(db, sql, port=port)


psql = harness.psql


def wait_exit(proc, timeout=30):
    harness.wait_for(lambda: not proc.alive(), timeout, what="process exit")
    return proc.proc.returncode


class ServerOpsTest(unittest.TestCase):
    def test_sigkill_and_restart_keeps_everything(self):
        s = sf.Server()
        try:
            pid, env = s.project_env("k")
            s.ok("POST", "/api/v2/environment_settings/auto_deploy", {"value": "false"}, env=env)
            v, (status, _) = sf.put_version(s, env, [dict(rid=f"{NULL}[a,name=n{i}]", name=f"n{i}") for i in range(20)])
            self.assertEqual(status, 200)
            s.ok("POST", f"/api/v1/version/{v}", {}, env=env)
            s.proc.kill(signal.SIGKILL)
            wait_exit(s.proc)
        finally:
            s.stop()
        s2 = sf.Server(db=s.db)
        try:
            self.assertEqual(s2.ok("GET", f"/api/v2/environment/{env}")["data"]["settings"]["auto_deploy"], False)
            row = s2.ok("GET", f"/api/v1/version/{v}", env=env)
            self.assertTrue(row["model"]["released"])
            self.assertEqual(len(row["resources"]), 20)
            self.assertEqual(s2.ok("POST", "/api/v2/reserve_version", env=env)["data"], v + 1)
            # The schema was not re-applied.
            migrations = os.path.join(harness.ROOT, "orchestrator", "store", "migrations")
            self.assertEqual(psql(s.db, "SELECT count(*) FROM schema_version"),
                             str(len([n for n in os.listdir(migrations) if n.endswith(".sql")])))
        finally:
            s2.stop()

    def test_sigterm_lets_inflight_put_finish(self):
        s = sf.Server()
        try:
            pid, env = s.project_env("t")
            v = s.ok("POST", "/api/v2/reserve_version", env=env)["data"]
            body = {"version": v, "resources": [sf.resource(f"{NULL}[a,name=n{i}]", v, name=f"n{i}", payload="p" * 200) for i in range(20000)],
                    "resource_state": {}, "unknowns": [], "version_info": {}}
            result = {}

            def put():
                result["r"] = s.call("PUT", "/api/v1/version", body, env=env, timeout=120)

            t = threading.Thread(target=put)
            t.start()
            time.sleep(0.3)
            s.proc.kill(signal.SIGTERM)
            t.join(120)
            self.assertEqual(wait_exit(s.proc, 90), 0)
            self.assertEqual(result["r"][0], 200)
            # All or nothing: the version is complete.
            self.assertEqual(psql(s.db, f"SELECT count(*) FROM resource WHERE environment = '{env}' AND model = {v}"), "20000")
            self.assertIn("server_stopped", s.proc.output())
        finally:
            s.stop()

    def test_postgres_down_gives_503_then_recovers(self):
        cluster = harness.PgCluster().start()
        s = None
        try:
            db = "own_" + uuid.uuid4().hex[:8]
            subprocess.run([os.path.join(harness.pg_bindir(), "createdb"), "-h", "127.0.0.1", "-p", str(cluster.port), "-U", "postgres", db],
                           check=True, capture_output=True)
            s = sf.Server(db=db, pg_port=cluster.port)
            pid, env = s.project_env("pg")
            cluster.stop()
            status, body = s.call("GET", "/api/v2/health")
            self.assertEqual(status, 503)
            self.assertIn("database", body["message"])
            status, body = s.call("GET", f"/api/v2/environment/{env}")
            self.assertEqual(status, 503)
            self.assertIsInstance(body["message"], str)
            cluster.start()
            harness.wait_for(lambda: s.call("GET", "/api/v2/health")[0] == 200, 30, what="recovery")
            self.assertEqual(s.ok("GET", f"/api/v2/environment/{env}")["data"]["id"], env)
            # Every pooled connection recovers, not just one.
            for _ in range(10):
                self.assertEqual(s.call("GET", "/api/v2/project")[0], 200)
            self.assertTrue(s.proc.alive())
        finally:
            if s:
                s.stop()
            cluster.destroy()

    def test_second_server_on_same_database_refuses(self):
        s = sf.Server()
        try:
            pid, env = s.project_env("two")
            second = sf.Server(db=s.db, wait=False)
            try:
                self.assertEqual(wait_exit(second.proc), 1)
                self.assertIn("another inmanta server is already running", second.proc.output())
            finally:
                second.stop()
            self.assertEqual(s.ok("GET", f"/api/v2/environment/{env}")["data"]["id"], env)
        finally:
            s.stop()
        # Once the first is gone, a new server starts on that database.
        s3 = sf.Server(db=s.db)
        s3.stop()

    def test_newer_schema_is_refused(self):
        db = harness.fresh_database("mig")
        s = sf.Server(db=db)
        s.stop()
        psql(db, "INSERT INTO schema_version (version, name) VALUES (999, '999_future')")
        s2 = sf.Server(db=db, wait=False)
        try:
            self.assertEqual(wait_exit(s2.proc), 1)
            self.assertIn("newer than this server knows", s2.proc.output())
        finally:
            s2.stop()

    def test_put_version_10k(self):
        s = sf.Server()
        try:
            pid, env = s.project_env("big")
            v = s.ok("POST", "/api/v2/reserve_version", env=env)["data"]
            n = 10000
            res = [sf.resource(f"std::File[host{i % 50},path=/etc/f{i}]", v, path=f"/etc/f{i}", owner="root", mode=644,
                               content_hash=hashlib.sha1(str(i).encode()).hexdigest(),
                               requires=[f"std::File[host{(i - 1) % 50},path=/etc/f{i - 1}]"] if i else [])
                   for i in range(n)]
            body = {"version": v, "resources": res, "resource_state": {}, "unknowns": [], "version_info": {}}
            t0 = time.time()
            status, msg = s.call("PUT", "/api/v1/version", body, env=env, timeout=120)
            elapsed = time.time() - t0
            self.assertEqual(status, 200, msg)
            self.assertLess(elapsed, 30)
            row = s.ok("GET", f"/api/v1/version/{v}", env=env)["model"]
            self.assertEqual((row["total"], row["released"]), (n, True))
            self.assertEqual(psql(s.db, f"SELECT count(*) FROM resource_persistent_state WHERE environment = '{env}'"), str(n))
            self.assertEqual(psql(s.db, f"SELECT count(DISTINCT agent) FROM agent WHERE environment = '{env}'"), "51")
        finally:
            s.stop()

    def test_console_files(self):
        d = tempfile.mkdtemp(prefix="inm-console-")
        with open(os.path.join(d, "index.html"), "w") as f:
            f.write("<html>console</html>")
        os.makedirs(os.path.join(d, "assets"))
        with open(os.path.join(d, "assets", "app.js"), "w") as f:
            f.write("console.log(1)")
        s = sf.Server(server_extra=f"console_dir = {d}\n")
        try:
            status, body, headers = harness.http("GET", s.base + "/console/assets/app.js")
            self.assertEqual((status, headers["Content-Type"]), (200, "application/javascript"))
            self.assertEqual(body, b"console.log(1)")
            status, body, headers = harness.http("GET", s.base + "/console/resources/some/deep/route")
            self.assertEqual((status, headers["Content-Type"], body), (200, "text/html", b"<html>console</html>"))
            status, body, headers = harness.http("GET", s.base + "/console")
            self.assertEqual(body, b"<html>console</html>")
        finally:
            s.stop()

    def test_scheduler_supervisor_restarts_a_killed_scheduler(self):
        s = sf.Server(server_extra="start_schedulers = true\n")
        try:
            pid, env = s.project_env("sup")
            harness.wait_for(lambda: "scheduler_started" in s.proc.output(), 20, what="supervisor start log")

            def scheduler_pids():
                out = subprocess.run(["ps", "--ppid", str(s.proc.pid), "-o", "pid=,args="], capture_output=True,
                                     text=True).stdout
                return [int(l.split()[0]) for l in out.splitlines() if " scheduler " in l and env in l]
            first = harness.wait_for(scheduler_pids, 20, what="scheduler child")
            os.kill(first[0], signal.SIGKILL)
            harness.wait_for(lambda: s.proc.output().count("scheduler_started") >= 2, 30, what="restart")
            second = harness.wait_for(scheduler_pids, 20, what="new scheduler child")
            self.assertNotEqual(first, second)
            self.assertIn("scheduler_exited", s.proc.output())
            children = subprocess.run(["ps", "--ppid", str(s.proc.pid), "-o", "stat="], capture_output=True, text=True).stdout.split()
            self.assertNotIn("Z", "".join(children))
            self.assertTrue(sf.healthy(s.base))
        finally:
            s.stop()
        # Stopping the server takes its scheduler with it.
        time.sleep(0.5)
        self.assertFalse(any(os.path.exists(f"/proc/{p}") and "scheduler" in open(f"/proc/{p}/cmdline").read()
                             for p in second), second)


def b64url(b):
    return base64.urlsafe_b64encode(b).rstrip(b"=").decode()


ISSUER = "https://localhost:8888/"  # the default [auth_jwt_*] issuer; the audience defaults to it


def jwt(key, claims):
    """An HS256 token; iss and aud default to the configured section's (the server checks both)."""
    claims = {"iss": ISSUER, "aud": [ISSUER], **claims}
    head = b64url(json.dumps({"alg": "HS256", "typ": "JWT"}).encode())
    body = b64url(json.dumps(claims).encode())
    secret = base64.urlsafe_b64decode(key + "==")  # the configured key is URL-safe base64, as in the reference
    sig = b64url(hmac.new(secret, f"{head}.{body}".encode(), hashlib.sha256).digest())
    return f"{head}.{body}.{sig}"


class ServerAuthTest(unittest.TestCase):
    KEY = b64url(b"0123456789abcdef0123456789abcdef-test-key")

    @classmethod
    def setUpClass(cls):
        cls.s = sf.Server(server_extra="auth = true\n",
                          extra=f"[auth_jwt_default]\nalgorithm = HS256\nsign = true\nclient_types = agent,compiler,api\nkey = {cls.KEY}\nexpire = 0\n")
        admin = jwt(cls.KEY, {"urn:inmanta:ct": "api"})
        cls.admin = {"Authorization": f"Bearer {admin}"}
        cls.pid = cls.s.ok("PUT", "/api/v2/project", {"name": "auth"}, headers=cls.admin)["data"]["id"]
        cls.env_a = cls.s.ok("PUT", "/api/v2/environment", {"project_id": cls.pid, "name": "a"}, headers=cls.admin)["data"]["id"]
        cls.env_b = cls.s.ok("PUT", "/api/v2/environment", {"project_id": cls.pid, "name": "b"}, headers=cls.admin)["data"]["id"]

    @classmethod
    def tearDownClass(cls):
        cls.s.stop()

    def test_missing_bad_expired_tokens(self):
        s = self.s
        status, body = s.call("GET", "/api/v2/project")
        self.assertEqual(status, 401)
        self.assertIn("token", body["message"])
        self.assertEqual(s.call("GET", "/api/v2/project", headers={"Authorization": "Bearer " + jwt(b64url(b"a-wrong-key-of-thirty-two-bytes!!"), {})})[0], 401)
        self.assertEqual(s.call("GET", "/api/v2/project", headers={"Authorization": "Bearer abc"})[0], 401)
        expired = jwt(self.KEY, {"exp": int(time.time()) - 10})
        status, body = s.call("GET", "/api/v2/project", headers={"Authorization": f"Bearer {expired}"})
        self.assertEqual(status, 401)
        self.assertIn("expired", body["message"])
        self.assertEqual(s.call("GET", "/api/v2/health")[0], 200)  # open

    def test_client_type_and_environment_scope(self):
        s = self.s
        compiler = {"Authorization": "Bearer " + jwt(self.KEY, {"urn:inmanta:ct": "compiler", "urn:inmanta:env": self.env_a})}
        status, body = s.call("GET", "/api/v2/project", headers=compiler)
        self.assertEqual(status, 403)
        self.assertIn("client type", body["message"])
        self.assertEqual(s.call("POST", "/api/v2/reserve_version", env=self.env_a, headers=compiler)[0], 200)
        status, body = s.call("POST", "/api/v2/reserve_version", env=self.env_b, headers=compiler)
        self.assertEqual(status, 403)
        self.assertIn(self.env_a, body["message"])

    def test_environment_auth_mints_scoped_tokens(self):
        s = self.s
        token = s.ok("POST", "/api/v2/environment_auth", {"client_types": ["api"]}, env=self.env_a, headers=self.admin)["data"]
        h = {"Authorization": f"Bearer {token}"}
        self.assertEqual(s.call("GET", "/api/v1/environment_settings", env=self.env_a, headers=h)[0], 200)
        self.assertEqual(s.call("GET", "/api/v1/environment_settings", env=self.env_b, headers=h)[0], 403)
        self.assertEqual(s.call("GET", f"/api/v2/environment/{self.env_b}", headers=h)[0], 403)
        self.assertEqual(s.call("GET", f"/api/v2/environment/{self.env_a}", headers=h)[0], 200)
        self.assertEqual(s.call("POST", "/api/v2/environment_auth", {"client_types": ["root"]}, env=self.env_a, headers=self.admin)[0], 400)

    def test_revocable_tokens(self):
        s = self.s
        token = s.ok("POST", "/api/v2/environment_auth", {"client_types": ["api"], "idempotent": False}, env=self.env_a,
                     headers=self.admin)["data"]
        claims = json.loads(base64.urlsafe_b64decode(token.split(".")[1] + "=="))
        jti = claims["jti"]
        h = {"Authorization": f"Bearer {token}"}
        self.assertEqual(s.call("GET", "/api/v2/environment_settings", env=self.env_a, headers=h)[0], 200)
        listed = s.ok("GET", "/api/v2/environment_auth", env=self.env_a, headers=self.admin)["data"]
        self.assertIn(jti, [t["jti"] for t in listed])
        self.assertEqual([t["client_types"] for t in listed if t["jti"] == jti], [["api"]])
        # An idempotent token has no jti and cannot be revoked.
        plain = s.ok("POST", "/api/v2/environment_auth", {"client_types": ["api"]}, env=self.env_a, headers=self.admin)["data"]
        self.assertNotIn("jti", json.loads(base64.urlsafe_b64decode(plain.split(".")[1] + "==")))
        # Revoke through the API: the very next use is refused (the server's cache entry is replaced).
        self.assertEqual(s.call("DELETE", f"/api/v2/environment_auth/{jti}", env=self.env_b, headers=self.admin)[0], 404)
        s.ok("DELETE", f"/api/v2/environment_auth/{jti}", env=self.env_a, headers=self.admin)
        status, body = s.call("GET", "/api/v2/environment_settings", env=self.env_a, headers=h)
        self.assertEqual(status, 401)
        self.assertIn("revoked", body["message"])
        self.assertEqual(s.call("GET", "/api/v2/environment_settings", env=self.env_a,
                                headers={"Authorization": f"Bearer {plain}"})[0], 200)
        self.assertTrue([t["revoked"] for t in s.ok("GET", "/api/v2/environment_auth", env=self.env_a, headers=self.admin)["data"]
                         if t["jti"] == jti][0])
        # A jti the server never issued is refused.
        forged = jwt(self.KEY, {"urn:inmanta:ct": "api", "jti": str(uuid.uuid4())})
        self.assertEqual(s.call("GET", "/api/v2/project", headers={"Authorization": f"Bearer {forged}"})[0], 401)

    def test_token_check_is_cached(self):
        """A revocation written behind the server's back shows only once the cache entry expires (5 s): the check
        is one cached lookup, not a query per request."""
        s = self.s
        token = s.ok("POST", "/api/v2/environment_auth", {"client_types": ["api"], "idempotent": False}, env=self.env_a,
                     headers=self.admin)["data"]
        jti = json.loads(base64.urlsafe_b64decode(token.split(".")[1] + "=="))["jti"]
        h = {"Authorization": f"Bearer {token}"}
        self.assertEqual(s.call("GET", "/api/v2/environment_settings", env=self.env_a, headers=h)[0], 200)
        psql(s.db, f"UPDATE token SET revoked = true WHERE jti = '{jti}'")
        t0 = time.monotonic()
        self.assertEqual(s.call("GET", "/api/v2/environment_settings", env=self.env_a, headers=h)[0], 200)
        self.assertLess(time.monotonic() - t0, 4)
        sf.harness.wait_for(lambda: s.call("GET", "/api/v2/environment_settings", env=self.env_a, headers=h)[0] == 401, 15,
                            what="the cached token check to expire")


class ServerTlsTest(unittest.TestCase):
    @unittest.skipUnless(__import__("shutil").which("openssl"), "needs the openssl command to make a certificate")
    def test_tls(self):
        d = tempfile.mkdtemp(prefix="inm-tls-")
        cert, key = os.path.join(d, "cert.pem"), os.path.join(d, "key.pem")
        subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", key, "-out", cert, "-days", "1",
                        "-subj", "/CN=localhost"], check=True, capture_output=True)
        s = sf.Server(server_extra=f"ssl_cert_file = {cert}\nssl_key_file = {key}\n", wait=False)
        try:
            ctx = ssl.create_default_context(cafile=cert)
            ctx.check_hostname = False

            def up():
                try:
                    with urllib.request.urlopen(f"https://127.0.0.1:{s.port}/api/v2/health", context=ctx, timeout=5) as r:
                        return r.status == 200 and r.headers["Content-Type"] == "application/json"
                except OSError:
                    if not s.proc.alive():
                        raise AssertionError(s.proc.output())
                    return False
            harness.wait_for(up, 30, what="TLS health")
            self.assertFalse(sf.healthy(s.base))  # plain HTTP is not served
        finally:
            s.stop()


if __name__ == "__main__":
    unittest.main()
