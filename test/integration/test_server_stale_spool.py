"""A server killed during a large upload leaves its spool file (inmanta-body-<pid>-XXXXXX in $TMPDIR,
orchestrator/api/HttpServer.cpp); the next server start removes the files of processes that no longer exist and
keeps a living process's (servers may share $TMPDIR). Every process started is stopped by PID.
"""
import os
import shutil
import subprocess
import tempfile
import unittest

import server_fixture as sf


class StaleSpoolFilesTest(unittest.TestCase):
    def test_start_removes_a_dead_servers_request_files_only(self):
        tmp = tempfile.mkdtemp(prefix="inm-spool-")
        self.addCleanup(shutil.rmtree, tmp, True)
        gone = subprocess.Popen(["true"])
        gone.wait()
        dead = os.path.join(tmp, f"inmanta-body-{gone.pid}-abcDEF")
        living = os.path.join(tmp, f"inmanta-body-{os.getpid()}-abcDEF")
        foreign = os.path.join(tmp, "inmanta-body-abcDEF")
        for p in (dead, living, foreign):
            with open(p, "w") as f:
                f.write("partial upload")
        srv = sf.Server(env=dict(os.environ, TMPDIR=tmp))
        self.addCleanup(srv.stop)
        self.assertFalse(os.path.exists(dead))
        self.assertTrue(os.path.exists(living))
        self.assertTrue(os.path.exists(foreign))


if __name__ == "__main__":
    unittest.main()
