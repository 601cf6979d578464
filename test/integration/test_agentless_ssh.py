"""Agentless over SSH (docs/deploy.md "Agentless over SSH", issue #28): an agent whose URI in the environment
setting `autostart_agent_map` is ssh://user@127.0.0.1:PORT deploys its std::File, std::Directory and std::Symlink
on that "remote" host as that user, through a real OpenSSH server the test starts (own config, host key and a
loopback port; stopped by PID) and the executor's multiplexed OpenSSH master. Checks what the test user sees on
disk (content, mode, owner), that a changed map takes effect at the agent's next deploy, that drift made there is
repaired, that a dry run reports without touching, and that an unreachable port, a wrong host key and a refused
key end `unavailable` with ssh's reason naming host and port; a Python handler writes through `self._io` and
std::AgentConfig sets the map. Runs as root (sshd_fixture.py creates the test user with useradd and removes it
afterwards)."""
import json
import os
import shutil
import subprocess
import tempfile
import unittest
import uuid

import harness
import pyfixtures
import server_fixture as sf
import sshd_fixture
from deploy_support import DeployEnv, std_file

USER = "inmsshtest"


SSH_PLUGINS = '''"""Test module of test_agentless_ssh.py: a Note kept through the handler's self._io."""
from inmanta.agent.handler import CRUDHandler, HandlerContext, ResourcePurged, provider
from inmanta.resources import PurgeableResource, resource


@resource("sshnote::Note", agent="agentname", id_attribute="path")
class Note(PurgeableResource):
    fields = ("path", "content")


@provider("sshnote::Note", name="note")
class NoteHandler(CRUDHandler):
    def read_resource(self, ctx: HandlerContext, resource: Note) -> None:
        if not self._io.file_exists(resource.path):
            raise ResourcePurged()
        resource.content = self._io.read(resource.path)

    def create_resource(self, ctx: HandlerContext, resource: Note) -> None:
        self._io.put(resource.path, resource.content)
        self._io.chmod(resource.path, "600")
        st = self._io.file_stat(resource.path)
        ctx.info("wrote %(path)s through %(io)s as %(owner)s", path=resource.path, io=repr(self._io),
                 owner=st["owner"], remote=self._io.is_remote(), uri=self._agent.uri,
                 exit255=self._io.run("sh", ["-c", "exit 255"])[2], whoami=self._io.run("id", ["-un"])[0])
        ctx.set_created()

    def update_resource(self, ctx: HandlerContext, changes: dict, resource: Note) -> None:
        self._io.put(resource.path, resource.content)
        ctx.set_updated()

    def delete_resource(self, ctx: HandlerContext, resource: Note) -> None:
        self._io.remove(resource.path)
        ctx.set_purged()
'''


def std_dir(path, agent, perms=755):
    attrs = {"path": path, "owner": None, "group": None, "permissions": perms, "purged": False,
             "purge_on_delete": False, "reload": False, "send_event": True, "receive_events": True,
             "report_only": False, "references": [], "mutators": [], "requires": []}
    return {"id": f"std::Directory[{agent},path={path}]", "agent": agent, "attributes": attrs, "undefined": False}


def std_link(source, target, agent):
    attrs = {"source": source, "target": target, "purged": False, "purge_on_delete": False, "reload": False,
             "send_event": True, "receive_events": True, "report_only": False, "references": [], "mutators": [],
             "requires": []}
    return {"id": f"std::Symlink[{agent},target={target}]", "agent": agent, "attributes": attrs, "undefined": False}


def agent_config(agentname, uri, purged=False):
    attrs = {"agentname": agentname, "uri": uri, "autostart": True, "agent": "internal", "purged": purged,
             "purge_on_delete": False, "send_event": True, "receive_events": True, "report_only": False,
             "references": [], "mutators": [], "requires": []}
    return {"id": f"std::AgentConfig[internal,agentname={agentname}]", "agent": "internal", "attributes": attrs,
            "undefined": False}


def remote_file(path, content_hash, agent, perms=640):
    r = std_file(path, content_hash, agent)
    r["attributes"]["permissions"] = perms
    return r


