"""A scheduler the system refuses threads (scheduler/WorkerPool.h, orchestrator/schedhost/SchedulerHost.cpp): the refusal is real,
a copy of the binary run as an otherwise unused uid under RLIMIT_NPROC (root is exempt from the limit, so these
tests need root). With no thread at all it exits 1 with an error naming the cause (it aborted on an uncaught
std::system_error before); with two of its four database threads it warns and still deploys (it hung joining the
threads it had started)."""
import os
import resource
import shutil
import subprocess
import tempfile
import unittest

import harness
from deploy_support import DeployEnv, null_resource as nr, rid

UID = 61234  # no process of the machine runs as this uid: RLIMIT_NPROC counts only the scheduler's own tasks


@unittest.skipUnless(os.geteuid() == 0, "needs root to run the scheduler as another uid under RLIMIT_NPROC")
class SchedulerNoThreadTest(unittest.TestCase):
    def setUp(self):
        # The checkout may sit in a folder other users cannot enter: run a copy of the binary.
        self.dir = tempfile.mkdtemp(prefix="sched-no-thread-")
        self.addCleanup(shutil.rmtree, self.dir, True)
        os.chmod(self.dir, 0o755)
        self.binary = os.path.join(self.dir, "inmanta")
        shutil.copy2(harness.INMANTA, self.binary)
        os.chmod(self.binary, 0o755)

    def run_scheduler(self, d, nproc, timeout):
        """Runs `inmanta scheduler --executor null` as UID with RLIMIT_NPROC nproc; returns the Popen, running."""
        env = dict(os.environ, INMANTA_DATABASE_HOST=d.host, INMANTA_DATABASE_PORT=str(d.port),
                   INMANTA_DATABASE_NAME=d.db, INMANTA_DATABASE_USERNAME="postgres", HOME=self.dir)
        env.pop("INM_NULL_EXECUTOR_DELAY_MS", None)

        def limit():
            resource.setrlimit(resource.RLIMIT_NPROC, (nproc, nproc))
            resource.setrlimit(resource.RLIMIT_CORE, (0, 0))

        log = open(os.path.join(self.dir, "scheduler.log"), "w+b")
        self.addCleanup(log.close)
        p = subprocess.Popen([self.binary, "scheduler", "--environment", d.env, "--executor", "null"],
                             cwd=self.dir, env=env, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                             user=UID, group=UID, extra_groups=[], preexec_fn=limit, start_new_session=True)
        self.addCleanup(self.stop, p)
        return p, log

    @staticmethod
    def stop(p):
        if p.poll() is None:
            p.kill()
        p.wait()

    @staticmethod
    def output(log):
        log.flush()
        log.seek(0)
        return log.read().decode(errors="replace")

    def test_no_thread_at_all_is_a_clear_error(self):
        d = DeployEnv(self)
        d.put_version(1, [nr("a")])
        p, log = self.run_scheduler(d, 0, 30)
        try:
            rc = p.wait(30)
        except subprocess.TimeoutExpired:
            self.fail("the scheduler hung without threads:\n" + self.output(log))
        out = self.output(log)
        self.assertEqual(rc, 1, out)
        self.assertIn("cannot start its database threads: 0 of 4 started, at least 2 are needed", out)
        self.assertIn("Resource temporarily unavailable", out)

    def test_two_threads_warn_and_still_deploy(self):
        d = DeployEnv(self)
        d.put_version(1, [nr("a"), nr("b", requires=[rid("a")])])
        # The main thread and two more: the third database thread (and the writer's second thread) is refused.
        p, log = self.run_scheduler(d, 3, 60)
        harness.wait_for(lambda: p.poll() is not None or d.status(rid("b")) == "deployed", timeout=30,
                         what="b to be deployed with two database threads")
        out = self.output(log)
        self.assertIsNone(p.poll(), "the scheduler exited:\n" + out)
        self.assertEqual(d.status(rid("a")), "deployed", out)
        self.assertIn("warning: only 2 of 4 database threads started", out)
        p.terminate()
        try:
            rc = p.wait(30)
        except subprocess.TimeoutExpired:
            self.fail("the scheduler did not stop on SIGTERM:\n" + self.output(log))
        self.assertEqual(rc, 0, self.output(log))


if __name__ == "__main__":
    unittest.main()
