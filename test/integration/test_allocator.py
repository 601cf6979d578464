"""The start-up step (docs/deploy.md "Start-up and allocator", tools/StartUp.cpp): the scheduler and executor
verbs run with tcmalloc, preloaded by one re-exec that also sets huge pages and the stack (never two), and restore
the caller's LD_PRELOAD for their children; the executors a scheduler starts make their own start-up step and run
with tcmalloc too; other verbs keep glibc malloc. Skipped in builds that did not find the library (sanitizer
builds never preload it). Every process started is stopped by PID.
"""
import os
import re
import subprocess
import time
import unittest

import harness
from deploy_support import DeployEnv, null_resource as nr, rid


def fresh_start_env(**extra):
    """The environment of a process started from a shell: none of the start-up step's settings or markers."""
    drop = ("LD_PRELOAD", "INM_ALLOCATOR_PRELOADED", "INM_ALLOCATOR_DECOMMIT", "TCMALLOC_AGGRESSIVE_DECOMMIT",
            "INM_STARTUP_EXEC", "INM_REEXEC_DONE", "GLIBC_TUNABLES", "LD_DEBUG")
    env = {k: v for k, v in os.environ.items() if k not in drop}
    env.update(extra)
    return env


def small_stack():
    import resource
    soft, hard = resource.getrlimit(resource.RLIMIT_STACK)
    resource.setrlimit(resource.RLIMIT_STACK, (8 << 20, hard))


def images(args, stdin=subprocess.DEVNULL):
    """How many program images the command went through (LD_DEBUG=libs names each one it hands control to),
    started like from a shell with an 8 MiB stack."""
    r = subprocess.run(args, stdin=stdin, capture_output=True, text=True, timeout=60,
                       env=fresh_start_env(LD_DEBUG="libs"), preexec_fn=small_stack)
    return r, r.stderr.count("transferring control:")


def tcmalloc_path():
    """The library the build preloads, or None (not found, or a sanitizer build)."""
    try:
        with open(os.path.join(harness.BUILD, "CMakeCache.txt")) as f:
            cache = f.read()
    except OSError:
        return None
    if re.search(r"^INM_SANITIZE:BOOL=ON$", cache, re.M):
        return None
    m = re.search(r"^INM_TCMALLOC:FILEPATH=(.+)$", cache, re.M)
    return m.group(1) if m and os.path.exists(m.group(1)) else None


def mapped(pid, name):
    with open(f"/proc/{pid}/maps") as f:
        return name in f.read()


def start_environ(pid):
    """The environment the process image started with (/proc/PID/environ), as a dict."""
    with open(f"/proc/{pid}/environ", "rb") as f:
        items = [e.decode(errors="replace") for e in f.read().split(b"\0") if b"=" in e]
    return dict(e.split("=", 1) for e in items)


