#!/usr/bin/env python3
"""bench/delta: for each size, generate WORK/nN with the shared kit's genmodel.py (reused when present), start the
real `inmanta server` on a private PostgreSQL (bench/push's fixture), push the project once, then RUNS times an
interleaved pair: flip one Node's memory in main.cf and push the whole version (the delta state removed first),
flip it back and push it as a delta. Each push is `inmanta -vvv export -d`; the figure is the driver's own
"end of compilation to the server's last answer" line. Reports medians per mode, the delta's changed count, its
phases and the CPU seconds of the export process, the server and PostgreSQL."""
import argparse
import os
import re
import statistics
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "bench", "push"))
import run_push_bench as pb  # noqa: E402

PHASES = dict(pb.PHASES, delta_put=r"push: delta put_version took ([0-9.]+)",
              delta_serialise=r"push: serialising the delta .* took ([0-9.]+)",
              state=r"push: writing the delta state.* took ([0-9.]+)")
LINE = re.compile(r'(infra::Node\(name="c0-special", .*memory_mb=)(\d+)')


def flip(project):
    path = os.path.join(project, "main.cf")
    text = open(path).read()
    m = LINE.search(text)
    if not m:
        raise RuntimeError(f"no c0-special Node line in {path}")
    new = "65537" if m.group(2) == "65536" else "65536"
    with open(path, "w") as f:
        f.write(text[:m.start(2)] + new + text[m.end(2):])


def export(args, project, env, server, delta):
    if not delta:
        state = os.path.join(project, ".inmanta_export", env + ".state")
        if os.path.exists(state):
            os.remove(state)
    pg_pid = server.cluster.proc.pid
    srv0, pg0, cli0 = pb.cpu_s(server.proc.pid), pb.cpu_s(pg_pid, True), os.times()
    p = subprocess.run([args.inmanta, "-vvv", "export", "-e", env, "--server_address", "127.0.0.1",
                        "--server_port", str(server.port), "-d"], cwd=project, capture_output=True, text=True)
    if p.returncode != 0:
        raise RuntimeError(f"export failed:\n{p.stderr[-3000:]}")
    cli1 = os.times()
    if delta != ("as a delta against" in p.stderr):
        raise RuntimeError(f"expected a {'delta' if delta else 'whole'} push:\n{p.stderr[-3000:]}")
    run = {k: float(m.group(1)) for k, rx in PHASES.items() if (m := re.search(rx, p.stderr))}
    run["cpu"] = (cli1.children_user + cli1.children_system - cli0.children_user - cli0.children_system,
                  pb.cpu_s(server.proc.pid) - srv0, pb.cpu_s(pg_pid, True) - pg0)
    m = re.search(r"\((\d+) new or changed, (\d+) removed\)", p.stderr)
    run["changed"] = (int(m.group(1)), int(m.group(2))) if m else None
    return run


def report(size, mode, runs):
    totals = [r["total"] for r in runs]
    med = {k: statistics.median(r[k] for r in runs if k in r) for k in PHASES if k != "total" and
           any(k in r for r in runs)}
    cpu = tuple(statistics.median(r["cpu"][i] for r in runs) for i in range(3))
    print(f"n={size} {mode}: end of compile -> release answer {statistics.median(totals):.3f} s (median of "
          f"{len(runs)}; runs {', '.join('%.3f' % t for t in totals)})")
    print("  CPU s (median; user+sys): export process (compile + push) %.2f, server %.2f, PostgreSQL %.2f" % cpu)
    print("  phases (median s): " + ", ".join(f"{k} {v:.3f}" for k, v in med.items()))
    if runs[0].get("changed"):
        print(f"  delta: {runs[0]['changed'][0]} new or changed, {runs[0]['changed'][1]} removed")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default="10000,100000")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--inmanta", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--kit", required=True)
    args = ap.parse_args()
    os.makedirs(args.work, exist_ok=True)
    for size in [int(s) for s in args.sizes.split(",")]:
        project = os.path.join(args.work, f"n{size}")
        if not os.path.exists(os.path.join(project, "main.cf")):
            subprocess.run([sys.executable, os.path.join(args.kit, "genmodel.py"), "--entities", str(size),
                            "--out", project], check=True, stdout=subprocess.DEVNULL)
        server = pb.Server("real", args.inmanta, args.work)
        try:
            env = pb.environment(args.inmanta, server.port, "real")
            export(args, project, env, server, delta=False)  # the first version: files, agents, rps rows
            whole, delta = [], []
            for _ in range(args.runs):
                flip(project)
                whole.append(export(args, project, env, server, delta=False))
                flip(project)
                delta.append(export(args, project, env, server, delta=True))
            report(size, "whole", whole)
            report(size, "delta", delta)
            print(f"  server peak RSS {pb.vmhwm_mib(server.proc.pid):.0f} MiB")
        finally:
            server.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
