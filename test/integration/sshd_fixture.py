"""A real OpenSSH server for the agentless tests (test_agentless_ssh.py, test_agentless_sudo_pool.py): Debian's
sshd on a free loopback port with its own config, host key and log, one non-root login user (created with
useradd when missing, removed again by stop() when this fixture created it) whose authorized key is the
fixture's client key, and known_hosts files with the right and a wrong host key. `env` is what the scheduler's
executors need to find the key and known_hosts ([agent] ssh-*-file). Needs root. Each test file uses its own
user name, so two files running at once on one machine do not remove each other's user."""
import os
import pwd
import shutil
import subprocess
import tempfile
import uuid

import harness

SSHD = "/usr/sbin/sshd"


def keygen(path):
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", path], check=True, capture_output=True)


def available():
    return os.path.exists(SSHD) and os.geteuid() == 0


class Sshd:
    def __init__(self, user, max_sessions=50):
        self.user = user
        self.max_sessions = max_sessions
        self.tmp = tempfile.mkdtemp(prefix="inm-agentless-")
        self.created_user = False
        self.proc = None

    def start(self):
        t = self.tmp
        try:
            pwd.getpwnam(self.user)
        except KeyError:
            subprocess.run(["useradd", "-m", "-s", "/bin/sh", self.user], check=True, capture_output=True)
            self.created_user = True
        # Without PAM, sshd refuses a locked account ("!" password) even for keys: '*' = no password, not locked.
        subprocess.run(["usermod", "-p", "*", self.user], check=True, capture_output=True)
        self.pw = pwd.getpwnam(self.user)
        self.home = self.pw.pw_dir
        keygen(os.path.join(t, "hostkey"))
        keygen(os.path.join(t, "client"))
        keygen(os.path.join(t, "stranger"))
        ssh_dir = os.path.join(self.home, ".ssh")
        os.makedirs(ssh_dir, exist_ok=True)
        with open(os.path.join(ssh_dir, "authorized_keys"), "w") as f:
            f.write(open(os.path.join(t, "client.pub")).read())
        for p in (ssh_dir, os.path.join(ssh_dir, "authorized_keys")):
            os.chown(p, self.pw.pw_uid, self.pw.pw_gid)
            os.chmod(p, 0o700 if p == ssh_dir else 0o600)
        self.port = harness.free_port()
        self.log = os.path.join(t, "sshd.log")
        with open(os.path.join(t, "sshd_config"), "w") as f:
            f.write(f"Port {self.port}\nListenAddress 127.0.0.1\nHostKey {t}/hostkey\nPidFile {t}/sshd.pid\n"
                    "PasswordAuthentication no\nKbdInteractiveAuthentication no\nUsePAM no\n"
                    f"AllowUsers {self.user}\nMaxSessions {self.max_sessions}\nMaxStartups 50\n")
        os.makedirs("/run/sshd", exist_ok=True)  # sshd's privilege separation directory
        self.proc = harness.Process([SSHD, "-D", "-f", os.path.join(t, "sshd_config"), "-E", self.log])
        harness.wait_for(lambda: harness.listening(self.port), timeout=10, what="sshd listening")
        host_pub = open(os.path.join(t, "hostkey.pub")).read().split()
        self.known = os.path.join(t, "known_hosts")
        with open(self.known, "w") as f:
            f.write(f"[127.0.0.1]:{self.port} {host_pub[0]} {host_pub[1]}\n")
        other = open(os.path.join(t, "stranger.pub")).read().split()
        self.wrong_known = os.path.join(t, "wrong_known_hosts")
        with open(self.wrong_known, "w") as f:
            f.write(f"[127.0.0.1]:{self.port} {other[0]} {other[1]}\n")
        self.env = {"INMANTA_AGENT_SSH_KNOWN_HOSTS_FILE": self.known,
                    "INMANTA_AGENT_SSH_IDENTITY_FILE": os.path.join(t, "client")}
        return self

    def stop(self):
        if self.proc:
            self.proc.stop()
            self.proc = None
        if self.created_user:
            subprocess.run(["userdel", "-f", "-r", self.user], capture_output=True)
            self.created_user = False
        shutil.rmtree(self.tmp, ignore_errors=True)

    def uri(self, **options):
        q = "&".join(f"{k}={v}" for k, v in options.items())
        return f"ssh://{self.user}@127.0.0.1:{self.port}" + (f"?{q}" if q else "")

    def scratch(self, test, owner="user"):
        """A fresh directory in the user's home, owned by the user (owner="root": by root, mode 755, where the
        user cannot write without sudo); removed after the test."""
        d = os.path.join(self.home, "t-" + uuid.uuid4().hex[:8])
        os.mkdir(d)
        os.chmod(d, 0o755)
        if owner == "user":
            os.chown(d, self.pw.pw_uid, self.pw.pw_gid)
        test.addCleanup(shutil.rmtree, d, True)
        return d
