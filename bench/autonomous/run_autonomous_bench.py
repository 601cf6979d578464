#!/usr/bin/env python3
"""Autonomous-server benchmark (issue #12): POST /api/v1/notify -> version stored, for the shared kit's
10k-resource genmodel project committed in a git repository, with each stage's time (clone or pull, compile,
export, push) taken from the compile reports and the driver's -vvv phase lines; first run (clone) and a run after
a one-line change (pull). --mode service measures the compile service alone (compile-service-run, artifact only).

    bench/autonomous/run_autonomous_bench.py [--mode server|service] [--entities 10000] [--runs 3]
                                             [--build build] [--work DIR] [--kit DIR] [--json FILE]

It starts a private PostgreSQL (test/integration/harness.py) and, per run, a real `inmanta server` with one
environment whose repo_url is the generated repository served by `git daemon` on loopback. Only the Python
standard library is used.
"""
import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(REPO, "test", "integration"))
import harness  # noqa: E402

NUM = r"([0-9.]+(?:[eE][-+]?[0-9]+)?)"


def git(cwd, *args):
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True).stdout.strip()


def psql(cluster, db, sql):
    return cluster.psql(sql, db=db).stdout.strip()


def stage_times(cluster, db, compile_id):
    rows = json.loads(psql(cluster, db, "SELECT coalesce(json_agg(q), '[]') FROM (SELECT name, "
                           "EXTRACT(EPOCH FROM completed - started)::float8 AS s, outstream, errstream, returncode "
                           f"FROM report WHERE compile = '{compile_id}' ORDER BY started) q"))
    out = {}
    for r in rows:
        if r["returncode"] != 0:
            raise SystemExit(f"stage {r['name']} failed:\n{r['errstream'][-3000:]}")
        if r["name"] in ("Cloning repository", "Pulling updates"):
            out["git_s"] = r["s"]
            out["git_stage"] = r["name"]
        elif r["name"] == "Recompiling configuration model":
            out["compiler_process_s"] = r["s"]
            text = r["outstream"] + r["errstream"]
            for key, pat in (("parse_s", r"Parsing took " + NUM), ("compile_s", r"Compilation took " + NUM),
                             ("export_s", r"Generating resources from the compiled model took " + NUM)):
                m = re.search(pat, text)
                if m:
                    out[key] = float(m.group(1))
    return out


def request(build, cluster, db, env, state, update):
    conninfo = f"host=127.0.0.1 port={cluster.port} dbname={db} user=postgres"
    args = [os.path.join(build, "bin", "inmanta"), "compile-service-run", "--db", conninfo, "--state-dir", state,
            "-e", env, "--request", "--no-export"] + (["--update"] if update else [])
    t0 = time.time()
    p = subprocess.run(args, capture_output=True, text=True)
    wall = time.time() - t0
    if p.returncode != 0:
        raise SystemExit(f"compile-service-run failed: {p.stdout}{p.stderr}")
    cid = re.search(r"queued compile (\S+)", p.stdout).group(1)
    row = json.loads(psql(cluster, db, f"SELECT row_to_json(q) FROM (SELECT success, "
                          f"EXTRACT(EPOCH FROM completed - requested)::float8 AS s FROM compile WHERE id = '{cid}') q"))
    if not row["success"]:
        stage_times(cluster, db, cid)
        raise SystemExit("compile failed")
    res = {"request_to_done_s": row["s"], "process_wall_s": wall}
    res.update(stage_times(cluster, db, cid))
    art = os.path.join(state, "server", env, "artifacts", cid + ".json")
    with open(art) as f:
        res["resources"] = len(json.load(f)["resources"])
    return res


