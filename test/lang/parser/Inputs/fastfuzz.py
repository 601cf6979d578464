#!/usr/bin/env python3
"""Mutation fuzzing of the fast-path parser against the ANTLR parser.

Takes the .cf files under the given paths as seeds, applies random token-level mutations (delete, duplicate,
swap, replace by a token from another seed, insert a random keyword/punctuation, change one character) and runs each mutant through
`inmanta compile --dump-ast` with INM_PARSER=fast-check, which parses with both parsers and reports an error
when the fast path accepts a file ANTLR rejects, rejects one ANTLR accepts, or builds a different Ast.
Usage: fastfuzz.py INMANTA_BINARY N SEED PATH...   (prints a summary; exit 1 on any mismatch)
"""
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile

TOKEN = re.compile(r'"""[\s\S]*?"""|[fr]?"(?:[^"\\\n]|\\.)*"|[fr]?\'(?:[^\'\\\n]|\\.)*\'|#[^\n]*|\s+|'
                   r'-?\d*\.\d+|-?\d+|[A-Za-z_][A-Za-z0-9_-]*|::|\*\*|==|!=|<=|>=|\+=|--|->|<-|.', re.S)
EXTRA = ["in", "not", "and", "or", "if", "else", "elif", "end", "for", ":", ",", "(", ")", "[", "]", "{", "}",
         ".", "=", "?", "-1", "1.5", "\"s{{x}}\"", "f\"{a}\"", "r\"x\"", "\"\"\"m\"\"\"", "is defined", "**",
         "matching /a/", "entity", "A", "x", "::", "+", "-", "*", "/", "%", "<", "==", "null", "true", "\n"]


def main():
    binary, count, seed = os.path.abspath(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
    files = []
    for p in sys.argv[4:]:
        for root, dirs, names in os.walk(p):
            dirs.sort()
            files += [os.path.join(root, n) for n in sorted(names) if n.endswith(".cf")]
    seeds = []
    for f in files:
        with open(f, encoding="utf-8", errors="replace") as fh:
            text = fh.read()
        toks = TOKEN.findall(text)
        if toks:
            seeds.append(toks)
    rng = random.Random(seed)
    pool = [t for s in seeds for t in s if not t.isspace()]
    tmp = tempfile.mkdtemp(prefix="fastfuzz-")
    # run a private copy: the build may relink the binary meanwhile
    shutil.copy(binary, os.path.join(tmp, "inmanta"))
    binary = os.path.join(tmp, "inmanta")
    path = os.path.join(tmp, "main.cf")
    env = dict(os.environ, INM_PARSER="fast-check")
    stats = {"ok": 0, "err": 0, "bad": 0}
    for i in range(count):
        toks = list(rng.choice(seeds))
        for _ in range(rng.randint(1, 3)):
            j = rng.randrange(len(toks))
            op = rng.randrange(6)
            if op == 0:
                del toks[j]
            elif op == 1:
                toks.insert(j, toks[j])
            elif op == 2 and len(toks) > 1:
                k = rng.randrange(len(toks))
                toks[j], toks[k] = toks[k], toks[j]
            elif op == 3:
                toks[j] = rng.choice(pool)
            elif op == 4:
                toks.insert(j, " " + rng.choice(EXTRA) + " ")
            else:  # character level: delete or insert one character inside a token (lexer cases)
                t = toks[j]
                c = rng.randrange(len(t) + 1)
                if t and rng.random() < 0.5:
                    toks[j] = t[:c] + t[c + 1:]
                else:
                    toks[j] = t[:c] + rng.choice("\"'\\{}-./:#\n\t xé0") + t[c:]
            if not toks:
                toks = ["x"]
        src = "".join(toks)
        with open(path, "w", encoding="utf-8") as fh:
            fh.write(src)
        p = subprocess.run([binary, "compile", "--dump-ast", "-f", path], env=env, capture_output=True, cwd=tmp)
        err = p.stderr.decode("utf-8", "replace")
        if "fast parser" in err or p.returncode not in (0, 1):
            stats["bad"] += 1
            keep = os.path.join(tmp, "bad%d.cf" % i)
            with open(keep, "w", encoding="utf-8") as fh:
                fh.write(src)
            print("MISMATCH %s: %s" % (keep, err.strip().splitlines()[-1] if err.strip() else p.returncode))
        elif p.returncode == 0:
            stats["ok"] += 1
        else:
            stats["err"] += 1
    print("fastfuzz: %d mutants, %d accepted by both (same Ast), %d rejected, %d mismatches"
          % (count, stats["ok"], stats["err"], stats["bad"]))
    return 1 if stats["bad"] else 0


if __name__ == "__main__":
    sys.exit(main())
