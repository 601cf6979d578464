"""The start-up step's settings stay with the `inmanta` process (tools/StartUp.cpp): a handler command the
executor starts sees the caller's stack soft limit and GLIBC_TUNABLES, not the 1 GiB stack and the huge-page
tunable the start-up step set for the executor itself (glibc would reserve 1 GiB per thread stack there).
No PostgreSQL is needed; every process started is stopped by PID.
"""
import os
import resource
import shutil
import subprocess
import tempfile
import unittest

import harness

frame, read_frame = harness.frame, harness.read_frame

STACK = 8 << 20


def fresh_env(**extra):
    """A shell-started process's environment: none of the start-up step's settings or markers."""
    drop = ("LD_PRELOAD", "INM_ALLOCATOR_PRELOADED", "INM_ALLOCATOR_DECOMMIT", "TCMALLOC_AGGRESSIVE_DECOMMIT",
            "INM_STARTUP_EXEC", "INM_REEXEC_DONE", "GLIBC_TUNABLES", "INM_STARTUP_TUNABLES",
            "INM_STARTUP_STACK", "INM_NO_HUGEPAGES")
    env = {k: v for k, v in os.environ.items() if k not in drop}
    env.update(extra)
    return env


def small_stack():
    hard = resource.getrlimit(resource.RLIMIT_STACK)[1]
    resource.setrlimit(resource.RLIMIT_STACK, (STACK, hard))


class HandlerCommandEnvironmentTest(unittest.TestCase):
    def setUp(self):
        hard = resource.getrlimit(resource.RLIMIT_STACK)[1]
        if hard != resource.RLIM_INFINITY and hard < 1 << 30:
            self.skipTest("the hard stack limit leaves the start-up step nothing to raise")
        self.dir = tempfile.mkdtemp(prefix="inm-startup-")
        self.addCleanup(shutil.rmtree, self.dir, True)
        # A stand-in dpkg-query (the std::Package handler's first command) that records what it inherited.
        self.report = os.path.join(self.dir, "seen")
        fake = os.path.join(self.dir, "dpkg-query")
        with open(fake, "w") as f:
            f.write("#!/bin/sh\n"
                    f"{{ ulimit -s; echo \"tunables=${{GLIBC_TUNABLES-unset}}\"; "
                    f"echo \"marker=${{INM_STARTUP_STACK-unset}}\"; }} > {self.report}\n"
                    "printf 'install ok installed\\t1.0'\n")
        os.chmod(fake, 0o755)

    def deploy_package(self, args, **env_extra):
        env = fresh_env(PATH=self.dir + ":" + os.environ.get("PATH", "/usr/bin:/bin"), **env_extra)
        proc = subprocess.Popen(args, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, env=env, preexec_fn=small_stack)
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
        with open(self.report) as f:
            return got, f.read().split()

    def test_handler_command_sees_the_callers_stack_and_tunables(self):
        got, seen = self.deploy_package([harness.INMANTA, "executor", "--threads", "2"])
        self.assertEqual(got["status"], "deployed", got)
        self.assertEqual(seen, [str(STACK // 1024), "tunables=unset", "marker=unset"])

    def test_a_callers_own_tunables_are_kept(self):
        got, seen = self.deploy_package([harness.INMANTA, "executor", "--threads", "2"],
                                        GLIBC_TUNABLES="glibc.malloc.arena_max=2")
        self.assertEqual(seen, [str(STACK // 1024), "tunables=glibc.malloc.arena_max=2", "marker=unset"])

    def test_an_executor_started_by_an_inmanta_process_knows_the_original(self):
        # The scheduler (a verb that keeps the 1 GiB stack for itself) starts its executors with its raised
        # limit and the marker: the executor's own start-up step sets the original back for its commands.
        def raised():
            hard = resource.getrlimit(resource.RLIMIT_STACK)[1]
            resource.setrlimit(resource.RLIMIT_STACK, (1 << 30, hard))
        env = fresh_env(PATH=self.dir + ":" + os.environ.get("PATH", "/usr/bin:/bin"),
                        INM_STARTUP_STACK=str(STACK))
        proc = subprocess.Popen([harness.INMANTA, "executor", "--threads", "2"], stdin=subprocess.PIPE,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, preexec_fn=raised)
        self.addCleanup(lambda: (proc.poll() is None and proc.kill(), proc.wait(),
                                 proc.stdout.close(), proc.stderr.close()))
        proc.stdin.write(frame({"type": "hello", "protocol": 1}))
        proc.stdin.write(frame({"type": "deploy", "requests": [{
            "action_id": "p1", "id": "std::Package[localhost,name=foo],v=1", "dry_run": False,
            "attributes": {"name": "foo", "state": "installed", "purged": False}}]}))
        proc.stdin.write(frame({"type": "shutdown"}))
        proc.stdin.flush()
        self.assertEqual(proc.wait(20), 0, proc.stderr.read()[-2000:])
        with open(self.report) as f:
            self.assertEqual(f.read().split(), [str(STACK // 1024), "tunables=unset", "marker=unset"])


if __name__ == "__main__":
    unittest.main()
