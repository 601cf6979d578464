"""Agent failover (docs/deploy.md "Failover"): two `inmanta agent` processes declare the same agent against the
real `inmanta server` and its scheduler. The first claim becomes primary, the second is kept as a standby (it
says so and stays connected; the API and `inmanta-cli agent list` show both). SIGKILL of the primary's process
group mid-deploy: within the failover bound the standby is promoted, the in-flight actions of the dead primary end
`unavailable`, and the new primary deploys every resource; no resource has two deploy actions overlapping in
time. The killed agent, started again, joins as a standby. A SIGSTOPped (silent) primary is replaced within the heartbeat
bound and, resumed, joins as a standby. Handlers are Python (pynote::Note) that sleep
NOTE_SLEEP seconds. Every process is stopped by PID."""
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
import unittest

import harness
import test_external_agent as base
import test_external_agent_stop as stop

BOUND = 10  # [agent] failover-timeout's default
COUNT = stop.COUNT


class AgentFailoverTest(stop.ExternalAgentStopTest):
    def agent_proc(self, seconds):
        env = dict(os.environ, NOTE_SLEEP=str(seconds))
        args = [harness.INMANTA, "agent", "--server", "127.0.0.1", "--port", str(self.srv.port), "-e", self.env,
                "--agent", "ext1", "--state-dir", tempfile.mkdtemp(prefix="inm-failover-")]
        p = harness.Process(args, env=env)
        self.addCleanup(p.stop)
        return p

    def row(self):
        """(connected, holder, standbys) of ext1's external_agent row."""
        text = self.sql("SELECT json_build_array(connected, holder, standbys)::text FROM external_agent "
                        f"WHERE environment = '{self.env}' AND name = 'ext1'")
        return tuple(json.loads(text)) if text else (None, None, None)

    def is_primary(self, p):
        connected, holder, _ = self.row()
        return connected is True and f"pid {p.pid} " in holder + " "

    def is_standby(self, p):
        return any(f"pid {p.pid} " in s + " " for s in (self.row()[2] or []))

    def deploy_spans(self, rid):
        """[(started, finished, status)] of the resource's deploy actions, as epoch seconds."""
        text = self.sql("SELECT coalesce(json_agg(json_build_array(extract(epoch FROM a.started), "
                        "extract(epoch FROM a.finished), a.status) ORDER BY a.started), '[]')::text "
                        "FROM resourceaction a JOIN resourceaction_resource x ON x.resource_action_id = a.action_id "
                        f"WHERE x.resource_id = '{rid}' AND a.action = 'deploy'")
        return json.loads(text)

    def agent_list(self):
        cli = os.path.join(os.path.dirname(harness.INMANTA), "inmanta-cli")
        p = subprocess.run([cli, "--host", "127.0.0.1", "--port", str(self.srv.port), "agent", "list", "-e",
                            self.env], capture_output=True, text=True, timeout=60)
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        return p.stdout

    def test_kill_primary_mid_deploy_standby_takes_over(self):
        primary = self.agent_proc(2)
        self.wait(lambda: self.is_primary(primary), "the first claim to become primary", primary)
        standby = self.agent_proc(2)
        self.wait(lambda: self.is_standby(standby), "the second claim to be kept as a standby", standby)
        self.wait(lambda: "standby for agent(s) ext1" in standby.output(), "the standby's log line", standby)
        self.assertTrue(standby.alive(), standby.output())
        self.assertTrue(self.is_primary(primary))
        # Kill the primary (and its executors) while a handler runs; the agent is listed (it exists once a
        # version names it) with its primary and standby.
        version, rids, running = self.start_deploy(primary)
        listed = {a["name"]: a for a in self.srv.ok("GET", "/api/v2/agents", env=self.env)["data"]}
        self.assertEqual(listed["ext1"]["status"], "up", listed)
        self.assertIn(f"pid {primary.pid}", listed["ext1"]["process_name"])
        self.assertEqual(len(listed["ext1"]["standbys"]), 1, listed)
        self.assertIn(f"pid {standby.pid}", listed["ext1"]["standbys"][0])
        out = self.agent_list()
        self.assertIn(f"pid {primary.pid}", out)
        self.assertIn("1: ", out)
        self.assertIn(f"pid {standby.pid}", out)
        self.assertIn("remote: 127.0.0.1", out)  # the URI column of an external agent: where it connected from

        killed = time.monotonic()
        os.killpg(primary.pid, signal.SIGKILL)
        primary.proc.wait(30)
        self.wait(lambda: self.is_primary(standby), "the standby to be promoted", standby, timeout=BOUND + 5)
        took = time.monotonic() - killed
        self.assertLess(took, BOUND, f"promotion took {took:.1f} s\n{standby.output()[-3000:]}")
        self.assertIn("promoted: this process is now primary for agent(s) ext1", standby.output())
        sys.stderr.write(f"[failover] the standby was primary {took:.2f} s after the SIGKILL\n")
        self.wait(lambda: self.statuses(rids) == ["deployed"] * COUNT, "the new primary to deploy everything",
                  standby, timeout=90)
        for p in self.paths:
            self.assertTrue(os.path.exists(p), p)
        # The action in flight on the dead primary ended unavailable; no two deploy actions of one resource
        # overlap in time.
        spans = self.deploy_spans(running)
        self.assertIn("unavailable", [s[2] for s in spans], spans)
        for r in rids:
            spans = self.deploy_spans(r)
            self.assertEqual(spans[-1][2], "deployed", spans)
            for (s1, f1, _), (s2, _, _) in zip(spans, spans[1:]):
                self.assertIsNotNone(f1, spans)
                self.assertLessEqual(f1, s2, f"{r}: overlapping deploy actions {spans}")
        _, _, standbys = self.row()
        self.assertEqual(standbys, [])

        # The old primary comes back: it joins as a standby and the new primary keeps the agent.
        again = self.agent_proc(0)
        self.wait(lambda: self.is_standby(again), "the restarted agent to be a standby", again)
        self.assertTrue(self.is_primary(standby))
        self.assertIn(f"pid {again.pid}", self.agent_list())
        # A standby stops cleanly on SIGTERM, and leaves the list.
        self.assertEqual(again.stop(), 0, again.output())
        self.wait(lambda: not self.is_standby(again), "the stopped standby to leave the list")
        self.assertEqual(standby.stop(), 0, standby.output())

    def test_silent_primary_loses_to_the_heartbeat_bound(self):
        # SIGSTOP keeps the primary's TCP connection open but silent, as a network cut does: the heartbeat bound
        # ends its session and the standby takes over; resumed, the old process finds its connection closed and
        # claims again as a standby.
        primary = self.agent_proc(0)
        self.wait(lambda: self.is_primary(primary), "the first claim to become primary", primary)
        standby = self.agent_proc(0)
        self.wait(lambda: self.is_standby(standby), "the second claim to be kept as a standby", standby)
        stopped = time.monotonic()
        os.killpg(primary.pid, signal.SIGSTOP)
        try:
            self.wait(lambda: self.is_primary(standby), "the standby to be promoted", standby, timeout=BOUND + 10)
            took = time.monotonic() - stopped
        finally:
            os.killpg(primary.pid, signal.SIGCONT)
        sys.stderr.write(f"[failover] a silent primary was replaced after {took:.2f} s\n")
        self.assertGreater(took, 3, "promoted before the primary's heartbeat could have timed out")
        self.assertLess(took, BOUND + 1.5, f"promotion took {took:.1f} s (bound {BOUND} s)")
        self.wait(lambda: self.is_standby(primary), "the resumed old primary to become a standby", primary)
        self.assertTrue(self.is_primary(standby))


# Only the tests of this file.
for name in [n for n in dir(stop.ExternalAgentStopTest) if n.startswith("test_")]:
    if name not in ("test_kill_primary_mid_deploy_standby_takes_over",
                    "test_silent_primary_loses_to_the_heartbeat_bound"):
        setattr(AgentFailoverTest, name, None)

if __name__ == "__main__":
    unittest.main()
