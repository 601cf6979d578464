"""A server whose database answers but refuses stops at once with the cause and the fix (docs/server.md "First
start"), instead of retrying for [database] connection_timeout: a database or a user that does not exist."""
import os
import shutil
import subprocess
import tempfile
import time
import unittest
import uuid

import harness


class ServerStartErrorsTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="inm-starterr-")
        self.host, self.port = harness.shared_cluster()

    def tearDown(self):
        shutil.rmtree(self.tmp, ignore_errors=True)

    def start(self, name, user="postgres", timeout=60):
        cfg = os.path.join(self.tmp, "server.cfg")
        with open(cfg, "w") as f:
            f.write(f"[database]\nhost = {self.host}\nport = {self.port}\nname = {name}\nusername = {user}\n"
                    f"connection_timeout = 60\n[server]\nbind-address = 127.0.0.1\nbind-port = {harness.free_port()}\n"
                    f"[config]\nstate-dir = {self.tmp}/state\n")
        t0 = time.monotonic()
        r = subprocess.run([harness.INMANTA, "server", "-c", cfg], capture_output=True, text=True, timeout=timeout)
        return r, time.monotonic() - t0

    def test_missing_database_and_user_fail_fast(self):
        name = "nosuch_" + uuid.uuid4().hex[:8]
        r, took = self.start(name)
        self.assertEqual(r.returncode, 1, r.stderr)
        self.assertLess(took, 5, "a missing database must not be waited for")
        self.assertIn(f"the database '{name}' does not exist on {self.host}:{self.port}: create it (e.g. "
                      f"`createdb -h {self.host} -p {self.port} -U postgres {name}`)", r.stderr)
        self.assertNotIn("database_unavailable", r.stderr)
        r, took = self.start("postgres", user="nosuch_user")
        self.assertEqual(r.returncode, 1, r.stderr)
        self.assertLess(took, 5)
        self.assertIn("the database user 'nosuch_user' does not exist", r.stderr)


if __name__ == "__main__":
    unittest.main()
