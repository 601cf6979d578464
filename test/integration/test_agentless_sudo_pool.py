"""Agentless over SSH, continued (docs/deploy.md "Agentless over SSH", issue #28), against a real OpenSSH server
(sshd_fixture.py: its own config, host key, loopback port and a non-root login user, stopped by PID):

* sudo: an agent whose URI has `run_as=root` deploys a std::File owned by root into a directory the login user
  cannot write, through `sudo -n` (checked on disk: owner, group, mode, content); without a sudoers entry for the
  user the resource ends `failed` with "sudo needs a password for USER on HOST (configure NOPASSWD)". The
  sudoers drop-in is created by the test under /etc/sudoers.d with a unique name, checked with `visudo -cf`, and
  removed in cleanup. A Python handler's `self._io` (run, put, chown, chmod) acts as root the same way.
* the session pool: `sessions=4` with agent_parallelism 4 deploying 50 files opens several sessions over one
  master (counted as the remote drivers' distinct markers); killing session ssh clients, one idle and one in the
  middle of the next deploy, replaces just those sessions (the master keeps its pid) and every file converges.
Runs as root."""
import json
import os
import shutil
import signal
import subprocess
import tempfile
import threading
import time
import unittest
import uuid

import harness
import pyfixtures
import server_fixture as sf
import sshd_fixture
from deploy_support import DeployEnv, std_file

USER = "inmsshsudo"

SUDO_PLUGINS = '''"""Test module of test_agentless_sudo_pool.py: a Note kept through self._io of a run_as=root agent."""
from inmanta.agent.handler import CRUDHandler, HandlerContext, ResourcePurged, provider
from inmanta.resources import PurgeableResource, resource


@resource("sudonote::Note", agent="agentname", id_attribute="path")
class Note(PurgeableResource):
    fields = ("path", "content")


@provider("sudonote::Note", name="note")
class NoteHandler(CRUDHandler):
    def read_resource(self, ctx: HandlerContext, resource: Note) -> None:
        if not self._io.file_exists(resource.path):
            raise ResourcePurged()
        resource.content = self._io.read(resource.path)

    def create_resource(self, ctx: HandlerContext, resource: Note) -> None:
        self._io.put(resource.path, resource.content)
        self._io.chown(resource.path, "root", "root")
        self._io.chmod(resource.path, "640")
        st = self._io.file_stat(resource.path)
        ctx.info("wrote %(path)s", path=resource.path, owner=st["owner"], whoami=self._io.run("id", ["-un"])[0])
        ctx.set_created()

    def update_resource(self, ctx: HandlerContext, changes: dict, resource: Note) -> None:
        self._io.put(resource.path, resource.content)
        ctx.set_updated()

    def delete_resource(self, ctx: HandlerContext, resource: Note) -> None:
        self._io.remove(resource.path)
        ctx.set_purged()
'''


def owned_file(path, content_hash, agent, owner, group, perms):
    r = std_file(path, content_hash, agent)
    r["attributes"].update({"owner": owner, "group": group, "permissions": perms})
    return r


def cmdline(pid):
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return f.read().split(b"\0")
    except OSError:
        return []


def processes():
    """[(pid, uid, argv as text)] of every process."""
    out = []
    for p in os.listdir("/proc"):
        if not p.isdigit():
            continue
        argv = cmdline(p)
        try:
            uid = os.stat(f"/proc/{p}").st_uid
        except OSError:
            continue
        if argv and argv[0]:
            out.append((int(p), uid, [a.decode(errors="replace") for a in argv if a]))
    return out


