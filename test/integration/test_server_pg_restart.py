"""The single-server rule across a PostgreSQL restart (issue #25, docs/server.md "Life cycle"): the server lock is
a session lock, so a restart drops it. A server keeps working once the database is back (it re-takes the lock),
and when a second server starts on the same database right after the restart, at no moment do both accept
writes: either the first re-takes the lock and the second refuses to start, or the first exits 3 logging
`server_lock_lost` and the second serves. By construction (the owner row fence, migration 012): a write of the
first either commits before the second claims the database or fails with 503. Each test runs its own private
cluster (it is restarted); every process is stopped by PID."""
import time
import unittest
import uuid

import harness
from server_fixture import Server


class PgRestartTest(unittest.TestCase):
    def setUp(self):
        self.pg = harness.PgCluster().start()
        self.addCleanup(self.pg.destroy)
        self.db = "lock_" + uuid.uuid4().hex[:10]
        self.pg.psql(f"CREATE DATABASE {self.db}")

    def server(self, wait=True):
        s = Server(db=self.db, pg_port=self.pg.port, wait=wait)
        self.addCleanup(s.stop)
        return s

    def restart_pg(self):
        self.pg.stop("fast")
        self.pg.start()

    @staticmethod
    def write(s, tag):
        """One write (a new project); returns (sent, answered, status)."""
        sent = time.time()
        try:
            status, _ = s.call("PUT", "/api/v2/project", {"name": f"{tag}-{uuid.uuid4().hex[:8]}"}, timeout=10)
        except OSError:
            status = None
        return sent, time.time(), status

    def test_server_keeps_serving_writes_after_a_restart(self):
        s = self.server()
        self.assertEqual(self.write(s, "before")[2], 200)
        self.restart_pg()
        ok = harness.wait_for(lambda: self.write(s, "after")[2] == 200, timeout=20,
                              what="a write to succeed after the database restart")
        self.assertTrue(ok)
        time.sleep(2.5)  # a few lock checks: the lock was re-taken, the server does not stop
        self.assertTrue(s.proc.alive(), s.proc.output())
        self.assertEqual(self.write(s, "later")[2], 200)
        self.assertNotIn("server_lock_lost", s.proc.output())

    def test_a_second_server_never_serves_beside_the_first(self):
        s1 = self.server()
        self.assertEqual(self.write(s1, "s1")[2], 200)
        self.restart_pg()
        s2 = self.server(wait=False)
        ok1, ok2 = [], []
        deadline = time.time() + 10
        while time.time() < deadline:
            if s1.proc.alive():
                r = self.write(s1, "s1")
                if r[2] == 200:
                    ok1.append(r)
            if s2.proc.alive():
                r = self.write(s2, "s2")
                if r[2] == 200:
                    ok2.append(r)
            if not s1.proc.alive() and ok2 and len(ok2) > 3:
                break
            if not s2.proc.alive() and ok1 and len(ok1) > 3:
                break
            time.sleep(0.05)
        if ok2:
            # The second server serves: the first stopped with exit 3, and no write of the first was accepted
            # after the second accepted one.
            first2 = min(r[1] for r in ok2)
            late = [r for r in ok1 if r[0] > first2]
            self.assertEqual(late, [], "both servers accepted writes\n" + s1.proc.output()[-3000:] + "\n--- s2\n" + s2.proc.output()[-2000:] + "\n--- pg\n" + open(self.pg.log).read()[-2500:])
            harness.wait_for(lambda: not s1.proc.alive(), timeout=15, what="the first server to stop")
            self.assertEqual(s1.proc.proc.returncode, 3, s1.proc.output())
            self.assertIn("server_lock_lost", s1.proc.output())
            self.assertIn("another inmanta server took", s1.proc.output())
        else:
            # The first re-took the lock: the second refused to start with a clear message.
            self.assertTrue(ok1, "neither server accepted a write after the restart:\n" + s1.proc.output())
            harness.wait_for(lambda: not s2.proc.alive(), timeout=15, what="the second server to refuse")
            self.assertNotEqual(s2.proc.proc.returncode, 0)
            self.assertIn("another inmanta server is already running", s2.proc.output())
            self.assertTrue(s1.proc.alive(), s1.proc.output())
        count = int(self.pg.psql("SELECT count(*) FROM project", db=self.db).stdout.strip())
        self.assertEqual(count, 1 + len(ok1) + len(ok2), "every accepted write is stored, no other")


if __name__ == "__main__":
    unittest.main()
