#!/usr/bin/env python3
"""Mutation robustness run of the compiler (issue #25, docs/limits.md "Mutated models"): deterministic, seeded
mutations of the lit cases (test/lang/**/*.cf) and of the conformance cases (../shared/conformance/cases/*/main.cf,
read at run time, never stored here) are compiled with `inmanta compile` under a timeout, and each run is
classified: crash (a signal, exit >= 128, a sanitizer report), hang (the timeout), unclear (an error exit whose
message lacks `main.cf:<line>` of the mutated file, speaks C++/internal terms, or is empty), or ok (exit 0, or an
error naming the place). The same seed and sources give the same mutants, so a finding is reproduced with
`--seed S --only N` (N as printed). Exit status 1 if any crash, hang or unclear run.

Usage: test/robust/mutate.py [--build DIR] [--seed N] [--count N] [--budget SECONDS] [--timeout SECONDS]
                             [--conformance DIR] [--only N] [--keep DIR] [--verbose]
"""
import argparse
import glob
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
PROJECT = "name: mutant\nmodulepath: libs\ndownloadpath: libs\n"
KEYWORDS = ["entity", "end", "implementation", "implement", "using", "for", "in", "if", "else", "elif",
            "import", "index", "typedef", "as", "matching", "when", "is", "defined", "and", "or", "not",
            "true", "false", "null", "extends", "dict", "list", "string", "int", "bool", "number", "parents"]
# Words of the implementation that a user's error message must not show.
INTERNAL = re.compile(r"std::(vector|string|map|unordered|bad_|out_of_range|runtime_error|logic_error|"
                      r"invalid_argument|length_error|__|basic_|optional|variant)|llvm::|inm::[a-z]+::|"
                      r"nlohmann|terminate called|what\(\)|Assertion `|"
                      r"nullptr|bad_alloc|bad_variant|out_of_range|vector::|basic_string|Traceback \(most|"
                      r"[Ii]nternal error|UNREACHABLE")
CRASH = re.compile(r"AddressSanitizer|UndefinedBehaviorSanitizer|LeakSanitizer|runtime error:|"
                   r"stack-overflow|Segmentation fault|core dumped")


def sources(conformance):
    """(label, text, case dir or None) for every source, in a stable order."""
    out = []
    for path in sorted(glob.glob(os.path.join(ROOT, "test", "lang", "**", "*.cf"), recursive=True)):
        if "/Inputs/" in path:
            continue
        with open(path, "rb") as f:
            out.append((os.path.relpath(path, ROOT), f.read(), None))
    if conformance and os.path.isdir(conformance):
        for case in sorted(os.listdir(conformance)):
            main = os.path.join(conformance, case, "main.cf")
            if os.path.isfile(main):
                with open(main, "rb") as f:
                    out.append(("conformance/" + case, f.read(), os.path.join(conformance, case)))
    return out


def strip_lit(text):
    """The model without lit's RUN/CHECK comment lines (they are comments, but keep mutants on code)."""
    return b"\n".join(l for l in text.split(b"\n") if not re.match(rb"\s*#\s*(RUN|CHECK|REQUIRES|XFAIL)", l))


def tokens(text):
    return [m.span() for m in re.finditer(rb"[A-Za-z_][A-Za-z0-9_:]*|\d+(\.\d+)?|\"[^\"\n]*\"|\S", text)]


def mutate(rng, text):
    """(operator name, mutated bytes)."""
    lines = text.split(b"\n") or [b""]
    toks = tokens(text)
    op = rng.choice(["del_line", "dup_line", "del_token", "dup_token", "truncate", "swap_keyword",
                     "quote", "bracket", "indent", "stray_byte", "nul", "bad_utf8", "huge_number",
                     "deep_nesting", "long_identifier", "swap_lines"])
    i = rng.randrange(len(lines))
    if op == "del_line":
        del lines[i]
    elif op == "dup_line":
        lines.insert(i, lines[i])
    elif op == "swap_lines" and len(lines) > 1:
        j = rng.randrange(len(lines))
        lines[i], lines[j] = lines[j], lines[i]
    elif op in ("del_token", "dup_token", "swap_keyword", "huge_number", "long_identifier") and toks:
        a, b = toks[rng.randrange(len(toks))]
        if op == "del_token":
            return op, text[:a] + text[b:]
        if op == "dup_token":
            return op, text[:b] + b" " + text[a:b] + text[b:]
        if op == "swap_keyword":
            return op, text[:a] + rng.choice(KEYWORDS).encode() + text[b:]
        if op == "huge_number":
            big = rng.choice([b"9" * 40, b"-" + b"9" * 30, b"1e999", b"0x" + b"f" * 30, b"1" * 19 + b".5e308"])
            return op, text[:a] + big + text[b:]
        return op, text[:a] + b"x" * rng.choice([300, 5000, 70000]) + text[b:]
    elif op == "truncate":
        return op, text[:rng.randrange(len(text) + 1)]
    elif op in ("quote", "bracket", "stray_byte", "nul", "bad_utf8"):
        pos = rng.randrange(len(text) + 1)
        ins = {"quote": rng.choice([b'"', b"'", b'"""', b"r'", b"f\""]),
               "bracket": rng.choice([b"(", b")", b"[", b"]", b"{", b"}", b"[[[", b")))"]),
               "stray_byte": bytes([rng.choice([1, 7, 27, 127, 0x85, 0xa0])]),
               "nul": b"\0",
               "bad_utf8": rng.choice([b"\xff", b"\xc3", b"\xe2\x82", b"\xed\xa0\x80", b"\xf8\x88\x80\x80\x80"])}[op]
        return op, text[:pos] + ins + text[pos:]
    elif op == "indent":
        lines[i] = rng.choice([b"    ", b"\t", b"", b"  \t "]) + lines[i].lstrip()
    elif op == "deep_nesting":
        n = rng.choice([200, 3000, 20000])
        kind = rng.choice(["paren", "list", "if", "not"])
        if kind == "paren":
            lines.insert(i, b"deep = " + b"(" * n + b"1" + b")" * n)
        elif kind == "list":
            lines.insert(i, b"deep = " + b"[" * n + b"]" * n)
        elif kind == "not":
            lines.insert(i, b"deep = " + b"not " * n + b"true")
        else:
            lines.insert(i, b"".join(b"if true:\n" for _ in range(min(n, 3000))) + b"x = 1\n" +
                         b"end\n" * min(n, 3000))
    return op, b"\n".join(lines)


