#!/usr/bin/env python3
"""Differential check of the fast-path parser against the ANTLR parser (test/lang/parser/fast_*.cf).

For every given .cf file (directories are searched recursively), runs `inmanta compile --dump-ast -f FILE`
twice with INM_DUMP_RANGES=1 (full dump: every store, field and source range): once with INM_PARSER=antlr and
once with INM_PARSER=fast-strict, and compares stdout+stderr+exit status. A file ANTLR rejects must give the
identical diagnostics both ways (the fast path gives up and ANTLR reports); a file ANTLR accepts must be
parsed by the fast path to the identical dump. Prints one line per difference and a summary; exit 1 on any.
Usage: fastdiff.py INMANTA_BINARY PATH... [--gen GENMODEL_PY] [--min-fast N] [--jobs N]
  --gen: also generate small bench models (normal and --explicit) with the shared generator and check them.
  --min-fast: fail unless at least N files were accepted by the fast path (guards against a no-op check).
  --jobs: compiler processes run at once (default: the machine's cores).
INM_FASTDIFF_SAMPLE=K (set by test/lit.cfg.py for a sanitizer build, where each process starts ~10x slower)
checks every K-th file only, and --min-fast is divided by K.
"""
import concurrent.futures
import os
import subprocess
import sys
import tempfile


def run(binary, path, mode):
    env = dict(os.environ, INM_PARSER=mode, INM_DUMP_RANGES="1")
    p = subprocess.run([binary, "compile", "--dump-ast", "-f", path], env=env, capture_output=True,
                       cwd=os.path.dirname(os.path.abspath(path)))
    return p.returncode, p.stdout, p.stderr


def main():
    args = sys.argv[1:]
    binary = os.path.abspath(args.pop(0))
    gen = None
    min_fast = 0
    jobs = os.cpu_count() or 1
    paths = []
    while args:
        a = args.pop(0)
        if a == "--gen":
            gen = args.pop(0)
        elif a == "--min-fast":
            min_fast = int(args.pop(0))
        elif a == "--jobs":
            jobs = int(args.pop(0))
        else:
            paths.append(os.path.abspath(a))
    files = []
    for p in paths:
        if os.path.isdir(p):
            for root, dirs, names in os.walk(p):
                dirs.sort()
                files += [os.path.join(root, n) for n in sorted(names) if n.endswith(".cf")]
        else:
            files.append(p)
    tmp = None
    if gen:
        tmp = tempfile.mkdtemp(prefix="fastdiff-")
        for form in ([], ["--explicit"]):
            out = os.path.join(tmp, "explicit" if form else "normal")
            subprocess.run([sys.executable, gen, "--entities", "300", "--out", out] + form, check=True,
                           capture_output=True)
            for root, dirs, names in os.walk(out):
                dirs.sort()
                files += [os.path.join(root, n) for n in sorted(names) if n.endswith(".cf")]
    sample = int(os.environ.get("INM_FASTDIFF_SAMPLE", "1") or "1")
    if sample > 1:
        files = files[::sample]
        min_fast //= sample
        print("fastdiff: sanitizer build, every %d-th file checked" % sample)

    def both(f):
        return run(binary, f, "antlr"), run(binary, f, "fast-strict")

    bad = 0
    fast_ok = 0
    rejected = 0
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        results = list(pool.map(both, files))
    for f, (ref, got) in zip(files, results):
        if ref != got:
            bad += 1
            print("DIFF %s (exit %d vs %d)" % (f, ref[0], got[0]))
            continue
        if b"error" in ref[2].lower() or ref[0] != 0:
            rejected += 1
        else:
            fast_ok += 1
    print("fastdiff: %d files, %d parsed identically by the fast path, %d rejected identically, %d differences"
          % (len(files), fast_ok, rejected, bad))
    if fast_ok < min_fast:
        print("fastdiff: only %d files parsed (expected at least %d)" % (fast_ok, min_fast))
        return 1
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
