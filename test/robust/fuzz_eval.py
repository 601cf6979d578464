#!/usr/bin/env python3
"""Grammar-based fuzzer of the evaluator (issue #15): generates well-formed Inmanta projects -- entities,
relations, typedefs with constraints and regexes, implementations, conditional implements, for/if/elif blocks,
constructors, index lookups, comprehensions, f-strings with format specs, plugin calls, templates, file reads --
with values chosen at the edges (int64 limits, huge exponents, float overflow, deep nesting, large sequences,
self-replicating implementations), and runs `inmanta compile` (or `export -j`) on each under a small stack
(INM_REEXEC_DONE=1, 8 MiB) and reduced limits. A run is a FINDING when the process dies by a signal, exits with
anything but 0/1, exits 1 without an `error:` line, prints a sanitizer report, or exceeds the time budget.

Usage: fuzz_eval.py --inmanta BIN [--minutes M] [--seed S] [--out DIR] [--replay DIR]
Prints a summary: executions, exits, diagnostic classes seen (the coverage proxy), corpus size, findings.
The corpus (one model per new diagnostic signature) and the findings go to --out.
"""
import argparse
import hashlib
import json
import os
import random
import re
import resource
import shutil
import subprocess
import sys
import tempfile
import time

EDGE_INTS = [0, 1, -1, 2, 3, 7, 10, 63, 64, 100, 255, 65535, 2**31 - 1, 2**31, 2**32, 2**53, 2**62,
             2**63 - 1, -(2**63 - 1), 10**18, 3037000499, 3037000500, 4294967296]
EDGE_FLOATS = ["0.0", "1.5", "-2.25", "1" + "0" * 308 + ".0", "0." + "0" * 319 + "1", "3.14", "1" + "0" * 16 + ".0", "2.0"]
STRINGS = ['"a"', '"hello"', '""', "'x y'", '"\\n"', '"\\u00e9"', '"\\U0001F600"', '"a{{b}}"', '"tab\\tq"',
           '"\\x41"', '"日本"', "r'raw\\d'", '"""tri\nple"""']
PLUGINS1 = ["std::len", "std::count", "std::unique", "std::flatten", "std::type", "std::is_unknown", "std::isset",
            "std::objid"]
STRPLUG = ["std::upper", "std::lower", "std::capitalize", "std::length", "std::hostname"]
SPECS = ["", ":>10", ":<5", ":^7", ":08d", ":x", ":,", ":.3f", ":e", ":+d", ":>{w}", ":.{w}f", ":{w}", ":b", ":o",
         ":%", ":g", ":s", ":10.4"]


