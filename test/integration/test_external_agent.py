"""External agents (docs/deploy.md "External agents") on loopback: the real `inmanta server` supervising the
environment's `inmanta scheduler`, and `inmanta agent` as a separate process that claims an agent through the
server's relay and deploys std::File resources into a temporary directory. Killing the agent makes the agent's
resources `unavailable`; starting it again deploys them; a second claim of a held agent waits as a standby; tokens
of the wrong client type or environment are refused. Python handler code (docs/deploy.md "External agents and Python code"):
the agent fetches the version's code over its connection, verifies it, lays it out under its own state dir and
deploys through the Python handler; a corrupt code blob makes the resource `unavailable` naming the module.
Every process is stopped by PID."""
import base64
import hashlib
import json
import os
import signal
import subprocess
import tempfile
import time
import unittest

import harness
import pyfixtures
import server_fixture as sf
from test_server_ops import b64url, jwt

NULL = "std::testing::NullResource"


def file_resource(agent, path, content_hash):
    return dict(rid=f"std::File[{agent},path={path}]", path=path, hash=content_hash, owner=None, group=None,
                permissions=644, purge_on_delete=False, reload=False, send_event=False, receive_events=True,
                report_only=False)


class ExternalAgentBase(unittest.TestCase):
    SERVER_EXTRA = ""
    EXTRA = ""

    def start_server(self, server_extra=None, wait=True):
        self.srv = sf.Server(server_extra=self.SERVER_EXTRA if server_extra is None else server_extra,
                             extra=self.EXTRA, wait=False)
        self.addCleanup(self.srv.stop)
        # The relay needs the environment's scheduler: turn the supervised schedulers on.
        self.srv.stop()
        with open(self.srv.config) as f:
            text = f.read().replace("start_schedulers = false", "start_schedulers = true")
        with open(self.srv.config, "w") as f:
            f.write(text)
        self.srv.proc = harness.Process([harness.INMANTA, "server", "-c", self.srv.config])
        if wait:
            self.srv.wait_healthy()

    def wait(self, pred, what, *procs, timeout=40):
        """wait_for that shows the logs of `procs` and the server (with its scheduler) when it times out."""
        try:
            return harness.wait_for(pred, timeout=timeout, what=what)
        except AssertionError as e:
            logs = "".join(f"\n--- log of {' '.join(p.args[1:3])} (pid {p.pid}):\n{p.output()[-4000:]}"
                           for p in procs + (self.srv.proc,))
            raise AssertionError(str(e) + logs) from None

    def sql(self, text):
        host, port = harness.shared_cluster()
        return subprocess.run([os.path.join(harness.pg_bindir(), "psql"), "-h", host, "-p", str(port), "-U",
                               "postgres", "-d", self.srv.db, "-Atqc", text], capture_output=True, text=True,
                              check=True).stdout.strip()

    def agent(self, env, *names, token=None, extra=(), host="127.0.0.1"):
        args = [harness.INMANTA, "agent", "--server", host, "--port", str(self.srv.port), "-e", env, *extra]
        for n in names:
            args += ["--agent", n]
        if token:
            args += ["--token", token]
        p = harness.Process(args)
        self.addCleanup(p.stop)
        return p

    def connected(self, env, name):
        return self.sql(f"SELECT connected FROM external_agent WHERE environment = '{env}' AND name = '{name}'")

    def wait_socket(self, env):
        """The scheduler listens on its socket once it has started."""
        state_dir = os.path.dirname(self.srv.config)
        path = os.path.join(state_dir, f"scheduler-{env}.sock")
        self.wait(lambda: os.path.exists(path), f"the scheduler socket {path}")


