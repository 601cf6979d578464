#!/usr/bin/env python3
"""Generates a project with N entity declarations (default 100000) for the declaration-pass benchmark.

Each entity has three attributes (one with a default), every tenth extends the previous one, every
entity has an index and an `implement ... using std::none`, and every other entity has a relation to
its predecessor. Output: <dir>/project.yml and <dir>/main.cf. No statements are executed beyond one
constructor, so `inmanta compile --dump-ir` measures lowering + static passes.
"""
import os
import sys

n = int(sys.argv[2]) if len(sys.argv) > 2 else 100000
out = sys.argv[1] if len(sys.argv) > 1 else "/tmp/decl-bench"
os.makedirs(out, exist_ok=True)
with open(os.path.join(out, "project.yml"), "w") as f:
    f.write("name: declbench\nmodulepath: libs\ndownloadpath: libs\n")
with open(os.path.join(out, "main.cf"), "w") as f:
    w = f.write
    for i in range(n):
        parent = f" extends E{i - 1}" if i % 10 and i > 0 else ""
        w(f"entity E{i}{parent}:\n  string name{i}\n  int count{i} = {i}\n  string[] tags{i} = []\nend\n")
        w(f"index E{i}(name{i})\n")
        w(f"implement E{i} using std::none\n")
        if i % 2 and i > 0:
            w(f"E{i}.prev{i} [0:1] -- E{i - 1}.next{i} [0:]\n")
    w('x = E0(name0="a")\n')
