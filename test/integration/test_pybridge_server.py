"""The Python bridge against a real `inmanta server` (docs/pybridge.md):

- `Context.get_client()` / `get_sync_client()` / `run_sync()` in a plugin compiled by `inmanta export` in push
  mode reach the server through the compiler's orchestrator client (list_environments, get_param, awaited and
  synchronous forms); without a server the plugin's call fails with the "no server" error.
- Code registered only through put_version's `module_version_info` (no codebatched) is laid out for the
  executor with its paths (two files with identical content keep both paths) and deployed through its Python
  handler; with `[agent] executor-retention-time` short, the idle executor is stopped and started again for the
  next version.
Every process is stopped by PID (server fixture: the server stops its scheduler, the scheduler its executors)."""
import base64
import hashlib
import json
import os
import shutil
import subprocess
import tempfile
import unittest

import harness
import pyfixtures
import server_fixture as sf

CLIENT_PLUGINS = '''from inmanta.plugins import Context, plugin


@plugin
def env_names(ctx: Context) -> "string":
    client = ctx.get_client()
    result = ctx.run_sync(lambda: client.list_environments())
    if result.code != 200:
        raise Exception("list_environments answered %s: %s" % (result.code, result.result))
    return ",".join(sorted(e["name"] for e in result.result["environments"]))


@plugin
def param(ctx: Context, name: "string") -> "string":
    client = ctx.get_client()

    async def fetch():
        return await client.get_param(tid=ctx.get_environment_id(), id=name)

    result = ctx.run_sync(fetch)
    if result.code != 200:
        return "missing:%d" % result.code
    return result.result["parameter"]["value"]


@plugin
def sync_param(ctx: Context, name: "string") -> "string":
    result = ctx.get_sync_client().get_param(tid=ctx.get_environment_id(), id=name)
    return "%d:%s" % (result.code, result.result["parameter"]["value"] if result.code == 200 else "-")
'''

HANDLER = pyfixtures.note_plugins(
    doc="Handler code registered through module_version_info only.", preamble="\nfrom . import first, second\n",
    on_create='        ctx.info("wrote", via=first.SOURCE + "+" + second.SOURCE, pid=os.getpid())',
    on_update='        ctx.info("rewrote", via=first.SOURCE + "+" + second.SOURCE, pid=os.getpid())')
SAME = 'SOURCE = "module_version_info"\n'


def sha1(data):
    return hashlib.sha1(data.encode()).hexdigest()


class ServerTest(unittest.TestCase):
    def start_server(self, extra=""):
        self.srv = sf.Server(extra=extra)
        self.addCleanup(self.srv.stop)

    def sql(self, text):
        host, port = harness.shared_cluster()
        return subprocess.run([os.path.join(harness.pg_bindir(), "psql"), "-h", host, "-p", str(port), "-U",
                               "postgres", "-d", self.srv.db, "-Atqc", text], capture_output=True, text=True,
                              check=True).stdout.strip()

    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="inm-pyserver-")
        self.addCleanup(shutil.rmtree, self.dir, True)


class GetClientTest(ServerTest):
    def write_project(self):
        mod = os.path.join(self.dir, "libs", "pyclient")
        os.makedirs(os.path.join(mod, "model"), exist_ok=True)
        os.makedirs(os.path.join(mod, "plugins"), exist_ok=True)
        with open(os.path.join(mod, "module.yml"), "w") as f:
            f.write("name: pyclient\nversion: 1.0.0\n")
        with open(os.path.join(mod, "model", "_init.cf"), "w") as f:
            f.write("")
        with open(os.path.join(mod, "plugins", "__init__.py"), "w") as f:
            f.write(CLIENT_PLUGINS)
        proj = os.path.join(self.dir, "project")
        os.makedirs(proj, exist_ok=True)
        with open(os.path.join(proj, "project.yml"), "w") as f:
            f.write("name: pyclient\nmodulepath: %s\n" % os.path.join(self.dir, "libs"))
        with open(os.path.join(proj, "main.cf"), "w") as f:
            f.write('import pyclient\nstd::print("envs=" + pyclient::env_names())\n'
                    'std::print("colour=" + pyclient::param("colour"))\n'
                    'std::print("sync=" + pyclient::sync_param("colour"))\n'
                    'std::print("absent=" + pyclient::param("absent"))\n')
        return proj

    def test_plugin_calls_the_server(self):
        self.start_server()
        _, env = self.srv.project_env("with-client")
        self.srv.project_env("other")
        self.srv.ok("PUT", "/api/v1/parameter/colour", {"source": "user", "value": "blue", "resource_id": ""}, env=env)
        proj = self.write_project()
        p = subprocess.run([harness.INMANTA, "export", "-e", env, "--server_address", "127.0.0.1", "--server_port",
                            str(self.srv.port)], cwd=proj, capture_output=True, text=True, timeout=120)
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        self.assertIn("envs=other,with-client\n", p.stdout)
        self.assertIn("colour=blue\n", p.stdout)
        self.assertIn("sync=200:blue\n", p.stdout)
        self.assertIn("absent=missing:404\n", p.stdout)

    def test_without_server_the_plugin_fails(self):
        proj = self.write_project()
        p = subprocess.run([harness.INMANTA, "compile"], cwd=proj, capture_output=True, text=True, timeout=120)
        self.assertNotEqual(p.returncode, 0, p.stdout)
        out = p.stdout + p.stderr
        self.assertIn("Exception in plugin pyclient::env_names", out)
        self.assertIn("ConnectionError: no server is configured for this compile", out)


