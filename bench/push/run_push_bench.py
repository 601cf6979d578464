#!/usr/bin/env python3
"""bench/push: for each size, generate WORK/nN with the shared kit's genmodel.py (reused when present), start a
server (the real `inmanta server` on a private PostgreSQL from test/integration/harness.py, or sink.py), create a
project and environment, run `inmanta -vvv export -d` (a fresh server and database each of RUNS times, so every
run uploads every file) and report, as medians: the time from the
end of compilation to the release answer (the driver's own log line), its phases (artifact rewrite, file
uploads, put_version, release), and the server's peak RSS (VmHWM from /proc/<pid>/status, the max of the runs)."""
import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "test", "integration"))
import harness  # noqa: E402


def vmhwm_mib(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    return float("nan")


def cpu_s(pid, children=False):
    """user+sys CPU seconds of `pid` (plus its reaped children's, and its live children's when `children`)."""
    tick = os.sysconf("SC_CLK_TCK")

    def fields(p):
        with open(f"/proc/{p}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()
    try:
        f = fields(pid)
    except OSError:
        return float("nan")
    total = int(f[11]) + int(f[12])
    if children:
        total += int(f[13]) + int(f[14])
        for d in os.listdir("/proc"):
            if d.isdigit():
                try:
                    c = fields(d)
                    if int(c[1]) == pid:
                        total += int(c[11]) + int(c[12])
                except (OSError, IndexError):
                    pass
    return total / tick


def has_server_verb(inmanta):
    out = subprocess.run([inmanta, "--help"], capture_output=True, text=True).stdout
    return re.search(r"^\s+server\s", out, re.M) is not None


class Server:
    def __init__(self, kind, inmanta, work):
        self.kind = kind
        self.cluster = None
        self.port = None
        if kind == "sink":
            portfile = os.path.join(work, "sink.port")
            if os.path.exists(portfile):
                os.remove(portfile)
            self.proc = harness.Process([sys.executable, os.path.join(HERE, "sink.py"), portfile])
            harness.wait_for(lambda: os.path.exists(portfile) and open(portfile).read(), what="sink port")
            self.port = int(open(portfile).read())
            return
        self.cluster = harness.PgCluster().start()
        db = "bench"
        self.cluster.psql(f"CREATE DATABASE {db}")
        if os.environ.get("PUSH_PG_LOG"):  # statements slower than PUSH_PG_LOG ms go to the cluster's log
            self.cluster.psql(f"ALTER SYSTEM SET log_min_duration_statement = {int(os.environ['PUSH_PG_LOG'])}")
            self.cluster.psql("SELECT pg_reload_conf()")
        self.port = harness.free_port()
        cfg = os.path.join(work, "server.cfg")
        with open(cfg, "w") as f:
            f.write(f"[database]\nhost=127.0.0.1\nport={self.cluster.port}\nname={db}\nusername=postgres\n"
                    f"password=\n[server]\nbind-address=127.0.0.1\nbind-port={self.port}\n"
                    f"[config]\nstate-dir={work}/state\nlog-dir={work}/log\n")
        self.proc = harness.Process([inmanta, "-c", cfg, "server"])

        def up():
            for path in ("/api/v2/health", "/api/v1/serverstatus"):
                try:
                    with urllib.request.urlopen(f"http://127.0.0.1:{self.port}{path}", timeout=2) as r:
                        if r.status == 200:
                            return True
                except Exception:
                    pass
            if not self.proc.alive():
                raise RuntimeError("inmanta server exited:\n" + self.proc.output()[-3000:])
            return False
        harness.wait_for(up, timeout=60, what="inmanta server")

    def stop(self):
        self.proc.stop()
        if self.cluster and os.environ.get("PUSH_KEEP_DB"):  # for EXPLAIN experiments; destroy it by hand
            print(f"  kept PostgreSQL on port {self.cluster.port} (pid {self.cluster.proc.pid}, dir {self.cluster.dir})")
            return
        if self.cluster:
            self.cluster.destroy()


def environment(inmanta, port, kind):
    if kind == "sink":
        return "6f0b1c2d-0000-4000-8000-000000000001"
    cli = os.path.join(os.path.dirname(inmanta), "inmanta-cli")
    base = [cli, "--host", "127.0.0.1", "--port", str(port)]
    subprocess.run(base + ["project", "create", "-n", "bench"], check=True, capture_output=True)
    out = subprocess.run(base + ["--json", "environment", "create", "-n", "bench", "-p", "bench"], check=True,
                         capture_output=True, text=True).stdout
    env = json.loads(out)["id"]
    # keep the bench about the push: no deploys
    subprocess.run(base + ["environment", "setting", "set", "-e", env, "-k", "auto_deploy", "-o", "false"],
                   capture_output=True)
    return env


PHASES = {"rewrite": r"push: reading the artifact took ([0-9.]+)",
          "files": r"push: uploading \d+ files .* took ([0-9.]+)",
          "file_batches": r"push: uploading \d+ files \(.*; (\d+) batches\)",
          "serialise": r"push: serialising put_version .* took ([0-9.]+)",
          "put_version": r"push: put_version took ([0-9.]+)",
          "release": r"push: release took ([0-9.]+)",
          "generate": r"Generating resources from the compiled model took ([0-9.]+)",
          "total": r"From the end of compilation to the server's last answer took ([0-9.]+)"}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default="10000,100000")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--inmanta", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--kit", required=True)
    ap.add_argument("--server", default="auto", choices=["auto", "real", "sink"])
    args = ap.parse_args()
    kind = args.server if args.server != "auto" else ("real" if has_server_verb(args.inmanta) else "sink")
    os.makedirs(args.work, exist_ok=True)
    print(f"server: {kind}")
    for size in [int(s) for s in args.sizes.split(",")]:
        project = os.path.join(args.work, f"n{size}")
        if not os.path.exists(os.path.join(project, "main.cf")):
            subprocess.run([sys.executable, os.path.join(args.kit, "genmodel.py"), "--entities", str(size),
                            "--out", project], check=True, stdout=subprocess.DEVNULL)
        # A fresh server and database per run: files are global, so a reused one would skip every upload after
        # the first run.
        runs, hwms, cpus = [], [], []
        for _ in range(args.runs):
            server = Server(kind, args.inmanta, args.work)
            try:
                env = environment(args.inmanta, server.port, kind)
                pg_pid = server.cluster.proc.pid if server.cluster else None
                srv0, pg0 = cpu_s(server.proc.pid), cpu_s(pg_pid, True) if pg_pid else 0.0
                cli0 = os.times()
                p = subprocess.run([args.inmanta, "-vvv", "export", "-e", env, "--server_address", "127.0.0.1",
                                    "--server_port", str(server.port), "-d"], cwd=project, capture_output=True,
                                   text=True)
                if p.returncode != 0:
                    print(f"export failed:\n{p.stderr[-3000:]}", file=sys.stderr)
                    return 1
                cli1 = os.times()
                cpus.append((cli1.children_user + cli1.children_system - cli0.children_user - cli0.children_system,
                             cpu_s(server.proc.pid) - srv0, (cpu_s(pg_pid, True) - pg0) if pg_pid else 0.0))
                runs.append({k: float(m.group(1)) for k, rx in PHASES.items() if (m := re.search(rx, p.stderr))})
                hwms.append(vmhwm_mib(server.proc.pid))
                if os.environ.get("PUSH_SERVER_LOG") and kind == "real":
                    for line in server.proc.output().splitlines():
                        if "version_stored" in line or "version_released" in line or "PUT /api/v1/version" in line \
                                or ('"/api/v1/version/' in line and "POST" in line):
                            print("  server: " + line[:300])
                if os.environ.get("PUSH_PG_LOG") and kind == "real":
                    with open(server.cluster.log, errors="replace") as f:
                        for line in f:
                            if "duration:" in line:
                                print("  pg: " + line.strip()[:400])
            finally:
                server.stop()
        hwm = max(hwms)
        med = {k: statistics.median(r[k] for r in runs if k in r) for k in PHASES if any(k in r for r in runs)}
        each = ", ".join("%.2f" % r.get("total", 0) for r in runs)
        print(f"n={size}: end of compile -> release answer {med.get('total', float('nan')):.2f} s (median of "
              f"{len(runs)}; runs {each}); server peak RSS {hwm:.0f} MiB (max of the runs)")
        print("  CPU s (median; user+sys): export process (compile + push) %.2f, server %.2f, PostgreSQL %.2f"
              % tuple(statistics.median(c[i] for c in cpus) for i in range(3)))
        print("  phases (median s): " + ", ".join(f"{k} {v:.3f}" for k, v in med.items() if k != "total"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