@unittest.skipUnless(sshd_fixture.available(), "needs root and an OpenSSH server (apt-get install openssh-server)")
class AgentlessSshTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.sshd = sshd_fixture.Sshd(USER).start()
        cls.tmp, cls.port, cls.pw, cls.home = cls.sshd.tmp, cls.sshd.port, cls.sshd.pw, cls.sshd.home
        cls.known, cls.wrong_known, cls.env = cls.sshd.known, cls.sshd.wrong_known, cls.sshd.env

    @classmethod
    def tearDownClass(cls):
        # The executors asked their ssh masters to exit when the scheduler stopped (each test's cleanup).
        cls.sshd.stop()

    def uri(self, **options):
        return self.sshd.uri(**options)

    def scratch(self):
        """A fresh directory in the test user's home, owned by them."""
        return self.sshd.scratch(self)

    def messages(self, d, resource_id):
        return " ".join(m["msg"] + " " + json.dumps(m.get("kwargs", {})) for a in d.actions(resource_id)
                        for m in a[4])

    def test_deploy_map_change_repair_and_dry_run(self):
        base = self.scratch()
        motd, sub, link = f"{base}/motd", f"{base}/conf.d", f"{base}/current"
        d = DeployEnv(self, {"autostart_agent_map": {"internal": "local:"}})
        h1 = d.put_file(b"hello over ssh\n")
        fid = f"std::File[web,path={motd}]"
        d.put_version(1, [remote_file(motd, h1, "web", perms=644)])
        d.start(extra_env=self.env)
        # Not in the map: agent `web` deploys locally, as root.
        d.wait_status(fid, "deployed")
        self.assertEqual(os.stat(motd).st_uid, 0)
        os.unlink(motd)
        # Mapped to ssh: the next deploy of `web` runs over ssh as the test user.
        d.set_setting("autostart_agent_map", {"internal": "local:", "web": self.uri()})
        d.put_version(2, [remote_file(motd, h1, "web"), std_dir(sub, "web", 750),
                          std_link(motd, link, "web")])
        for r in (fid, f"std::Directory[web,path={sub}]", f"std::Symlink[web,target={link}]"):
            d.wait_status(r, "deployed", timeout=30)
        st = os.stat(motd)
        self.assertEqual(open(motd, "rb").read(), b"hello over ssh\n")
        self.assertEqual((st.st_uid, st.st_mode & 0o7777), (self.pw.pw_uid, 0o640))
        st = os.stat(sub)
        self.assertEqual((st.st_uid, st.st_mode & 0o7777), (self.pw.pw_uid, 0o750))
        self.assertEqual(os.readlink(link), motd)
        self.assertEqual(os.lstat(link).st_uid, self.pw.pw_uid)
        # Drift made on the remote side: a dry run reports it and changes nothing ...
        with open(motd, "w") as f:
            f.write("changed by hand\n")
        dr = str(uuid.uuid4())
        d.request("dryrun", {"id": dr, "version": 2})
        harness.wait_for(lambda: d.sql(f"SELECT todo FROM dryrun WHERE id = '{dr}'") == "0", timeout=30)
        res = json.loads(d.sql(f"SELECT resources FROM dryrun WHERE id = '{dr}'"))
        self.assertEqual(res[fid + ",v=2"]["diff_status"], "modified", res)
        self.assertIn("hash", json.dumps(res[fid + ",v=2"]))
        self.assertEqual(open(motd).read(), "changed by hand\n")
        # ... and a repair restores it.
        n = len(d.actions(fid))
        d.request("deploy", {"agents": ["web"], "repair": True})
        harness.wait_for(lambda: len(d.actions(fid)) > n and d.status(fid) == "deployed", timeout=30)
        harness.wait_for(lambda: open(motd, "rb").read() == b"hello over ssh\n", timeout=10)
        self.assertEqual(os.stat(motd).st_mode & 0o7777, 0o640)

    def test_unreachable_port_wrong_host_key_and_refused_key_are_unavailable(self):
        base = self.scratch()
        closed = harness.free_port()
        d = DeployEnv(self, {"autostart_agent_map": {
            "internal": "local:",
            "down": f"ssh://{USER}@127.0.0.1:{closed}",
            "spoofed": self.uri(known_hosts=self.wrong_known),
            "stranger": self.uri(identity_file=os.path.join(self.tmp, "stranger"))}})
        h = d.put_file(b"x\n")
        down, spoofed = f"std::File[down,path={base}/a]", f"std::File[spoofed,path={base}/b]"
        stranger = f"std::File[stranger,path={base}/c]"
        d.put_version(1, [remote_file(f"{base}/a", h, "down"), remote_file(f"{base}/b", h, "spoofed"),
                          remote_file(f"{base}/c", h, "stranger")])
        d.start(extra_env=self.env)
        for r in (down, spoofed, stranger):
            d.wait_status(r, "unavailable", timeout=30)
        msg = self.messages(d, stranger)
        self.assertIn(f"cannot reach ssh://{USER}@127.0.0.1:{self.port} over ssh", msg)
        self.assertIn("Permission denied (publickey)", msg)
        msg = self.messages(d, down)
        self.assertIn(f"cannot reach ssh://{USER}@127.0.0.1:{closed} over ssh", msg)
        self.assertIn("Connection refused", msg)
        msg = self.messages(d, spoofed)
        self.assertIn(f"cannot reach ssh://{USER}@127.0.0.1:{self.port} over ssh", msg)
        self.assertIn("Host key verification failed", msg)
        self.assertEqual(os.listdir(base), [])

    def test_agent_config_sets_the_map_before_its_agent_deploys(self):
        base = self.scratch()
        d = DeployEnv(self, {"autostart_agent_map": {"internal": "local:"}})
        h = d.put_file(b"configured by AgentConfig\n")
        cid = "std::AgentConfig[internal,agentname=web2]"
        f = remote_file(f"{base}/f", h, "web2")
        f["attributes"]["requires"] = [cid]
        d.put_version(1, [agent_config("web2", self.uri()), f])
        d.start(extra_env=self.env)
        d.wait_status(f["id"], "deployed", timeout=30)
        self.assertEqual(d.status(cid), "deployed")
        mapped = json.loads(d.sql(f"SELECT settings->'autostart_agent_map' FROM environment WHERE id = '{d.env}'"))
        self.assertEqual(mapped, {"internal": "local:", "web2": self.uri()})
        self.assertEqual(os.stat(f"{base}/f").st_uid, self.pw.pw_uid, "the file was not written over ssh")
        # A dry run of a changed uri reports the change and writes nothing; purging the AgentConfig removes it.
        d.put_version(2, [agent_config("web2", "ssh://other@127.0.0.1:2222")], release=False)
        dr = str(uuid.uuid4())
        d.request("dryrun", {"id": dr, "version": 2})
        harness.wait_for(lambda: d.sql(f"SELECT todo FROM dryrun WHERE id = '{dr}'") == "0", timeout=30)
        res = json.loads(d.sql(f"SELECT resources FROM dryrun WHERE id = '{dr}'"))
        self.assertEqual(res[cid + ",v=2"]["diff_status"], "modified", res)
        self.assertIn("ssh://other@127.0.0.1:2222", json.dumps(res[cid + ",v=2"]))
        d.put_version(3, [agent_config("web2", self.uri(), purged=True)])
        harness.wait_for(lambda: "web2" not in json.loads(d.sql(
            f"SELECT settings->'autostart_agent_map' FROM environment WHERE id = '{d.env}'")), timeout=30)

    def test_a_modelled_remote_host_deploys_over_ssh(self):
        """The user's way: std::Host(remote_agent=true, ip, remote_user, remote_port) in main.cf, compiled by our
        compiler; std's agentConfig implementation emits the AgentConfig (uri from std/host_uri.j2) that the
        host's File requires, so the scheduler maps the agent before the File deploys over ssh."""
        base = self.scratch()
        project = os.path.join(self.tmp, "model-" + uuid.uuid4().hex[:6])
        os.makedirs(os.path.join(project, "libs"))
        with open(os.path.join(project, "project.yml"), "w") as f:
            f.write("name: remote\nmodulepath: libs\ndownloadpath: libs\n")
        with open(os.path.join(project, "main.cf"), "w") as f:
            f.write(f'import std\nh = std::Host(name="edge7", os=std::linux, ip="127.0.0.1", remote_agent=true, '
                    f'remote_user="{USER}", remote_port={self.port})\n'
                    f'std::File(host=h, path="{base}/motd", mode=600, owner="{USER}", group="{USER}", '
                    f'content="modelled remote host\\n")\n')
        out = os.path.join(project, "out.json")
        r = subprocess.run([harness.INMANTA, "export", "-j", out], cwd=project, capture_output=True, text=True)
        self.assertEqual(r.returncode, 0, r.stderr)
        with open(out) as f:
            art = json.load(f)
        resources = []
        for a in art["resources"]:
            rid = a["id"].rsplit(",v=", 1)[0]
            attrs = {k: v for k, v in a.items() if k not in ("id", "version", "undefined")}
            resources.append({"id": rid, "agent": rid.split("[", 1)[1].split(",", 1)[0], "attributes": attrs,
                              "undefined": a.get("undefined", False)})
        ids = sorted(x["id"] for x in resources)
        cid, fid = "std::AgentConfig[internal,agentname=edge7]", f"std::File[edge7,path={base}/motd]"
        self.assertEqual(ids, [cid, fid])
        expected_uri = f"ssh://{USER}@127.0.0.1:{self.port}?python=python"
        self.assertEqual(next(x for x in resources if x["id"] == cid)["attributes"]["uri"], expected_uri)
        self.assertEqual(next(x for x in resources if x["id"] == fid)["attributes"]["requires"], [cid])
        d = DeployEnv(self, {"autostart_agent_map": {"internal": "local:"}})
        for content in art["files"].values():
            d.put_file(content.encode())
        d.put_version(1, resources)
        d.start(extra_env=self.env)
        d.wait_status(fid, "deployed", timeout=30)
        st = os.stat(f"{base}/motd")
        self.assertEqual((st.st_uid, oct(st.st_mode & 0o777)), (self.pw.pw_uid, "0o600"))
        with open(f"{base}/motd") as f:
            self.assertEqual(f.read(), "modelled remote host\n")
        mapped = json.loads(d.sql(f"SELECT settings->'autostart_agent_map' FROM environment WHERE id = '{d.env}'"))
        self.assertEqual(mapped.get("edge7"), expected_uri)

    def test_python_handler_writes_through_the_remote_io(self):
        base = self.scratch()
        target = f"{base}/note.txt"
        work = tempfile.mkdtemp(prefix="inm-agentless-py-")
        self.addCleanup(shutil.rmtree, work, True)
        srv = sf.Server(schedulers=True, env={**os.environ, **self.env})
        self.addCleanup(srv.stop)
        _, env = srv.project_env("agentless")
        for k in ("autostart_agent_deploy_interval", "autostart_agent_repair_interval"):
            srv.ok("POST", f"/api/v2/environment_settings/{k}", {"value": "0"}, env=env)
        # A malformed URI is refused when the setting is set, naming the agent and the problem.
        status, body = srv.call("POST", "/api/v2/environment_settings/autostart_agent_map",
                                {"value": {"remote": f"ssh://{USER}@127.0.0.1:notaport"}}, env=env)
        self.assertEqual(status, 400, body)
        self.assertIn("agent 'remote'", json.dumps(body))
        self.assertIn("port 'notaport'", json.dumps(body))
        srv.ok("POST", "/api/v2/environment_settings/autostart_agent_map",
               {"value": {"internal": "local:", "remote": self.uri()}}, env=env)
        pyfixtures.write_module(os.path.join(work, "libs"), "sshnote", pyfixtures.NOTE_MODEL % {"module": "sshnote"},
                                SSH_PLUGINS)
        proj = pyfixtures.write_project(work, "agentless", 'import sshnote\nsshnote::Note(path="%s", '
                                        'content="from python over ssh", agentname="remote")\n' % target)
        v = pyfixtures.export_and_release(self, srv, env, proj)
        rid = f"sshnote::Note[remote,path={target}]"
        harness.wait_for(lambda: harness.psql(srv.db, "SELECT last_non_deploying_status FROM "
                                              f"resource_persistent_state WHERE resource_id = '{rid}'") == "deployed",
                         timeout=90, what="the Python resource to be deployed")
        self.assertEqual(open(target).read(), "from python over ssh")
        st = os.stat(target)
        self.assertEqual((st.st_uid, st.st_mode & 0o777), (self.pw.pw_uid, 0o600))
        logs = pyfixtures.deploy_logs(srv.db, rid, v)
        wrote = [m for m in logs if m["msg"].startswith("wrote ")]
        self.assertEqual(len(wrote), 1, logs)
        self.assertIn("SshIO(", wrote[0]["msg"])
        self.assertEqual(wrote[0]["kwargs"]["owner"], USER)
        self.assertTrue(wrote[0]["kwargs"]["remote"])
        self.assertEqual(wrote[0]["kwargs"]["whoami"], USER)
        self.assertEqual(wrote[0]["kwargs"]["exit255"], 255, "a command's own 255 is not an ssh failure")


if __name__ == "__main__":
    unittest.main()
