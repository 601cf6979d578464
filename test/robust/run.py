#!/usr/bin/env python3
"""Robustness suite for generated big inputs (issue #15, docs/limits.md): each case writes a project under a
temporary folder, runs `inmanta compile|export` with an 8 MiB stack and INM_REEXEC_DONE=1 (so the driver's
1 GiB-stack re-exec is NOT there to help: the limits and the stack guard must hold on their own), and checks
the exit status, the expected message, the wall time and the peak memory (ru_maxrss of the child) against the
case's bounds.

Usage: test/robust/run.py [--build DIR] [--asan] [-k SUBSTRING]
--asan: the build is ASan+UBSan (a 64 MiB stack for its larger frames, time bounds x8, memory bounds x6, the
out-of-memory case skipped: the heap limit is not applied under ASan). Exit status 1 if any case fails. Prints one line per case and a summary.
"""
import argparse
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time

# Special entries of a case's files (see write()).
FIFO = ("fifo",)
LINK = "link"
SPARSE = "sparse"
PROJECT = "name: robust\nmodulepath: libs\ndownloadpath: libs\n"


def chain_if(n):
    return "".join("  " * i + "if true:\n" for i in range(n)) + "  " * n + "x = 1\n" + \
        "".join("  " * i + "end\n" for i in reversed(range(n)))


def module(files):
    files = dict(files)
    files.setdefault("libs/m/module.yml", "name: m\nversion: 0.1.0\n")
    files.setdefault("libs/m/model/_init.cf", "x = 1\n")
    return files