class Gen:
    def __init__(self, rnd):
        self.r = rnd
        self.edgy = rnd.random() < 0.35  # a third of the models probe the edges; the rest should compile
        self.vars = []        # (name, kind) top-level variables defined so far
        self.n = 0
        self.entities = []    # (name, attrs: [(name, type)])

    def fresh(self, p="v"):
        self.n += 1
        return f"{p}{self.n}"

    def intlit(self):
        r = self.r
        x = r.choice(EDGE_INTS) if self.edgy and r.random() < 0.3 else r.randint(-20, 20)
        if self.edgy and r.random() < 0.03:
            x = r.choice([2**63, 2**64, 10**30])
        return str(x) if x >= 0 else f"({x})" if r.random() < 0.5 else str(x)

    def expr(self, d=0, kind=None):
        r = self.r
        if d > 6 or r.random() < 0.25:
            return self.atom(kind)
        k = kind or r.choice(["int", "int", "float", "str", "list", "bool", "dict", "any"])
        if k == "int":
            op = r.choice(["+", "-", "*", "**", "%", "+", "*"])
            a, b = self.expr(d + 1, "int"), self.expr(d + 1, "int")
            if op == "**":
                b = str(r.choice([0, 1, 2, 10, 62, 63, 64, 100, 10**12] if self.edgy else [0, 1, 2]))
            if op == "%" and not self.edgy:
                b = str(r.choice([1, 2, 3, -1, -7]))
            return f"({a} {op} {b})"
        if k == "float":
            op = r.choice(["+", "-", "*", "/", "**", "%"])
            return f"({self.expr(d + 1, 'float')} {op} {self.atom(r.choice(['int', 'float']))})"
        if k == "str":
            c = r.random()
            if c < 0.3:
                return f"({self.expr(d + 1, 'str')} + {self.expr(d + 1, 'str')})"
            if c < 0.6:
                spec = r.choice(SPECS).replace("{w}", str(r.choice([3, 10, 200, 100000, 10**7, 10**12, 2**64] if self.edgy else [3, 10])))
                return 'f"{' + self.varref("int") + spec + '}"'
            if c < 0.8:
                return f"{r.choice(STRPLUG)}({self.expr(d + 1, 'str')})" if r.random() < 0.5 else \
                    f"std::replace({self.expr(d + 1, 'str')}, \"a\", \"bb\")"
            return '"x{{' + self.varref("any") + '}}y"'
        if k == "list":
            c = r.random()
            if c < 0.3:
                return "[" + ", ".join(self.expr(d + 1) for _ in range(r.randint(0, 4))) + "]"
            if c < 0.55:
                n = r.choice([0, 1, 5, 100, 1000, -3, 10**6, 2**62, 2**63 - 1] if self.edgy else [0, 1, 5, 10])
                if r.random() < 0.5:
                    return f"std::sequence({n})"
                return f"std::sequence({n}, {self.intlit()}, {self.intlit()})"
            if c < 0.8:
                v = self.fresh("i")
                return f"[{v} * 2 for {v} in {self.expr(d + 1, 'list')} if {v} != 3]" if r.random() < 0.5 else \
                    f"[{v} for {v} in std::sequence({r.randint(0, 20)})]"
            return f"std::flatten([{self.expr(d + 1, 'list')}, {self.expr(d + 1, 'list')}])"
        if k == "bool":
            c = r.random()
            if c < 0.3:
                return f"({self.expr(d + 1, 'int')} {r.choice(['<', '>', '==', '!=', '<=', '>='])} {self.expr(d + 1, 'int')})"
            if c < 0.5:
                return f"(not {self.expr(d + 1, 'bool')})"
            if c < 0.7:
                return f"({self.expr(d + 1, 'bool')} {r.choice(['and', 'or'])} {self.expr(d + 1, 'bool')})"
            if c < 0.85:
                return f"({self.expr(d + 1, 'int')} in {self.expr(d + 1, 'list')})"
            return f"(std::is_unknown({self.expr(d + 1)}) == true)"
        if k == "dict":
            n = r.randint(0, 3)
            return "{" + ", ".join(f'"k{i}": {self.expr(d + 1)}' for i in range(n)) + "}"
        c = r.random()
        if c < 0.3:
            return f"({self.expr(d + 1, 'bool')} ? {self.expr(d + 1)} : {self.expr(d + 1)})"
        if c < 0.6:
            return f"{r.choice(PLUGINS1)}({self.expr(d + 1, 'list')})"
        return self.expr(d + 1, r.choice(["int", "str", "list", "bool"]))

    def atom(self, kind=None):
        r = self.r
        k = kind or r.choice(["int", "float", "str", "bool", "list", "null"])
        if self.vars and r.random() < 0.4:
            cands = [v for v, vk in self.vars if kind in (None, "any") or vk == kind]
            if cands:
                return r.choice(cands)
        if k == "int":
            return self.intlit()
        if k == "float":
            return r.choice(EDGE_FLOATS)
        if k == "str":
            return r.choice(STRINGS)
        if k == "bool":
            return r.choice(["true", "false"])
        if k == "list":
            return "[" + ", ".join(self.intlit() for _ in range(r.randint(0, 3))) + "]"
        if k == "dict":
            return '{"a": 1}'
        if k == "null":
            return "null"
        return self.intlit()

    def varref(self, kind):
        cands = [v for v, vk in self.vars if kind == "any" or vk == kind]
        return self.r.choice(cands) if cands else "zero"

    def deep(self):
        r = self.r
        n = r.choice([50, 200, 499, 501, 600, 2000, 20000])
        form = r.choice(["paren", "chain", "not", "list", "if", "elif", "dict", "cond", "fmt"])
        if form == "paren":
            return "d = " + "(" * n + "1" + ")" * n
        if form == "chain":
            return "d = 1" + " + 1" * n
        if form == "not":
            return "d = " + "not " * n + "true"
        if form == "list":
            return "d = " + "[" * n + "]" * n
        if form == "dict":
            return "d = " + '{"a": ' * n + "1" + "}" * n
        if form == "cond":
            return "d = " + "true ? 1 : " * n + "2"
        if form == "fmt":
            return 'd = "' + "{{x}}" * n + '"\nx = 1'
        if form == "if":
            n = min(n, 2000)  # indentation makes the file quadratic in n (20,000 levels = 800 MB)
            return "".join("  " * i + "if true:\n" for i in range(n)) + "  " * n + "d = 1\n" + \
                "".join("  " * i + "end\n" for i in reversed(range(n)))
        return "if false:\n  d = 0\n" + "".join(f"elif false:\n  d = {i}\n" for i in range(n)) + "else:\n  d = -1\nend"

    def entity_block(self):
        r = self.r
        out = []
        name = f"E{len(self.entities)}"
        attrs = [("name", "string"), ("n", "int")]
        extra = r.sample([("f", "float"), ("b", "bool"), ("l", "list"), ("d", "dict"), ("p", "port"), ("s", "word")],
                         r.randint(0, 3))
        attrs += extra
        parent = f" extends {r.choice(self.entities)[0]}" if self.entities and r.random() < 0.3 else ""
        if parent:
            attrs = [a for a in attrs if a[0] not in ("name", "n")]
        lines = [f"entity {name}{parent}:"]
        for a, t in attrs:
            default = ""
            if t == "int" and r.random() < 0.3:
                default = f" = {self.intlit().strip('()')}"
            lines.append(f"  {t} {a}{default}")
        lines.append("end")
        out.append("\n".join(lines))
        self.entities.append((name, attrs if not parent else attrs + [("name", "string"), ("n", "int")]))
        if r.random() < 0.4:
            out.append(f"index {name}(name)")
        impl = self.fresh("impl")
        body = []
        c = r.random()
        if c < (0.15 if self.edgy else 0.0):
            # self-replicating: must end at the instance limit, not loop forever
            body.append(f'  {name}(name=self.name + "x", n=self.n + 1)')
        elif c < 0.3:
            body.append(f"  x = self.n * {self.intlit()}")
        elif c < 0.45:
            body.append(f"  for i in std::sequence(self.n % 5):")
            body.append(f'    std::print(f"{{i:>{r.choice([2, 50, 100000, 10**9])}}}")')
            body.append("  end")
        elif c < 0.55:
            body.append(f'  std::print(std::template("fz/t{r.randint(0, 4)}.j2"))')
        elif c < 0.65:
            body.append(f'  std::print(std::file("{r.choice(["fz/a.txt", "/a.txt", "../../etc/passwd", "fz/../../../etc/hostname", "/etc/passwd", "fz/link"])}"))')
        else:
            body.append("  std::print(self.name)")
        out.append(f"implementation {impl} for {name}:\n" + "\n".join(body) + "\nend")
        when = f" when self.n {r.choice(['>', '<', '=='])} {r.randint(-2, 5)}" if r.random() < 0.3 else ""
        out.append(f"implement {name} using {impl}{when}")
        if r.random() < 0.3:
            out.append(f"implement {name} using std::none")
        return out, name

    def relation(self):
        r = self.r
        if len(self.entities) < 2:
            return ""
        a, b = r.sample([e[0] for e in self.entities], 2)
        lo = r.choice(["0", "1", "2", "0", "9223372036854775807", "99999999999999999999"] if self.edgy else ["0"])
        hi = r.choice(["", "1", "5", "", "4294967296", "18446744073709551616"] if self.edgy else ["", "5"])
        return f"{a}.{self.fresh('r')} [{lo}:{hi}] -- {b}.{self.fresh('q')} [0:]"

    def model(self):
        r = self.r
        parts = ["import fz" if r.random() < 0.2 else "", "zero = 0",
                 "typedef port as int matching self > 0 and self < 65536",
                 "typedef word as string matching " + r.choice(["/^[a-z]+$/", "/^(a+)+$/", "/(a|aa)*b/", "/^\\w+$/",
                                                                "/(?=a)a/", "/(x)\\1/"])]
        for _ in range(r.randint(1, 4)):
            blk, _ = self.entity_block()
            parts.extend(blk)
        for _ in range(r.randint(0, 2)):
            parts.append(self.relation())
        for _ in range(r.randint(2, 12)):
            c = r.random()
            if c < 0.45:
                v = self.fresh()
                kind = r.choice(["int", "str", "list", "bool", "float", "dict"])
                parts.append(f"{v} = {self.expr(0, kind)}")
                self.vars.append((v, kind))
            elif c < 0.7 and self.entities:
                ename, attrs = r.choice(self.entities)
                kw = []
                for a, t in attrs:
                    if a == "name":
                        kw.append(f'name="{self.fresh("n")}"')
                    elif a == "n":
                        kw.append(f"n={r.choice([0, 1, 2, 3, 4, -1, 9223372036854775807])}")
                    elif t == "port":
                        kw.append(f"p={r.choice([1, 80, 0, 70000])}")
                    elif t == "word":
                        kw.append("s=" + r.choice(['"abc"', '"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa!"', '"Ab1"']))
                    elif t == "int":
                        kw.append(f"{a}={self.expr(1, 'int')}")
                    elif t == "float":
                        kw.append(f"{a}={self.expr(1, 'float')}")
                    elif t == "bool":
                        kw.append(f"{a}={self.expr(1, 'bool')}")
                    elif t == "list":
                        kw.append(f"{a}={self.expr(1, 'list')}")
                    elif t == "dict":
                        kw.append(f"{a}={self.expr(1, 'dict')}")
                parts.append(f"{self.fresh('o')} = {ename}({', '.join(kw)})")
            elif c < 0.8:
                parts.append(f"std::print({self.expr(0)})")
            elif c < 0.88:
                v = self.fresh("i")
                parts.append(f"for {v} in {self.expr(1, 'list')}:\n  std::print({v})\nend")
            elif c < 0.94:
                parts.append(f"if {self.expr(1, 'bool')}:\n  std::print(1)\nelif {self.expr(1, 'bool')}:\n  std::print(2)\nelse:\n  std::print(3)\nend")
            elif self.edgy:
                parts.append(self.deep())
        return "\n".join(p for p in parts if p) + "\n"