class ExternalAgentDeployTest(ExternalAgentBase):
    def setUp(self):
        self.start_server()
        _, self.env = self.srv.project_env("ext")
        for k in ("autostart_agent_deploy_interval", "autostart_agent_repair_interval"):
            self.srv.ok("POST", f"/api/v2/environment_settings/{k}", {"value": "0"}, env=self.env)
        self.dir = tempfile.mkdtemp(prefix="inm-ext-agent-")
        self.wait_socket(self.env)

    def upload(self, content):
        h = hashlib.sha1(content).hexdigest()
        self.srv.ok("PUT", f"/api/v1/file/{h}", {"content": base64.b64encode(content).decode()}, env=self.env)
        return h

    def status(self, r):
        return self.sql("SELECT CASE WHEN is_deploying THEN 'deploying' ELSE last_non_deploying_status END "
                        f"FROM resource_persistent_state WHERE environment = '{self.env}' AND resource_id = '{r}'")

    def last_messages(self, r):
        return self.sql("SELECT a.messages::text FROM resourceaction a JOIN resourceaction_resource x ON "
                        f"x.resource_action_id = a.action_id WHERE x.resource_id = '{r}' AND a.action = 'deploy' "
                        "ORDER BY a.started DESC LIMIT 1")

    def test_deploy_kill_restart_and_second_claim(self):
        first = self.agent(self.env, "ext1")
        self.wait(lambda: self.connected(self.env, "ext1") == "t", "the agent's claim", first)
        path = os.path.join(self.dir, "motd")
        rid = f"std::File[ext1,path={path}]"
        h1 = self.upload(b"hello from the external agent\n")
        v1, (code, body) = sf.put_version(self.srv, self.env, [
            file_resource("ext1", path, h1),
            dict(rid=f"{NULL}[internal,name=local]", name="local", agentname="internal", value="", fail=False)])
        self.assertEqual(code, 200, body)
        self.wait(lambda: self.status(rid) == "deployed", "the external agent to deploy the file", first)
        with open(path, "rb") as f:
            self.assertEqual(f.read(), b"hello from the external agent\n")
        self.wait(lambda: self.status(f"{NULL}[internal,name=local]") == "deployed",
                  "the local agent's resource (local executors still serve other agents)")
        # The claim is recorded with its holder and shows in the agents listing.
        holder = self.sql(f"SELECT holder FROM external_agent WHERE environment = '{self.env}' AND name = 'ext1'")
        self.assertIn(f"pid {first.pid}", holder)
        self.assertIn("via 127.0.0.1", holder)
        listed = {a["name"]: a for a in self.srv.ok("GET", "/api/v2/agents", env=self.env)["data"]}
        self.assertEqual((listed["ext1"]["external"], listed["ext1"]["status"]), (True, "up"), listed)
        self.assertEqual(listed["ext1"]["process_name"], holder)
        self.assertEqual((listed["internal"]["external"], listed["internal"]["process_name"]), (False, None))

        # A second claim of the held agent is kept as a standby, naming the primary (test_agent_failover.py
        # covers its promotion); stopped here before the primary goes.
        second = self.agent(self.env, "ext1")
        self.wait(lambda: "standby for agent(s) ext1" in second.output(), "the second claim's standby", second)
        self.assertIn(f"pid {first.pid}", second.output())
        self.assertTrue(second.alive())
        self.assertEqual(second.stop(), 0, second.output())
        self.wait(lambda: self.sql(f"SELECT standbys::text FROM external_agent WHERE environment = '{self.env}' "
                                   "AND name = 'ext1'") == "[]", "the stopped standby to leave the list")

        # Kill the agent: the claim is dropped, and new work for ext1 answers `unavailable` without running.
        first.kill(signal.SIGKILL)
        first.proc.wait()
        self.wait(lambda: self.connected(self.env, "ext1") == "f", "the scheduler to notice the disconnect")
        listed = {a["name"]: a for a in self.srv.ok("GET", "/api/v2/agents", env=self.env)["data"]}
        self.assertEqual(listed["ext1"]["status"], "down", listed)
        h2 = self.upload(b"second version\n")
        v2, (code, body) = sf.put_version(self.srv, self.env, [file_resource("ext1", path, h2)])
        self.assertEqual(code, 200, body)
        self.wait(lambda: self.status(rid) == "unavailable", f"{rid} to be unavailable")
        self.assertIn("external agent ext1 is not connected", self.last_messages(rid))
        with open(path, "rb") as f:
            self.assertEqual(f.read(), b"hello from the external agent\n", "nothing ran while no agent held ext1")

        # Start it again: the new claim deploys what waited.
        third = self.agent(self.env, "ext1")
        self.wait(lambda: self.status(rid) == "deployed", "the returning agent to deploy", third)
        with open(path, "rb") as f:
            self.assertEqual(f.read(), b"second version\n")
        self.assertEqual(self.connected(self.env, "ext1"), "t")
        self.assertEqual(third.stop(), 0, third.output())