# name: (files, args, expected exit, expected text in stderr+stdout, max seconds, max MiB)
CASES = [
    # Just within the limit: parsed, lowered and evaluated on an 8 MiB stack (ASan frames included).
    ("within-limit-ok", {"main.cf": "x = " + "(1 + " * 490 + "1" + ")" * 490 + "\nstd::print(x)\n" +
                         "y = 1" + " + 1" * 490 + "\nstd::print(y)\n" + "z = " + "[" * 490 + "7" + "]" * 490 +
                         "\nstd::print(z)\n" + "w = " + "not " * 490 + "true\nstd::print(w)\n" + chain_if(240)},
     [], 0, "491", 10, 300),
    ("parens-100k", {"main.cf": "x = " + "(" * 100000 + "1" + ")" * 100000 + "\n"}, [], 1,
     "nested too deep", 5, 300),
    ("plus-chain-1M", {"main.cf": "x = 1" + " + 1" * 1000000 + "\n"}, [], 1, "nested too deep", 15, 1200),
    ("not-chain-200k", {"main.cf": "x = " + "not " * 200000 + "true\n"}, [], 1, "nested too deep", 5, 300),
    ("list-brackets-100k", {"main.cf": "x = " + "[" * 100000 + "]" * 100000 + "\n"}, [], 1, "nested too deep", 5, 300),
    ("if-blocks-1500", {"main.cf": chain_if(1500)}, [], 1, "nested too deep", 5, 300),
    ("elif-chain-50k", {"main.cf": "if false:\n  x = 0\n" + "".join(f"elif false:\n  x = {i}\n" for i in range(50000)) +
                        "else:\n  x = -1\nend\n"}, [], 1, "nested too deep", 10, 600),
    ("cond-chain-100k", {"main.cf": "x = " + "true ? 1 : " * 100000 + "2\n"}, [], 1, "nested too deep", 5, 300),
    ("syntax-error-then-deep", {"main.cf": "x = = 1\ny = " + "(" * 100000 + "1" + ")" * 100000 + "\n"}, [], 1,
     "error:", 10, 600),
    ("antlr-prediction-deep", {"main.cf": "typedef t as string matching /(x)\\1/\ny = " + "[" * 20000 + "]" * 20000 + "\n"},
     [], 1, "nested too deep", 3, 300),
    ("antlr-deep", {"main.cf": "x = " + "(" * 100000 + "1" + ")" * 100000 + "\n"}, ["env:INM_PARSER=antlr"], 1,
     "nested too deep", 20, 900),
    ("inheritance-20k", {"main.cf": "entity E0:\nend\n" + "".join(f"entity E{i} extends E{i-1}:\nend\n" for i in range(1, 20000))},
     [], 1, "inheritance chain", 10, 600),
    ("instances-selfreplicating", {"main.cf": "entity C:\n  int n\nend\nimplementation g for C:\n  C(n=self.n + 1)\nend\n"
                                   "implement C using g\nC(n=0)\n"}, ["--max-instances=200000"], 1,
     "instance limit reached", 60, 1500),
    ("value-nesting-via-instances", {"main.cf": "entity S:\n  int n\n  dict d\nend\nimplementation nx for S:\n"
                                     "  S(n=self.n + 1, d={\"i\": self.d})\nend\nimplement S using nx when self.n < 100000\n"
                                     "implement S using std::none\nS(n=0, d={})\n"}, [], 1, "nested too deep", 20, 600),
    ("string-doubling", {"main.cf": "a0 = \"xxxxxxxxxxxxxxxx\"\n" + "".join(f"a{i} = a{i-1} + a{i-1}\n" for i in range(1, 60))},
     [], 1, "--max-string-bytes", 10, 900),
    ("format-width", {"main.cf": "x = 1\ny = f\"{x:>999999999999999999999999}\"\n"}, [], 1, "--max-format-width", 2, 200),
    ("sequence-huge", {"main.cf": "x = std::sequence(1000000000000)\n"}, [], 1, "--max-list-items", 2, 200),
    ("sequence-big-ok", {"main.cf": "x = std::sequence(1000000)\nstd::print(std::len(x))\n"}, [], 0, "1000000", 10, 500),
    ("power-huge", {"main.cf": "x = 3 ** 999999999999999999\n"}, [], 1, "--max-int-digits", 2, 200),
    ("int-doubling", {"main.cf": "a0 = 2 ** 1000\n" + "".join(f"a{i} = a{i-1} * a{i-1}\n" for i in range(1, 40))},
     [], 1, "--max-int-digits", 10, 400),
    ("regex-backtracking", {"main.cf": "typedef t as string matching /(a|aa)*b/\nentity E:\n  t v\nend\n"
                            "implement E using std::none\nE(v=\"" + "a" * 200000 + "!\")\n"}, [], 1,
     "does not match constraint", 5, 300),
    ("yaml-deep", {"main.cf": "x = 1\n", "project.yml": "name: " + "[" * 200000 + "]" * 200000 + "\n"}, [], 1,
     "nested too deep", 5, 300),
    ("yaml-deep-module", module({"main.cf": "import m\n", "libs/m/module.yml": "name: " + "{a: " * 100000 + "1" + "}" * 100000 + "\n"}),
     [], 1, "nested too deep", 5, 300),
    ("template-chain", module({"main.cf": "import m\nstd::print(std::template(\"m/t.j2\"))\n",
                               "libs/m/templates/t.j2": "{{ 1" + " + 1" * 300000 + " }}"}), [], 1, "nested too deep", 10, 800),
    ("template-nested-loops", module({"main.cf": "import m\nstd::print(std::template(\"m/t.j2\"))\n",
                                      "libs/m/templates/t.j2": "{% for i in range(5000) %}{% for j in range(5000) %}x{% endfor %}{% endfor %}"}),
     [], 1, "--max-template-steps", 20, 600),
    ("template-deep-blocks", module({"main.cf": "import m\nstd::print(std::template(\"m/t.j2\"))\n",
                                     "libs/m/templates/t.j2": "{% if true %}" * 100000 + "x" + "{% endif %}" * 100000}),
     [], 1, "nested too deep", 10, 600),
    ("file-outside", module({"main.cf": "import m\nstd::print(std::file(\"m/../../../../../../etc/passwd\"))\n",
                             "libs/m/files/a.txt": "a"}), [], 1, "leaves its folder", 2, 200),
    ("big-valid-model", {"main.cf": "entity H:\n  string name\n  int n\nend\nindex H(name)\nimplement H using std::none\n"
                         "for i in std::sequence(100000):\n  H(name=f\"h{i}\", n=i * 3)\nend\n"
                         "h = H[name=\"h99999\"]\nstd::print(h.n)\n"}, [], 0, "299997", 30, 900),
    ("out-of-memory", {"main.cf": "".join(f"l{i} = std::sequence(9000000)\n" for i in range(40))},
     ["--max-memory-mib=300"], 1, "out of memory", 20, 400),
    ("sigpipe", {"main.cf": "for i in std::sequence(200000):\n  std::print(\"line {{i}}\")\nend\n"}, ["pipe"], 1,
     "cannot write to standard output", 20, 600),
    ("closed-stderr", {"main.cf": "x = 1 + \"a\"\n"}, ["closed-stderr"], 1, "", 5, 200),
    # `export -j` past the exporter's thread thresholds as an unprivileged user allowed no second thread
    # (RLIMIT_NPROC 1): every step runs on the one thread instead of aborting on std::system_error. Root only.
    ("export-no-thread", {"main.cf": "import std::testing\nfor i in std::sequence(6000):\n"
                          "  std::testing::NullResource(name=f\"r{i}\", agentname=\"a\")\nend\n"},
     ["export", "no-thread"], 0, "exported 6000 resources (0 undefined, 0 files, 1 agents)", 10, 400),
    # Source files that are not files (issue #25): refused before any byte is read, naming the file; a FIFO
    # without a writer must not hang the open. FIFO/LINK/SPARSE entries are made by write().
    ("main-fifo", {"main.cf": FIFO}, [], 1, "main.cf: it is a FIFO (named pipe), not a regular file", 3, 200),
    ("import-fifo", module({"main.cf": "import m::x\n", "libs/m/model/x.cf": FIFO}), [], 1,
     "x.cf: it is a FIFO (named pipe), not a regular file", 3, 200),
    ("main-dev-zero", {"main.cf": (LINK, "/dev/zero")}, [], 1, "main.cf: it is a character device", 3, 200),
    ("import-dev-zero", module({"main.cf": "import m\n", "libs/m/model/_init.cf": (LINK, "/dev/zero")}), [], 1,
     "_init.cf: it is a character device", 3, 200),
    ("main-200mb", {"main.cf": (SPARSE, 200 << 20)}, [], 1,
     "main.cf: it has 209715200 bytes, more than the source-size limit of 67108864 bytes", 3, 200),
    ("import-over-limit", module({"main.cf": "import m\n", "libs/m/model/_init.cf": "x = 1\n" * 2000}),
     ["--max-source-bytes=10000"], 1, "_init.cf: it has 12000 bytes, more than the source-size limit", 3, 200),
    # Many statements, each with an error: the first one stops the compile, in time linear in the statements
    # (collecting the declared names was quadratic: 100k took 9 s, 1M did not finish in 120 s; now 2.7 s / 16 s).
    ("errors-300k", {"main.cf": "".join(f"x{i} = 1 + \"a\"\n" for i in range(300000))}, [], 1,
     "Unsupported operand type(s) for plus", 30, 900),
    # An import path of 20,000 names: one error for the first missing namespace (prefixes were loaded
    # recursively, cubic: 3,000 names took 37 s, each prefix reported).
    ("import-path-20k", {"main.cf": "import std::" + "::".join(["abcdefgh"] * 20000) + "\n"}, [], 1,
     "could not locate module with name: std::abcdefgh [", 5, 300),
]


