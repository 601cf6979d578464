#!/usr/bin/env python3
"""bench/reads: the read endpoints of issue #30 ("Reads at 100k") on a version of N resources. For each size it
generates WORK/nN with the shared kit's genmodel.py (reused when present), starts the real `inmanta server` on a
private PostgreSQL (bench/push's fixture), exports the project as version 1, stores a version 2 made from it
(every 10th resource changed, every 50th dropped, 1,000 added: bench/push/read_bench.py's recipe), halts the
environment (no scheduler: nothing moves under the reads) and releases 1 then 2, then gives the deploy state a
realistic mix in SQL (most `deployed`, some `failed`/`skipped`, the dropped ones orphaned as the scheduler would
mark them). Then it times each read RUNS times, interleaved, from this process (wall from sending the request to
the last byte of the answer) and prints medians with the server's CPU per request and the answer's size, and the
server's RSS before one version get and its peak during it (VmHWM reset just before it):

  version   GET /api/v1/version/2                                 (every resource of a version)
  page      GET /api/v2/resource?limit=100&sort=agent.asc&filter.resource_type=NullResource
  next      the `links.next` page of `page` (keyset: start + last_id)
  status    GET /api/v2/resource?limit=100&filter.status=failed   (default sort resource_type.desc)
  details   GET /api/v2/resource/<a resource in the middle>
  diff      GET /api/v2/desiredstate/diff/1/2

--vs BIN runs a second server (its own cluster, same data) with another build and alternates A B A B per read
(pairs), printing both medians and the paired ratio A/B. --save DIR writes each answer (the environment id and
timestamps normalised) for a later --compare DIR, which checks the answers are byte-for-byte equal; with --vs the
two servers' answers are compared with each other on every run.
"""
import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import time
import urllib.error
import urllib.parse
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "bench", "push"))
import read_bench  # noqa: E402
import run_push_bench as rpb  # noqa: E402

TIMESTAMP = re.compile(rb'"\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}:\d{2}(\.\d+)?([+-]\d{2}(:?\d{2})?|Z)?"')


def call(port, method, path, env, body=None):
    return read_bench.call(port, method, path, env, body)


def normalised(body, env):
    """The answer's bytes with what differs between two servers by nature replaced: the environment id and
    every timestamp (the key order and spacing stay as they are: the comparison is byte for byte)."""
    return TIMESTAMP.sub(b'"$TIME"', body.replace(env.encode(), b"ENV"))


