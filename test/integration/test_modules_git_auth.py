"""Private module repositories (docs/modules.md "Private repositories"): `inmanta project install` over ssh://
against Debian's OpenSSH server started here (own config, host key, client keys and port on loopback, stopped by
PID) and over http:// with basic authentication (`git http-backend` behind a small in-process HTTP server).
Host keys are checked against known_hosts (plain and hashed entries; unknown and changed keys are refused),
credentials come from the project's .inmanta `[module_auth]` section or INMANTA_MODULE_AUTH_* variables, and a
rejected secret fails once with a clear reason instead of looping."""
import base64
import http.server
import os
import shutil
import subprocess
import tempfile
import threading
import unittest

import harness

SSHD = "/usr/sbin/sshd"


def git(cwd, *args):
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True).stdout.strip()


def make_module(base, name, version):
    path = os.path.join(base, name)
    os.makedirs(os.path.join(path, "model"))
    with open(os.path.join(path, "module.yml"), "w") as f:
        f.write(f"name: {name}\nlicense: ASL 2.0\nversion: {version}\n")
    with open(os.path.join(path, "model", "_init.cf"), "w") as f:
        f.write(f'release = "{name} {version}"\n')
    git(path, "init", "-q", "-b", "master")
    git(path, "add", "-A")
    git(path, "-c", "user.email=t@e", "-c", "user.name=t", "commit", "-q", "-m", "release")
    git(path, "tag", version)
    return path


def keygen(path, kind="ed25519"):
    extra = ["-m", "PEM"] if kind == "rsa" else []
    subprocess.run(["ssh-keygen", "-q", "-t", kind, "-N", "", "-f", path, *extra], check=True)
    return path


def install(proj, env=None):
    e = dict(os.environ, **(env or {}))
    e.pop("SSH_AUTH_SOCK", None)
    return subprocess.run([harness.INMANTA, "project", "install"], cwd=proj, capture_output=True, text=True,
                          timeout=120, env=e)


def project(base, name, url, auth=None):
    d = os.path.join(base, name)
    os.makedirs(d)
    with open(os.path.join(d, "project.yml"), "w") as f:
        f.write(f"name: {name}\nmodulepath: libs\ndownloadpath: libs\nrepo:\n  - type: git\n    url: {url}\n"
                "requires:\n  - secret\n")
    open(os.path.join(d, "main.cf"), "w").close()
    if auth:
        with open(os.path.join(d, ".inmanta"), "w") as f:
            f.write("[module_auth]\n" + "".join(f"{k} = {v}\n" for k, v in auth.items()))
    return d


@unittest.skipUnless(os.path.exists(SSHD), "no OpenSSH server (apt-get install openssh-server)")
class SshRepositoryTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="inm-gitssh-")
        t = cls.tmp
        cls.repos = os.path.join(t, "repos")
        make_module(cls.repos, "secret", "1.0.0")
        keygen(os.path.join(t, "hostkey"))
        keygen(os.path.join(t, "client"))
        keygen(os.path.join(t, "stranger"))
        keygen(os.path.join(t, "rsa_client"), "rsa")
        with open(os.path.join(t, "authorized_keys"), "w") as f:
            f.write(open(os.path.join(t, "client.pub")).read() + open(os.path.join(t, "rsa_client.pub")).read())
        cls.port = harness.free_port()
        with open(os.path.join(t, "sshd_config"), "w") as f:
            f.write(f"Port {cls.port}\nListenAddress 127.0.0.1\nHostKey {t}/hostkey\nPidFile {t}/sshd.pid\n"
                    f"AuthorizedKeysFile {t}/authorized_keys\nPasswordAuthentication no\n"
                    "KbdInteractiveAuthentication no\nPermitRootLogin prohibit-password\nStrictModes no\n"
                    "UsePAM no\n")
        os.makedirs("/run/sshd", exist_ok=True)  # sshd's privilege separation directory
        cls.sshd = harness.Process([SSHD, "-D", "-f", os.path.join(t, "sshd_config"), "-E",
                                    os.path.join(t, "sshd.log")])
        harness.wait_for(lambda: harness.listening(cls.port), timeout=10, what="sshd listening")
        user = os.environ.get("USER") or "root"
        cls.url = f"ssh://{user}@127.0.0.1:{cls.port}{cls.repos}/{{}}"
        host_pub = open(os.path.join(t, "hostkey.pub")).read().split()
        cls.entry = f"[127.0.0.1]:{cls.port} {host_pub[0]} {host_pub[1]}\n"
        cls.n = 0

    @classmethod
    def tearDownClass(cls):
        cls.sshd.stop()
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def known_hosts(self, text):
        SshRepositoryTest.n += 1
        path = os.path.join(self.tmp, f"known_hosts{self.n}")
        with open(path, "w") as f:
            f.write(text)
        return path

    def proj(self, key, known):
        SshRepositoryTest.n += 1
        return project(self.tmp, f"p{self.n}", self.url, {"ssh_key": os.path.join(self.tmp, key),
                                                          "ssh_known_hosts": known, "ssh_agent": "false"})

    def test_known_host_plain_and_hashed(self):
        p = self.proj("client", self.known_hosts("other.example ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIB\n" +
                                                 self.entry))
        r = install(p)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertIn("Installed secret 1.0.0 (tag 1.0.0) from ssh://", r.stdout + r.stderr)
        self.assertTrue(os.path.isfile(os.path.join(p, "libs", "secret", "model", "_init.cf")))
        hashed = self.known_hosts(self.entry)
        subprocess.run(["ssh-keygen", "-q", "-H", "-f", hashed], check=True, capture_output=True)
        self.assertTrue(open(hashed).read().startswith("|1|"))
        r = install(self.proj("client", hashed))
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)

    def test_unknown_and_changed_host_keys_are_refused(self):
        known = self.known_hosts("")
        r = install(self.proj("client", known))
        self.assertEqual(r.returncode, 1, r.stdout + r.stderr)
        self.assertIn(f"the SSH host key of [127.0.0.1]:{self.port} is not known: no entry for it in {known}",
                      r.stderr)
        self.assertIn(f"ssh-keyscan -p {self.port} 127.0.0.1", r.stderr)
        other = open(os.path.join(self.tmp, "stranger.pub")).read().split()
        changed = self.known_hosts(f"[127.0.0.1]:{self.port} {other[0]} {other[1]}\n")
        r = install(self.proj("client", changed))
        self.assertEqual(r.returncode, 1, r.stdout + r.stderr)
        self.assertIn(f"does not match the key recorded in {changed}:1 (ssh-ed25519)", r.stderr)
        revoked = self.known_hosts("@revoked * " + " ".join(self.entry.split()[1:]) + "\n" + self.entry)
        r = install(self.proj("client", revoked))
        self.assertEqual(r.returncode, 1, r.stdout + r.stderr)
        self.assertIn("is marked @revoked in " + revoked + ":1", r.stderr)

    def test_rejected_keys_fail_once_with_the_reason(self):
        known = self.known_hosts(self.entry)
        r = install(self.proj("stranger", known))
        self.assertEqual(r.returncode, 1, r.stdout + r.stderr)
        self.assertIn("authentication failed: the server rejected the configured credentials", r.stderr)
        self.assertNotIn("RSA", r.stderr)
        # An authorised RSA key still fails against OpenSSH >= 8.8 (libssh2 signs with ssh-rsa): the message says so.
        r = install(self.proj("rsa_client", known))
        self.assertEqual(r.returncode, 1, r.stdout + r.stderr)
        self.assertIn("the key is an RSA key: libssh2 signs with ssh-rsa", r.stderr)
        # No key configured and no agent: the server's demand is named, with where to configure one.
        SshRepositoryTest.n += 1
        p = project(self.tmp, f"p{self.n}", self.url, {"ssh_known_hosts": known, "ssh_agent": "false"})
        r = install(p)
        self.assertEqual(r.returncode, 1, r.stdout + r.stderr)
        self.assertIn("asks for credentials and none are configured", r.stderr)


