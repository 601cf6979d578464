#!/usr/bin/env python3
"""Runs the web console's end-to-end suite (console/e2e/run.mjs, real Chromium via playwright-core) against the
real `inmanta server` on a private PostgreSQL cluster (test/integration/harness.py), then stops both by PID.

Steps whose backend is not built yet are skipped with the reason (run.mjs --skip feature=reason):
  deploy     needs the `inmanta scheduler` verb (deploys, action logs, the `active` version, dry runs)
  resources  /api/v2/resource;  agents  /api/v2/agents;  dryrun  /api/v2/dryrun;  compile  /api/v2/compilereport
  (a route that does not exist yet answers 404 "no API endpoint"; probed once before the run)
The environment's repository is a git repo made here of test/console/project (make_repo), so a Recompile from the
console compiles a real commit.
If the binary has no `server` verb at all, the suite runs against console/e2e/fake-api.mjs instead and says so in
its first line and in docs/console/last-run.json; that run checks the console, not the server.

Usage: run_e2e.py [--build DIR] [--shots DIR] [--big N] [--fake]
Prints run.mjs's output; its last line is `N passed, N failed, N skipped`. Exit status 1 on any failure.
"""
import argparse
import base64
import hashlib
import hmac
import json
import re
import os
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "test", "integration"))
import harness  # noqa: E402

CONSOLE = os.path.join(ROOT, "console")


MOTD = "/tmp/inmanta-console-e2e-motd"  # what the test model's std::File writes


def has_verb(inmanta, verb):
    """True if `inmanta --help` lists the verb (one line per verb of tools/Verbs.cpp)."""
    r = subprocess.run([inmanta, "--help"], capture_output=True, text=True, timeout=10)
    return re.search(rf"^\s+{re.escape(verb)}\s", r.stdout + r.stderr, re.M) is not None


def has_export_push(inmanta):
    """True if `inmanta export` can push to a server (-e/--server_address, the client work)."""
    r = subprocess.run([inmanta, "--help"], capture_output=True, text=True, timeout=10)
    return "--server_address" in r.stdout + r.stderr


def b64(raw):
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode()


def mint_token(key, issuer):
    """An HS256 JWT with client type api (spec §12); the configured key is URL-safe base64 as in the reference.
    `aud` is required: the server checks it against the section's audience, which defaults to the issuer."""
    now = int(time.time())
    head = b64(json.dumps({"alg": "HS256", "typ": "JWT"}).encode())
    body = b64(json.dumps({"iss": issuer, "aud": [issuer], "iat": now, "exp": now + 3600,
                           "urn:inmanta:ct": "api"}).encode())
    sig = b64(hmac.new(base64.urlsafe_b64decode(key + "=="), f"{head}.{body}".encode(), hashlib.sha256).digest())
    return f"{head}.{body}.{sig}"


def start_server(inmanta, cluster, work, name, extra=""):
    """`inmanta server` on a fresh database and a free port; returns (Process, base URL) once it answers."""
    db = harness.fresh_database(name)
    port = harness.free_port()
    state = os.path.join(work, f"state-{name}")
    os.makedirs(state)
    cfg = os.path.join(work, f"{name}.cfg")
    with open(cfg, "w") as f:
        f.write(f"[database]\nhost=127.0.0.1\nport={cluster.port}\nname={db}\nusername=postgres\n"
                f"[server]\nbind-address=127.0.0.1\nbind-port={port}\n"
                f"console_dir={os.path.join(CONSOLE, 'dist')}\n{extra}"
                f"[config]\nstate-dir={state}\nlog-dir={state}\n")
    server = harness.Process([inmanta, "server", "-c", cfg], cwd=work, log=os.path.join(work, f"{name}.log"))
    base = f"http://127.0.0.1:{port}"

    def up():
        if not server.alive():
            raise AssertionError(f"inmanta server ({name}) exited:\n{server.output()[-3000:]}")
        try:
            return harness.http("GET", base + "/api/v2/health", timeout=2)[0] == 200
        except OSError:
            return False
    harness.wait_for(up, timeout=60, what=f"inmanta server ({name}) to answer")
    return server, base


def export_artifacts(inmanta, out):
    proj = os.path.join(HERE, "project")
    for name, args in (("v1.json", []), ("v2.json", ["-f", "v2.cf"])):
        subprocess.run([inmanta, "export", *args, "-j", os.path.join(out, name)], cwd=proj, check=True,
                       capture_output=True)