class Setup:
    """One server with the bench's data: versions 1 and 2, both released, the deploy state mixed."""

    def __init__(self, inmanta, work, project, size):
        os.makedirs(work, exist_ok=True)
        self.server = rpb.Server("real", inmanta, work)
        try:
            self.env = rpb.environment(inmanta, self.server.port, "real")
            t0 = time.perf_counter()
            p = subprocess.run([inmanta, "export", "-e", self.env, "--server_address", "127.0.0.1",
                                "--server_port", str(self.server.port)], cwd=project, capture_output=True,
                               text=True)
            if p.returncode != 0:
                raise RuntimeError("export failed:\n" + p.stderr[-3000:])
            port, env = self.server.port, self.env
            v1 = json.loads(call(port, "GET", "/api/v1/version/1", env))
            resources = read_bench.second_version(v1)
            del v1
            call(port, "POST", "/api/v2/reserve_version", env)
            call(port, "PUT", "/api/v1/version", env,
                 {"version": 2, "resources": resources, "resource_state": {}, "unknowns": [],
                  "version_info": {"export_metadata": {"type": "api", "message": "bench"}},
                  "compiler_version": "0.1"})
            self.middle = resources[len(resources) // 2]["id"].rsplit(",v=", 1)[0]
            del resources
            call(port, "POST", "/api/v2/actions/environment/halt", env)
            call(port, "POST", "/api/v1/version/1", env)
            call(port, "POST", "/api/v1/version/2", env)
            # The scheduler's part, done by hand: orphans, statuses, last deploy times.
            self.sql(
                "UPDATE resource_persistent_state s SET orphaned_after = 2 WHERE environment = "
                f"'{env}' AND NOT EXISTS (SELECT 1 FROM resource r WHERE r.environment = s.environment AND "
                "r.model = 2 AND r.resource_id = s.resource_id); "
                "UPDATE resource_persistent_state SET last_handler_run_at = now(), last_success = now(), "
                "last_handler_run = 'SUCCESSFUL', last_deployed_version = 1, last_deployed_attribute_hash = "
                "current_intent_attribute_hash, last_non_deploying_status = CASE abs(hashtext(resource_id)) % 20 "
                "WHEN 0 THEN 'failed' WHEN 1 THEN 'skipped' WHEN 2 THEN 'available' ELSE 'deployed' END "
                f"WHERE environment = '{env}'")
            self.sql("VACUUM ANALYZE")
            print(f"  set up n={size} on port {self.server.port} in {time.perf_counter() - t0:.1f} s",
                  flush=True)
        except BaseException:
            self.server.stop()
            raise

    def sql(self, statement):
        r = self.server.cluster.psql(statement, db="bench", check=False)
        if r.returncode != 0:
            raise RuntimeError(f"psql failed: {r.stderr}\nSQL: {statement[:300]}")
        return r.stdout

    def paths(self):
        rid = urllib.parse.quote(self.middle, safe="")
        return {
            "version": "/api/v1/version/2",
            "page": "/api/v2/resource?limit=100&sort=agent.asc&filter.resource_type=NullResource",
            "next": None,  # filled from page's links.next
            "status": "/api/v2/resource?limit=100&filter.status=failed",
            "details": f"/api/v2/resource/{rid}",
            "diff": "/api/v2/desiredstate/diff/1/2",
        }


def timed(setup, path):
    pid = setup.server.proc.pid
    c0 = rpb.cpu_s(pid)
    t0 = time.perf_counter()
    body = call(setup.server.port, "GET", path, setup.env)
    return time.perf_counter() - t0, rpb.cpu_s(pid) - c0, body


def version_peak_rss(setup):
    """The server's peak RSS (VmHWM, MiB) over one version get, the peak reset just before it (clear_refs 5):
    what the read itself costs in memory, not the export before it."""
    pid = setup.server.proc.pid

    def status(field):
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith(field + ":"):
                    return int(line.split()[1]) / 1024
        return float("nan")
    with open(f"/proc/{pid}/clear_refs", "w") as f:
        f.write("5")
    before = status("VmRSS")
    call(setup.server.port, "GET", setup.paths()["version"], setup.env)
    return before, status("VmHWM")


def run_size(args, size):
    project = os.path.join(args.work, f"n{size}")
    if not os.path.exists(os.path.join(project, "main.cf")):
        subprocess.run([sys.executable, os.path.join(args.kit, "genmodel.py"), "--entities", str(size),
                        "--out", project], check=True, stdout=subprocess.DEVNULL)
    setups = []
    try:
        setups.append(Setup(args.inmanta, os.path.join(args.work, "a"), project, size))
        if args.vs:
            setups.append(Setup(args.vs, os.path.join(args.work, "b"), project, size))
        names = list(setups[0].paths())
        times = [{k: [] for k in names} for _ in setups]
        cpus = [{k: [] for k in names} for _ in setups]
        answers = [{} for _ in setups]
        for _ in range(args.runs):
            for k in names:
                for i, s in enumerate(setups):
                    path = s.paths()[k]
                    if k == "next":
                        path = json.loads(answers[i]["page"])["links"]["next"]
                    t, c, body = timed(s, path)
                    times[i][k].append(t)
                    cpus[i][k].append(c)
                    answers[i][k] = body
                if len(setups) == 2:
                    a, b = (normalised(x[k], s.env) for x, s in zip(answers, setups))
                    if a != b:
                        print(f"  {k}: the answers DIFFER ({len(a)} and {len(b)} bytes)")
                        for x, s, tag in zip(answers, setups, "ab"):
                            with open(os.path.join(args.work, f"diff-{k}.{tag}.json"), "wb") as f:
                                f.write(normalised(x[k], s.env))
        peaks = [version_peak_rss(s) for s in setups]
        print(f"n={size} RSS before / peak over one version get: " +
              " | vs ".join(f"{b:.0f} / {p:.0f} MiB" for b, p in peaks), flush=True)
        load = os.getloadavg()[0]
        for k in names:
            med = [statistics.median(t[k]) for t in times]
            line = (f"n={size} {k:8s} {med[0]:.3f} s (runs {', '.join('%.3f' % t for t in times[0][k])}), server "
                    f"CPU {statistics.median(cpus[0][k]):.3f} s, {len(answers[0][k]) / 1e6:.2f} MB")
            if len(setups) == 2:
                ratios = [a / b for a, b in zip(times[0][k], times[1][k])]
                line += (f" | vs {med[1]:.3f} s (CPU {statistics.median(cpus[1][k]):.3f} s), paired A/B "
                         f"{statistics.median(ratios):.2f}")
            print(line + f"; load {load:.1f}", flush=True)
        if args.save:
            os.makedirs(args.save, exist_ok=True)
            for k, body in answers[0].items():
                with open(os.path.join(args.save, f"n{size}-{k}.json"), "wb") as f:
                    f.write(normalised(body, setups[0].env))
        if args.compare:
            for k, body in answers[0].items():
                with open(os.path.join(args.compare, f"n{size}-{k}.json"), "rb") as f:
                    same = f.read() == normalised(body, setups[0].env)
                print(f"  n={size} {k}: {'byte-for-byte equal' if same else 'DIFFERENT'} to {args.compare}")
    finally:
        for s in setups:
            s.server.stop()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default="10000,100000")
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--inmanta", default=os.path.join(ROOT, "build", "bin", "inmanta"))
    ap.add_argument("--vs", help="a second inmanta binary, run in pairs with the first")
    ap.add_argument("--work", default="/tmp/inmanta-reads-bench")
    ap.add_argument("--kit", default=os.path.join(ROOT, "..", "shared", "bench"))
    ap.add_argument("--save")
    ap.add_argument("--compare")
    args = ap.parse_args()
    os.makedirs(args.work, exist_ok=True)
    print(f"bench/reads: {args.inmanta}" + (f" vs {args.vs}" if args.vs else "") +
          f", load {os.getloadavg()[0]:.1f}", flush=True)
    for size in (int(s) for s in args.sizes.split(",")):
        run_size(args, size)
    return 0


if __name__ == "__main__":
    sys.exit(main())