class ExternalAgentPythonTest(ExternalAgentDeployTest):
    @staticmethod
    def plugins(tag):
        return pyfixtures.note_plugins(
            doc="Handler of test_external_agent.py", preamble=f"TAG = {tag!r}\n",
            on_create='        ctx.info("wrote", tag=TAG, pid=os.getpid())',
            on_update='        ctx.info("rewrote", tag=TAG, pid=os.getpid())').encode()

    def put_code(self, path, content, tag, upload=True):
        """A version of one pynote::Note on agent ext1 whose handler code (registered through
        module_version_info for ext1) logs `tag`; released."""
        plugins = self.plugins(tag)
        h = self.upload(plugins) if upload else hashlib.sha1(plugins).hexdigest()
        files = [{"name": "inmanta_plugins.pynote", "hash_value": h, "is_byte_code": False}]
        info = {"pynote": {"name": "pynote", "version": h, "requirements": [], "for_agents": ["ext1"],
                           "files_in_module": files}}
        rid = f"pynote::Note[ext1,path={path}]"
        version, (code, body) = sf.put_version(self.srv, self.env, [{"rid": rid, "path": path, "content": content,
                                                                     "agentname": "ext1"}],
                                               module_version_info=info)
        self.assertEqual(code, 200, body)
        status, body = self.srv.call("POST", f"/api/v1/version/{version}", {}, env=self.env)
        self.assertTrue(status == 200 or (status == 409 and "already released" in json.dumps(body)), body)
        return version, rid, h

    def test_python_handler_code_and_corrupt_blob(self):
        state = tempfile.mkdtemp(prefix="inm-ext-agent-state-")
        agent = self.agent(self.env, "ext1", extra=["--state-dir", state])
        self.wait(lambda: self.connected(self.env, "ext1") == "t", "the agent's claim", agent)
        path = os.path.join(self.dir, "note.txt")
        v1, rid, h1 = self.put_code(path, "from python", "code-1")
        self.wait(lambda: self.status(rid) == "deployed", "the external agent to deploy through Python", agent)
        with open(path) as f:
            self.assertEqual(f.read(), "from python")
        wrote = [m for m in pyfixtures.deploy_logs(self.srv.db, rid, v1) if m.get("msg") == "wrote"]
        self.assertEqual(len(wrote), 1, pyfixtures.deploy_logs(self.srv.db, rid, v1))
        self.assertEqual(wrote[0]["kwargs"]["tag"], "code-1")
        # The handler ran in a child of the agent, not in a local executor of the scheduler.
        with open(f"/proc/{wrote[0]['kwargs']['pid']}/stat") as f:
            self.assertEqual(int(f.read().rsplit(")", 1)[1].split()[1]), agent.pid)
        laid_out = [d for d in os.listdir(os.path.join(state, "agent-code")) if d.startswith("py-")]
        self.assertEqual(len(laid_out), 1, laid_out)
        with open(os.path.join(state, "agent-code", laid_out[0], "pynote", "plugins", "__init__.py")) as f:
            self.assertIn("TAG = 'code-1'", f.read())

        # New code whose stored blob is corrupted: the resource is unavailable, the message names the module.
        h2 = self.upload(self.plugins("code-2"))
        self.sql(f"UPDATE file SET content = 'garbage'::bytea WHERE content_hash = '{h2}'")
        v2, _, got = self.put_code(path, "second", "code-2", upload=False)
        self.assertEqual(got, h2)
        self.wait(lambda: self.status(rid) == "unavailable", "the corrupt code to make the resource unavailable",
                  agent)
        messages = self.last_messages(rid)
        self.assertIn("handler code of module pynote is corrupt", messages)
        with open(path) as f:
            self.assertEqual(f.read(), "from python", "nothing ran with corrupt code")
        self.assertTrue(agent.alive(), agent.output())
        self.assertEqual(agent.stop(), 0, agent.output())


class ExternalAgentAuthTest(ExternalAgentBase):
    KEY = b64url(b"0123456789abcdef0123456789abcdef-agent-key")
    SERVER_EXTRA = "auth = true\n"
    EXTRA = (f"[auth_jwt_default]\nalgorithm = HS256\nsign = true\nclient_types = agent,compiler,api\n"
             f"key = {KEY}\nexpire = 0\n")

    def test_tokens(self):
        self.start_server()
        admin = {"Authorization": "Bearer " + jwt(self.KEY, {"urn:inmanta:ct": "api"})}
        pid = self.srv.ok("PUT", "/api/v2/project", {"name": "auth"}, headers=admin)["data"]["id"]
        env_a = self.srv.ok("PUT", "/api/v2/environment", {"project_id": pid, "name": "a"}, headers=admin)["data"]["id"]
        env_b = self.srv.ok("PUT", "/api/v2/environment", {"project_id": pid, "name": "b"}, headers=admin)["data"]["id"]
        self.wait_socket(env_a)
        cases = [
            (None, "HTTP 401"),
            (jwt(self.KEY, {"urn:inmanta:ct": "api", "urn:inmanta:env": env_a}), "client type agent"),
            (jwt(self.KEY, {"urn:inmanta:ct": "agent", "urn:inmanta:env": env_b}), f"scoped to environment {env_b}"),
        ]
        for token, expected in cases:
            p = self.agent(env_a, "ext1", token=token)
            self.wait(lambda: not p.alive(), "the refused agent to exit", p)
            self.assertEqual(p.proc.returncode, 1, p.output())
            self.assertIn(expected, p.output())
            self.assertIn("not retrying", p.output())
        self.assertEqual(self.sql("SELECT count(*) FROM external_agent"), "0")
        good = self.agent(env_a, "ext1", token=jwt(self.KEY, {"urn:inmanta:ct": "agent", "urn:inmanta:env": env_a}))
        self.wait(lambda: self.connected(env_a, "ext1") == "t", "the claim with a good token", good)
        self.assertEqual(good.stop(), 0, good.output())


