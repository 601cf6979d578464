#!/usr/bin/env python3
"""Deploy throughput of the scheduler (reported, not a timed test): a private PostgreSQL, one environment, one
version of N std::testing::NullResource rows inserted with SQL as the server stores them, a real
`inmanta scheduler` process; the clock runs from the release (rps rows + released + NOTIFY) until every resource
is `deployed` in the database (the commit time of the last row's update, track_commit_timestamp; the poll
that saw it is reported as detected_s). Then a version that changes 1 resource: the number of deploy actions it causes
is counted (must be 1). Peak RSS of the scheduler (its own report on exit) and of the executor process (VmHWM).
CPU (user+sys, release to last row) of the scheduler, the executor, PostgreSQL (postmaster, exited and live
backends) and this script's completion polls (psql). The completion poll backs off while far from the end
(poll_delay); INM_BENCH_POLL=0.05 polls at a fixed 50 ms as the earlier rounds did.

Usage: bench/deploy/run.py [--build build] [--sizes 10000,100000] [--agents 1,100] [--executor process,null]
                           [--parallelism 1000]
"""
import argparse
import json
import os
import re
import sys
import time
import uuid

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "test", "integration"))
import harness  # noqa: E402


def sql(cluster, db, text):
    r = cluster.psql(text, db=db, check=False)
    if r.returncode:
        raise RuntimeError(f"psql: {r.stderr}")
    return r.stdout.strip()


def children(pid):
    out = []
    for p in os.listdir("/proc"):
        if p.isdigit():
            try:
                with open(f"/proc/{p}/stat") as f:
                    if int(f.read().rsplit(")", 1)[1].split()[1]) == pid:
                        out.append(int(p))
            except OSError:
                pass
    return out


def vmhwm_kib(pid):
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def vmrss_kib(pid):
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


class RssSampler:
    """VmRSS of one process every 50 ms on a thread, the maximum kept per phase (the scheduler's peak split
    into: start-up and the version's load, the deploy, the second version). `phase` is set by the caller."""

    def __init__(self, pid):
        import threading
        self.pid, self.phase, self.peaks, self.stop_ = pid, "start", {}, False
        self.thread = threading.Thread(target=self.run, daemon=True)
        self.thread.start()

    def run(self):
        while not self.stop_:
            kib = vmrss_kib(self.pid)
            self.peaks[self.phase] = max(self.peaks.get(self.phase, 0), kib)
            time.sleep(0.05)

    def stop(self):
        self.stop_ = True
        self.thread.join()
        return {k: round(v / 1024) for k, v in self.peaks.items()}


