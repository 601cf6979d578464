"""Fixtures for the deploy integration tests: a fresh database with migration 001, one environment, versions
inserted with SQL exactly as the server stores and releases them (resource rows, rps rows at release, a
scheduler_request + NOTIFY), and a real `inmanta scheduler` process started and stopped by PID.

The scheduler runs real `inmanta executor` children (`--executor process`) unless a test needs a controlled
deploy duration: then it uses its in-process NullResource test double (`--executor null`, INM_NULL_EXECUTOR_DELAY_MS).
Until the server branch is merged, versions are inserted with SQL as the server would.
"""
import hashlib
import json
import os
import signal
import subprocess
import time
import uuid

import harness

MIGRATIONS = os.path.join(harness.ROOT, "orchestrator", "store", "migrations")
NULL = "std::testing::NullResource"


def rid(name, agent="internal"):
    return f"{NULL}[{agent},name={name}]"


def attribute_hash(resource_id, attributes):
    """orchestrator.md §3.6: md5(id + json.dumps(attrs minus id/requires/provides/version, sort_keys=True))."""
    a = {k: v for k, v in attributes.items() if k not in ("id", "requires", "provides", "version")}
    return hashlib.md5((resource_id + json.dumps(a, sort_keys=True)).encode()).hexdigest()


def null_resource(name, agent="internal", requires=(), fail=False, value="", undefined=False, send_event=True,
                  receive_events=True):
    attrs = {"name": name, "agentname": agent, "value": "<<undefined>>" if undefined else value, "fail": fail,
             "managed": True, "purged": False, "purge_on_delete": False, "send_event": send_event,
             "receive_events": receive_events, "report_only": False, "references": [], "mutators": [],
             "requires": sorted(requires)}
    return {"id": rid(name, agent), "agent": agent, "attributes": attrs, "undefined": undefined}


def std_file(path, content_hash, agent="internal", requires=()):
    attrs = {"path": path, "hash": content_hash, "owner": None, "group": None, "permissions": 644, "purged": False,
             "purge_on_delete": False, "reload": False, "send_event": True, "receive_events": True,
             "report_only": False, "references": [], "mutators": [], "requires": sorted(requires)}
    return {"id": f"std::File[{agent},path={path}]", "agent": agent, "attributes": attrs, "undefined": False}


