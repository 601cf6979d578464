"""End to end: our clients against our real `inmanta server` on the run's private PostgreSQL. inmanta-cli creates
a project and an environment, `environment save` writes .inmanta, `inmanta export` pushes examples/quickstart and
a 10k-resource genmodel project, `-d` releases, versions are listed, typed settings round-trip, agents pause, and
with auth on: a bootstrap token works, an environment-scoped token is refused on another environment.
Skipped when the binary has no `server` verb yet.
"""
import base64
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import unittest
import urllib.request

import harness

ROOT = harness.ROOT


def has_server():
    out = subprocess.run([harness.INMANTA, "--help"], capture_output=True, text=True).stdout
    return re.search(r"^\s+server\s", out, re.M) is not None


def cli_bin():
    return os.path.join(os.path.dirname(harness.INMANTA), "inmanta-cli")


class ServerCliMixin:
    """A private `inmanta server` on the run's cluster, with inmanta-cli and `inmanta export` helpers (also used by
    test_content_diffs.py)."""

    def start_server(self, extra=""):
        db = harness.fresh_database("cli")
        host, pgport = harness.shared_cluster()
        self.port = harness.free_port()
        cfg = os.path.join(self.tmp, "server.cfg")
        with open(cfg, "w") as f:
            f.write(f"[database]\nhost={host}\nport={pgport}\nname={db}\nusername=postgres\npassword=\n"
                    f"[server]\nbind-address=127.0.0.1\nbind-port={self.port}\n"
                    f"[config]\nstate-dir={self.tmp}/state\nlog-dir={self.tmp}/log\n" + extra)
        self.server_cfg = cfg
        self.server = harness.Process([harness.INMANTA, "-c", cfg, "server"])

        def up():
            if not self.server.alive():
                raise AssertionError("inmanta server exited:\n" + self.server.output()[-3000:])
            for path in ("/api/v2/health", "/api/v1/serverstatus"):
                st, _, _ = harness.http("GET", f"http://127.0.0.1:{self.port}{path}", timeout=2) \
                    if self._port_open() else (0, None, None)
                if st == 200:
                    return True
            return False
        harness.wait_for(up, timeout=60, what="inmanta server")

    def _port_open(self):
        import socket
        with socket.socket() as s:
            s.settimeout(0.5)
            return s.connect_ex(("127.0.0.1", self.port)) == 0

    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="inm-cli-e2e-")
        self.server = None

    def tearDown(self):
        if self.server:
            self.server.stop()
        shutil.rmtree(self.tmp, ignore_errors=True)

    def cli(self, args, cwd=None, check=True, token=None):
        base = [cli_bin(), "--host", "127.0.0.1", "--port", str(self.port)]
        if token:
            base += ["--token", token]
        p = subprocess.run(base + args, cwd=cwd, capture_output=True, text=True, timeout=120)
        if check and p.returncode != 0:
            raise AssertionError(f"inmanta-cli {args} exited {p.returncode}:\n{p.stdout}\n{p.stderr}\n"
                                 f"server log:\n{self.server.output()[-2000:]}")
        return p

    def export(self, project, args=(), check=True):
        p = subprocess.run([harness.INMANTA, "-vv", "export"] + list(args), cwd=project, capture_output=True,
                           text=True, timeout=600)
        if check and p.returncode != 0:
            raise AssertionError(f"export {args} exited {p.returncode}:\n{p.stdout}\n{p.stderr}\n"
                                 f"server log:\n{self.server.output()[-2000:]}")
        return p