TEMPLATES = ["{{ 9223372036854775807 + 1 }}", "{% for i in range(100000000000) %}x{% endfor %}",
             "{{ 'ab' * 1000000000000 }}", "{% for i in range(3) %}{% for j in range(3) %}{{ i * j }}{% endfor %}{% endfor %}",
             "{{ " + "(" * 3000 + "1" + ")" * 3000 + " }}", "{{ 1" + " + 1" * 100000 + " }}",
             "{% if true %}" * 2000 + "x" + "{% endif %}" * 2000, "{{ -9223372036854775807 - 1 // -1 }}",
             "{{ (-9223372036854775807 - 1) % -1 }}", "{{ 2 ** 64 }}", "{{ 1e308 * 10 }}", "hello {{ x }}"]


def make_project(root, model, rnd):
    os.makedirs(os.path.join(root, "libs", "fz", "model"), exist_ok=True)
    os.makedirs(os.path.join(root, "libs", "fz", "files"), exist_ok=True)
    os.makedirs(os.path.join(root, "libs", "fz", "templates"), exist_ok=True)
    with open(os.path.join(root, "project.yml"), "w") as f:
        f.write("name: fuzz\nmodulepath: libs\ndownloadpath: libs\n")
    with open(os.path.join(root, "libs", "fz", "module.yml"), "w") as f:
        f.write("name: fz\nversion: 0.1.0\n")
    with open(os.path.join(root, "libs", "fz", "model", "_init.cf"), "w") as f:
        f.write("x = 1\n")
    with open(os.path.join(root, "libs", "fz", "files", "a.txt"), "w") as f:
        f.write("content\n")
    link = os.path.join(root, "libs", "fz", "files", "link")
    if not os.path.lexists(link):
        os.symlink("/etc/hostname", link)
    for i in range(5):
        with open(os.path.join(root, "libs", "fz", "templates", f"t{i}.j2"), "w") as f:
            f.write(rnd.choice(TEMPLATES))
    with open(os.path.join(root, "main.cf"), "w") as f:
        f.write(model)


