"""docs/quickstart.md, run as written (issue #29): every ```sh block of the page, in order, as one bash script
(`set -euo pipefail`) in a fresh HOME, with the shared test cluster's port in DB_PORT and a free port in
SERVER_PORT, from a folder whose `build` is the build under test. It walks the four modes — embedded `inmanta
deploy`, push with `inmanta export -d`, the autonomous server compiling a git repository, an external agent —
and each block checks its own outcome (`cat` of the deployed file fails the script when it is missing). The
test then checks the files each mode deployed and that the page's last block stopped what it started; the
server and agent PIDs the page recorded are stopped here too if the script failed half-way."""
import os
import re
import shutil
import signal
import subprocess
import tempfile
import time
import unittest

import harness

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DOC = os.path.join(ROOT, "docs", "quickstart.md")


def sh_blocks(text):
    """The ```sh blocks of a markdown text, in order."""
    return [m.group(1) for m in re.finditer(r"^```sh\n(.*?)^```$", text, re.S | re.M)]


def pid_alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


@unittest.skipUnless(os.geteuid() == 0, "the embedded deploy's PostgreSQL needs root (as in CI)")
class QuickstartDocTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="inq-")
        self.addCleanup(shutil.rmtree, self.tmp, True)
        self.home = os.path.join(self.tmp, "home")
        self.cwd = os.path.join(self.tmp, "checkout")
        os.makedirs(self.home)
        os.makedirs(self.cwd)
        os.symlink(harness.BUILD, os.path.join(self.cwd, "build"))
        self.qs = os.path.join(self.home, "inmanta-quickstart")
        self.host, self.db_port = harness.shared_cluster()
        self.dropdb()
        self.addCleanup(self.dropdb)
        self.addCleanup(self.stop_recorded)

    def dropdb(self):
        harness.psql("postgres", "DROP DATABASE IF EXISTS inmanta WITH (FORCE)", port=self.db_port)

    def stop_recorded(self):
        """The server and agent the page started, by the PIDs it recorded (a failed script leaves them)."""
        for rel in ("edge/agent.pid", "server/server.pid"):
            path = os.path.join(self.qs, rel)
            if not os.path.exists(path):
                continue
            pid = int(open(path).read().strip())
            if pid_alive(pid):
                os.kill(pid, signal.SIGTERM)
                deadline = time.time() + 30
                while pid_alive(pid) and time.time() < deadline:
                    time.sleep(0.2)
                if pid_alive(pid):
                    os.kill(pid, signal.SIGKILL)

    def test_every_command_of_the_page(self):
        with open(DOC) as f:
            blocks = sh_blocks(f.read())
        self.assertGreaterEqual(len(blocks), 7, "the page lost its command blocks")
        script = "set -euo pipefail\n" + "\n".join(
            f"echo '>>> quickstart block {i + 1}'\n{b}" for i, b in enumerate(blocks))
        env = dict(os.environ, HOME=self.home, DB_PORT=str(self.db_port), SERVER_PORT=str(harness.free_port()))
        for k in [k for k in env if k.startswith("INMANTA_")]:
            del env[k]  # the page's own config files must decide
        r = subprocess.run(["bash", "-c", script], cwd=self.cwd, env=env, capture_output=True, text=True,
                           timeout=600)
        log = f"\n--- stdout:\n{r.stdout[-6000:]}\n--- stderr:\n{r.stderr[-6000:]}"
        for rel in ("server/server.log", "edge/agent.log"):
            p = os.path.join(self.qs, rel)
            if r.returncode != 0 and os.path.exists(p):
                log += f"\n--- {rel}:\n" + open(p, errors="replace").read()[-3000:]
        self.assertEqual(r.returncode, 0, "a command of docs/quickstart.md failed" + log)
        self.assertIn(f">>> quickstart block {len(blocks)}", r.stdout, log)

        # What each mode deployed (the page's `cat`s printed them too).
        expect = {"embedded/hello.txt": "hello from inmanta deploy\n", "push/hello.txt": "hello from the server\n",
                  "model/deployed.txt": "compiled by the server from git\n",
                  "edge/motd": "managed by the agent web1\n"}
        for rel, content in expect.items():
            with open(os.path.join(self.qs, rel)) as f:
                self.assertEqual(f.read(), content, rel)
        # The repair of the hand edit in step 1, and the push step saying how the version was released.
        self.assertIn("hello from inmanta deploy", r.stdout)
        self.assertRegex(r.stdout, r"Released version \d+|released by auto_deploy|already released", log)
        # The external agent held web1 (the agent list the page printed).
        self.assertRegex(r.stdout, r"web1 .* up ", log)
        # The last block stopped the server and the agent.
        for rel in ("edge/agent.pid", "server/server.pid"):
            pid = int(open(os.path.join(self.qs, rel)).read().strip())
            self.assertFalse(pid_alive(pid), f"{rel}: pid {pid} still runs after the page's last block")


if __name__ == "__main__":
    unittest.main()
