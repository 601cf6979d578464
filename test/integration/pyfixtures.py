"""Shared Python test modules of the integration tests that deploy Python handlers (test_pybridge_deploy.py,
test_pybridge_server.py, test_deploy_events.py, test_external_agent.py): the `Note` resource (a text file kept
by a Python CRUDHandler) as plugin source text, and helpers that write a module and a project and export them
to a server fixture. The plugin text is a template: each test picks the module name, extra fields and mappers,
and the log line its handler writes on create and update (with kwargs the test asserts)."""
import json
import os
import subprocess

import harness

NOTE_MODEL = '''entity Note extends std::PurgeableResource:
  """A text file kept by the Python handler %(module)s::Note."""
  string path
  string content
  string agentname = "local"
end
implement Note using std::none
'''

_NOTE_PLUGINS = '''"""%(doc)s"""
import os

from inmanta.agent.handler import CRUDHandler, HandlerContext, ResourcePurged, provider
from inmanta.resources import PurgeableResource, Resource, resource
%(preamble)s

@resource("%(module)s::Note", agent="agentname", id_attribute="path")
class Note(PurgeableResource):
    fields = %(fields)r
%(mappers)s

@provider("%(module)s::Note", name="note")
class NoteHandler(CRUDHandler):
    def read_resource(self, ctx: HandlerContext, resource: Note) -> None:
        if not os.path.exists(resource.path):
            raise ResourcePurged()
        with open(resource.path) as f:
            resource.content = f.read()
%(read_extra)s
    def create_resource(self, ctx: HandlerContext, resource: Note) -> None:
        with open(resource.path, "w") as f:
            f.write(resource.content)
%(on_create)s
        ctx.set_created()

    def update_resource(self, ctx: HandlerContext, changes: dict, resource: Note) -> None:
        with open(resource.path, "w") as f:
            f.write(resource.content)
%(on_update)s
        ctx.set_updated()

    def delete_resource(self, ctx: HandlerContext, resource: Note) -> None:
        os.remove(resource.path)
        ctx.set_purged()
%(extra)s'''


def note_plugins(module="pynote", doc="Test module.", preamble="", fields=("path", "content"), mappers="",
                 read_extra="", on_create="", on_update="", extra=""):
    """The plugins/__init__.py of a module with the Note resource and its handler. `on_create`/`on_update`
    are statements (8-space indented) run after the file is written, e.g. a ctx.info line."""
    return _NOTE_PLUGINS % dict(module=module, doc=doc, preamble=preamble, fields=tuple(fields), mappers=mappers,
                                read_extra=read_extra, on_create=on_create or "        pass",
                                on_update=on_update or "        pass", extra=extra)


def write_module(libs, name, model, plugins, files=None):
    """libs/<name> with module.yml, model/_init.cf, plugins/__init__.py and any more {relative path: text}."""
    mod = os.path.join(libs, name)
    texts = {"module.yml": f"name: {name}\nversion: 1.0.0\n", "model/_init.cf": model,
             "plugins/__init__.py": plugins, **(files or {})}
    for rel, text in texts.items():
        path = os.path.join(mod, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as f:
            f.write(text)
    return mod


def write_project(root, name, main_cf):
    """root/project with project.yml (modulepath root/libs) and main.cf; returns its path."""
    proj = os.path.join(root, "project")
    os.makedirs(proj, exist_ok=True)
    with open(os.path.join(proj, "project.yml"), "w") as f:
        f.write("name: %s\nmodulepath: %s\n" % (name, os.path.join(root, "libs")))
    with open(os.path.join(proj, "main.cf"), "w") as f:
        f.write(main_cf)
    return proj


def export_and_release(test, srv, env, proj):
    """`inmanta export` of `proj` to the server fixture, then release the newest version (auto_deploy may have
    released it already); returns the version."""
    p = subprocess.run([harness.INMANTA, "export", "-e", env, "--server_address", "127.0.0.1", "--server_port",
                        str(srv.port)], cwd=proj, capture_output=True, text=True, timeout=120)
    test.assertEqual(p.returncode, 0, p.stdout + p.stderr)
    v = int(harness.psql(srv.db, f"SELECT max(version) FROM configurationmodel WHERE environment = '{env}'"))
    status, body = srv.call("POST", f"/api/v1/version/{v}", {}, env=env)
    test.assertTrue(status == 200 or (status == 409 and "already released" in json.dumps(body)), body)
    return v


def deploy_logs(db, rid, version):
    """The log lines of the deploy actions of `rid` at `version`."""
    rows = harness.psql(db, "SELECT a.messages FROM resourceaction a JOIN resourceaction_resource x ON "
                        f"x.resource_action_id = a.action_id WHERE x.resource_id = '{rid}' AND "
                        f"x.resource_version = {version} AND a.action = 'deploy'")
    return [m for line in rows.splitlines() if line for m in json.loads(line)]