class DeployEnv:
    """One database + environment; the scheduler process of that environment."""

    def __init__(self, test, settings=None):
        self.test = test
        self.db = harness.fresh_database("dep")
        self.host, self.port = harness.shared_cluster()
        self.env = str(uuid.uuid4())
        self.sched = None
        for name in sorted(n for n in os.listdir(MIGRATIONS) if n.endswith(".sql")):
            with open(os.path.join(MIGRATIONS, name)) as f:
                self.sql(f.read())
        project = str(uuid.uuid4())
        s = {"autostart_agent_deploy_interval": "0", "autostart_agent_repair_interval": "0"}
        s.update(settings or {})
        self.sql(f"INSERT INTO project (id, name) VALUES ('{project}', 'p');"
                 f"INSERT INTO environment (id, name, project, settings) VALUES ('{self.env}', 'e', '{project}', "
                 f"'{self.q(json.dumps(s))}');"
                 f"INSERT INTO agent (environment, name) VALUES ('{self.env}', '$__scheduler');")
        test.addCleanup(self.stop)

    @staticmethod
    def q(s):
        return s.replace("'", "''")

    def sql(self, text):
        return harness.psql(self.db, text, port=self.port)

    def rows(self, text):
        out = self.sql(text)
        return [line.split("|") for line in out.splitlines()] if out else []

    # ---- the server's side, in SQL
    def put_version(self, version, resources, release=True):
        vals = []
        for r in resources:
            attrs = r["attributes"]
            h = attribute_hash(r["id"], attrs)
            value = r["id"].split("=", 1)[1][:-1]
            rtype = r["id"].split("[", 1)[0]
            vals.append(f"('{self.env}', {version}, '{self.q(r['id'])}', '{rtype}', '{self.q(r['agent'])}', "
                        f"'{self.q(value)}', '{self.q(json.dumps(attrs))}', '{h}', {str(r['undefined']).lower()})")
        agents = sorted({r["agent"] for r in resources})
        stmt = (f"INSERT INTO configurationmodel (environment, version, total) VALUES ('{self.env}', {version}, "
                f"{len(resources)});")
        if vals:
            stmt += ("INSERT INTO resource (environment, model, resource_id, resource_type, agent, resource_id_value, "
                     "attributes, attribute_hash, is_undefined) VALUES " + ",".join(vals) + ";")
        for a in agents:
            stmt += (f"INSERT INTO agent (environment, name) VALUES ('{self.env}', '{self.q(a)}') "
                     "ON CONFLICT DO NOTHING;")
        self.sql(stmt)
        if release:
            self.release(version)

    def release(self, version):
        """What the server does at release: missing rps rows, released=true, a read_version request + NOTIFY."""
        self.sql(
            "BEGIN;"
            "INSERT INTO resource_persistent_state (environment, resource_id, resource_type, agent, resource_id_value, "
            "current_intent_attribute_hash, is_undefined, blocked) "
            f"SELECT environment, resource_id, resource_type, agent, resource_id_value, attribute_hash, is_undefined, "
            f"CASE WHEN is_undefined THEN 'BLOCKED' ELSE 'NOT_BLOCKED' END FROM resource "
            f"WHERE environment = '{self.env}' AND model = {version} ON CONFLICT DO NOTHING;"
            f"UPDATE configurationmodel SET released = true WHERE environment = '{self.env}' AND version = {version};"
            "COMMIT;")
        self.request("read_version")

    def put_file(self, content):
        h = hashlib.sha1(content).hexdigest()
        self.sql(f"INSERT INTO file (content_hash, content) VALUES ('{h}', decode('{content.hex()}', 'hex')) "
                 "ON CONFLICT DO NOTHING")
        return h

    def hold_lock(self, sql_lock):
        """A psql session holding `sql_lock` inside an open transaction; returns a function that releases it."""
        p = subprocess.Popen([os.path.join(harness.pg_bindir(), "psql"), "-h", self.host, "-p", str(self.port), "-U",
                              "postgres", "-d", self.db, "-q"], stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
                             stderr=subprocess.DEVNULL, text=True)
        p.stdin.write(f"BEGIN; {sql_lock};\n")
        p.stdin.flush()

        def release():
            if p.poll() is None:
                p.stdin.write("COMMIT;\n\\q\n")
                p.stdin.flush()
                p.stdin.close()
                p.wait(10)
        self.test.addCleanup(release)
        return release

    def request(self, kind, payload=None):
        self.sql(f"INSERT INTO scheduler_request (environment, kind, payload) VALUES ('{self.env}', '{kind}', "
                 f"'{self.q(json.dumps(payload or {}))}'); NOTIFY inmanta_scheduler, '{self.env}';")

    def set_setting(self, key, value):
        self.sql(f"UPDATE environment SET settings = settings || '{self.q(json.dumps({key: value}))}'::jsonb "
                 f"WHERE id = '{self.env}'")
        self.request("settings_changed")

    # ---- the scheduler process
    def start(self, delay_ms=0, extra_env=None, executor=None):
        """executor: "process" (real `inmanta executor` children) or "null" (the in-process test double, needed
        for delay_ms). Default: process unless a delay is asked."""
        executor = executor or ("null" if delay_ms else "process")
        env = dict(os.environ)
        env.update({"INMANTA_DATABASE_HOST": self.host, "INMANTA_DATABASE_PORT": str(self.port),
                    "INMANTA_DATABASE_NAME": self.db, "INMANTA_DATABASE_USERNAME": "postgres"})
        env.pop("INM_NULL_EXECUTOR_DELAY_MS", None)
        if delay_ms:
            env["INM_NULL_EXECUTOR_DELAY_MS"] = str(delay_ms)
        env.update(extra_env or {})
        self.sched = harness.Process([harness.INMANTA, "scheduler", "--environment", self.env, "--executor", executor],
                                     env=env)
        return self.sched

    def stop(self):
        if self.sched:
            self.sched.stop()
            self.sched = None

    def kill(self):
        self.sched.kill(signal.SIGKILL)
        self.sched.proc.wait()
        self.sched.stop()
        self.sched = None

    # ---- observations
    def status(self, resource_id):
        """The public status of orchestrator.md §5.2."""
        return self.sql(
            "SELECT CASE WHEN orphaned_after IS NOT NULL THEN 'orphaned' WHEN is_deploying THEN 'deploying' "
            "WHEN is_undefined THEN 'undefined' WHEN blocked = 'BLOCKED' THEN 'skipped_for_undefined' "
            "WHEN current_intent_attribute_hash <> last_deployed_attribute_hash THEN 'available' "
            "ELSE last_non_deploying_status END FROM resource_persistent_state "
            f"WHERE environment = '{self.env}' AND resource_id = '{self.q(resource_id)}'")

    def rps(self, resource_id, column):
        return self.sql(f"SELECT {column} FROM resource_persistent_state WHERE environment = '{self.env}' "
                        f"AND resource_id = '{self.q(resource_id)}'")

    def actions(self, resource_id, action="deploy"):
        """Deploy actions of a resource, oldest first: [(version, status, started, finished, messages)]."""
        out = self.sql(
            "SELECT coalesce(json_agg(json_build_array(a.version, a.status, "
            "extract(epoch from a.started), extract(epoch from a.finished), a.messages) ORDER BY a.started), '[]') "
            "FROM resourceaction a JOIN resourceaction_resource r ON r.resource_action_id = a.action_id "
            f"WHERE a.environment = '{self.env}' AND r.resource_id = '{self.q(resource_id)}' AND a.action = '{action}'")
        return json.loads(out)

    def wait_status(self, resource_id, status, timeout=20):
        return harness.wait_for(lambda: self.status(resource_id) == status, timeout=timeout,
                                what=f"{resource_id} to be {status} (is {self.status(resource_id)!r}; scheduler log:\n"
                                     f"{self.sched.output() if self.sched else ''})")

    def wait_processed(self, version, timeout=20):
        harness.wait_for(lambda: self.sql(f"SELECT last_processed_model_version FROM scheduler "
                                          f"WHERE environment = '{self.env}'") == str(version), timeout=timeout,
                         what=f"the scheduler to process version {version}")

    def settle(self, seconds=1.0):
        time.sleep(seconds)
