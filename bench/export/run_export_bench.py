#!/usr/bin/env python3
"""Export benchmark (issue #7): `inmanta export -j` on generated projects, medians of N runs.

    bench/export/run_export_bench.py [--sizes 1000,10000,100000] [--runs 3] [--inmanta BIN] [--work DIR]
                                     [--kit DIR] [--resources mixed|null] [--json FILE]

For every size it generates WORK/nN with the shared kit's genmodel.py (once; reused when present), then runs
`BIN -vvv export -j WORK/nN/export.json` inside it under /usr/bin/time -v and reports per run and as medians:
wall time, user+sys CPU, peak RSS, the driver's phase timings (parse, compile, resource generation = the
exporter itself), the artifact size and its resource count (read back from the artifact, which also checks it
is valid JSON). Targets (../shared/bench/README.md): 100k resources exported in < 2 s wall and < 500 MiB.
Only the Python standard library is used.
"""

import argparse
import json
import os
import re
import statistics
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
NUM = r"([0-9.]+(?:[eE][-+]?[0-9]+)?)"
PHASES = (
    ("parse_s", r"Parsing took " + NUM + " seconds"),
    ("compile_s", r"Compilation took " + NUM + " seconds"),
    ("export_phase_s", r"Generating resources from the compiled model took " + NUM + " seconds"),
)


def parse_time_v(text):
    out = {}
    m = re.search(r"Elapsed \(wall clock\) time \(h:mm:ss or m:ss\): (\S+)", text)
    if m:
        secs = 0.0
        for p in m.group(1).split(":"):
            secs = secs * 60 + float(p)
        out["wall_s"] = secs
    user = re.search(r"User time \(seconds\): (\S+)", text)
    sys_ = re.search(r"System time \(seconds\): (\S+)", text)
    if user and sys_:
        out["cpu_s"] = float(user.group(1)) + float(sys_.group(1))
    m = re.search(r"Maximum resident set size \(kbytes\): (\d+)", text)
    if m:
        out["rss_mib"] = int(m.group(1)) / 1024.0
    m = re.search(r"Exit status: (\d+)", text)
    out["exit"] = int(m.group(1)) if m else 0
    for key, pat in PHASES:
        m = re.search(pat, text)
        if m:
            out[key] = float(m.group(1))
    return out


def run_once(binary, project):
    artifact = os.path.join(project, "export.json")
    if os.path.exists(artifact):
        os.remove(artifact)
    proc = subprocess.run(["/usr/bin/time", "-v", binary, "-vvv", "export", "-j", artifact], cwd=project,
                          stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    res = parse_time_v(proc.stderr)
    if proc.returncode != 0 or res.get("exit", 1) != 0:
        res["error"] = proc.stderr[-2000:]
        return res
    res["artifact_mib"] = os.path.getsize(artifact) / (1024.0 * 1024.0)
    with open(artifact, encoding="utf-8") as f:
        doc = json.load(f)
    res["resources"] = len(doc["resources"])
    return res


def fmt(v, unit=""):
    return "-" if v is None else ("%.3f%s" % (v, unit) if isinstance(v, float) else "%s%s" % (v, unit))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", default="1000,10000,100000")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--inmanta", default=os.path.join(REPO, "build", "bin", "inmanta"))
    ap.add_argument("--work", default="/tmp/inmanta-export-bench")
    ap.add_argument("--kit", default=os.path.join(os.path.dirname(REPO), "shared", "bench"))
    ap.add_argument("--resources", default="mixed")
    ap.add_argument("--json", help="append one JSON line per size with the medians")
    args = ap.parse_args(argv)

    os.makedirs(args.work, exist_ok=True)
    rows = []
    for size in [int(s) for s in args.sizes.split(",") if s]:
        project = os.path.join(args.work, "n%d-%s" % (size, args.resources))
        if not os.path.exists(os.path.join(project, "main.cf")):
            subprocess.run([sys.executable, os.path.join(args.kit, "genmodel.py"), "--entities", str(size),
                            "--out", project, "--resources", args.resources], check=True,
                           stdout=subprocess.DEVNULL)
        runs = []
        for i in range(args.runs):
            r = run_once(args.inmanta, project)
            print("n=%d run %d: %s" % (size, i + 1, json.dumps(r, sort_keys=True)), flush=True)
            if "error" in r:
                print("export failed:\n" + r["error"], file=sys.stderr)
                return 1
            runs.append(r)
        med = {"size": size, "runs": len(runs)}
        for key in ("wall_s", "cpu_s", "rss_mib", "parse_s", "compile_s", "export_phase_s", "artifact_mib"):
            vals = [r[key] for r in runs if key in r]
            med[key] = statistics.median(vals) if vals else None
        med["resources"] = runs[0].get("resources")
        rows.append(med)
        if args.json:
            with open(args.json, "a", encoding="utf-8") as f:
                f.write(json.dumps(med, sort_keys=True) + "\n")

    print()
    print("| target N | resources | wall | cpu | peak RSS | parse | compile | export phase | artifact |")
    print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for m in rows:
        print("| %d | %s | %s | %s | %s | %s | %s | %s | %s |" % (
            m["size"], m["resources"], fmt(m["wall_s"], " s"), fmt(m["cpu_s"], " s"), fmt(m["rss_mib"], " MiB"),
            fmt(m["parse_s"], " s"), fmt(m["compile_s"], " s"), fmt(m["export_phase_s"], " s"),
            fmt(m["artifact_mib"], " MiB")))
    big = [m for m in rows if m["size"] >= 100000]
    for m in big:
        ok = m["wall_s"] is not None and m["wall_s"] < 2.0 and m["rss_mib"] is not None and m["rss_mib"] < 500
        print("target (%d: < 2 s wall, < 500 MiB): %s" % (m["size"], "met" if ok else "NOT met"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
