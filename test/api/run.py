#!/usr/bin/env python3
"""Request -> response goldens for the server's API (issue #26): each test/api/cases/*.api file is a sequence of
requests with the answers they must get, run against a real `inmanta server` on a fresh database, so a change of
behaviour shows up as a reviewed diff of these files. `--update` rewrites the expected answers from what the
server says now (review the diff before committing it).

A case file:

    # free text (comments, kept as they are)
    >>> PUT /api/v1/project
    {"name": "golden"}
    <<< 200
    {
      "project": {"id": "$U1", "name": "golden"}
    }

    >>> GET /api/v2/resource?limit=2 @$U2
    <<< 200
    ...

`>>> METHOD PATH [@ENV]` starts a request (the JSON body, if any, follows on the next lines; `@ENV` sends
`X-Inmanta-tid`). `<<< STATUS` starts the expected answer: its JSON, pretty-printed with sorted keys. Answers
are normalised before the comparison: every UUID becomes `$U<n>` in order of first appearance in the case (a
request may then use `$U<n>`, replaced by the real value), every timestamp becomes `$TIME`, and the values of
keys listed in VOLATILE become `$VOLATILE`. Exit 1 on any difference (a unified diff per case).

Usage: test/api/run.py [--build DIR] [--update] [case.api ...]   (starts a private PostgreSQL unless INM_PG_PORT names
one, as test/integration/run.py does for test_api_goldens.py)
"""
import argparse
import difflib
import glob
import json
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "test", "integration"))
import harness  # noqa: E402
import server_fixture as sf  # noqa: E402

UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
TIME = re.compile(r"^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}:\d{2}(\.\d+)?([+-]\d{2}:?\d{2}|Z)?$")
# Values that differ from run to run without being ids or timestamps.
VOLATILE = {"ms", "duration", "elapsed", "uptime", "pid", "process_name", "hostname", "version_info_host",
            "sessions", "last_seen", "first_seen", "compiler_version"}


class Case:
    def __init__(self, path):
        self.path = path
        self.items = []  # ("text", line) | ("req", method, path, env, body_text, expect_status, expect_text)
        self.parse()

    def parse(self):
        with open(self.path) as f:
            lines = f.read().split("\n")
        i = 0
        while i < len(lines):
            line = lines[i]
            if not line.startswith(">>> "):
                self.items.append(("text", line))
                i += 1
                continue
            head = line[4:].split()
            method, path = head[0], head[1]
            env = head[2][1:] if len(head) > 2 and head[2].startswith("@") else None
            i += 1
            body = []
            while i < len(lines) and not lines[i].startswith("<<< "):
                if lines[i].startswith(">>> "):
                    raise SystemExit(f"{self.path}:{i + 1}: a request without its `<<< STATUS` answer")
                body.append(lines[i])
                i += 1
            if i >= len(lines):
                raise SystemExit(f"{self.path}: the last request has no `<<< STATUS` answer")
            status = int(lines[i][4:].strip())
            i += 1
            expect = []
            while i < len(lines) and not lines[i].startswith(">>> ") and lines[i].strip() != "":
                expect.append(lines[i])
                i += 1
            self.items.append(("req", method, path, env, "\n".join(body).strip(), status, "\n".join(expect)))

    def render(self, answers):
        """The case file's text with `answers` (status, text) in place of the expected ones."""
        out, k = [], 0
        for item in self.items:
            if item[0] == "text":
                out.append(item[1])
                continue
            _, method, path, env, body, _, _ = item
            out.append(f">>> {method} {path}" + (f" @{env}" if env else ""))
            if body:
                out.append(body)
            status, text = answers[k]
            k += 1
            out.append(f"<<< {status}")
            if text:
                out.append(text)
        return "\n".join(out)


class Normaliser:
    def __init__(self):
        self.ids = {}  # real uuid -> $U<n>

    def name(self, real):
        if real not in self.ids:
            self.ids[real] = f"$U{len(self.ids) + 1}"
        return self.ids[real]

    def substitute(self, text):
        """A request's text with $U<n> replaced by the real ids (longest names first: $U12 before $U1)."""
        for real, name in sorted(self.ids.items(), key=lambda kv: -len(kv[1])):
            text = text.replace(name, real)
        return text

    def value(self, v, key=None):
        if key in VOLATILE and v is not None:
            return "$VOLATILE"
        if isinstance(v, dict):
            return {self.key(k): self.value(x, k) for k, x in v.items()}
        if isinstance(v, list):
            return [self.value(x) for x in v]
        if isinstance(v, str):
            if TIME.match(v):
                return "$TIME"
            return UUID.sub(lambda m: self.name(m.group(0)), v)
        return v

    def key(self, k):
        return UUID.sub(lambda m: self.name(m.group(0)), k)


def run_case(server, case):
    norm = Normaliser()
    answers = []
    for item in case.items:
        if item[0] != "req":
            continue
        _, method, path, env, body, _, _ = item
        body_json = json.loads(norm.substitute(body)) if body else None
        status, data = server.call(method, norm.substitute(path), body_json,
                                   env=norm.substitute(env) if env else None)
        text = "" if data in (None, "", b"") else json.dumps(norm.value(data), indent=2, sort_keys=True)
        answers.append((status, text))
    return answers


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--update", action="store_true", help="rewrite the expected answers")
    ap.add_argument("cases", nargs="*")
    args = ap.parse_args()
    harness.BUILD = os.path.abspath(args.build)
    harness.INMANTA = os.path.join(harness.BUILD, "bin", "inmanta")
    cases = args.cases or sorted(glob.glob(os.path.join(HERE, "cases", "*.api")))
    if not cases:
        print("api goldens: no cases found")
        return 1
    cluster = None
    if not os.environ.get("INM_PG_PORT"):  # standalone: a private cluster for this run
        cluster = harness.PgCluster().start()
        os.environ["INM_PG_HOST"], os.environ["INM_PG_PORT"] = "127.0.0.1", str(cluster.port)
    try:
        return run_all(cases, args.update)
    finally:
        if cluster:
            cluster.destroy()


def run_all(cases, update):
    failed = 0
    for path in cases:
        case = Case(path)
        server = sf.Server()
        try:
            answers = run_case(server, case)
        finally:
            server.stop()
        with open(path) as f:
            old = f.read()
        new = case.render(answers)
        if new == old:
            print(f"PASS {os.path.relpath(path, ROOT)}")
            continue
        if update:
            with open(path, "w") as f:
                f.write(new)
            print(f"UPDATED {os.path.relpath(path, ROOT)}")
            continue
        failed += 1
        print(f"FAIL {os.path.relpath(path, ROOT)}")
        sys.stdout.writelines(difflib.unified_diff(old.splitlines(True), new.splitlines(True), "expected", "server"))
    print(f"api goldens: {len(cases) - failed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