class ModuleVersionInfoTest(ServerTest):
    def setUp(self):
        super().setUp()
        # Schedulers on, executors retired after 1 s idle.
        self.start_server(extra="[agent]\nexecutor-retention-time = 1\n")
        self.srv.stop()
        with open(self.srv.config) as f:
            text = f.read().replace("start_schedulers = false", "start_schedulers = true")
        with open(self.srv.config, "w") as f:
            f.write(text)
        self.srv.proc = harness.Process([harness.INMANTA, "server", "-c", self.srv.config])
        self.srv.wait_healthy()
        _, self.env = self.srv.project_env("mvi")
        for k in ("autostart_agent_deploy_interval", "autostart_agent_repair_interval"):
            self.srv.ok("POST", f"/api/v2/environment_settings/{k}", {"value": "0"}, env=self.env)
        self.target = os.path.join(self.dir, "note.txt")
        self.rid = f"pynote::Note[local,path={self.target}]"
        self.state = open(self.srv.config).read().split("state-dir = ")[1].split("\n")[0].strip()

    def upload(self, content):
        h = sha1(content)
        self.srv.ok("PUT", f"/api/v1/file/{h}", {"id": h, "content": base64.b64encode(content.encode()).decode()})
        return h

    def put(self, content):
        init, same = self.upload(HANDLER), self.upload(SAME)
        files = [{"name": "inmanta_plugins.pynote", "hash_value": init, "is_byte_code": False},
                 {"name": "inmanta_plugins.pynote.first", "hash_value": same, "is_byte_code": False},
                 {"name": "inmanta_plugins.pynote.second", "hash_value": same, "is_byte_code": False}]
        info = {"pynote": {"name": "pynote", "version": sha1(init + same), "requirements": [],
                           "for_agents": ["local"], "files_in_module": files}}
        version, (status, body) = sf.put_version(
            self.srv, self.env, [{"rid": self.rid, "path": self.target, "content": content}],
            module_version_info=info)
        self.assertEqual(status, 200, body)
        status, body = self.srv.call("POST", f"/api/v1/version/{version}", {}, env=self.env)
        self.assertTrue(status == 200 or (status == 409 and "already released" in json.dumps(body)), body)
        return version

    def status(self):
        return self.sql("SELECT CASE WHEN is_deploying THEN 'deploying' ELSE last_non_deploying_status END || ' ' || "
                        f"last_deployed_version FROM resource_persistent_state WHERE resource_id = '{self.rid}'")

    def logs(self, version):
        return pyfixtures.deploy_logs(self.srv.db, self.rid, version)

    def executors(self):
        """PIDs of live executor processes running code laid out under this server's state dir."""
        pids = []
        for pid in os.listdir("/proc"):
            try:
                with open(f"/proc/{pid}/cmdline", "rb") as f:
                    argv = f.read().split(b"\0")
                with open(f"/proc/{pid}/stat") as f:
                    zombie = f.read().rsplit(")", 1)[1].split()[0] == "Z"
            except (OSError, IndexError):
                continue
            if not zombie and b"executor" in argv and any(a.startswith(self.state.encode()) for a in argv):
                pids.append(int(pid))
        return pids

    def test_code_from_module_version_info_deploys_and_idle_executor_retires(self):
        v1 = self.put("hello")
        paths = self.sql(f"SELECT string_agg(file_path, ',' ORDER BY file_path) FROM module_files WHERE environment = "
                         f"'{self.env}' AND inmanta_module_name = 'pynote'")
        self.assertEqual(paths, "plugins/__init__.py,plugins/first.py,plugins/second.py")
        harness.wait_for(lambda: self.status() == f"deployed {v1}", timeout=90, what="v1 deployed")
        with open(self.target) as f:
            self.assertEqual(f.read(), "hello")
        wrote = [m for m in self.logs(v1) if m.get("msg") == "wrote"]
        self.assertEqual(len(wrote), 1, self.logs(v1))
        self.assertEqual(wrote[0]["kwargs"]["via"], "module_version_info+module_version_info")
        laid_out = [d for d in os.listdir(os.path.join(self.state, "executor-code")) if d.startswith("py-")]
        self.assertEqual(len(laid_out), 1, laid_out)
        tree = os.path.join(self.state, "executor-code", laid_out[0], "pynote", "plugins")
        self.assertEqual(sorted(os.listdir(tree)), ["__init__.py", "first.py", "second.py"])

        # Idle for more than the retention time: the executor is stopped.
        harness.wait_for(lambda: not self.executors(), timeout=30, what="the idle executor to stop")
        self.assertIn("stopped 1 executor(s) idle for 1000 ms", self.srv.proc.output())

        # The next version starts a new executor process for the same code.
        v2 = self.put("again")
        harness.wait_for(lambda: self.status() == f"deployed {v2}", timeout=90, what="v2 deployed")
        with open(self.target) as f:
            self.assertEqual(f.read(), "again")
        rewrote = [m for m in self.logs(v2) if m.get("msg") == "rewrote"]
        self.assertEqual(len(rewrote), 1, self.logs(v2))
        self.assertNotEqual(rewrote[0]["kwargs"]["pid"], wrote[0]["kwargs"]["pid"])


if __name__ == "__main__":
    unittest.main()
