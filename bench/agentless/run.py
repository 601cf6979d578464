#!/usr/bin/env python3
"""Deploying N std::File resources over SSH versus locally (issue #28; reported, not a timed test). Reuses the
fixture of test/integration/test_agentless_ssh.py (a private sshd on a loopback port, a test user, its key and
known_hosts) and a private PostgreSQL; one environment, a real `inmanta scheduler` with real executors. Version 1
has N files for agent `loc` (not in autostart_agent_map: the executor's own host); version 2 adds N files for
agent `rem` (ssh://inmsshtest@127.0.0.1:PORT). The clock runs from each release until all its new files are
`deployed` in the database. Prints both times and the ratio. Needs root (like the test).

With --agents K (default 1) each side has K agents (loc0.., rem0..) of N files each, the ssh agents with K
distinct URIs to the one sshd (an ignored `bench=i` option tells them apart): one master and session pool each.
--parallelism P sets the environment's agent_parallelism (default 1, the reference's serial agent).

Usage: bench/agentless/run.py [--build build] [--files 1000] [--agents 1] [--parallelism 1]
"""
import argparse
import os
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "test", "integration"))
import harness  # noqa: E402

# The login user of the bench's sshd (created and removed by the fixture).
BENCH_USER = "inmsshbench"


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
    ap.add_argument("--agents", type=int, default=1)
    ap.add_argument("--parallelism", type=int, default=1)
    args = ap.parse_args()
    harness.BUILD = os.path.abspath(args.build)
    harness.INMANTA = os.path.join(harness.BUILD, "bin", "inmanta")
    cluster = harness.PgCluster().start()
    os.environ["INM_PG_HOST"], os.environ["INM_PG_PORT"] = "127.0.0.1", str(cluster.port)
    import test_agentless_ssh as t  # noqa: E402 - needs the environment above
    from deploy_support import DeployEnv  # noqa: E402
    t.USER = BENCH_USER  # not the tests' user: a test running meanwhile rewrites its authorized_keys
    T = t.AgentlessSshTest
    T.setUpClass()
    shim = Shim()
    try:
        fixture = T.__new__(T)
        fixture.addCleanup = shim.addCleanup
        k, n = args.agents, args.files
        names = {side: [side if k == 1 else f"{side}{a}" for a in range(k)] for side in ("loc", "rem")}
        uris = {name: fixture.uri(**({} if k == 1 else {"bench": a})) for a, name in enumerate(names["rem"])}
        d = DeployEnv(shim, {"autostart_agent_map": {"internal": "local:", **uris},
                             "agent_parallelism": args.parallelism})
        d.sql = lambda text: stdin_psql(d.db, d.port, text)  # versions of thousands of rows exceed argv limits
        h = d.put_file(b"bench content\n")
        dirs = {name: fixture.scratch() for side in names.values() for name in side}
        files = {side: [t.remote_file(f"{dirs[name]}/f{i}", h, name) for name in names[side] for i in range(n)]
                 for side in names}
        loc, rem = files["loc"], files["rem"]

        def deployed(side):
            bad = d.sql("SELECT count(*) FROM resource_persistent_state WHERE environment = "
                        f"'{d.env}' AND agent LIKE '{side}%' "
                        "AND last_non_deploying_status IN ('failed', 'unavailable')")
            if int(bad):
                raise AssertionError(f"{bad} resources of agents {side}* failed or are unavailable")
            return int(d.sql("SELECT count(*) FROM resource_persistent_state WHERE environment = "
                             f"'{d.env}' AND agent LIKE '{side}%' AND last_non_deploying_status = 'deployed' "
                             "AND current_intent_attribute_hash = last_deployed_attribute_hash"))

        d.start(extra_env=T.env)
        times = {}
        for version, agent, resources in ((1, "loc", loc), (2, "rem", loc + rem)):
            start = time.time()
            d.put_version(version, resources)
            harness.wait_for(lambda: deployed(agent) == n * k, timeout=1800, interval=0.2,
                             what=f"{n * k} files of agents {agent}*")
            times[agent] = time.time() - start
        ok = all(os.path.exists(r["attributes"]["path"]) and os.stat(r["attributes"]["path"]).st_uid ==
                 fixture.pw.pw_uid for r in rem)
        print(f"agents={k} files_per_agent={n} agent_parallelism={args.parallelism} local={times['loc']:.2f}s "
              f"ssh={times['rem']:.2f}s ratio={times['rem'] / times['loc']:.1f} ssh_files_owned_by_remote_user={ok}")
    finally:
        shim.cleanup()
        T.tearDownClass()
        cluster.destroy()


if __name__ == "__main__":
    main()
