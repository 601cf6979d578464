"""The harness itself: the run's cluster answers, and a fresh database is empty and private to its test."""
import unittest

import harness


class HarnessTest(unittest.TestCase):
    def test_fresh_databases_are_separate(self):
        a, b = harness.fresh_database(), harness.fresh_database()
        self.assertNotEqual(a, b)
        host, port = harness.shared_cluster()
        import subprocess, os
        psql = os.path.join(harness.pg_bindir(), "psql")
        q = lambda db, sql: subprocess.run([psql, "-h", host, "-p", str(port), "-U", "postgres", "-d", db, "-Atqc", sql],
                                          capture_output=True, text=True, check=True).stdout.strip()
        q(a, "CREATE TABLE x (v int); INSERT INTO x VALUES (7)")
        self.assertEqual(q(a, "SELECT v FROM x"), "7")
        self.assertEqual(q(b, "SELECT count(*) FROM pg_tables WHERE tablename = 'x'"), "0")