def run_one(binary, root, export, timeout):
    env = dict(os.environ, INM_REEXEC_DONE="1", INM_MAX_INSTANCES="100000", INM_MAX_MEMORY_MIB="1024",
               INM_MAX_LIST_ITEMS="1000000", INM_MAX_STRING_BYTES=str(8 << 20),
               ASAN_OPTIONS="detect_leaks=0", UBSAN_OPTIONS="print_stacktrace=1")

    def limit():
        resource.setrlimit(resource.RLIMIT_STACK, (8 << 20, 8 << 20))
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    cmd = [binary, "export", "-j", os.path.join(root, "out.json")] if export else [binary, "compile"]
    t0 = time.time()
    try:
        p = subprocess.run(cmd, cwd=root, env=env, capture_output=True, timeout=timeout, preexec_fn=limit)
    except subprocess.TimeoutExpired as e:
        return "timeout", time.time() - t0, (e.stderr or b"")[-2000:].decode("utf-8", "replace")
    dt = time.time() - t0
    err = p.stderr.decode("utf-8", "replace")
    if p.returncode < 0:
        return f"signal {-p.returncode}", dt, err[-3000:]
    if "AddressSanitizer" in err or "runtime error:" in err or "LeakSanitizer" in err:
        return "sanitizer", dt, err[-5000:]
    if p.returncode not in (0, 1):
        return f"exit {p.returncode}", dt, err[-3000:]
    if p.returncode == 1 and "error:" not in err:
        return "silent exit 1", dt, err[-3000:]
    return ("ok" if p.returncode == 0 else "error"), dt, err