class BasicAuthGitHandler(http.server.BaseHTTPRequestHandler):
    """git's smart HTTP protocol through `git http-backend` (CGI), behind HTTP basic authentication."""
    root = None
    user, password = "alice", "s3cret"

    def log_message(self, *args):
        pass

    def _serve(self):
        want = "Basic " + base64.b64encode(f"{self.user}:{self.password}".encode()).decode()
        if self.headers.get("Authorization") != want:
            self.send_response(401)
            self.send_header("WWW-Authenticate", 'Basic realm="modules"')
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        path, _, query = self.path.partition("?")
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        env = dict(os.environ, GIT_PROJECT_ROOT=self.root, GIT_HTTP_EXPORT_ALL="1", PATH_INFO=path,
                   REQUEST_METHOD=self.command, QUERY_STRING=query, REMOTE_USER=self.user,
                   CONTENT_TYPE=self.headers.get("Content-Type", ""), CONTENT_LENGTH=str(len(body)))
        if self.headers.get("Content-Encoding"):
            env["HTTP_CONTENT_ENCODING"] = self.headers["Content-Encoding"]
        out = subprocess.run(["git", "http-backend"], input=body, env=env, capture_output=True).stdout
        head, _, payload = out.partition(b"\r\n\r\n")
        status = 200
        headers = []
        for line in head.decode().split("\r\n"):
            k, _, v = line.partition(":")
            if k.lower() == "status":
                status = int(v.split()[0])
            elif k:
                headers.append((k, v.strip()))
        self.send_response(status)
        for k, v in headers:
            self.send_header(k, v)
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    do_GET = _serve
    do_POST = _serve


class HttpBasicAuthRepositoryTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="inm-githttp-")
        cls.repos = os.path.join(cls.tmp, "repos")
        make_module(cls.repos, "secret", "2.0.0")
        handler = type("H", (BasicAuthGitHandler,), {"root": cls.repos})
        cls.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
        cls.thread = threading.Thread(target=cls.server.serve_forever, daemon=True)
        cls.thread.start()
        cls.url = f"http://127.0.0.1:{cls.server.server_address[1]}/{{}}"
        cls.n = 0

    @classmethod
    def tearDownClass(cls):
        cls.server.shutdown()
        cls.server.server_close()
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def proj(self, auth=None):
        HttpBasicAuthRepositoryTest.n += 1
        return project(self.tmp, f"p{self.n}", self.url, auth)

    def test_credentials_from_config_and_environment(self):
        r = install(self.proj())
        self.assertEqual(r.returncode, 1, r.stdout + r.stderr)
        self.assertIn("the server asks for credentials and none are configured (see the [module_auth] section",
                      r.stderr)
        r = install(self.proj({"username": "alice", "password": "wrong"}))
        self.assertEqual(r.returncode, 1, r.stdout + r.stderr)
        self.assertIn("authentication failed: the server rejected the configured credentials", r.stderr)
        p = self.proj({"username": "alice", "password": "s3cret"})
        r = install(p)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertEqual(git(os.path.join(p, "libs", "secret"), "describe", "--tags"), "2.0.0")
        # The password never lands in the checkout's config.
        self.assertNotIn("s3cret", open(os.path.join(p, "libs", "secret", ".git", "config")).read())
        r = install(self.proj(), env={"INMANTA_MODULE_AUTH_USERNAME": "alice",
                                      "INMANTA_MODULE_AUTH_PASSWORD": "s3cret"})
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)


if __name__ == "__main__":
    unittest.main()