def write(root, files):
    for rel, text in files.items():
        p = os.path.join(root, rel)
        os.makedirs(os.path.dirname(p), exist_ok=True)
        if text == FIFO:
            os.mkfifo(p)
        elif isinstance(text, tuple) and text[0] == LINK:
            os.symlink(text[1], p)
        elif isinstance(text, tuple) and text[0] == SPARSE:
            with open(p, "w") as f:
                f.truncate(text[1])  # a hole: no disk used; the size alone must refuse it
        else:
            with open(p, "w") as f:
                f.write(text)
    if "project.yml" not in files:
        with open(os.path.join(root, "project.yml"), "w") as f:
            f.write(PROJECT)


def run_case(binary, name, files, args, want_rc, want_text, max_s, max_mib, asan):
    root = tempfile.mkdtemp(prefix=f"robust-{name}-")
    try:
        write(root, files)
        env = dict(os.environ, INM_REEXEC_DONE="1", ASAN_OPTIONS="detect_leaks=0",
                   UBSAN_OPTIONS="print_stacktrace=1")
        flags = [a for a in args if a.startswith("--")]
        for a in args:
            if a.startswith("env:"):
                k, v = a[4:].split("=", 1)
                env[k] = v
        cmd = [binary, "compile"] + flags
        if "export" in args:
            cmd = [binary, "export", "-j", "out.json"] + flags
        as_user = {}
        if "no-thread" in args:  # as nobody, so that RLIMIT_NPROC applies (root is exempt from it)
            os.chmod(root, 0o777)
            as_user = dict(user=65534, group=65534, extra_groups=[])
            # The checkout may sit in a folder nobody cannot enter (a clean clone in a mktemp -d folder is
            # 0700): run a copy of the binary, with std where an installed binary finds it (../share/...).
            std = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))),
                               "modules", "std")
            shutil.copytree(std, os.path.join(root, "share", "inmanta", "modules", "std"))
            os.makedirs(os.path.join(root, "bin"))
            shutil.copy2(binary, os.path.join(root, "bin", "inmanta"))
            cmd[0] = os.path.join(root, "bin", "inmanta")
            for dirpath, dirnames, filenames in os.walk(root):
                for d in dirnames:
                    os.chmod(os.path.join(dirpath, d), 0o755)
                for f in filenames:
                    os.chmod(os.path.join(dirpath, f), 0o755 if dirpath.endswith("bin") else 0o644)

        stack = (64 if asan else 8) << 20  # ASan frames are several times larger

        def limits():
            resource.setrlimit(resource.RLIMIT_STACK, (stack, stack))
            resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
            if "no-thread" in args:
                resource.setrlimit(resource.RLIMIT_NPROC, (1, 1))
        t0 = time.time()
        outf = open(os.path.join(root, ".stdout"), "w+b")
        errf = open(os.path.join(root, ".stderr"), "w+b")
        if "pipe" in args:
            # The reader closes the pipe after one byte: the compiler's later writes fail with EPIPE.
            p = subprocess.Popen(cmd, cwd=root, env=env, stdout=subprocess.PIPE, stderr=errf,
                                 stdin=subprocess.DEVNULL, preexec_fn=limits)
            p.stdout.read(1)
            p.stdout.close()
        else:
            if "closed-stderr" in args:
                cmd = ["sh", "-c", '"$0" "$@" 2>&-'] + cmd
            p = subprocess.Popen(cmd, cwd=root, env=env, stdout=outf, stderr=errf, stdin=subprocess.DEVNULL,
                                 preexec_fn=limits, **as_user)
        # wait4 gives this child's own peak RSS; poll so that a hang is killed at 3x the bound.
        deadline = t0 + max_s * 3 + 10
        while True:
            pid, status, ru = os.wait4(p.pid, os.WNOHANG)
            if pid:
                break
            if time.time() > deadline:
                p.kill()
                os.wait4(p.pid, 0)
                return False, f"TIMEOUT after {max_s * 3 + 10} s"
            time.sleep(0.01)
        p.returncode = os.waitstatus_to_exitcode(status)
        dt = time.time() - t0
        rc = p.returncode
        mib = ru.ru_maxrss / 1024
        outf.seek(0)
        errf.seek(0)
        out, err = outf.read(), errf.read()
        text = (out or b"").decode("utf-8", "replace") + (err or b"").decode("utf-8", "replace")
        problems = []
        if rc != want_rc:
            problems.append(f"exit {rc}, expected {want_rc}")
        if want_text and want_text not in text:
            problems.append(f"no '{want_text}' in output")
        if "AddressSanitizer" in text or "runtime error:" in text:
            problems.append("sanitizer report")
        if dt > max_s:
            problems.append(f"{dt:.1f} s > {max_s} s")
        if mib > max_mib:
            problems.append(f"{mib:.0f} MiB > {max_mib} MiB")
        detail = f"exit {rc}, {dt:.2f} s, {mib:.0f} MiB"
        if problems:
            tail = "\n    ".join(text.strip().splitlines()[-4:])[:800]
            return False, detail + ": " + "; ".join(problems) + ("\n    " + tail if tail else "")
        return True, detail
    finally:
        shutil.rmtree(root, ignore_errors=True)


def main():
    ap = argparse.ArgumentParser()
    here = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    ap.add_argument("--build", default=os.path.join(here, "build"))
    ap.add_argument("--asan", action="store_true")
    ap.add_argument("-k", default="")
    args = ap.parse_args()
    binary = os.path.join(os.path.abspath(args.build), "bin", "inmanta")
    failed = 0
    ran = 0
    for name, files, cargs, rc, text, max_s, max_mib in CASES:
        if args.k not in name:
            continue
        if "no-thread" in cargs and os.geteuid() != 0:
            print(f"SKIP: {name}: needs root (to run it as another user)", flush=True)
            continue
        if args.asan:
            if name == "out-of-memory":
                continue
            max_s, max_mib = max_s * 8, max_mib * 6
        ok, detail = run_case(binary, name, files, cargs, rc, text, max_s, max_mib, args.asan)
        ran += 1
        failed += not ok
        print(f"{'PASS' if ok else 'FAIL'}: {name}: {detail}", flush=True)
    print(f"robust: {ran - failed}/{ran} passed ({'asan' if args.asan else 'normal'} build {args.build})")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
