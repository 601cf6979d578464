"""Process life cycle (issue #25, docs/server.md "Life cycle"): a stopping scheduler finishes the deploys it is
running and starts nothing new, so a restart never runs a finished deploy again; one scheduler per environment
(a second one waits for the first to stop); a scheduler holds none of the server's descriptors, so a server killed
with -9 frees its port at once and a restart binds immediately."""
import os
import re
import signal
import tempfile
import time
import unittest

import harness
from deploy_support import DeployEnv, null_resource as nr, rid
from server_fixture import Server, put_version


def wait(pred, timeout=20, what="condition"):
    return harness.wait_for(pred, timeout=timeout, what=what)


def deploy_actions(d, name):
    return [a for a in d.actions(rid(name))]


class SchedulerStopTest(unittest.TestCase):
    def test_sigterm_finishes_the_running_deploy_and_starts_nothing_new(self):
        d = DeployEnv(self)
        # One agent, parallelism 1: a, b, c deploy one after the other, 1.5 s each.
        d.put_version(1, [nr("a"), nr("b"), nr("c")])
        sched = d.start(delay_ms=1500)
        first = wait(lambda: next((n for n in "abc" if d.status(rid(n)) == "deploying"), None),
                     what="a deploy to start")
        sched.kill(signal.SIGTERM)
        sched.proc.wait(15)
        self.assertEqual(sched.proc.returncode, 0, sched.output())
        self.assertIn("stopping on SIGTERM; 1 deploys running", sched.output())
        # The running deploy finished and was recorded; nothing else started.
        self.assertEqual(d.status(rid(first)), "deployed", sched.output())
        acts = deploy_actions(d, first)
        self.assertEqual(len(acts), 1)
        self.assertIsNotNone(acts[0][3], "the finished action row is closed")
        others = [n for n in "abc" if n != first]
        started_after = [n for n in others if deploy_actions(d, n)]
        self.assertEqual(started_after, [], "nothing starts after SIGTERM")
        d.sched = None
        # Restart: the others deploy; the finished one is not deployed again.
        d.start()
        for n in others:
            d.wait_status(rid(n), "deployed")
        time.sleep(0.5)
        self.assertEqual(len(deploy_actions(d, first)), 1, "a finished deploy ran again after a clean restart")
        for n in others:
            self.assertEqual(len(deploy_actions(d, n)), 1)

    def test_stop_grace_bounds_a_long_deploy(self):
        d = DeployEnv(self)
        d.put_version(1, [nr("slow")])
        cfg = os.path.join(self.tmp_dir(), "s.cfg")
        with open(cfg, "w") as f:
            f.write("[scheduler]\nstop_grace = 1\n")
        env = dict(os.environ, INMANTA_DATABASE_HOST=d.host, INMANTA_DATABASE_PORT=str(d.port),
                   INMANTA_DATABASE_NAME=d.db, INMANTA_DATABASE_USERNAME="postgres", INM_NULL_EXECUTOR_DELAY_MS="20000")
        sched = harness.Process([harness.INMANTA, "scheduler", "--environment", d.env, "--executor", "null", "-c", cfg],
                                env=env)
        self.addCleanup(sched.stop)
        wait(lambda: d.status(rid("slow")) == "deploying")
        t0 = time.time()
        sched.kill(signal.SIGTERM)
        sched.proc.wait(15)
        self.assertLess(time.time() - t0, 6, "the stop grace of 1 s was not honoured")
        self.assertIn("stop grace of 1 s over; 1 deploys still running", sched.output())

    def test_second_scheduler_waits_for_the_first(self):
        d = DeployEnv(self)
        d.put_version(1, [nr("a"), nr("b"), nr("c")])
        first = d.start(delay_ms=1500)
        wait(lambda: any(d.status(rid(n)) == "deploying" for n in "abc"), what="a deploy to start")
        d.sched = None
        second = d.start()
        self.addCleanup(first.stop)
        wait(lambda: "waiting for the previous scheduler of this environment to stop" in second.output(),
             what="the second scheduler to wait")
        first.kill(signal.SIGTERM)
        first.proc.wait(15)
        for n in "abc":
            d.wait_status(rid(n), "deployed")
        self.assertIn("the previous scheduler of this environment stopped; starting", second.output())
        for n in "abc":
            acts = deploy_actions(d, n)
            self.assertEqual(len(acts), 1, f"{n} deployed {len(acts)} times")

    def tmp_dir(self):
        return tempfile.mkdtemp(prefix="inm-life-")


def listening_inode(port):
    """The socket inode listening on 127.0.0.1:port (from /proc/net/tcp), or None."""
    want = f"0100007F:{port:04X}"
    with open("/proc/net/tcp") as f:
        for line in f.readlines()[1:]:
            cols = line.split()
            if cols[1] == want and cols[3] == "0A":
                return cols[9]
    return None


def socket_inodes(pid):
    out = set()
    try:
        for fd in os.listdir(f"/proc/{pid}/fd"):
            try:
                m = re.match(r"socket:\[(\d+)\]", os.readlink(f"/proc/{pid}/fd/{fd}"))
            except OSError:
                continue
            if m:
                out.add(m.group(1))
    except FileNotFoundError:
        pass
    return out


def children(pid):
    try:
        with open(f"/proc/{pid}/task/{pid}/children") as f:
            return [int(x) for x in f.read().split()]
    except FileNotFoundError:
        return []


class ServerKillTest(unittest.TestCase):
    def test_kill_9_then_restart_binds_at_once(self):
        s = Server(schedulers=True)
        self.addCleanup(s.stop)
        _, env = s.project_env("life")
        v, (status, body) = put_version(s, env, [{"rid": "std::testing::NullResource[internal,name=a]", "name": "a",
                                                  "agentname": "internal", "value": "", "fail": False}])
        self.assertEqual(status, 200, body)
        sched = wait(lambda: [c for c in children(s.proc.pid)], what="a scheduler")
        listener = listening_inode(s.port)
        self.assertIsNotNone(listener)
        for c in sched:
            self.assertNotIn(listener, socket_inodes(c), "the scheduler inherited the server's listening socket")
        s.proc.kill(signal.SIGKILL)
        s.proc.proc.wait()
        t0 = time.time()
        again = Server(db=s.db, port=s.port, schedulers=True)
        self.addCleanup(again.stop)
        self.assertLess(time.time() - t0, 15)
        # The environment converges under the new server: the resource is deployed.
        def deployed():
            st, data = again.call("GET", "/api/v2/resource?limit=10", env=env)
            return st == 200 and [r for r in data["data"] if r["status"] == "deployed"]
        wait(deployed, timeout=30, what="the resource to be deployed under the restarted server")


if __name__ == "__main__":
    unittest.main()
