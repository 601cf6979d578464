#!/usr/bin/env python3
"""Deploying N std::File resources over SSH versus locally (issue #28; reported, not a timed test). Reuses the
fixture of test/integration/test_agentless_ssh.py (a private sshd on a loopback port, a test user, its key and
known_hosts) and a private PostgreSQL; one environment, a real `inmanta scheduler` with real executors. Version 1
has N files for agent `loc` (not in autostart_agent_map: the executor's own host); version 2 adds N files for
agent `rem` (ssh://inmsshtest@127.0.0.1:PORT). The clock runs from each release until all its new files are
`deployed` in the database. Prints both times and the ratio. Needs root (like the test).

Usage: bench/agentless/run.py [--build build] [--files 1000]
"""
import argparse
import os
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "test", "integration"))
import harness  # noqa: E402


class Shim:
    """What DeployEnv and the fixture need from a unittest.TestCase."""

    def __init__(self):
        self.cleanups = []

    def addCleanup(self, f, *args):
        self.cleanups.append((f, args))

    def cleanup(self):
        for f, args in reversed(self.cleanups):
            f(*args)


def stdin_psql(db, port, text):
    r = subprocess.run([os.path.join(harness.pg_bindir(), "psql"), "-h", "127.0.0.1", "-p", str(port), "-U",
                        "postgres", "-d", db, "-v", "ON_ERROR_STOP=1", "-Atq"], input=text, capture_output=True,
                       text=True)
    if r.returncode != 0:
        raise AssertionError(f"psql failed: {r.stderr}")
    return r.stdout.strip()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--files", type=int, default=1000)
    args = ap.parse_args()
    harness.BUILD = os.path.abspath(args.build)
    harness.INMANTA = os.path.join(harness.BUILD, "bin", "inmanta")
    cluster = harness.PgCluster().start()
    os.environ["INM_PG_HOST"], os.environ["INM_PG_PORT"] = "127.0.0.1", str(cluster.port)
    import test_agentless_ssh as t  # noqa: E402 - needs the environment above
    from deploy_support import DeployEnv  # noqa: E402
    T = t.AgentlessSshTest
    T.setUpClass()
    shim = Shim()
    try:
        fixture = T.__new__(T)
        fixture.addCleanup = shim.addCleanup
        loc_dir, rem_dir = fixture.scratch(), fixture.scratch()
        d = DeployEnv(shim, {"autostart_agent_map": {"internal": "local:", "rem": fixture.uri()}})
        d.sql = lambda text: stdin_psql(d.db, d.port, text)  # versions of thousands of rows exceed argv limits
        h = d.put_file(b"bench content\n")
        n = args.files
        loc = [t.remote_file(f"{loc_dir}/f{i}", h, "loc") for i in range(n)]
        rem = [t.remote_file(f"{rem_dir}/f{i}", h, "rem") for i in range(n)]

        def deployed(agent):
            return int(d.sql("SELECT count(*) FROM resource_persistent_state WHERE environment = "
                             f"'{d.env}' AND agent = '{agent}' AND last_non_deploying_status = 'deployed' "
                             "AND current_intent_attribute_hash = last_deployed_attribute_hash"))

        d.start(extra_env=T.env)
        times = {}
        for version, agent, resources in ((1, "loc", loc), (2, "rem", loc + rem)):
            start = time.time()
            d.put_version(version, resources)
            harness.wait_for(lambda: deployed(agent) == n, timeout=1800, interval=0.2,
                             what=f"{n} files of agent {agent}")
            times[agent] = time.time() - start
        ok = all(os.path.exists(f"{rem_dir}/f{i}") and os.stat(f"{rem_dir}/f{i}").st_uid == fixture.pw.pw_uid
                 for i in range(n))
        print(f"files={n} local={times['loc']:.2f}s ssh={times['rem']:.2f}s ratio={times['rem'] / times['loc']:.1f} "
              f"ssh_files_owned_by_remote_user={ok}")
    finally:
        shim.cleanup()
        T.tearDownClass()
        cluster.destroy()


if __name__ == "__main__":
    main()
