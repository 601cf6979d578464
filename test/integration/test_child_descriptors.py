"""A command a handler runs (orchestrator/executor/handlers/Posix.cpp) inherits only stdin, stdout and stderr:
no descriptor of the executor (its protocol pipes, files, anything its own parent passed down) stays open in it,
so a long-running command never holds a server's port or a scheduler's pipe. No PostgreSQL is needed; every
process started is stopped by PID.
"""
import os
import shutil
import subprocess
import tempfile
import unittest

import harness

frame, read_frame = harness.frame, harness.read_frame

LEAK_FD = 47  # an inheritable descriptor the test hands the executor


class HandlerCommandDescriptorsTest(unittest.TestCase):
    def test_handler_command_inherits_only_the_standard_descriptors(self):
        d = tempfile.mkdtemp(prefix="inm-fds-")
        self.addCleanup(shutil.rmtree, d, True)
        report = os.path.join(d, "fds")
        fake = os.path.join(d, "dpkg-query")  # the std::Package handler's first command
        with open(fake, "w") as f:
            f.write("#!/bin/sh\n"
                    f"for f in /proc/$$/fd/*; do echo \"${{f##*/}}\"; done > {report}\n"
                    "printf 'install ok installed\\t1.0'\n")
        os.chmod(fake, 0o755)
        r, w = os.pipe()
        os.dup2(w, LEAK_FD)
        os.close(w)
        self.addCleanup(os.close, r)
        env = dict(os.environ, PATH=d + ":" + os.environ.get("PATH", "/usr/bin:/bin"))
        proc = subprocess.Popen([harness.INMANTA, "executor", "--threads", "2"], stdin=subprocess.PIPE,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, pass_fds=(LEAK_FD,))
        os.close(LEAK_FD)
        self.addCleanup(lambda: (proc.poll() is None and proc.kill(), proc.wait(),
                                 proc.stdout.close(), proc.stderr.close()))
        proc.stdin.write(frame({"type": "hello", "protocol": 1}))
        proc.stdin.write(frame({"type": "deploy", "requests": [{
            "action_id": "p1", "id": "std::Package[localhost,name=foo],v=1", "dry_run": False,
            "attributes": {"name": "foo", "state": "installed", "purged": False}}]}))
        proc.stdin.flush()
        got = None
        while got is None:
            m = read_frame(proc.stdout)
            if m.get("action_id") == "p1":
                got = m
        proc.stdin.write(frame({"type": "shutdown"}))
        proc.stdin.flush()
        self.assertEqual(read_frame(proc.stdout)["type"], "bye")
        self.assertEqual(proc.wait(10), 0)
        self.assertEqual(got["status"], "deployed", got)
        with open(report) as f:
            seen = set(f.read().split())
        # The shell keeps its script open on a descriptor of its own (10, 11) and the glob holds one while it
        # lists (3); the descriptor handed to the executor must not be there.
        self.assertTrue({"0", "1", "2"} <= seen, seen)
        self.assertNotIn(str(LEAK_FD), seen)


if __name__ == "__main__":
    unittest.main()
