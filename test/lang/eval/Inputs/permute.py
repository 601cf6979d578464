#!/usr/bin/env python3
"""Permutation test for the evaluator (issue #6): compiles permutations of one model's top-level statements,
also split over module files in different orders, and checks that the evaluated models are identical.

Usage: permute.py INMANTA MODEL.cf.in WORKDIR [--count N] [--seed S]

MODEL.cf.in is a list of top-level statements, each introduced by a marker line `#@ decl` (a declaration:
entity, relation, index, implementation, implement) or `#@ use GROUP` (a statement; statements of one group
share variables and are kept in one file). `{P}` in use statements stands for the namespace prefix of the
declarations. Variant i (fixed seed) is either one main.cf with all statements shuffled, or a project where the
shuffled declarations form module `perm`, each use group is placed (shuffled) in main.cf or in module
`permuse`, and the imports are shuffled. Every variant is compiled with `--dump-model`; the dump is normalised
(file locations dropped, the model's namespace renamed, instances keyed by type and `name` instead of creation
number, instances sorted) and all normalised dumps must be byte-identical and non-empty. Prints one line per
variant and `ALL <N> PERMUTATIONS IDENTICAL` on success; exits 1 otherwise.
"""
import argparse
import os
import random
import re
import shutil
import subprocess
import sys


def parse_blocks(path):
    blocks, cur = [], None
    for line in open(path, encoding="utf-8").read().split("\n"):
        m = re.match(r"^#@ (decl|use)\s*(\S*)\s*$", line)
        if m:
            cur = {"kind": m.group(1), "group": m.group(2) or None, "lines": []}
            blocks.append(cur)
        elif cur is not None and line.strip():
            cur["lines"].append(line)
    return blocks


def text(blocks, prefix):
    return "".join("\n".join(b["lines"]).replace("{P}", prefix) + "\n" for b in blocks)


def write(path, content):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        f.write(content)


def make_variant(blocks, rng, split, d):
    if os.path.exists(d):
        shutil.rmtree(d)
    os.makedirs(d)
    write(os.path.join(d, "project.yml"), "name: permute\nmodulepath: libs\ndownloadpath: libs\n")
    if not split:
        allb = list(blocks)
        rng.shuffle(allb)
        write(os.path.join(d, "main.cf"), text(allb, ""))
        return "single file"
    decls = [b for b in blocks if b["kind"] == "decl"]
    rng.shuffle(decls)
    groups = sorted({b["group"] for b in blocks if b["kind"] == "use"})
    main, other = [], []
    where = {}
    for g in groups:
        where[g] = rng.choice(["main", "permuse"])
    for b in blocks:
        if b["kind"] == "use":
            (main if where[b["group"]] == "main" else other).append(b)
    rng.shuffle(main)
    rng.shuffle(other)
    for mod in ("perm", "permuse"):
        write(os.path.join(d, "libs", mod, "module.yml"), "name: %s\nversion: 1.0.0\n" % mod)
    write(os.path.join(d, "libs", "perm", "model", "_init.cf"), text(decls, ""))
    # The using module imports perm at a random place among its statements (imports come first in a file,
    # so only the import order of main.cf varies).
    write(os.path.join(d, "libs", "permuse", "model", "_init.cf"), "import perm\n" + text(other, "perm::"))
    imports = ["import perm", "import permuse"]
    rng.shuffle(imports)
    write(os.path.join(d, "main.cf"), "\n".join(imports) + "\n" + text(main, "perm::"))
    return "split: main=%s permuse=%s imports=%s" % (
        ",".join(g for g in groups if where[g] == "main") or "-",
        ",".join(g for g in groups if where[g] == "permuse") or "-",
        "/".join(i.split()[1] for i in imports))


def normalise(dump):
    """Instances keyed by type and name; references rewritten to keys; sorted; locations dropped."""
    dump = re.sub(r"\b(__config__|perm)::", "M::", dump)
    insts, order, cur = {}, [], None
    for line in dump.split("\n"):
        m = re.match(r"^instance (\d+) (\S+) at \S+$", line)
        if m:
            cur = m.group(1)
            insts[cur] = {"type": m.group(2), "attrs": []}
            order.append(cur)
        elif line.startswith("  ") and cur is not None:
            insts[cur]["attrs"].append(line)
        elif line.strip():
            return None  # unexpected line: fail loudly
    def key(i):
        name = next((a.split(" = ", 1)[1] for a in insts[i]["attrs"] if a.startswith("  name = ")), "?")
        return "<%s %s>" % (insts[i]["type"], name)
    keys = {i: key(i) for i in order}
    if len(set(keys.values())) != len(keys):
        return None  # instances must be distinguishable by type and name
    out = []
    for i in sorted(order, key=lambda i: keys[i]):
        out.append("instance " + keys[i])
        for a in insts[i]["attrs"]:
            a = re.sub(r"#(\d+)( \S+::\S+)?", lambda m: keys.get(m.group(1), "#?"), a)
            # relation lists: order of a relation's values is not part of the model
            m = re.match(r"^(  \S+ = )\[(.*)\]$", a)
            if m and m.group(2).startswith("<"):
                a = m.group(1) + "[" + ", ".join(sorted(m.group(2).split(", "))) + "]"
            out.append(a)
    return "\n".join(out) + "\n"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("inmanta")
    ap.add_argument("model")
    ap.add_argument("workdir")
    ap.add_argument("--count", type=int, default=24)
    ap.add_argument("--seed", type=int, default=20261123)
    args = ap.parse_args()
    blocks = parse_blocks(args.model)
    rng = random.Random(args.seed)
    reference, ok = None, True
    for i in range(args.count):
        d = os.path.join(args.workdir, "v%02d" % i)
        desc = make_variant(blocks, rng, split=(i % 2 == 1), d=d)
        p = subprocess.run([args.inmanta, "compile", "--dump-model"], cwd=d, capture_output=True, text=True)
        if p.returncode != 0:
            print("variant %d (%s): compile failed (exit %d)\n%s" % (i, desc, p.returncode, p.stderr))
            ok = False
            continue
        norm = normalise(p.stdout)
        if not norm or "instance <M::" not in norm:
            print("variant %d (%s): empty or unparsable dump" % (i, desc))
            ok = False
            continue
        if reference is None:
            reference = norm
            write(os.path.join(args.workdir, "reference.txt"), norm)
        if norm != reference:
            write(os.path.join(d, "normalised.txt"), norm)
            print("variant %d (%s): DIFFERENT dump (see %s/normalised.txt vs reference.txt)" % (i, desc, d))
            ok = False
        else:
            print("variant %d (%s): identical" % (i, desc))
    if ok and reference:
        print("ALL %d PERMUTATIONS IDENTICAL" % args.count)
        sys.stdout.write(reference)
        return 0
    return 1


if __name__ == "__main__":
    sys.exit(main())
