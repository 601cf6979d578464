"""The scheduler and executor verbs run with tcmalloc (docs/deploy.md "Allocator", tools/Allocator.cpp): they
re-execute themselves once with it preloaded and restore the caller's LD_PRELOAD for their children; other verbs
keep glibc malloc. Skipped in builds that did not find the library (sanitizer builds never preload it). Every
process started is stopped by PID.
"""
import os
import re
import subprocess
import time
import unittest

import harness


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


if __name__ == "__main__":
    unittest.main()
