#!/usr/bin/env python3
"""Server push benchmark (issue #10): files + put_version + release of a generated N-resource version.

    bench/server/run_server_bench.py [--sizes 10000,100000] [--runs 3] [--build DIR] [--work DIR] [--kit DIR]

For every size: genmodel.py (the shared kit) writes a project (cached in WORK), our `inmanta export -j` compiles
it offline, and the artifact is converted here into the reference's 11.5.5 push (ids with ",v=N", a `version`
key, `resource_state`). Each run starts a fresh `inmanta server` on a private PostgreSQL (auto_deploy off), then
times the push as the exporter does it: POST /api/v1/file (stat), PUT /api/v1/file/<sha1> per missing file,
PUT /api/v1/version (gzip body), POST /api/v1/version/<v> (release). Reported per size (medians): the push wall
time, its put_version and release parts, and the server's peak RSS (VmHWM) after the push.
Only the Python standard library is used.
"""
import argparse
import concurrent.futures
import base64
import gzip
import json
import os
import statistics
import subprocess
import sys
import time

UPLOAD_THREADS = 8  # file uploads in parallel, one request each (the exporter's protocol)
HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "test", "integration"))
import harness  # noqa: E402
import server_fixture as sf  # noqa: E402


def artifact_for(args, size):
    project = os.path.join(args.work, f"n{size}")
    if not os.path.exists(os.path.join(project, "main.cf")):
        subprocess.run([sys.executable, os.path.join(args.kit, "genmodel.py"), "--entities", str(size), "--out", project,
                        "--resources", "mixed"], check=True, stdout=subprocess.DEVNULL)
    path = os.path.join(project, "export.json")
    if not os.path.exists(path):
        subprocess.run([harness.INMANTA, "export", "-j", path], cwd=project, check=True, stdout=subprocess.DEVNULL)
    with open(path) as f:
        return json.load(f)


def push_payload(artifact, version):
    """The 11.5.5 exporter's PUT /api/v1/version body for an artifact document."""
    resources, state = [], {}
    for r in artifact["resources"]:
        r = dict(r)
        undefined = r.pop("undefined", False)
        rid = r["id"].rsplit(",v=", 1)[0]
        r["id"] = f"{rid},v={version}"
        r["version"] = version
        r["requires"] = [f"{q},v={version}" for q in r.get("requires", [])]
        state[rid] = "undefined" if undefined else "available"
        resources.append(r)
    sets = {rid: name for name, members in artifact.get("resource_sets", {}).items() for rid in members}
    return {"version": version, "resources": resources, "resource_state": state, "unknowns": [], "resource_sets": sets,
            "version_info": {"export_metadata": {"type": "bench", "message": "bench push"}}, "compiler_version": "bench",
            "pip_config": {"use_system_config": False}}


def vm_hwm_kib(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    return 0


def run_once(artifact):
    s = sf.Server()
    try:
        pid, env = s.project_env("bench")
        s.ok("POST", "/api/v2/environment_settings/auto_deploy", {"value": False}, env=env)
        rss_idle = vm_hwm_kib(s.proc.pid)
        version = s.ok("POST", "/api/v2/reserve_version", env=env)["data"]
        body = gzip.compress(json.dumps(push_payload(artifact, version)).encode(), 1)
        files = artifact.get("files", {})
        hdr = {"X-Inmanta-Tid": env, "Content-Encoding": "gzip", "Content-Type": "application/json"}
        t0 = time.time()
        missing = s.ok("POST", "/api/v1/file", {"files": sorted(files)})["files"]
        with concurrent.futures.ThreadPoolExecutor(UPLOAD_THREADS) as pool:
            list(pool.map(lambda h: s.ok("PUT", f"/api/v1/file/{h}", {"id": h, "content": base64.b64encode(files[h].encode()).decode()}),
                          missing))
        t1 = time.time()
        status, msg, _ = harness.http("PUT", s.base + "/api/v1/version", body, hdr, timeout=600)
        if status != 200:
            raise RuntimeError(f"put_version failed: {status} {msg}")
        t2 = time.time()
        s.ok("POST", f"/api/v1/version/{version}", {"id": version}, env=env)
        t3 = time.time()
        return {"resources": len(artifact["resources"]), "files": len(missing), "push_s": round(t3 - t0, 3),
                "files_s": round(t1 - t0, 3), "put_version_s": round(t2 - t1, 3), "release_s": round(t3 - t2, 3),
                "gzip_body_mib": round(len(body) / 2**20, 1), "server_idle_rss_mib": round(rss_idle / 1024, 1),
                "server_peak_rss_mib": round(vm_hwm_kib(s.proc.pid) / 1024, 1),
                "server_log": [l for l in s.proc.output().splitlines() if "version_stored" in l][-1].split(" ", 3)[-1]}
    finally:
        s.stop()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default="10000,100000")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--work", default="/tmp/inmanta-server-bench")
    ap.add_argument("--kit", default=os.environ.get("BENCH_KIT", os.path.normpath(os.path.join(ROOT, "..", "..", "shared", "bench"))))
    args = ap.parse_args()
    harness.BUILD = os.path.abspath(args.build)
    harness.INMANTA = os.path.join(harness.BUILD, "bin", "inmanta")
    os.makedirs(args.work, exist_ok=True)
    cluster = harness.PgCluster().start()
    os.environ["INM_PG_HOST"], os.environ["INM_PG_PORT"] = "127.0.0.1", str(cluster.port)
    rows = []
    try:
        for size in [int(x) for x in args.sizes.split(",") if x]:
            artifact = artifact_for(args, size)
            runs = []
            for i in range(args.runs):
                r = run_once(artifact)
                print(f"n={size} run {i + 1}: {json.dumps(r, sort_keys=True)}", flush=True)
                runs.append(r)
            med = {k: statistics.median(r[k] for r in runs) for k in runs[0] if k != "server_log"}
            rows.append((size, med))
    finally:
        cluster.destroy()
    print("| target N | resources | push wall | files | put_version | release | gzip body | server RSS idle | server peak RSS |")
    print("|---|---|---|---|---|---|---|---|---|")
    for size, m in rows:
        print(f"| {size} | {m['resources']} | {m['push_s']:.2f} s | {m['files_s']:.2f} s | {m['put_version_s']:.2f} s | "
              f"{m['release_s']:.2f} s | {m['gzip_body_mib']} MiB | {m['server_idle_rss_mib']} MiB | {m['server_peak_rss_mib']} MiB |")


if __name__ == "__main__":
    main()