def server_request(srv, env, first):
    """POST /api/v1/notify (update after the first), wait for the compile; stage times from the API's report."""
    before = len(srv.ok("GET", "/api/v2/compilereport", env=env)["data"])
    t0 = time.time()
    status, _ = srv.call("POST", f"/api/v1/notify/{env}?update={'false' if first else 'true'}")
    assert status == 200, status
    def done():
        cs = srv.ok("GET", "/api/v2/compilereport", env=env)["data"]
        return cs[0] if len(cs) > before and cs[0]["completed"] else None
    c = harness.wait_for(done, timeout=600, interval=0.02, what="compile")
    wall = time.time() - t0
    detail = srv.ok("GET", f"/api/v2/compilereport/{c['id']}")["data"]
    if not c["success"]:
        raise SystemExit("compile failed: " + json.dumps(detail["reports"])[-3000:])
    from datetime import datetime
    ts = lambda t: datetime.fromisoformat(t).timestamp()
    res = {"request_to_done_s": ts(c["completed"]) - ts(c["requested"]), "notify_to_seen_s": wall,
           "version": c["version"]}
    for r in detail["reports"]:
        s = ts(r["completed"]) - ts(r["started"])
        if r["name"] in ("Cloning repository", "Pulling updates"):
            res["git_s"], res["git_stage"] = s, r["name"]
        elif r["name"] == "Recompiling configuration model":
            res["compiler_process_s"] = s
            text = r["outstream"] + r["errstream"]
            for key, pat in (("parse_s", r"Parsing took " + NUM), ("compile_s", r"Compilation took " + NUM),
                             ("export_s", r"Generating resources from the compiled model took " + NUM),
                             ("push_s", r"Pushing the version took " + NUM)):
                m = re.search(pat, text)
                if m:
                    res[key] = float(m.group(1))
    v = srv.ok("GET", f"/api/v1/version/{c['version']}", env=env)
    res["resources"] = len(v["resources"])
    return res


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--entities", type=int, default=10000)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--build", default=os.path.join(REPO, "build"))
    ap.add_argument("--work", default=None)
    kits = [os.path.join(os.path.dirname(REPO), "shared", "bench"), "/work/shared/bench"]
    ap.add_argument("--kit", default=next((k for k in kits if os.path.exists(os.path.join(k, "genmodel.py"))), kits[0]))
    ap.add_argument("--json", default=None)
    ap.add_argument("--mode", choices=["server", "service"], default="server",
                    help="server: a real `inmanta server`, notify -> version stored (default); "
                         "service: compile-service-run with do_export=false (artifact only)")
    ap.add_argument("--transport", choices=["git-daemon", "path"], default="git-daemon",
                    help="serve the repository with `git daemon` on loopback (default) or clone the path")
    a = ap.parse_args()
    a.build = os.path.abspath(a.build)
    work = a.work or tempfile.mkdtemp(prefix="inm-autobench-")
    cluster = harness.PgCluster(base=None).start()
    results = {"first": [], "change": []}
    daemon = None
    try:
        if a.transport == "git-daemon":
            port = harness.free_port()
            daemon = harness.Process(["git", "daemon", "--reuseaddr", "--export-all", f"--base-path={work}",
                                      "--listen=127.0.0.1", f"--port={port}", work])
            time.sleep(0.5)
        for run in range(a.runs):
            repo = os.path.join(work, f"repo{run}")
            shutil.rmtree(repo, ignore_errors=True)
            subprocess.run([sys.executable, os.path.join(a.kit, "genmodel.py"), "--entities", str(a.entities),
                            "--out", repo], check=True, capture_output=True)
            git(repo, "init", "-q", "-b", "main")
            git(repo, "-c", "user.email=b@example.com", "-c", "user.name=bench", "add", "-A")
            git(repo, "-c", "user.email=b@example.com", "-c", "user.name=bench", "commit", "-q", "-m", "model")
            url = f"git://127.0.0.1:{port}/repo{run}" if daemon else repo
            db = f"bench{run}"
            psql(cluster, "postgres", f"CREATE DATABASE {db}")
            if a.mode == "server":
                os.environ["INM_PG_PORT"] = str(cluster.port)
                harness.BUILD, harness.INMANTA = a.build, os.path.join(a.build, "bin", "inmanta")
                from server_fixture import Server
                srv = Server(db=db, server_extra="compile-timeout = 600\n")
                try:
                    pid = srv.ok("PUT", "/api/v2/project", {"name": "bench"})["data"]["id"]
                    env = srv.ok("PUT", "/api/v2/environment", {"project_id": pid, "name": "e", "repository": url,
                                                                  "branch": "main"})["data"]["id"]
                    results["first"].append(server_request(srv, env, True))
                    with open(os.path.join(repo, "main.cf"), "a") as f:
                        f.write('\nstd::print("one-line change")\n')
                    git(repo, "-c", "user.email=b@example.com", "-c", "user.name=bench", "commit", "-qam", "one line")
                    results["change"].append(server_request(srv, env, False))
                finally:
                    srv.stop()
                shutil.rmtree(repo, ignore_errors=True)
                continue
            migrations = os.path.join(REPO, "orchestrator", "store", "migrations")
            for name in sorted(n for n in os.listdir(migrations) if n.endswith(".sql")):
                with open(os.path.join(migrations, name)) as f:
                    cluster.psql(f.read(), db=db)
            pid = psql(cluster, db, "INSERT INTO project (id, name) VALUES (gen_random_uuid(), 'bench') RETURNING id")
            env = psql(cluster, db, f"INSERT INTO environment (id, name, project, repo_url, repo_branch) VALUES "
                                    f"(gen_random_uuid(), 'e', '{pid}', '{url}', 'main') RETURNING id")
            state = os.path.join(work, f"state{run}")
            shutil.rmtree(state, ignore_errors=True)
            results["first"].append(request(a.build, cluster, db, env, state, update=False))
            # A one-line change: append a comment-free statement to main.cf.
            with open(os.path.join(repo, "main.cf"), "a") as f:
                f.write('\nstd::print("one-line change")\n')
            git(repo, "-c", "user.email=b@example.com", "-c", "user.name=bench", "commit", "-qam", "one line")
            results["change"].append(request(a.build, cluster, db, env, state, update=True))
            shutil.rmtree(state, ignore_errors=True)
            shutil.rmtree(repo, ignore_errors=True)
    finally:
        if daemon:
            daemon.stop()
        cluster.destroy()
        if not a.work:
            shutil.rmtree(work, ignore_errors=True)
    keys = ["request_to_done_s", "git_s", "compiler_process_s", "parse_s", "compile_s", "export_s"]
    if a.mode == "server":
        keys.append("push_s")
    print(f"autonomous bench ({a.mode}): {a.entities} entities, {a.runs} runs, repository over {a.transport}, "
          f"medians (seconds)")
    print(f"{'run':<8}{'resources':>10}" + "".join(f"{k:>20}" for k in keys))
    summary = {}
    for name, rs in results.items():
        med = {k: statistics.median(r[k] for r in rs if k in r) for k in keys if any(k in r for r in rs)}
        summary[name] = dict(med, resources=rs[0]["resources"], git_stage=rs[0].get("git_stage"), runs=rs)
        print(f"{name:<8}{rs[0]['resources']:>10}" + "".join(f"{med.get(k, float('nan')):>20.3f}" for k in keys))
    if a.json:
        with open(a.json, "w") as f:
            json.dump(summary, f, indent=2)


if __name__ == "__main__":
    main()
