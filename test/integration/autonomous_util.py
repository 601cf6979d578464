"""Helpers for the autonomous-server tests (test_autonomous_*.py): a schema'd database with one environment
whose repo_url points at a real git repository made by the test, the `inmanta compile-service-run` verb, and
readers for the `compile` / `report` rows. Every process started here is stopped by PID."""
import json
import os
import shutil
import subprocess
import tempfile
import time

import harness

MIGRATIONS = os.path.join(harness.ROOT, "orchestrator", "store", "migrations")

PROJECT_YML = "name: autotest\ndescription: autonomous server test project\nmodulepath: libs\ndownloadpath: libs\n"


def model(resources, extra=""):
    """main.cf with one NullResource per (name, value) pair."""
    lines = ["import std", "import std::testing", ""]
    for name, value in resources:
        lines.append(f'std::testing::NullResource(name="{name}", agentname="a1", fail={value})')
    return "\n".join(lines) + "\n" + extra


class Database:
    def __init__(self):
        self.name = harness.fresh_database("auto")
        self.host, self.port = harness.shared_cluster()
        for name in sorted(n for n in os.listdir(MIGRATIONS) if n.endswith(".sql")):
            self.psql(open(os.path.join(MIGRATIONS, name)).read())

    @property
    def conninfo(self):
        return f"host={self.host} port={self.port} dbname={self.name} user=postgres"

    def psql(self, sql):
        return harness.psql(self.name, sql, port=self.port)

    def json(self, sql):
        out = self.psql(f"SELECT coalesce(json_agg(q), '[]') FROM ({sql}) q")
        return json.loads(out)

    def add_environment(self, repo_url, branch="main", settings=None):
        pid = self.psql("INSERT INTO project (id, name) VALUES (gen_random_uuid(), 'p') "
                        "ON CONFLICT (name) DO UPDATE SET name = excluded.name RETURNING id")
        settings = json.dumps(settings or {}).replace("'", "''")
        return self.psql(f"INSERT INTO environment (id, name, project, repo_url, repo_branch, settings) VALUES "
                         f"(gen_random_uuid(), 'env' || floor(random() * 1e9)::text, '{pid}', '{repo_url}', "
                         f"'{branch}', '{settings}') RETURNING id")

    def compiles(self, env):
        return self.json(f"SELECT id, started IS NOT NULL AS started, completed IS NOT NULL AS completed, success, "
                         f"version, force_update, do_export, metadata, compile_data, substitute_compile_id, handled "
                         f"FROM compile WHERE environment = '{env}' ORDER BY requested")

    def reports(self, compile_id):
        return self.json(f"SELECT name, command, outstream, errstream, returncode, completed IS NOT NULL AS completed "
                         f"FROM report WHERE compile = '{compile_id}' ORDER BY started")


class Repo:
    """A git repository in a temp dir, branch main."""

    def __init__(self, base):
        self.path = os.path.join(base, "model.git")
        os.makedirs(self.path)
        self.git("init", "-q", "-b", "main")
        self.git("config", "user.email", "t@example.com")
        self.git("config", "user.name", "test")

    def git(self, *args):
        return subprocess.run(["git", *args], cwd=self.path, check=True, capture_output=True, text=True).stdout.strip()

    def commit(self, main_cf, msg="change"):
        with open(os.path.join(self.path, "project.yml"), "w") as f:
            f.write(PROJECT_YML)
        with open(os.path.join(self.path, "main.cf"), "w") as f:
            f.write(main_cf)
        self.git("add", "-A")
        self.git("commit", "-q", "-m", msg)
        return self.git("rev-parse", "HEAD")


class GitDaemon:
    """`git daemon` serving `base` on 127.0.0.1:<free port>, stopped by PID."""

    def __init__(self, base):
        self.port = harness.free_port()
        self.proc = harness.Process(["git", "daemon", "--reuseaddr", "--export-all", f"--base-path={base}",
                                     "--listen=127.0.0.1", f"--port={self.port}", base])
        harness.wait_for(lambda: harness.listening(self.port), timeout=10, what="git daemon listening")

    def url(self, name):
        return f"git://127.0.0.1:{self.port}/{name}"

    def stop(self):
        self.proc.stop()


def run_service(db, state_dir, *extra, timeout=120):
    """Runs `inmanta compile-service-run` to completion; returns (returncode, output)."""
    args = [harness.INMANTA, "compile-service-run", "--db", db.conninfo, "--state-dir", state_dir, *extra]
    p = harness.Process(args)
    try:
        p.proc.wait(timeout)
    except subprocess.TimeoutExpired:
        pass
    rc = p.stop()
    return rc, p.output()


def write_script(path, body):
    with open(path, "w") as f:
        f.write("#!/bin/sh\n" + body)
    os.chmod(path, 0o755)
    return path


def artifact(state_dir, env, compile_id):
    with open(os.path.join(state_dir, "server", env, "artifacts", compile_id + ".json")) as f:
        return json.load(f)


def children_of(pid):
    """PIDs whose parent is `pid` (read from /proc)."""
    out = []
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open(f"/proc/{d}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            if int(fields[1]) == pid:
                out.append(int(d))
        except (OSError, IndexError, ValueError):
            pass
    return out
