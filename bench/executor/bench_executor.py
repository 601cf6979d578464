#!/usr/bin/env python3
"""Executor throughput (reported, not a timed test): N NullResources in one `deploy` batch through the real
ExecutorPool client and one `inmanta executor` process, timed inside the client from send to the last result.
Usage: bench_executor.py [--build DIR] [-n N] [--rounds R] [--threads T]
Prints one line per round, the executor's peak RSS (VmHWM) and the CPU time of client + executor (a figure
that does not depend on how loaded the machine is)."""
import argparse
import json
import os
import resource
import subprocess

ap = argparse.ArgumentParser()
ap.add_argument("--build", default=os.path.join(os.path.dirname(__file__), "..", "..", "build"))
ap.add_argument("-n", type=int, default=10000)
ap.add_argument("--rounds", type=int, default=3)
ap.add_argument("--threads", type=int, default=4)
a = ap.parse_args()
binDir = os.path.join(os.path.abspath(a.build), "bin")
reqs = [{"action_id": f"a{i}", "id": f"std::testing::NullResource[internal,name=n{i}],v=1", "reason": "bench",
         "attributes": {"name": f"n{i}", "agentname": "internal", "fail": False, "managed": True, "purged": False,
                        "send_event": True, "purge_on_delete": False}} for i in range(a.n)]
p = subprocess.Popen([os.path.join(binDir, "inm-executor-probe"), "--executable", os.path.join(binDir, "inmanta"),
                      "--threads", str(a.threads)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
try:
    line = json.dumps({"cmd": "deploy", "key": "bench", "requests": reqs, "quiet": True}) + "\n"
    for rnd in range(a.rounds):
        p.stdin.write(line)
        p.stdin.flush()
        while True:
            e = json.loads(p.stdout.readline())
            if e["event"] == "sent":
                pid = e["pid"]
            if e["event"] == "batch_done":
                break
        print(f"round {rnd}: {a.n} NullResources in {e['seconds']:.3f} s = {a.n / e['seconds']:.0f}/s {e['statuses']}")
    with open(f"/proc/{pid}/status") as f:
        hwm = [l for l in f if l.startswith("VmHWM")][0].split(":")[1].strip()
    print(f"executor peak RSS: {hwm}")
    p.stdin.write(json.dumps({"cmd": "shutdown"}) + "\n")
    p.stdin.flush()
    p.wait(30)
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)  # the probe and the executor it reaped
    cpu = ru.ru_utime + ru.ru_stime
    total = a.n * a.rounds
    print(f"CPU (client + executor): {cpu:.2f} s for {total} resources = {total / cpu:.0f} resources per CPU-second")
finally:
    if p.poll() is None:
        p.kill()
        p.wait()
