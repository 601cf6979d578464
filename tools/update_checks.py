#!/usr/bin/env python3
"""Rewrites the CHECK block of lit golden tests from the compiler's real output.

Usage: tools/update_checks.py [--build DIR] [--prefix CHECK] FILE.cf...

For each file, the first `# RUN:` line (with continuation lines ending in `\\`) is expanded with the same
substitutions as test/lit.cfg.py (%inmanta, %s, %S, %t, %std, FileCheck, not), the part before
`| FileCheck` is run through bash from the test's directory, and every existing `# CHECK...:` line is
replaced by one `# CHECK:` line per non-empty output line (or `# CHECK-NEXT:` after the first), appended at
the end of the file. Absolute paths of the test directory and of the checkout are rewritten to `{{.*}}` so goldens do not
depend on the checkout. Review the diff: this records what the compiler does, not what it should do.
"""
import argparse
import os
import re
import subprocess
import sys

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LLVM_BIN = "/usr/lib/llvm-14/bin"


def run_line(path):
    lines = open(path, encoding="utf-8").read().split("\n")
    cmd = []
    for line in lines:
        m = re.match(r"^\s*(#|//)\s*RUN:\s?(.*)$", line)
        if m:
            cmd.append(m.group(2))
            if not m.group(2).rstrip().endswith("\\"):
                break
        elif cmd:
            break
    if not cmd:
        return None
    return " ".join(c.rstrip().rstrip("\\") for c in cmd)


def expand(cmd, path, build):
    d = os.path.dirname(os.path.abspath(path))
    subs = [
        ("%inmanta", os.path.join(build, "bin", "inmanta")),
        ("%std", os.path.join(REPO, "modules", "std")),
        ("%repo", REPO),
        ("%s", os.path.abspath(path)),
        ("%S", d),
        ("%t", os.path.join(build, "test-lit", "update_checks.tmp")),
        ("%%", "%"),
    ]
    for a, b in subs:
        cmd = cmd.replace(a, b)
    cmd = re.sub(r"(^|\|\s*|&&\s*|;\s*)not\b", r"\1" + os.path.join(LLVM_BIN, "not"), cmd)
    return cmd


def update(path, build, prefix):
    cmd = run_line(path)
    if cmd is None:
        print(f"{path}: no RUN line, skipped", file=sys.stderr)
        return False
    pipe = re.split(r"\|\s*FileCheck\b", cmd, maxsplit=1)
    if len(pipe) != 2:
        print(f"{path}: RUN line does not pipe into FileCheck, skipped", file=sys.stderr)
        return False
    producer = expand(pipe[0], path, build)
    os.makedirs(os.path.join(build, "test-lit"), exist_ok=True)
    proc = subprocess.run(["bash", "-c", producer], cwd=os.path.dirname(os.path.abspath(path)),
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    out = proc.stdout
    d = os.path.dirname(os.path.abspath(path))
    checks = []
    for line in out.split("\n"):
        if not line.strip():
            continue
        text = line.rstrip()
        # FileCheck treats {{ and [[ specially: escape them, then abstract the test directory.
        text = text.replace("{{", "{{\\{\\{}}").replace("[[", "{{\\[\\[}}")
        for prefix_dir in (d, REPO):  # the test's directory first (longest), then the checkout
            text = text.replace(prefix_dir + "/", "{{.*}}").replace(prefix_dir, "{{.*}}")
        kw = prefix if not checks else prefix + "-NEXT"
        checks.append(f"# {kw}: {text}")
    if not checks:
        checks.append(f"# {prefix}-NOT: {{{{.}}}}")
    src = open(path, encoding="utf-8").read().split("\n")
    check_re = re.compile(r"^\s*#\s*" + re.escape(prefix) + r"(-NEXT|-SAME|-NOT|-DAG|-LABEL|-EMPTY)?:")
    kept = [l for l in src if not check_re.match(l)]
    while kept and kept[-1] == "":
        kept.pop()
    new = "\n".join(kept + checks) + "\n"
    if new != "\n".join(src):
        open(path, "w", encoding="utf-8").write(new)
        print(f"{path}: {len(checks)} check lines (exit {proc.returncode})")
    return True


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", default=os.path.join(REPO, "build"), help="build directory (default build/)")
    ap.add_argument("--prefix", default="CHECK", help="check prefix to rewrite (default CHECK)")
    ap.add_argument("files", nargs="+")
    args = ap.parse_args()
    ok = all([update(f, os.path.abspath(args.build), args.prefix) for f in args.files])
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