class AllocatorTest(unittest.TestCase):
    def setUp(self):
        self.lib = tcmalloc_path()
        if not self.lib:
            self.skipTest("this build preloads no tcmalloc (library not found or a sanitizer build)")

    def run_executor(self, extra_env):
        env = {k: v for k, v in os.environ.items() if k not in ("LD_PRELOAD", "INM_ALLOCATOR_PRELOADED",
                                                                 "INM_ALLOCATOR_DECOMMIT",
                                                                 "TCMALLOC_AGGRESSIVE_DECOMMIT")}
        env.update(extra_env)
        p = subprocess.Popen([harness.INMANTA, "executor"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, env=env)
        try:
            deadline = time.time() + 10
            while not mapped(p.pid, os.path.basename(self.lib)) and time.time() < deadline:
                time.sleep(0.05)
            return mapped(p.pid, os.path.basename(self.lib)), start_environ(p.pid)
        finally:
            p.stdin.close()  # end of input = shutdown
            try:
                p.wait(10)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
            p.stdout.close()
            p.stderr.close()

    def test_executor_runs_with_tcmalloc_and_remembers_no_preload(self):
        loaded, env = self.run_executor({})
        self.assertTrue(loaded, "tcmalloc is not mapped into the executor")
        # The re-executed image carries the marker: "-" = the caller had no LD_PRELOAD, restored for children.
        self.assertEqual(env.get("INM_ALLOCATOR_PRELOADED"), "-")
        self.assertEqual(env.get("LD_PRELOAD"), self.lib)

    def test_a_callers_preload_is_kept_after_ours(self):
        other = "/usr/lib/x86_64-linux-gnu/libdl.so.2"  # harmless, present on Debian 12
        if not os.path.exists(other):
            self.skipTest(f"{other} is missing")
        loaded, env = self.run_executor({"LD_PRELOAD": other})
        self.assertTrue(loaded)
        self.assertEqual(env.get("LD_PRELOAD"), self.lib + ":" + other)
        self.assertEqual(env.get("INM_ALLOCATOR_PRELOADED"), "=" + other)

    def test_executor_returns_freed_memory_at_once(self):
        # The executor's tcmalloc decommits freed spans (its peak); the marker makes the restore remove the
        # setting again for the executor's children.
        loaded, env = self.run_executor({})
        self.assertTrue(loaded)
        self.assertEqual(env.get("TCMALLOC_AGGRESSIVE_DECOMMIT"), "true")
        self.assertEqual(env.get("INM_ALLOCATOR_DECOMMIT"), "1")

    def test_a_callers_decommit_setting_wins(self):
        loaded, env = self.run_executor({"TCMALLOC_AGGRESSIVE_DECOMMIT": "false"})
        self.assertTrue(loaded)
        self.assertEqual(env.get("TCMALLOC_AGGRESSIVE_DECOMMIT"), "false")
        self.assertNotIn("INM_ALLOCATOR_DECOMMIT", env)

    def test_other_verbs_keep_glibc_malloc(self):
        # LD_DEBUG=libs makes the dynamic loader name every library it initialises, in every image the
        # process execs: the compiler's images never load tcmalloc.
        env = {k: v for k, v in os.environ.items() if k not in ("LD_PRELOAD", "INM_ALLOCATOR_PRELOADED")}
        env["LD_DEBUG"] = "libs"
        r = subprocess.run([harness.INMANTA, "compile", "--help"], capture_output=True, text=True, timeout=60,
                           env=env)
        self.assertEqual(r.returncode, 0, r.stderr[-2000:])
        self.assertIn("calling init", r.stderr)  # the loader did report its libraries
        self.assertNotIn(os.path.basename(self.lib), r.stderr)


    def test_one_exec_at_start(self):
        # Huge pages, the 1 GiB stack and tcmalloc all need an exec: one covers them (it used to be two).
        r, n = images([harness.INMANTA, "executor"])
        self.assertEqual(r.returncode, 0, r.stderr[-2000:])
        self.assertEqual(n, 2, "the executor's images: the started one and one re-exec")
        r, n = images([harness.INMANTA, "-v", "scheduler", "--help"])
        self.assertEqual(n, 2, r.stderr[-2000:])
        # The compiler re-executes once for huge pages and the stack, without tcmalloc.
        r, n = images([harness.INMANTA, "compile", "--help"])
        self.assertEqual((r.returncode, n), (0, 2), r.stderr[-2000:])
        self.assertNotIn(os.path.basename(self.lib), r.stderr)
        # A process that already has what it needs (the caller's opt-out, glibc tunables present) does not exec.
        env = fresh_start_env(INM_REEXEC_DONE="1", LD_DEBUG="libs")
        r = subprocess.run([harness.INMANTA, "compile", "--help"], capture_output=True, text=True, timeout=60, env=env)
        self.assertEqual(r.stderr.count("transferring control:"), 1, r.stderr[-2000:])

    def test_the_schedulers_executors_make_their_own_start_up_step(self):
        d = DeployEnv(self)
        d.put_version(1, [nr("a")])
        sched = d.start(executor="process")
        d.wait_status(rid("a"), "deployed")
        lib = os.path.basename(self.lib)
        self.assertTrue(mapped(sched.pid, lib), "the scheduler runs without tcmalloc")
        # Its executor children (still alive: idle executors are kept a while) run with tcmalloc, re-executed
        # by their own start-up step: the marker of the scheduler's exec did not reach them.
        children = []
        for pid in os.listdir("/proc"):
            if not pid.isdigit():
                continue
            try:
                with open(f"/proc/{pid}/stat") as f:
                    ppid = int(f.read().rsplit(")", 1)[1].split()[1])
                with open(f"/proc/{pid}/cmdline", "rb") as f:
                    cmd = f.read().split(b"\0")
            except OSError:
                continue
            if ppid == sched.pid and b"executor" in cmd:
                children.append(int(pid))
        self.assertTrue(children, "no executor child of the scheduler found")
        for pid in children:
            self.assertTrue(mapped(pid, lib), f"executor {pid} runs without tcmalloc")
            env = start_environ(pid)
            self.assertEqual(env.get("INM_STARTUP_EXEC"), "1", "the executor's image is its own re-exec")
            self.assertEqual(env.get("INM_ALLOCATOR_PRELOADED"), "-", "the scheduler passed on the caller's "
                             "LD_PRELOAD (none), not its tcmalloc")
            self.assertEqual(env.get("TCMALLOC_AGGRESSIVE_DECOMMIT"), "true")


if __name__ == "__main__":
    unittest.main()