def signature(err):
    """Diagnostic classes and the first words of each message: the coverage proxy of a run."""
    sig = set()
    for m in re.finditer(r"(error|warning): (.*) \[(\w+)\]$", err, re.M):
        words = " ".join(w for w in m.group(2).split()[:4] if re.fullmatch(r"[A-Za-z:,-]+", w))
        sig.add(f"{m.group(3)}: {words}")
    return sig


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--inmanta", required=True)
    ap.add_argument("--minutes", type=float, default=1)
    ap.add_argument("--seed", type=int, default=int(time.time()))
    ap.add_argument("--out", default="/tmp/inmanta-fuzz-eval")
    ap.add_argument("--timeout", type=float, default=20)
    ap.add_argument("--slow", type=float, default=10, help="seconds after which a run is a finding")
    ap.add_argument("--replay", help="re-run every main.cf under this folder (findings) and report")
    args = ap.parse_args()
    os.makedirs(os.path.join(args.out, "corpus"), exist_ok=True)
    os.makedirs(os.path.join(args.out, "findings"), exist_ok=True)
    work = tempfile.mkdtemp(prefix="fuzz-eval-")
    rnd = random.Random(args.seed)
    if args.replay:
        bad = 0
        files = sorted(os.path.join(d, f) for d, _, fs in os.walk(args.replay) for f in fs if f.endswith(".cf"))
        for path in files:
            shutil.rmtree(work, ignore_errors=True)
            model = open(path).read()
            make_project(work, model, random.Random(hashlib.sha1(model.encode()).hexdigest()[:12]))
            for export in (False, True):
                st, dt, err = run_one(args.inmanta, work, export, args.timeout)
                if st not in ("ok", "error") or dt > args.slow:
                    bad += 1
                    print(f"STILL BAD {path} export={export}: {st} {dt:.1f}s\n{err[-600:]}")
        print(f"replay: {len(files)} models, {bad} still failing")
        shutil.rmtree(work, ignore_errors=True)
        return 1 if bad else 0
    deadline = time.time() + args.minutes * 60
    stats = {"executions": 0, "ok": 0, "error": 0, "findings": 0}
    seen = set()
    corpus = 0
    slowest = 0.0
    while time.time() < deadline:
        g = Gen(rnd)
        model = g.model()
        h = hashlib.sha1(model.encode()).hexdigest()[:12]
        shutil.rmtree(work, ignore_errors=True)
        make_project(work, model, random.Random(h))  # templates chosen from the model's hash: replayable
        export = rnd.random() < 0.3
        st, dt, err = run_one(args.inmanta, work, export, args.timeout)
        stats["executions"] += 1
        slowest = max(slowest, dt)
        if st in ("ok", "error") and dt <= args.slow:
            stats[st] += 1
            sig = signature(err) if st == "error" else {"ok"}
            new = sig - seen
            if new:
                seen |= sig
                corpus += 1
                with open(os.path.join(args.out, "corpus", f"{h}.cf"), "w") as f:
                    f.write(model)
        else:
            stats["findings"] += 1
            kind = st if st not in ("ok", "error") else f"slow {dt:.1f}s"
            with open(os.path.join(args.out, "findings", f"{h}.cf"), "w") as f:
                f.write(model)
            with open(os.path.join(args.out, "findings", f"{h}.txt"), "w") as f:
                f.write(f"{kind} export={export}\n{err}")
            print(f"FINDING {h}: {kind} (export={export})", flush=True)
        if stats["executions"] % 100 == 0:
            print(json.dumps(dict(stats, signatures=len(seen), corpus=corpus, slowest_s=round(slowest, 2))), flush=True)
    shutil.rmtree(work, ignore_errors=True)
    summary = dict(stats, signatures=len(seen), corpus=corpus, slowest_s=round(slowest, 2), seed=args.seed)
    print("summary: " + json.dumps(summary))
    with open(os.path.join(args.out, "signatures.txt"), "w") as f:
        f.write("\n".join(sorted(seen)) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