@unittest.skipUnless(sshd_fixture.available(), "needs root and an OpenSSH server (apt-get install openssh-server)")
class AgentlessSudoPoolTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.sshd = sshd_fixture.Sshd(USER).start()

    @classmethod
    def tearDownClass(cls):
        cls.sshd.stop()

    def sudoers_dropin(self):
        """/etc/sudoers.d/inmanta-test-<unique>: USER may run anything as root without a password."""
        if not shutil.which("visudo"):
            self.skipTest("sudo is not installed (apt-get install sudo)")
        path = f"/etc/sudoers.d/inmanta-test-{uuid.uuid4().hex[:12]}"
        self.addCleanup(lambda: os.path.exists(path) and os.unlink(path))
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o440)
        with os.fdopen(fd, "w") as f:
            f.write(f"{USER} ALL=(root) NOPASSWD: ALL\n")
        r = subprocess.run(["visudo", "-cf", path], capture_output=True, text=True)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        return path

    def messages(self, d, resource_id):
        return " ".join(m["msg"] for a in d.actions(resource_id) for m in a[4])

    def test_run_as_root_through_sudo(self):
        if not shutil.which("sudo"):
            self.skipTest("sudo is not installed (apt-get install sudo)")
        base = self.sshd.scratch(self, owner="root")  # the login user cannot write here
        target = f"{base}/motd"
        d = DeployEnv(self, {"autostart_agent_map": {"internal": "local:", "web": self.sshd.uri(run_as="root")}})
        h = d.put_file(b"written as root through sudo\n")
        fid = f"std::File[web,path={target}]"
        d.put_version(1, [owned_file(target, h, "web", "root", "root", 640)])
        d.start(extra_env=self.sshd.env)
        # No sudoers entry: sudo -n refuses at once, the resource fails (not unavailable) and says what to do.
        d.wait_status(fid, "failed", timeout=30)
        msg = self.messages(d, fid)
        self.assertIn(f"sudo needs a password for {USER} on ssh://{USER}@127.0.0.1:{self.sshd.port} "
                      "(configure NOPASSWD)", msg)
        self.assertFalse(os.path.exists(target))
        # With the drop-in the next deploy writes the file as root.
        self.sudoers_dropin()
        d.request("deploy", {"agents": ["web"]})
        d.wait_status(fid, "deployed", timeout=30)
        st = os.stat(target)
        self.assertEqual((st.st_uid, st.st_gid, st.st_mode & 0o7777), (0, 0, 0o640))
        with open(target, "rb") as f:
            self.assertEqual(f.read(), b"written as root through sudo\n")
        self.assertEqual(os.listdir(base), ["motd"], "a temp file was left behind")

    def test_python_handler_io_acts_as_root(self):
        if not shutil.which("sudo"):
            self.skipTest("sudo is not installed (apt-get install sudo)")
        self.sudoers_dropin()
        base = self.sshd.scratch(self, owner="root")
        target = f"{base}/note.txt"
        work = tempfile.mkdtemp(prefix="inm-agentless-sudo-py-")
        self.addCleanup(shutil.rmtree, work, True)
        srv = sf.Server(schedulers=True, env={**os.environ, **self.sshd.env})
        self.addCleanup(srv.stop)
        _, env = srv.project_env("agentlesssudo")
        for k in ("autostart_agent_deploy_interval", "autostart_agent_repair_interval"):
            srv.ok("POST", f"/api/v2/environment_settings/{k}", {"value": "0"}, env=env)
        status, body = srv.call("POST", "/api/v2/environment_settings/autostart_agent_map",
                                {"value": {"remote": self.sshd.uri(run_as="-x")}}, env=env)
        self.assertEqual(status, 400, body)
        self.assertIn("run_as '-x' is not a user name", json.dumps(body))
        srv.ok("POST", "/api/v2/environment_settings/autostart_agent_map",
               {"value": {"internal": "local:", "remote": self.sshd.uri(run_as="root")}}, env=env)
        pyfixtures.write_module(os.path.join(work, "libs"), "sudonote",
                                pyfixtures.NOTE_MODEL % {"module": "sudonote"}, SUDO_PLUGINS)
        proj = pyfixtures.write_project(work, "agentlesssudo", 'import sudonote\nsudonote::Note(path="%s", '
                                        'content="python as root", agentname="remote")\n' % target)
        v = pyfixtures.export_and_release(self, srv, env, proj)
        rid = f"sudonote::Note[remote,path={target}]"
        harness.wait_for(lambda: harness.psql(srv.db, "SELECT last_non_deploying_status FROM "
                                              f"resource_persistent_state WHERE resource_id = '{rid}'")
                         in ("deployed", "failed"), timeout=90, what="the Python resource to be deployed")
        logs = pyfixtures.deploy_logs(srv.db, rid, v)
        wrote = [m for m in logs if m["msg"].startswith("wrote ")]
        self.assertEqual(len(wrote), 1, logs)
        self.assertEqual(wrote[0]["kwargs"]["whoami"], "root")
        self.assertEqual(wrote[0]["kwargs"]["owner"], "root")
        st = os.stat(target)
        self.assertEqual((st.st_uid, st.st_gid, st.st_mode & 0o777), (0, 0, 0o640))
        with open(target) as f:
            self.assertEqual(f.read(), "python as root")

    def drivers(self):
        """Markers of the remote session drivers running as the login user (`sh -c <driver> inmanta-io M`)."""
        uid = self.sshd.pw.pw_uid
        return {argv[-1] for _, u, argv in processes()
                if u == uid and len(argv) >= 2 and argv[-2] == "inmanta-io" and argv[-1].startswith("inm-end-")}

    def session_clients(self, port):
        """{marker: pid} of the executors' local `ssh -S … inmanta-io <marker>` session clients to this sshd."""
        out = {}
        for pid, _, argv in processes():
            if argv[0] == "ssh" and "-S" in argv and str(port) in argv and "-M" not in argv:
                words = argv[-1].split()
                if len(words) >= 2 and words[-2].strip("'") == "inmanta-io":
                    out[words[-1].strip("'")] = pid
        return out

    def masters(self, port):
        return {pid for pid, _, argv in processes() if argv[0] == "ssh" and "-M" in argv and str(port) in argv}

    def test_session_pool_is_used_and_a_killed_session_is_replaced(self):
        base = self.sshd.scratch(self)
        n = 50
        d = DeployEnv(self, {"autostart_agent_map": {"internal": "local:", "pool": self.sshd.uri(sessions=4)},
                             "agent_parallelism": 4})
        paths = [f"{base}/f{i:02d}" for i in range(n)]

        def version(v):
            resources = []
            for i, p in enumerate(paths):
                h = d.put_file(f"v{v} file {i}\n".encode() * (200 if i % 5 == 0 else 1))
                resources.append(owned_file(p, h, "pool", USER, None, 640))
            d.put_version(v, resources)

        def converged(v):
            return int(d.sql(f"SELECT count(*) FROM resource_persistent_state WHERE environment = '{d.env}' "
                             "AND last_non_deploying_status = 'deployed' AND NOT is_deploying AND "
                             "current_intent_attribute_hash = last_deployed_attribute_hash")) == n

        version(1)
        # Sessions and masters of earlier tests' executors (normally none) are not this deploy's.
        old_drivers, old_masters = self.drivers(), self.masters(self.sshd.port)
        d.start(extra_env=self.sshd.env)
        harness.wait_for(lambda: converged(1), timeout=60, what="50 files over ssh")
        used = self.drivers() - old_drivers
        self.assertGreaterEqual(len(used), 2, f"the operations never overlapped on several sessions: {used}")
        self.assertLessEqual(len(used), 4, used)
        clients = {m: p for m, p in self.session_clients(self.sshd.port).items() if m in used}
        self.assertEqual(set(clients), used, "a remote driver without its local ssh session client")
        masters = self.masters(self.sshd.port) - old_masters
        self.assertEqual(len(masters), 1, "one master per agent")

        # Kill one idle session, release v2, and kill another once v2 is being deployed.
        idle_marker, idle_pid = sorted(clients.items())[0]
        os.kill(idle_pid, signal.SIGKILL)
        killed = [idle_marker]
        t0 = time.time()
        version(2)

        def kill_mid_deploy():
            while time.time() - t0 < 30:
                done = int(d.sql(f"SELECT count(*) FROM resourceaction WHERE environment = '{d.env}' "
                                 "AND version = 2 AND action = 'deploy' AND finished IS NOT NULL"))
                if done >= 3:
                    live = {m: p for m, p in self.session_clients(self.sshd.port).items() if m not in killed}
                    if live:
                        m, p = sorted(live.items())[0]
                        killed.append(m)
                        os.kill(p, signal.SIGKILL)
                        killed.append(done)
                    return
                time.sleep(0.02)
        killer = threading.Thread(target=kill_mid_deploy)
        killer.start()
        harness.wait_for(lambda: converged(2), timeout=60, what="v2 of the 50 files after the killed sessions")
        killer.join()
        self.assertEqual(len(killed), 3, f"no session was killed during the deploy: {killed}")
        self.assertLess(killed[2], n, "the deploy had finished before the second kill")
        for i, p in enumerate(paths):
            with open(p, "rb") as f:
                self.assertEqual(f.read(), f"v2 file {i}\n".encode() * (200 if i % 5 == 0 else 1), p)
            st = os.stat(p)
            self.assertEqual((st.st_uid, st.st_mode & 0o7777), (self.sshd.pw.pw_uid, 0o640), p)
        statuses = d.rows(f"SELECT status, count(*) FROM resourceaction WHERE environment = '{d.env}' "
                          "AND version = 2 AND action = 'deploy' GROUP BY status")
        self.assertEqual(statuses, [["deployed", str(n)]], "a killed session made an action fail")
        now = self.drivers()
        self.assertFalse(set(killed[:2]) & now, "a killed session is still running")
        self.assertEqual(self.masters(self.sshd.port) - old_masters, masters, "the master was restarted")
        self.assertEqual(sorted(os.listdir(base)), [os.path.basename(p) for p in paths], "temp files left over")


if __name__ == "__main__":
    unittest.main()