def classify(rc, out, timed_out):
    if timed_out:
        return "hang"
    if rc < 0 or rc >= 128 or CRASH.search(out):
        return "crash"
    if rc == 0:
        return "ok"
    if not out.strip() or INTERNAL.search(out):
        return "unclear"
    if not re.search(r"main\.cf:\d+", out):
        return "unclear"
    return "ok"


def run_one(compiler, label, text, case_dir, timeout, keep):
    work = tempfile.mkdtemp(prefix="inm-mutant-")
    try:
        if case_dir:
            for name in os.listdir(case_dir):
                src = os.path.join(case_dir, name)
                if name in ("main.cf", "expected.json"):
                    continue
                (shutil.copytree if os.path.isdir(src) else shutil.copy)(src, os.path.join(work, name))
        if not os.path.exists(os.path.join(work, "project.yml")):
            with open(os.path.join(work, "project.yml"), "w") as f:
                f.write(PROJECT)
        with open(os.path.join(work, "main.cf"), "wb") as f:
            f.write(text)
        proc = subprocess.Popen([compiler, "compile"], cwd=work, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                stderr=subprocess.STDOUT, start_new_session=True)
        try:
            out, _ = proc.communicate(timeout=timeout)
            timed_out = False
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, 9)
            out, _ = proc.communicate()
            timed_out = True
        out = out.decode("utf-8", "replace")
        verdict = classify(proc.returncode, out, timed_out)
        if keep and verdict != "ok":
            dest = os.path.join(keep, os.path.basename(work))
            shutil.copytree(work, dest)
            out += "\n(kept in %s)" % dest
        return verdict, proc.returncode, out
    finally:
        shutil.rmtree(work, ignore_errors=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--seed", type=int, default=25)
    ap.add_argument("--count", type=int, default=100000, help="at most this many mutants")
    ap.add_argument("--budget", type=float, default=55.0, help="stop starting mutants after this many seconds")
    ap.add_argument("--timeout", type=float, default=10.0, help="per compile")
    ap.add_argument("--conformance", default=os.path.join(os.path.dirname(ROOT), "shared", "conformance", "cases"))
    ap.add_argument("--only", type=int, help="run mutant number N only (as printed)")
    ap.add_argument("--keep", help="copy every non-ok mutant's project here")
    ap.add_argument("--verbose", action="store_true")
    args = ap.parse_args()
    if not os.path.isdir(args.conformance) and os.path.isdir("/work/shared/conformance/cases"):
        args.conformance = "/work/shared/conformance/cases"
    compiler = os.path.join(os.path.abspath(args.build), "bin", "inmanta")  # the cases compile in their own dirs
    if not os.access(compiler, os.X_OK):
        print("mutate: no compiler at %s (build it first)" % compiler, file=sys.stderr)
        return 1
    srcs = sources(args.conformance)
    if not srcs:
        print("mutate: no source models found", file=sys.stderr)
        return 1
    if args.keep:
        os.makedirs(args.keep, exist_ok=True)
    rng = random.Random(args.seed)
    counts = {"ok": 0, "crash": 0, "hang": 0, "unclear": 0}
    ops = {}
    started = time.time()
    for n in range(args.count):
        if args.only is None and time.time() - started > args.budget:
            break
        label, text, case_dir = srcs[rng.randrange(len(srcs))]
        op, mutant = mutate(rng, strip_lit(text))
        if args.only is not None and n != args.only:
            if n > args.only:
                break
            continue
        verdict, rc, out = run_one(compiler, label, mutant, case_dir, args.timeout, args.keep)
        counts[verdict] += 1
        ops.setdefault(op, {}).setdefault(verdict, 0)
        ops[op][verdict] += 1
        if verdict != "ok" or args.verbose:
            tail = "\n    ".join(out.strip().splitlines()[-6:])
            print("%s: #%d %s (%s) exit %s\n    %s" % (verdict.upper(), n, label, op, rc, tail))
    total = sum(counts.values())
    print("mutate: seed %d, %d mutants in %.0f s: %d ok, %d crash, %d hang, %d unclear"
          % (args.seed, total, time.time() - started, counts["ok"], counts["crash"], counts["hang"],
             counts["unclear"]))
    if args.verbose:
        for op in sorted(ops):
            print("  %-16s %s" % (op, ops[op]))
    return 1 if counts["crash"] or counts["hang"] or counts["unclear"] else 0


if __name__ == "__main__":
    sys.exit(main())