def cpu_s(pid):
    """user+sys CPU seconds of a process so far (0 when it is gone)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except OSError:
        return 0.0


def tree_cpu_s(pid):
    """user+sys CPU seconds of a process, its reaped children and its living children (PostgreSQL: the
    postmaster, its exited backends and the running ones)."""
    total = 0.0
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        total = sum(int(x) for x in fields[11:15]) / os.sysconf("SC_CLK_TCK")
    except OSError:
        return 0.0
    return total + sum(cpu_s(c) for c in children(pid))


def poll_delay(done, n, elapsed):
    """Seconds to wait before the next completion poll. The poll counts every rps row of the environment (a new
    psql connection and ~40 ms of PostgreSQL CPU at 100k rows), so polling every 50 ms took about a fifth of
    the 2-core machine away from the run it measured. Far from the end the wait is half the estimated
    remaining time (at most 1 s); near it, 50 ms as before, so the end is seen as precisely as before.
    INM_BENCH_POLL=<seconds> forces a fixed interval (0.05 = the earlier rounds' method)."""
    fixed = os.environ.get("INM_BENCH_POLL")
    if fixed:
        return float(fixed)
    if done <= 0 or elapsed <= 0:
        return 0.25
    remaining = (n - done) * elapsed / done
    return min(1.0, max(0.05, remaining / 2))


def one_run(cluster, build, n, agents, executor, parallelism):
    db = f"bench_{uuid.uuid4().hex[:10]}"
    cluster.psql(f"CREATE DATABASE {db}")
    migrations = os.path.join(ROOT, "orchestrator", "store", "migrations")
    for name in sorted(n for n in os.listdir(migrations) if n.endswith(".sql")):
        with open(os.path.join(migrations, name)) as f:
            cluster.psql(f.read(), db=db)
    env, project = str(uuid.uuid4()), str(uuid.uuid4())
    settings = {"autostart_agent_deploy_interval": "0", "autostart_agent_repair_interval": "0",
                "agent_parallelism": parallelism}
    sql(cluster, db, f"INSERT INTO project VALUES ('{project}', 'p'); INSERT INTO environment (id, name, project, "
                     f"settings) VALUES ('{env}', 'e', '{project}', '{json.dumps(settings)}')")

    def put(version, changed=None):
        value = "CASE WHEN i = {} THEN 'changed' ELSE '' END".format(changed) if changed is not None else "''::text"
        sql(cluster, db, f"""
INSERT INTO configurationmodel (environment, version, total) VALUES ('{env}', {version}, {n});
INSERT INTO resource (environment, model, resource_id, resource_type, agent, resource_id_value, attributes,
                      attribute_hash)
SELECT '{env}', {version}, id, 'std::testing::NullResource', agent, 'r' || i, attrs, md5(id || attrs::text)
FROM (SELECT i, 'agent' || (i % {agents}) AS agent,
             'std::testing::NullResource[agent' || (i % {agents}) || ',name=r' || i || ']' AS id,
             jsonb_build_object('name', 'r' || i, 'agentname', 'agent' || (i % {agents}), 'value', {value},
                                'fail', false, 'send_event', false, 'receive_events', true, 'purged', false,
                                'requires', '[]'::jsonb) AS attrs
      FROM generate_series(0, {n - 1}) AS i) s;
INSERT INTO agent (environment, name) SELECT DISTINCT '{env}'::uuid, agent FROM resource WHERE environment = '{env}'
  ON CONFLICT DO NOTHING;""")

    def release(version):
        sql(cluster, db, f"""BEGIN;
INSERT INTO resource_persistent_state (environment, resource_id, resource_type, agent, resource_id_value,
  current_intent_attribute_hash) SELECT environment, resource_id, resource_type, agent, resource_id_value,
  attribute_hash FROM resource WHERE environment = '{env}' AND model = {version} ON CONFLICT DO NOTHING;
UPDATE configurationmodel SET released = true WHERE environment = '{env}' AND version = {version};
INSERT INTO scheduler_request (environment, kind) VALUES ('{env}', 'read_version');
NOTIFY inmanta_scheduler, '{env}'; COMMIT;""")

    put(1)
    penv = dict(os.environ, INMANTA_DATABASE_HOST="127.0.0.1", INMANTA_DATABASE_PORT=str(cluster.port),
                INMANTA_DATABASE_NAME=db, INMANTA_DATABASE_USERNAME="postgres")
    if os.environ.get("INM_BENCH_PROFILE"):
        cluster.psql("CREATE EXTENSION IF NOT EXISTS pg_stat_statements", db=db)
        cluster.psql("SELECT pg_stat_statements_reset()", db=db)
    wrap = os.environ.get("INM_BENCH_WRAP", "").split()
    proc = harness.Process(wrap + [os.path.join(build, "bin", "inmanta")] + (["-vv"] if os.environ.get("INM_BENCH_VERBOSE") else []) + ["scheduler", "--environment", env,
                            "--executor", executor], env=penv)
    sampler = RssSampler(proc.pid)
    try:
        time.sleep(1.0)
        done_q = (f"SELECT count(*) FROM resource_persistent_state WHERE environment = '{env}' AND NOT is_deploying "
                  "AND last_non_deploying_status = 'deployed' AND last_deployed_attribute_hash = "
                  "current_intent_attribute_hash")
        cpu0 = cpu_s(proc.pid)  # start-up (connections, empty state) is not the deploy's cost
        pg0, poll0 = tree_cpu_s(cluster.proc.pid), os.times()
        t0 = time.time()
        sampler.phase = "load"  # until a first resource is seen deployed (the poll backs off: approximate)
        release(1)
        exec_peak = 0
        polls, poll_wall = 0, 0.0
        while True:
            tq = time.time()
            done = int(sql(cluster, db, done_q))
            polls, poll_wall = polls + 1, poll_wall + time.time() - tq
            if done > 0:
                sampler.phase = "deploy"
            for c in children(proc.pid):
                exec_peak = max(exec_peak, vmhwm_kib(c))
            if done >= n:
                break
            if not proc.alive():
                raise RuntimeError("scheduler died:\n" + proc.output()[-3000:])
            if time.time() - t0 > 1800:
                raise RuntimeError(f"timeout: {done}/{n}")
            time.sleep(poll_delay(done, n, time.time() - t0))
        detected = time.time() - t0
        # The clock stops at the commit that made the last resource `deployed` (track_commit_timestamp), not at
        # the poll that saw it: the poll's back-off would otherwise add up to its last wait to the figure.
        last_commit = sql(cluster, db, "SELECT extract(epoch FROM max(pg_xact_commit_timestamp(xmin))) FROM "
                                       f"resource_persistent_state WHERE environment = '{env}'")
        wall = min(detected, float(last_commit) - t0) if last_commit else detected
        sched_cpu = cpu_s(proc.pid) - cpu0
        pg_cpu = tree_cpu_s(cluster.proc.pid) - pg0
        poll1 = os.times()
        poll_cpu = (poll1.user + poll1.system + poll1.children_user + poll1.children_system) - (
            poll0.user + poll0.system + poll0.children_user + poll0.children_system)
        exec_cpu = sum(cpu_s(c) for c in children(proc.pid))
        # One changed resource of N: count the deploys it schedules.
        before = int(sql(cluster, db, "SELECT count(*) FROM resourceaction WHERE action = 'deploy'"))
        sampler.phase = "idle"
        time.sleep(0.5)
        put(2, changed=n // 2)
        t1 = time.time()
        sampler.phase = "version2"
        release(2)
        harness.wait_for(lambda: sql(cluster, db, f"SELECT last_processed_model_version FROM scheduler") == "2",
                         timeout=600)
        harness.wait_for(lambda: int(sql(cluster, db, done_q)) >= n, timeout=600)
        incr = time.time() - t1
        time.sleep(1.0)
        after = int(sql(cluster, db, "SELECT count(*) FROM resourceaction WHERE action = 'deploy'"))
        for c in children(proc.pid):
            exec_peak = max(exec_peak, vmhwm_kib(c))
    finally:
        rss_phases = sampler.stop()
        proc.stop()
        if os.environ.get("INM_BENCH_VERBOSE"):
            print(proc.output()[-4000:])
    m = re.search(r"peak RSS (\d+) MiB", proc.output())
    if os.environ.get("INM_BENCH_PROFILE"):
        print(sql(cluster, db, "SELECT round(total_exec_time)::int || ' ms  ' || calls || ' calls  ' || rows || "
                               "' rows  ' || left(regexp_replace(query, '\\s+', ' ', 'g'), 110) FROM "
                               "pg_stat_statements ORDER BY total_exec_time DESC LIMIT 14"), flush=True)
    cluster.psql(f"DROP DATABASE {db}")
    return {"n": n, "agents": agents, "executor": executor, "parallelism": parallelism, "wall_s": round(wall, 2),
            "rate_per_s": round(n / wall), "one_change_deploys": after - before, "one_change_s": round(incr, 2),
            "scheduler_peak_mib": int(m.group(1)) if m else None, "scheduler_rss_mib_by_phase": rss_phases,
            "executor_peak_mib": round(exec_peak / 1024) if exec_peak else None,
            "scheduler_cpu_s": round(sched_cpu, 2), "executor_cpu_s": round(exec_cpu, 2),
            "postgres_cpu_s": round(pg_cpu, 2), "bench_poll_cpu_s": round(poll_cpu, 2),
            "polls": polls, "poll_wall_s": round(poll_wall, 2), "detected_s": round(detected, 2)}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--sizes", default="10000,100000")
    ap.add_argument("--agents", default="1,100")
    ap.add_argument("--executor", default="process")
    ap.add_argument("--parallelism", default="1000")
    args = ap.parse_args()
    cluster = harness.PgCluster().start()
    # Commit times of rows (see one_run: the clock stops at the last deploy's commit); needs a restart.
    cluster.psql("ALTER SYSTEM SET track_commit_timestamp = on")
    if os.environ.get("INM_BENCH_PROFILE"):  # per-statement times (pg_stat_statements, Debian's contrib)
        cluster.psql("ALTER SYSTEM SET shared_preload_libraries = 'pg_stat_statements'")
    cluster.stop()
    cluster.start()
    if os.environ.get("INM_BENCH_VERBOSE"):
        cluster.psql("ALTER SYSTEM SET log_min_duration_statement = 100")
        cluster.psql("SELECT pg_reload_conf()")
    results = []
    try:
        for executor in args.executor.split(","):
            for n in [int(x) for x in args.sizes.split(",")]:
                for agents in [int(x) for x in args.agents.split(",")]:
                    for par in [int(x) for x in args.parallelism.split(",")]:
                        r = one_run(cluster, args.build, n, agents, executor, par)
                        print(json.dumps(r), flush=True)
                        results.append(r)
    finally:
        if os.environ.get("INM_BENCH_VERBOSE"):
            import subprocess
            subprocess.run(["bash", "-c", f"grep -E 'duration' {cluster.log} | cut -c1-300 | tail -30"])
        cluster.destroy()
    print("| N | agents | executor | agent_parallelism | release→all deployed | resources/s | deploys for 1 change "
          "| scheduler peak | executor peak | scheduler CPU | executor CPU | postgres CPU |")
    print("|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for r in results:
        print(f"| {r['n']:,} | {r['agents']} | {r['executor']} | {r['parallelism']} | {r['wall_s']} s | "
              f"{r['rate_per_s']:,} | {r['one_change_deploys']} | {r['scheduler_peak_mib']} MiB | "
              f"{r['executor_peak_mib']} MiB | {r['scheduler_cpu_s']} s | {r['executor_cpu_s']} s | "
              f"{r['postgres_cpu_s']} s |")


if __name__ == "__main__":
    main()
