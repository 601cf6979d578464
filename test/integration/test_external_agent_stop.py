"""Stopping an external agent mid-deploy (docs/deploy.md "Stopping an external agent"): the real `inmanta server`
with its scheduler, `inmanta agent` running Python handlers that sleep (NOTE_SLEEP seconds, read from the agent's
environment, which its executor children inherit). SIGTERM while actions run: the agent takes no new work, the
running actions finish, their results reach the server and the agent exits 0. With a short --shutdown-grace the
actions still running are answered `unavailable` naming the grace period, and a later agent deploys them. A
SIGKILLed agent cannot answer: the scheduler marks its in-flight actions `unavailable` when the session ends and
the next claim deploys them. No resource stays `deploying`. Every process is stopped by PID."""
import json
import os
import signal
import tempfile
import time
import unittest

import harness
import pyfixtures
import server_fixture as sf
import test_external_agent as base

COUNT = 3


class ExternalAgentStopTest(base.ExternalAgentDeployTest):
    def sleepy_agent(self, seconds, extra=()):
        env = dict(os.environ, NOTE_SLEEP=str(seconds))
        args = [harness.INMANTA, "agent", "--server", "127.0.0.1", "--port", str(self.srv.port), "-e", self.env,
                "--agent", "ext1", "--state-dir", tempfile.mkdtemp(prefix="inm-ext-stop-"), *extra]
        p = harness.Process(args, env=env)
        self.addCleanup(p.stop)
        self.wait(lambda: self.connected(self.env, "ext1") == "t", "the agent's claim", p)
        return p

    def put_notes(self):
        """One released version of COUNT pynote::Note resources on ext1 whose handler sleeps NOTE_SLEEP s."""
        plugins = pyfixtures.note_plugins(
            doc="Sleeping handler of test_external_agent_stop.py", preamble="import time\n",
            on_create='        time.sleep(float(os.environ.get("NOTE_SLEEP", "0")))\n'
                      '        ctx.info("wrote", pid=os.getpid())').encode()
        h = self.upload(plugins)
        files = [{"name": "inmanta_plugins.pynote", "hash_value": h, "is_byte_code": False}]
        info = {"pynote": {"name": "pynote", "version": h, "requirements": [], "for_agents": ["ext1"],
                           "files_in_module": files}}
        self.paths = [os.path.join(self.dir, f"note{i}.txt") for i in range(COUNT)]
        rids = [f"pynote::Note[ext1,path={p}]" for p in self.paths]
        version, (code, body) = sf.put_version(
            self.srv, self.env,
            [{"rid": r, "path": p, "content": f"note {i}", "agentname": "ext1"}
             for i, (r, p) in enumerate(zip(rids, self.paths))],
            module_version_info=info)
        self.assertEqual(code, 200, body)
        status, body = self.srv.call("POST", f"/api/v1/version/{version}", {}, env=self.env)
        self.assertTrue(status == 200 or (status == 409 and "already released" in json.dumps(body)), body)
        return version, rids

    def statuses(self, rids):
        return [self.status(r) for r in rids]

    def last_action(self, r):
        """(status, messages) of the resource's latest deploy action."""
        row = self.sql("SELECT a.status || '|' || a.messages::text FROM resourceaction a JOIN "
                       "resourceaction_resource x ON x.resource_action_id = a.action_id WHERE x.resource_id = "
                       f"'{r}' AND a.action = 'deploy' ORDER BY a.started DESC LIMIT 1")
        status, _, messages = row.partition("|")
        return status, messages

    def start_deploy(self, agent):
        """Releases the notes and waits until a handler runs (its file is written before it sleeps); the
        agent's executor runs them one after the other. Returns (version, rids, the running rid)."""
        version, rids = self.put_notes()
        self.wait(lambda: any(os.path.exists(p) for p in self.paths), "a handler to start", agent)
        running = rids[[os.path.exists(p) for p in self.paths].index(True)]
        # The scheduler writes a start it holds briefly (most deploys finish within it) a moment later.
        self.wait(lambda: self.status(running) == "deploying", f"{running} to show deploying", agent)
        return version, rids, running

    def assert_final(self, rids, agent):
        final = ("deployed", "unavailable")
        self.wait(lambda: all(s in final for s in self.statuses(rids)), "every resource in a final state", agent)
        for r in rids:
            status, messages = self.last_action(r)
            self.assertIn(status, final, messages)
            self.assertEqual(status, self.status(r))

    def test_sigterm_lets_running_actions_finish(self):
        agent = self.sleepy_agent(3)
        version, rids, running = self.start_deploy(agent)
        stopped = time.monotonic()
        agent.kill(signal.SIGTERM)
        agent.proc.wait(60)
        took = time.monotonic() - stopped
        self.assertEqual(agent.proc.returncode, 0, agent.output())
        self.assertLess(took, 30, agent.output())
        # Every result reached the server before the agent exited: the running action is deployed, with its
        # log; the others are deployed too (accepted before the signal) or unavailable (refused after it).
        self.assert_final(rids, agent)
        status, messages = self.last_action(running)
        self.assertEqual(status, "deployed", messages)
        self.assertIn('"wrote"', messages)
        out = agent.output()
        self.assertIn("stopping (stop signal): no new work;", out)
        self.assertIn("every accepted action is answered", out)
        for r in rids:
            status, messages = self.last_action(r)
            if status == "unavailable":  # refused by the draining agent, or by the scheduler after its `bye`
                self.assertTrue("the external agent is shutting down (stop signal) and takes no new work" in messages
                                or "external agent ext1 is shutting down" in messages
                                or "external agent ext1 is not connected" in messages, messages)
        # A later agent deploys whatever is left.
        again = self.sleepy_agent(0)
        self.wait(lambda: self.statuses(rids) == ["deployed"] * COUNT, "the next agent to deploy", again)
        self.assertEqual(again.stop(), 0, again.output())

    def test_grace_expiry_reports_unavailable_and_next_agent_deploys(self):
        agent = self.sleepy_agent(60, extra=["--shutdown-grace", "1"])
        version, rids, running = self.start_deploy(agent)
        stopped = time.monotonic()
        agent.kill(signal.SIGTERM)
        agent.proc.wait(60)
        took = time.monotonic() - stopped
        self.assertEqual(agent.proc.returncode, 0, agent.output())
        self.assertLess(took, 20, f"grace 1 s + the executors' 5 s shutdown grace\n{agent.output()}")
        self.assertIn(f"reporting {running},v={version} (action ", agent.output())
        self.wait(lambda: self.statuses(rids) == ["unavailable"] * COUNT, "the unavailable answers", agent)
        self.assert_final(rids, agent)
        status, messages = self.last_action(running)
        self.assertIn("before this action finished within the shutdown grace period of 1000 ms", messages)
        # A later agent deploys them.
        again = self.sleepy_agent(0)
        self.wait(lambda: self.statuses(rids) == ["deployed"] * COUNT, "the next agent to deploy", again)
        self.assertEqual(again.stop(), 0, again.output())

    def test_server_gone_during_the_drain(self):
        # The server goes first while the agent drains with a long grace: the agent does not wait out the grace
        # (its executors get their 5 s shutdown grace), exits 0 and does not claim its answers reached the server.
        agent = self.sleepy_agent(60, extra=["--shutdown-grace", "45"])
        self.start_deploy(agent)
        agent.kill(signal.SIGTERM)
        self.wait(lambda: "stopping (stop signal)" in agent.output(), "the drain to start", agent)
        gone = time.monotonic()
        self.srv.proc.kill(signal.SIGKILL)
        agent.proc.wait(60)
        took = time.monotonic() - gone
        self.assertEqual(agent.proc.returncode, 0, agent.output())
        self.assertLess(took, 20, agent.output())
        out = agent.output()
        self.assertIn("the connection closed during the drain: answers given after that were not delivered", out)
        self.assertNotIn("every accepted action is answered; closing the session", out)

    def test_killed_agent_results_are_requeued(self):
        agent = self.sleepy_agent(60)
        version, rids, running = self.start_deploy(agent)
        os.killpg(agent.pid, signal.SIGKILL)  # the agent and its executors
        agent.proc.wait(30)
        # No answer can come: the scheduler ends the session and marks the in-flight actions unavailable.
        self.wait(lambda: self.statuses(rids) == ["unavailable"] * COUNT, "the scheduler to notice the lost session")
        self.assert_final(rids, agent)
        status, messages = self.last_action(running)
        self.assertIn("while this resource was in flight", messages)
        again = self.sleepy_agent(0)
        self.wait(lambda: self.statuses(rids) == ["deployed"] * COUNT, "the next agent to deploy", again)
        self.assertEqual(again.stop(), 0, again.output())

# Only the tests of this file (the base class's tests run in test_external_agent.py).
for name in [n for n in dir(base.ExternalAgentDeployTest) if n.startswith("test_")]:
    setattr(ExternalAgentStopTest, name, None)

if __name__ == "__main__":
    unittest.main()
