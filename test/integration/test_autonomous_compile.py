"""The autonomous server's compile service, driven through `inmanta compile-service-run` against real
PostgreSQL and real git repositories (a file path and `git daemon` on loopback): clone, pull, reports, merging,
cron, and every failure ending with its report while the next request still runs. Compiles here use
do_export=false (the artifact goes to <state>/server/<env>/artifacts/<id>.json); exporting to a running server
is covered once the server is wired in."""
import http.server
import json
import os
import shutil
import signal
import tempfile
import threading
import time
import unittest

import harness
from autonomous_util import Database, GitDaemon, Repo, artifact, children_of, model, run_service, write_script

COMPILE_STAGE = "Recompiling configuration model"


class AutonomousCompileTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="inm-auto-")
        self.state = os.path.join(self.tmp, "state")
        self.db = Database()
        self.repo = Repo(self.tmp)
        self.commit1 = self.repo.commit(model([("a", "false"), ("b", "false"), ("c", "false")]), "first")
        self.env = self.db.add_environment(self.repo.path)

    def tearDown(self):
        shutil.rmtree(self.tmp, ignore_errors=True)

    def run_request(self, *extra, env=None):
        rc, out = run_service(self.db, self.state, "-e", env or self.env, "--request", "--no-export", *extra)
        self.assertEqual(rc, 0, out)
        return out

    def last(self, env=None):
        return self.db.compiles(env or self.env)[-1]

    def stage_names(self, compile_id):
        return [r["name"] for r in self.db.reports(compile_id)]

    def assert_failed_with(self, stage, text):
        c = self.last()
        self.assertTrue(c["completed"], c)
        self.assertFalse(c["success"], c)
        reports = self.db.reports(c["id"])
        self.assertEqual(reports[-1]["name"], stage, reports)
        self.assertNotEqual(reports[-1]["returncode"], 0)
        self.assertIn(text, reports[-1]["errstream"])
        return c, reports

    def assert_next_request_runs(self):
        """After a failure the queue is not stuck: a good request compiles."""
        self.db.psql(f"UPDATE environment SET repo_url = '{self.repo.path}', repo_branch = 'main' WHERE id = '{self.env}'")
        self.run_request("--update")
        c = self.last()
        self.assertTrue(c["success"], (c, self.db.reports(c["id"])))

    # --- the normal path -------------------------------------------------------------------------------------

    def test_clone_compile_then_pull_changes_one_resource(self):
        self.run_request()
        c1 = self.last()
        self.assertTrue(c1["success"], self.db.reports(c1["id"]))
        self.assertEqual(self.stage_names(c1["id"]), ["Init", "Cloning repository", COMPILE_STAGE])
        reports = self.db.reports(c1["id"])
        self.assertIn(self.commit1, reports[1]["outstream"])
        self.assertEqual(reports[1]["command"], f"git clone {self.repo.path} . -b main")
        self.assertIn("--export-compile-data", reports[2]["command"])
        self.assertEqual(c1["compile_data"], {"errors": []})
        a1 = artifact(self.state, self.env, c1["id"])
        self.assertEqual(len(a1["resources"]), 3)
        checkout = os.path.join(self.state, "server", self.env, "compiler")
        self.assertTrue(os.path.exists(os.path.join(checkout, "main.cf")))

        commit2 = self.repo.commit(model([("a", "false"), ("b", "true"), ("c", "false")]), "second")
        self.run_request("--update")
        c2 = self.last()
        self.assertTrue(c2["success"], self.db.reports(c2["id"]))
        self.assertEqual(self.stage_names(c2["id"]), ["Init", "Pulling updates", COMPILE_STAGE])
        pull = self.db.reports(c2["id"])[1]
        self.assertIn(f"{self.commit1} -> {commit2}", pull["outstream"])
        self.assertIn(commit2, self.db.reports(c2["id"])[2]["outstream"])
        a2 = artifact(self.state, self.env, c2["id"])
        by_id = lambda a: {r["id"]: r for r in a["resources"]}
        r1, r2 = by_id(a1), by_id(a2)
        self.assertEqual(set(r1), set(r2))
        changed = sorted(rid for rid in r1 if r1[rid] != r2[rid])
        self.assertEqual(changed, ["std::testing::NullResource[a1,name=b],v=0"])

        # Without update the checkout stays where it is: no git stage, the same commit.
        self.repo.commit(model([("z", "false")]), "third")
        self.run_request()
        c3 = self.last()
        self.assertEqual(self.stage_names(c3["id"]), ["Init", COMPILE_STAGE])
        self.assertIn(commit2, self.db.reports(c3["id"])[1]["outstream"])
        self.assertEqual(len(artifact(self.state, self.env, c3["id"])["resources"]), 3)

    def test_git_daemon_url(self):
        daemon = GitDaemon(self.tmp)
        try:
            env = self.db.add_environment(daemon.url("model.git"))
            self.run_request(env=env)
            c = self.last(env)
            self.assertTrue(c["success"], self.db.reports(c["id"]))
            clone = self.db.reports(c["id"])[1]
            self.assertEqual(clone["command"], f"git clone {daemon.url('model.git')} . -b main")
            self.assertIn(self.commit1, clone["outstream"])
            commit2 = self.repo.commit(model([("a", "true")]), "second")
            self.run_request("--update", env=env)
            c = self.last(env)
            self.assertTrue(c["success"], self.db.reports(c["id"]))
            self.assertIn(commit2, self.db.reports(c["id"])[1]["outstream"])
            self.assertEqual(len(artifact(self.state, env, c["id"])["resources"]), 1)
        finally:
            daemon.stop()

    def test_branch_switch(self):
        self.run_request()
        self.repo.git("checkout", "-q", "-b", "feature")
        c2 = self.repo.commit(model([("f", "false")]), "feature")
        self.db.psql(f"UPDATE environment SET repo_branch = 'feature' WHERE id = '{self.env}'")
        self.run_request()
        c = self.last()
        self.assertTrue(c["success"], self.db.reports(c["id"]))
        self.assertEqual(self.stage_names(c["id"])[1], "Switching branch from main to feature")
        self.assertIn(c2, self.db.reports(c["id"])[1]["outstream"])

    # --- queue rules -----------------------------------------------------------------------------------------

    def test_queued_requests_merge_into_one_run(self):
        # Three requests queued while no service runs (e.g. notifies for the same commit): one run serves them;
        # a request with different do_export stays separate.
        for force in ("false", "true", "false"):
            self.db.psql(f"INSERT INTO compile (id, environment, requested, do_export, force_update) VALUES "
                         f"(gen_random_uuid(), '{self.env}', clock_timestamp(), false, {force})")
        rc, out = run_service(self.db, self.state)
        self.assertEqual(rc, 0, out)
        cs = self.db.compiles(self.env)
        self.assertEqual(len(cs), 3)
        head = cs[0]
        self.assertTrue(head["success"], self.db.reports(head["id"]))
        self.assertTrue(head["force_update"], "a merged request asked for update")
        for c in cs[1:]:
            self.assertEqual(c["substitute_compile_id"], head["id"])
            self.assertTrue(c["success"])
            self.assertEqual(self.db.reports(c["id"]), [])
        self.assertEqual(len(self.db.reports(head["id"])), 3)

    def test_notify_for_a_commit_being_compiled_reuses_the_result(self):
        # Request A runs (a stand-in compiler that takes 2 s); B (update) arrives while A runs, for the same commit:
        # B pulls, sees the commit A compiled, and takes A's result without compiling. C, requested after A and B
        # completed, compiles again.
        slow = write_script(os.path.join(self.tmp, "slow_ok.sh"), 'sleep 2; echo "Committed resources with version 4"\n')
        args = [harness.INMANTA, "compile-service-run", "--db", self.db.conninfo, "--state-dir", self.state,
                "-e", self.env, "--request", "--update", "--compiler", slow]
        p = harness.Process(args)
        try:
            harness.wait_for(lambda: any(r["name"] == COMPILE_STAGE for c in self.db.compiles(self.env)
                                         for r in self.db.reports(c["id"])), timeout=30, what="compile stage")
            self.db.psql(f"INSERT INTO compile (id, environment, requested, force_update) VALUES "
                         f"(gen_random_uuid(), '{self.env}', clock_timestamp(), true)")
            p.proc.wait(60)
        finally:
            p.stop()
        a, b = self.db.compiles(self.env)
        self.assertTrue(a["success"], self.db.reports(a["id"]))
        self.assertEqual(a["metadata"]["commit"], self.commit1)
        self.assertTrue(b["success"])
        self.assertEqual(b["version"], 4)
        self.assertEqual(b["substitute_compile_id"], a["id"])
        names = [r["name"] for r in self.db.reports(b["id"])]
        self.assertEqual(names, ["Init", "Pulling updates", "Already compiled"])
        self.assertIn(f"was compiled by compile {a['id']}", self.db.reports(b["id"])[-1]["outstream"])
        rc, out = run_service(self.db, self.state, "-e", self.env, "--request", "--update", "--compiler", slow)
        c = self.last()
        self.assertIsNone(c["substitute_compile_id"])
        self.assertEqual([r["name"] for r in self.db.reports(c["id"])], ["Init", "Pulling updates", COMPILE_STAGE])

    def test_halted_environment_does_not_compile(self):
        self.db.psql(f"UPDATE environment SET halted = true WHERE id = '{self.env}'")
        self.run_request()
        c = self.last()
        self.assertFalse(c["started"], c)
        self.db.psql(f"UPDATE environment SET halted = false WHERE id = '{self.env}'")
        rc, out = run_service(self.db, self.state)
        self.assertEqual(rc, 0, out)
        self.assertTrue(self.last()["success"])

    def test_server_compile_disabled(self):
        self.db.psql(f"UPDATE environment SET settings = '{{\"server_compile\": false}}' WHERE id = '{self.env}'")
        self.run_request()
        self.assert_failed_with("Init", "server_compile is disabled")
        self.db.psql(f"UPDATE environment SET settings = '{{}}' WHERE id = '{self.env}'")
        self.assert_next_request_runs()

    def test_recompile_backoff_spaces_runs(self):
        self.db.psql(f"UPDATE environment SET settings = '{{\"recompile_backoff\": 1.5}}' WHERE id = '{self.env}'")
        self.run_request()
        self.run_request("--metadata", '{"type": "api", "message": "second"}', "--env-var", "X=1")
        gap = float(self.db.psql(
            f"SELECT EXTRACT(EPOCH FROM (SELECT max(started) FROM compile WHERE environment = '{self.env}') - "
            f"(SELECT min(completed) FROM compile WHERE environment = '{self.env}'))"))
        self.assertGreaterEqual(gap, 1.4)

    def test_cron_compiles(self):
        self.db.psql(f"UPDATE environment SET settings = '{{\"auto_full_compile\": \"*/2 * * * * *\", "
                     f"\"recompile_backoff\": 0}}' WHERE id = '{self.env}'")
        # Cron compiles export (do_export=true); a stand-in compiler prints what an export to the server prints.
        fake = write_script(os.path.join(self.tmp, "fake.sh"), 'echo "Committed resources with version 3"\n')
        rc, out = run_service(self.db, self.state, "--serve", "5", "--compiler", fake)
        self.assertEqual(rc, 0, out)
        cs = self.db.compiles(self.env)
        self.assertGreaterEqual(len(cs), 2, cs)
        for c in cs:
            self.assertEqual(c["metadata"]["type"], "schedule")
            self.assertTrue(c["success"], self.db.reports(c["id"]))
            self.assertTrue(c["do_export"])

    def test_bad_cron_is_reported(self):
        self.db.psql(f"UPDATE environment SET settings = '{{\"auto_full_compile\": \"every day\"}}' WHERE id = '{self.env}'")
        rc, out = run_service(self.db, self.state)
        self.assertEqual(rc, 0, out)
        self.assertIn(f"warning: environment {self.env}: invalid value for setting 'auto_full_compile'", out)
        self.assertIn("cron expression 'every day' has 2 fields", out)
        self.assertEqual(self.db.compiles(self.env), [])

    # --- failures end with a report; the next request still runs ---------------------------------------------

    def test_unreachable_repository(self):
        port = harness.free_port()
        self.db.psql(f"UPDATE environment SET repo_url = 'git://127.0.0.1:{port}/nothing' WHERE id = '{self.env}'")
        self.run_request()
        self.assert_failed_with("Cloning repository", f"cloning git://127.0.0.1:{port}/nothing (branch main) failed")
        self.assert_next_request_runs()

    def test_missing_repository_path(self):
        self.db.psql(f"UPDATE environment SET repo_url = '{self.tmp}/no-such-repo' WHERE id = '{self.env}'")
        self.run_request()
        self.assert_failed_with("Cloning repository", "no-such-repo")
        self.assert_next_request_runs()

    def test_unknown_branch(self):
        self.db.psql(f"UPDATE environment SET repo_branch = 'nope' WHERE id = '{self.env}'")
        self.run_request()
        self.assert_failed_with("Cloning repository", "branch 'nope' does not exist")
        self.assert_next_request_runs()
        # And on an existing checkout (fetch path).
        self.db.psql(f"UPDATE environment SET repo_branch = 'nope' WHERE id = '{self.env}'")
        self.run_request("--update")
        self.assert_failed_with("Switching branch from main to nope", "branch 'nope' does not exist")
        self.assert_next_request_runs()

    def test_bad_credentials(self):
        # An https-like endpoint that always answers 401: without credentials, and with a rejected token.
        class Deny(http.server.BaseHTTPRequestHandler):
            def do_GET(self):
                self.send_response(401)
                self.send_header("WWW-Authenticate", 'Basic realm="git"')
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *a):
                pass

        srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Deny)
        t = threading.Thread(target=srv.serve_forever, daemon=True)
        t.start()
        try:
            url = f"http://127.0.0.1:{srv.server_address[1]}/model.git"
            self.db.psql(f"UPDATE environment SET repo_url = '{url}' WHERE id = '{self.env}'")
            self.run_request()
            self.assert_failed_with("Cloning repository", "asks for credentials and none are configured")
            self.run_request("--git-token", "wrong")
            _, reports = self.assert_failed_with("Cloning repository", "authentication failed")
            self.assertNotIn("wrong", reports[-1]["command"] + reports[-1]["errstream"])
        finally:
            srv.shutdown()
            srv.server_close()
        self.assert_next_request_runs()

    def test_model_that_does_not_compile(self):
        self.repo.commit(model([("a", "false")], extra="x = 1\nx = 2\n"), "broken")
        self.run_request()
        c, reports = self.assert_failed_with(COMPILE_STAGE, "x")
        self.assertIn("EXPORT FAILURE", reports[-1]["errstream"])
        errors = c["compile_data"]["errors"]
        self.assertEqual(len(errors), 1, errors)
        self.assertEqual(errors[0]["kind"], "DoubleSet")
        self.assertEqual(errors[0]["line"], 6)
        self.repo.commit(model([("a", "false")]), "fixed")
        self.assert_next_request_runs()

    def test_compiler_crash(self):
        crash = write_script(os.path.join(self.tmp, "crash.sh"), 'echo "starting"; kill -SEGV $$\n')
        self.run_request("--compiler", crash)
        c, _ = self.assert_failed_with(COMPILE_STAGE, "the compiler crashed: killed by signal 11")
        self.assertEqual(c["compile_data"]["errors"][0]["type"], "CompilerCrash")
        self.assert_next_request_runs()

    def test_compiler_timeout(self):
        slow = write_script(os.path.join(self.tmp, "slow.sh"), "sleep 60\n")
        start = time.time()
        self.run_request("--compiler", slow, "--timeout", "1")
        self.assertLess(time.time() - start, 30)
        c, _ = self.assert_failed_with(COMPILE_STAGE, "ran past the timeout of 1 s and was killed")
        self.assertEqual(c["compile_data"]["errors"][0]["type"], "CompilerTimeout")
        self.assert_next_request_runs()

    def test_export_without_version_is_a_failure(self):
        ok = write_script(os.path.join(self.tmp, "ok.sh"), 'echo "compiled"\n')
        rc, out = run_service(self.db, self.state, "-e", self.env, "--request", "--compiler", ok)
        self.assertEqual(rc, 0, out)
        c = self.last()
        self.assertFalse(c["success"])
        self.assertEqual(c["compile_data"]["errors"][0]["type"], "ExportError")
        fake = write_script(os.path.join(self.tmp, "fake.sh"), 'echo "Committed resources with version 7"\n')
        rc, out = run_service(self.db, self.state, "-e", self.env, "--request", "--compiler", fake)
        c = self.last()
        self.assertTrue(c["success"], self.db.reports(c["id"]))
        self.assertEqual(c["version"], 7)
        cmd = self.db.reports(c["id"])[-1]["command"]
        self.assertIn(f"export -X -e {self.env} --server_address localhost --server_port 8888 --metadata", cmd)
        self.assertIn('"commit":"' + self.commit1 + '"', cmd)
        # An internal token is passed to the compiler but never shown in the report.
        rc, out = run_service(self.db, self.state, "-e", self.env, "--request", "--compiler", fake, "--token", "s3cr3t")
        cmd = self.db.reports(self.last()["id"])[-1]["command"]
        self.assertIn("--token <token>", cmd)
        self.assertNotIn("s3cr3t", cmd)

    def test_server_restart_mid_compile(self):
        slow = write_script(os.path.join(self.tmp, "slow.sh"), "sleep 60\n")
        args = [harness.INMANTA, "compile-service-run", "--db", self.db.conninfo, "--state-dir", self.state,
                "-e", self.env, "--request", "--no-export", "--compiler", slow]
        p = harness.Process(args)
        try:
            harness.wait_for(lambda: any(r["name"] == COMPILE_STAGE for c in self.db.compiles(self.env)
                                         for r in self.db.reports(c["id"])), timeout=30, what="compile stage")
            kids = children_of(p.pid)
            p.kill(signal.SIGKILL)
            p.proc.wait()
            for k in kids:  # the compiler runs in its own process group
                try:
                    os.killpg(k, signal.SIGKILL)
                except ProcessLookupError:
                    pass
        finally:
            p.stop()
        c = self.last()
        self.assertFalse(c["completed"])
        # A request queued meanwhile; the restarted service fails the interrupted run and runs the queue.
        self.db.psql(f"INSERT INTO compile (id, environment, do_export) VALUES (gen_random_uuid(), '{self.env}', false)")
        rc, out = run_service(self.db, self.state)
        self.assertEqual(rc, 0, out)
        self.assertIn("marked 1 unfinished compile(s) as failed", out)
        cs = self.db.compiles(self.env)
        self.assertFalse(cs[0]["success"])
        self.assertEqual(self.db.reports(cs[0]["id"])[-1]["name"], "Server restarted")
        self.assertTrue(cs[1]["success"], self.db.reports(cs[1]["id"]))

    def test_retention_purges_old_reports(self):
        self.run_request()
        self.db.psql(f"UPDATE compile SET completed = now() - interval '2 days' WHERE environment = '{self.env}'")
        self.run_request()
        rc, out = run_service(self.db, self.state, "--retention", "86400")
        self.assertIn("purged 1 compile(s) past retention", out)
        self.assertEqual(len(self.db.compiles(self.env)), 1)
        self.assertEqual(self.db.psql("SELECT count(*) FROM report WHERE compile NOT IN (SELECT id FROM compile)"), "0")


if __name__ == "__main__":
    unittest.main()