class ExternalAgentLongStateDirTest(ExternalAgentBase):
    def test_a_too_long_socket_path_is_named(self):
        """A state-dir so deep that the scheduler's socket path does not fit a sockaddr_un: the agent is told why
        (it used to read "end of stream" from a relay whose socket endpoint threw)."""
        self.start_server()
        self.srv.stop()
        d = os.path.dirname(self.srv.config)
        deep = os.path.join(d, "s" * 90)
        os.makedirs(deep)
        with open(self.srv.config) as f:
            text = f.read().replace(f"state-dir = {d}\n", f"state-dir = {deep}\n")
        self.assertIn(deep, text)
        with open(self.srv.config, "w") as f:
            f.write(text)
        self.srv.proc = harness.Process([harness.INMANTA, "server", "-c", self.srv.config])
        self.srv.wait_healthy()
        _, env = self.srv.project_env("deep")
        p = self.agent(env, "ext1")
        self.wait(lambda: "socket path" in p.output(), "the agent to report the socket path", p)
        self.assertIn("a Unix socket path must be under 108 bytes", p.output())
        self.assertIn("shorter [config] state-dir", p.output())
        self.assertNotIn("end of stream", p.output())


@unittest.skipUnless(__import__("shutil").which("openssl"), "needs the openssl command to make a certificate")
class ExternalAgentTlsTest(ExternalAgentBase):
    def test_claim_over_tls(self):
        d = tempfile.mkdtemp(prefix="inm-ext-tls-")
        cert, key = os.path.join(d, "cert.pem"), os.path.join(d, "key.pem")
        subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", key, "-out", cert,
                        "-days", "1", "-subj", "/CN=localhost", "-addext", "subjectAltName=DNS:localhost"],
                       check=True, capture_output=True)
        self.start_server(f"ssl_cert_file = {cert}\nssl_key_file = {key}\n", wait=False)  # health is https here
        env = "0" * 8 + "-0000-4000-8000-" + "0" * 12  # no such environment: a 503 the agent retries
        untrusted = self.agent(env, "ext1", extra=["--ssl"], host="localhost")
        self.wait(lambda: not untrusted.alive(), "the agent to reject the self-signed certificate without "
                  "--ssl-ca-cert", untrusted, timeout=30)
        self.assertEqual(untrusted.stop(), 1, untrusted.output())
        self.assertIn("TLS handshake", untrusted.output())
        self.assertIn("not retrying", untrusted.output())
        # Then a real environment through the trusted certificate.
        import ssl
        import urllib.request
        ctx = ssl.create_default_context(cafile=cert)

        def call(method, path, body=None, tid=None):
            req = urllib.request.Request(f"https://localhost:{self.srv.port}{path}", method=method,
                                         data=json.dumps(body).encode() if body is not None else None,
                                         headers={"Content-Type": "application/json", **({"X-Inmanta-Tid": tid} if tid else {})})
            with urllib.request.urlopen(req, context=ctx, timeout=30) as r:
                return json.loads(r.read())

        def up():
            try:
                return call("GET", "/api/v2/health") is not None
            except OSError:
                return False
        self.wait(up, "the TLS server")
        pid = call("PUT", "/api/v2/project", {"name": "tls"})["data"]["id"]
        env = call("PUT", "/api/v2/environment", {"project_id": pid, "name": "tls"})["data"]["id"]
        self.wait_socket(env)
        good = self.agent(env, "ext1", extra=["--ssl", "--ssl-ca-cert", cert], host="localhost")
        self.wait(lambda: self.connected(env, "ext1") == "t", "the claim over TLS", good)
        self.assertEqual(good.stop(), 0, good.output())


if __name__ == "__main__":
    unittest.main()
