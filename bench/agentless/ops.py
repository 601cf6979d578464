#!/usr/bin/env python3
"""Round-trip time of each SshIo operation kind (issue #28 profiling; reported, not a timed test). Starts the
fixture of test/integration/test_agentless_ssh.py (a private sshd on a loopback port, user inmsshtest; needs
root), opens ONE session with the driver script read out of orchestrator/executor/handlers/SshIo.cpp (so it
measures exactly the shipped driver), sends R requests of each kind and prints the median/min/max round trip
in ms. Kinds: `b` (in the driver, no fork), `f` (a subshell, output in files); see docs/deploy.md.

Usage: bench/agentless/ops.py [--runs 100]
"""
import argparse
import os
import re
import secrets
import shlex
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "test", "integration"))
import test_agentless_ssh as t  # noqa: E402

NL = b"\n"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=100)
    args = ap.parse_args()
    src = open(os.path.join(ROOT, "orchestrator/executor/handlers/SshIo.cpp")).read()
    driver = re.search(r'kDriver = R"SH\((.*?)\)SH"', src, re.S).group(1)
    t.USER = "inmsshbench"  # not the tests' user: a test running meanwhile rewrites its authorized_keys
    T = t.AgentlessSshTest
    T.setUpClass()
    p = None
    try:
        marker = "inm-end-" + secrets.token_hex(8)
        p = subprocess.Popen(["ssh", "-p", str(T.port), "-l", t.USER, "-o", "BatchMode=yes", "-o",
                              f"UserKnownHostsFile={T.known}", "-o", "GlobalKnownHostsFile=/dev/null", "-i",
                              os.path.join(T.tmp, "client"), "-o", "IdentitiesOnly=yes", "127.0.0.1", "--",
                              "sh -c " + shlex.quote(driver) + " inmanta-io " + marker],
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE)

        def op(kind, script, inp=b""):
            script = script.encode()
            p.stdin.write(f"{marker} {script.count(NL)} {len(inp)} {kind}\n".encode() + script + inp)
            p.stdin.flush()
            h = p.stdout.readline().split()
            out, err = p.stdout.read(int(h[2])), p.stdout.read(int(h[3]))
            return int(h[1]), out, err

        d = os.path.join(T.pw.pw_dir, "ops-" + secrets.token_hex(4))
        op("f", f"mkdir -p '{d}'\n")
        cases = [  # name, kind, script for request i, input, expected exit status
            ("noop (f: subshell, output in files)", "f", lambda i: "true\n", b"", 0),
            ("noop (b: no fork)", "b", lambda i: "true\n", b"", 0),
            ("describe missing (b)", "b", lambda i: f"set -- '{d}/f{i}' 1\n_d \"$@\"\n", b"", 0),
            ("create, content inline (b)", "b",
             lambda i: f"set -- '{d}/f{i}' 027 '' '' 1 i 'bench content\n'\n_w \"$@\"\n", b"", 0),
            ("describe file + sha1 (b)", "b", lambda i: f"set -- '{d}/f{i}' 1\n_d \"$@\"\n", b"", 0),
            ("create refused, content on stdin (b)", "b",
             lambda i: f"set -- '{d}/f{i}' 027 '' '' 1 3\n_w \"$@\"\n", b"abc", 1),
            ("write, content on stdin (b)", "b", lambda i: f"set -- '{d}/g{i}' 027 '' '' '' 3\n_w \"$@\"\n",
             b"a\0c", 0),
            ("read (f)", "f", lambda i: f"cat -- '{d}/g{i}'\n", b"", 0),
        ]
        for name, kind, script, inp, expect in cases:
            times = []
            for i in range(args.runs):
                start = time.perf_counter()
                rc, out, err = op(kind, script(i), inp)
                times.append((time.perf_counter() - start) * 1000)
                if rc != expect:
                    raise AssertionError(f"{name}: exit {rc}, expected {expect}: {err!r}")
            print(f"{name:40} median {statistics.median(times):6.1f} ms  min {min(times):6.1f}  "
                  f"max {max(times):6.1f}")
        op("f", f"rm -rf '{d}'\n")
    finally:
        if p:
            p.stdin.close()
            p.wait()
        T.tearDownClass()


if __name__ == "__main__":
    main()