def make_repo(work):
    """A git repository (branch main) holding test/console/project: the environment's repo_url, so a Recompile
    from the console compiles a real commit and the console can show it (versions, compile reports, dashboard)."""
    repo = os.path.join(work, "project-repo")
    shutil.copytree(os.path.join(HERE, "project"), repo)
    git = ["git", "-c", "user.name=console-e2e", "-c", "user.email=e2e@localhost", "-C", repo]
    subprocess.run(["git", "init", "-q", "-b", "main", repo], check=True)
    subprocess.run(git + ["add", "-A"], check=True)
    subprocess.run(git + ["commit", "-q", "-m", "console e2e project"], check=True)
    return repo


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--shots", default=os.path.join(ROOT, "docs", "console"))
    ap.add_argument("--big", default="100000")
    ap.add_argument("--fake", action="store_true", help="run against console/e2e/fake-api.mjs, not the server")
    args, extra = ap.parse_known_args()  # anything else goes to run.mjs (e.g. --dryrun-version 1)
    inmanta = os.path.join(os.path.abspath(args.build), "bin", "inmanta")

    if not os.path.exists("/usr/bin/chromium") and not os.environ.get("CHROMIUM"):
        print("console e2e: SKIPPED, /usr/bin/chromium is not installed (scripts/setup.sh installs it)")
        print("0 passed, 0 failed, 1 skipped")
        return 0
    if not os.path.exists(os.path.join(CONSOLE, "dist", "index.html")) or \
            not os.path.isdir(os.path.join(CONSOLE, "node_modules", "playwright-core")):
        print("console e2e: console/dist or console/node_modules missing: run scripts/setup.sh first")
        return 1

    work = tempfile.mkdtemp(prefix="console-e2e-")
    export_artifacts(inmanta, work)
    node = ["node", os.path.join(CONSOLE, "e2e", "run.mjs"), "--shots", os.path.abspath(args.shots), "--big", args.big,
            "--artifacts", work, *extra]
    cluster = server = auth_server = None
    try:
        if args.fake or not has_verb(inmanta, "server"):
            if not args.fake:
                print("console e2e: this build has no `inmanta server` verb: falling back to the fake API")
            return subprocess.run(node, cwd=CONSOLE).returncode

        cluster = harness.PgCluster().start()
        os.environ["INM_PG_HOST"], os.environ["INM_PG_PORT"] = "127.0.0.1", str(cluster.port)
        server, base = start_server(inmanta, cluster, work, "console")
        key, issuer = b64(b"console-e2e-secret-key-0123456789-abcdef"), "console-e2e"
        auth_server, auth_base = start_server(
            inmanta, cluster, work, "console_auth",
            extra=f"auth=true\nstart_schedulers=false\n[auth_jwt_e2e]\nalgorithm=HS256\nsign=true\n"
                  f"client_types=agent,compiler,api\nkey={key}\nissuer={issuer}\n")
        node += ["--auth-url", auth_base, "--auth-token", mint_token(key, issuer)]

        skips = []
        if not has_verb(inmanta, "scheduler"):
            skips += ["deploy=the scheduler (inmanta scheduler) has not landed on this branch"]
        # Endpoints not built yet answer 404 "no API endpoint …" (an unknown environment would mention it).
        probe_env = {"X-Inmanta-tid": "00000000-0000-0000-0000-000000000000"}

        def missing(path):
            st, body, _ = harness.http("GET", base + path, headers=probe_env)
            return st == 404 and "environment" not in json.dumps(body).lower()
        for feature, path, what in (
                ("resources", "/api/v2/resource", "resource listing (/api/v2/resource)"),
                ("agents", "/api/v2/agents", "agent listing (/api/v2/agents)"),
                ("dryrun", "/api/v2/dryrun/1", "dry-run endpoints (/api/v2/dryrun)"),
                ("compile", "/api/v2/compilereport", "compile service (/api/v2/compilereport)")):
            if missing(path):
                skips.append(f"{feature}=the server on this branch has no {what} yet")
        for s in skips:
            node += ["--skip", s]
        node += ["--url", base, "--backend", "real inmanta server + PostgreSQL", "--repo", make_repo(work)]
        if has_export_push(inmanta):
            node += ["--inmanta", inmanta]
        rc = subprocess.run(node, cwd=CONSOLE).returncode
        if rc != 0:
            print("---- server log (tail) ----")
            print(server.output()[-4000:])
        return rc
    finally:
        for p in (server, auth_server):
            if p:
                p.stop()
        if cluster:
            cluster.destroy()
        shutil.rmtree(work, ignore_errors=True)
        if os.path.exists(MOTD):
            os.unlink(MOTD)  # the model's one std::File


if __name__ == "__main__":
    t0 = time.time()
    rc = main()
    print(f"console e2e: {time.time() - t0:.0f} s")
    sys.exit(rc)