@unittest.skipUnless(os.path.exists(harness.INMANTA) and has_server(), "the binary has no `server` verb yet")
class ClientServerTest(ServerCliMixin, unittest.TestCase):
    def assert_files_before_version(self, logged, export):
        """The files go up on a thread of their own while the resources are rewritten, but every file request
        is answered before the version is sent (a server may release it at once: auto_deploy)."""
        lines = self.server.output().splitlines()[logged:]
        files = [i for i, l in enumerate(lines) if "http_request" in l and ("path=/api/v1/files " in l or
                                                                          "path=/api/v1/file/" in l)]
        put = [i for i, l in enumerate(lines) if "http_request" in l and "path=/api/v1/version " in l]
        self.assertTrue(files and len(put) == 1, export.stderr + "\n".join(lines)[-3000:])
        self.assertLess(max(files), put[0])
        self.assertRegex(export.stderr, r"uploading [1-9]\d* files .* took")

    def test_projects_environments_export_release(self):
        self.start_server()
        self.cli(["project", "create", "-n", "e2e"])
        env = json.loads(self.cli(["--json", "environment", "create", "-n", "dev", "-p", "e2e"]).stdout)["id"]
        other = json.loads(self.cli(["--json", "environment", "create", "-n", "other", "-p", "e2e"]).stdout)["id"]
        self.assertIn("dev", self.cli(["environment", "list"]).stdout)
        # typed settings: sent as strings, read back typed
        self.cli(["environment", "setting", "set", "-e", "dev", "-k", "auto_deploy", "-o", "false"])
        self.assertEqual(self.cli(["environment", "setting", "get", "-e", "dev", "-k", "auto_deploy"]).stdout.strip(),
                         "False")
        bad = self.cli(["environment", "setting", "set", "-e", "dev", "-k", "no_such_setting", "-o", "1"], check=False)
        self.assertEqual(bad.returncode, 1)
        self.assertIn("Error: ", bad.stderr)
        # a misspelt setting: the server's message names the nearest one
        bad = self.cli(["environment", "setting", "set", "-e", "dev", "-k", "auto_deplyo", "-o", "1"], check=False)
        self.assertIn("setting 'auto_deplyo' does not exist; did you mean 'auto_deploy'?", bad.stderr)
        # save, then export with nothing but .inmanta
        project = os.path.join(self.tmp, "quickstart")
        shutil.copytree(os.path.join(ROOT, "examples", "quickstart"), project)
        self.cli(["environment", "save", "dev"], cwd=project)
        self.assertIn(f"environment={env}", open(os.path.join(project, ".inmanta")).read())
        logged = len(self.server.output().splitlines())
        p = self.export(project)
        self.assert_files_before_version(logged, p)
        m = re.search(r"Committed resources with version (\d+)", p.stdout)
        self.assertTrue(m, p.stdout)
        v1 = int(m.group(1))
        p = self.export(project, ["-d"])
        v2 = int(re.search(r"Committed resources with version (\d+)", p.stdout).group(1))
        self.assertGreater(v2, v1)
        versions = json.loads(self.cli(["--json", "version", "list", "-e", "dev"]).stdout)
        by = {v["version"]: v for v in versions}
        self.assertFalse(by[v1]["released"])
        self.assertTrue(by[v2]["released"])
        self.assertEqual(by[v2]["total"], 22)
        table = self.cli(["version", "list", "-e", "dev"]).stdout
        self.assertRegex(table, rf"\| {v2} +\| True ")
        # a 10k-resource genmodel project (the generator is the shared bench kit beside the checkout)
        genmodel = os.path.join(ROOT, "..", "shared", "bench", "genmodel.py")
        if os.path.isfile(genmodel):
            big = os.path.join(self.tmp, "n10000")
            subprocess.run([sys.executable, genmodel, "--entities", "10000", "--out", big], check=True,
                           stdout=subprocess.DEVNULL)
            logged = len(self.server.output().splitlines())
            p = self.export(big, ["-e", env, "--server_address", "127.0.0.1", "--server_port", str(self.port), "-d"])
            v3 = int(re.search(r"Committed resources with version (\d+)", p.stdout).group(1))
            self.assert_files_before_version(logged, p)
            versions = json.loads(self.cli(["--json", "version", "list", "-e", env]).stdout)
            self.assertGreater([v for v in versions if v["version"] == v3][0]["total"], 10000)
        else:
            sys.stderr.write(f"\nnote: 10k genmodel export not run: no bench kit at {genmodel}\n")
        self.assertNotEqual(other, env)
        # -d on an environment with auto_deploy on (the default): the server releases the stored version itself
        # and answers the release with 409; the export still succeeds and says who released it (issue #29).
        p = self.export(project, ["-e", other, "--server_address", "127.0.0.1", "--server_port", str(self.port),
                                  "-d"])
        v4 = int(re.search(r"Committed resources with version (\d+)", p.stdout).group(1))
        self.assertIn(f"Version {v4} was already released by the server (auto_deploy)", p.stdout)
        self.assertNotIn("409", p.stderr)
        released = json.loads(self.cli(["--json", "version", "list", "-e", other]).stdout)
        self.assertTrue([v for v in released if v["version"] == v4][0]["released"])
        # agents: pause all
        self.cli(["agent", "pause", "-e", "dev", "--all"])
        agents = json.loads(self.cli(["--json", "agent", "list", "-e", "dev"]).stdout)
        # every agent but the scheduler's pseudo-agent (orchestrator.md §6.10)
        workers = [a for a in agents if a["name"] != "$__scheduler"]
        self.assertTrue(workers and all(a["paused"] for a in workers), [a["name"] for a in agents if not a["paused"]])
        self.assertIn("$__scheduler", [a["name"] for a in agents])
        # The URI column: an agent's autostart_agent_map entry (the paused web1 deploys nothing), else local:.
        self.cli(["environment", "setting", "set", "-e", "dev", "-k", "autostart_agent_map", "-o",
                  json.dumps({"internal": "local:", "web1": "ssh://deploy@web1.example.com:2222"})])
        table = self.cli(["agent", "list", "-e", "dev"]).stdout
        self.assertRegex(table, r"\| web1 +\|.*\| ssh://deploy@web1\.example\.com:2222 +\|")
        self.assertRegex(table, r"\| web2 +\|.*\| local: +\|")
        self.assertNotEqual(other, env)

    def test_tokens(self):
        key = base64.urlsafe_b64encode(os.urandom(32)).decode().rstrip("=")
        self.start_server("[server]\nauth=true\n"
                          f"[auth_jwt_default]\nalgorithm=HS256\nsign=true\nclient_types=agent,compiler,api\n"
                          f"key={key}\nexpire=0\nissuer=https://localhost:8888/\naudience=https://localhost:8888/\n")
        refused = self.cli(["project", "list"], check=False)
        self.assertEqual(refused.returncode, 1)
        boot = subprocess.run([cli_bin(), "-c", self.server_cfg, "token", "bootstrap"], capture_output=True,
                              text=True, check=True).stdout.split("Token: ")[1].strip()
        self.cli(["project", "create", "-n", "p"], token=boot)
        env_a = json.loads(self.cli(["--json", "environment", "create", "-n", "a", "-p", "p"], token=boot).stdout)["id"]
        env_b = json.loads(self.cli(["--json", "environment", "create", "-n", "b", "-p", "p"], token=boot).stdout)["id"]
        scoped = self.cli(["token", "create", "-e", env_a, "--api", "--compiler"], token=boot).stdout
        scoped = scoped.split("Token: ")[1].strip()
        self.cli(["version", "list", "-e", env_a], token=scoped)
        denied = self.cli(["version", "list", "-e", env_b], token=scoped, check=False)
        self.assertEqual(denied.returncode, 1)
        self.assertIn("HTTP 403", denied.stderr)
        # the compiler token pushes to its own environment
        project = os.path.join(self.tmp, "quickstart")
        shutil.copytree(os.path.join(ROOT, "examples", "quickstart"), project)
        p = self.export(project, ["-e", env_a, "--server_address", "127.0.0.1", "--server_port", str(self.port),
                                  "--token", scoped])
        self.assertIn("Committed resources with version", p.stdout)


if __name__ == "__main__":
    unittest.main()
