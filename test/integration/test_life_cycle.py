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


NULL = "std::testing::NullResource"


class ServerSigtermDeployingTest(unittest.TestCase):
    """SIGTERM of a server whose schedulers deploy 5 environments at once: a restart on the same port converges
    and no deploy that finished before the stop runs again (repair and deploy timers are off)."""

    def test_sigterm_with_five_deploying_environments(self):
        extra = "[scheduler]\nexecutor = null\n"
        env = dict(os.environ, INM_NULL_EXECUTOR_DELAY_MS="700")
        s = Server(schedulers=True, extra=extra, env=env)
        self.addCleanup(s.stop)
        names = ["a", "b", "c", "d"]
        envs = []
        for i in range(5):
            _, e = s.project_env(f"five{i}")
            for key in ("autostart_agent_repair_interval", "autostart_agent_deploy_interval"):
                s.ok("POST", f"/api/v2/environment_settings/{key}", {"value": "0"}, env=e)
            envs.append(e)
        for e in envs:
            _, (status, body) = put_version(s, e, [{"rid": f"{NULL}[internal,name={n}]", "name": n,
                                                    "agentname": "internal", "value": "", "fail": False}
                                                   for n in names])
            self.assertEqual(status, 200, body)

        def deploys():
            """{(env, resource id): [(version, status, finished)]} of every deploy action, from the action log."""
            out = {}
            rows = harness.psql(s.db, "SELECT a.environment, r.resource_id, a.version, a.status, "
                                "a.finished IS NOT NULL FROM resourceaction a JOIN resourceaction_resource r "
                                "ON r.resource_action_id = a.action_id WHERE a.action = 'deploy'")
            for line in filter(None, rows.splitlines()):
                e, r, v, st, fin = line.split("|")
                out.setdefault((e, r), []).append((int(v), st, fin == "t"))
            return out

        def finished_ok(acts):
            return [a for a in acts if a[1] == "deployed" and a[2]]

        wait(lambda: sum(len(finished_ok(a)) for a in deploys().values()) >= 2, timeout=30,
             what="some deploys to finish")
        s.proc.kill(signal.SIGTERM)
        s.proc.proc.wait(40)
        self.assertEqual(s.proc.proc.returncode, 0, s.proc.output())
        before = {k: finished_ok(v) for k, v in deploys().items() if finished_ok(v)}
        total = len(envs) * len(names)
        self.assertGreater(len(before), 0)
        self.assertLess(len(before), total, "every deploy finished before the stop: the test proves nothing")

        again = Server(db=s.db, port=s.port, schedulers=True, extra=extra, env=env)
        self.addCleanup(again.stop)

        def converged():
            d = deploys()
            return len([k for k, v in d.items() if finished_ok(v)]) == total and d
        after = wait(converged, timeout=60, what="every resource of the 5 environments to deploy")
        time.sleep(1.5)  # nothing else may start: no timer is on
        after = deploys()
        for key, acts in before.items():
            self.assertEqual(len(after[key]), len(acts), f"{key} was deployed again after the restart: {after[key]}")
        for key, acts in after.items():
            self.assertEqual(len(finished_ok(acts)), 1, f"{key}: {acts}")
        for e in envs:
            st, data = again.call("GET", "/api/v2/resource?limit=10", env=e)
            self.assertEqual(st, 200, data)
            self.assertEqual(sorted(r["status"] for r in data["data"]), ["deployed"] * len(names))


if __name__ == "__main__":
    unittest.main()
