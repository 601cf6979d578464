"""Python `@provider` handlers in the executor (pybridge/, docs/pybridge.md): a model using the test module
test/lang/python/Inputs/libs/pyplug is exported, `inmanta executor --python-artifact` loads the version's
Python code from the artifact, and deploy / dry-run requests for its `pyplug::Note` resources run through the
Python CRUD handler: created, no change, updated, dry run with the diff and nothing written, purged, skipped,
failed with the Python traceback, logs with kwargs, and one `@cache`d connection shared by the actions.
No PostgreSQL is needed; the executor process is stopped by PID."""
import json
import os
import shutil
import subprocess
import tempfile
import unittest

import harness

LIBS = os.path.join(harness.ROOT, "test", "lang", "python", "Inputs", "libs")


frame, read_frame = harness.frame, harness.read_frame


class PythonHandlerTest(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="inm-pyexec-")
        self.addCleanup(shutil.rmtree, self.dir, True)

    def export(self, notes):
        """Exports a model with one pyplug::Note per (name, content, purged); returns {name: resource}."""
        proj = os.path.join(self.dir, "project")
        os.makedirs(proj, exist_ok=True)
        with open(os.path.join(proj, "project.yml"), "w") as f:
            f.write("name: pyexec\nmodulepath: %s\n" % LIBS)
        with open(os.path.join(proj, "main.cf"), "w") as f:
            f.write("import pyplug\n")
            for name, content, purged in notes:
                f.write('pyplug::Note(path="%s", content="%s", purged=%s)\n'
                        % (os.path.join(self.dir, name), content, "true" if purged else "false"))
        p = subprocess.run([harness.INMANTA, "export", "-j", "out.json"], cwd=proj, capture_output=True, text=True)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.artifact = os.path.join(proj, "out.json")
        with open(self.artifact) as f:
            art = json.load(f)
        self.assertEqual([m["module"] for m in art["python_code"]], ["pyplug"])
        return {os.path.basename(r["path"]): r for r in art["resources"]}

    def start(self):
        proc = harness.start_executor(self, "--python-artifact", self.artifact)
        proc.stdin.write(frame({"type": "hello", "protocol": 1}))
        proc.stdin.flush()
        hello = read_frame(proc.stdout)
        self.assertIsNotNone(hello, proc.stderr.read().decode() if proc.poll() is not None else "no hello")
        self.assertEqual(hello["type"], "hello")
        return proc

    def run_actions(self, proc, requests):
        proc.stdin.write(frame({"type": "deploy", "requests": requests}))
        proc.stdin.flush()
        got = {}
        while len(got) < len(requests):
            m = read_frame(proc.stdout)
            self.assertIsNotNone(m, "executor ended early")
            if m["type"] == "result":
                got[m["action_id"]] = m
        return got

    @staticmethod
    def request(aid, resource, dry=False):
        attrs = {k: v for k, v in resource.items() if k not in ("id", "version", "requires", "undefined")}
        return {"action_id": aid, "id": resource["id"], "attributes": attrs, "reason": "test", "dry_run": dry}

    def stop(self, proc):
        proc.stdin.write(frame({"type": "shutdown"}))
        proc.stdin.flush()
        self.assertEqual(read_frame(proc.stdout)["type"], "bye")
        self.assertEqual(proc.wait(10), 0)

    def path(self, name):
        return os.path.join(self.dir, name)

    def test_crud_dry_run_logs_and_cache(self):
        res = self.export([("a", "one", False), ("b", "two", False)])
        proc = self.start()
        got = self.run_actions(proc, [self.request("c1", res["a"]), self.request("c2", res["b"])])
        for aid, name, content in (("c1", "a", "one"), ("c2", "b", "two")):
            self.assertEqual((got[aid]["status"], got[aid]["change"]), ("deployed", "created"), got[aid])
            self.assertEqual(got[aid]["changes"], {"purged": {"current": True, "desired": False}})
            with open(self.path(name)) as f:
                self.assertEqual(f.read(), content)
        created = [l for l in got["c1"]["logs"] if l["msg"].startswith("created")]
        self.assertEqual(created[0]["kwargs"], {"path": self.path("a"), "size": 3})
        self.assertEqual(created[0]["level"], "INFO")

        # Same desired state again: no change.
        again = self.run_actions(proc, [self.request("n1", res["a"])])["n1"]
        self.assertEqual((again["status"], again["change"], again["changes"]), ("deployed", "nochange", {}))

        # The @cache'd connection was made once for all these actions of this executor.
        numbers = {l["kwargs"]["number"] for r in list(got.values()) + [again] for l in r["logs"]
                   if l["msg"].startswith("reading")}
        self.assertEqual(numbers, {1})

        # Dry run of a changed content: the diff, state dry, nothing written.
        changed = dict(res["a"], content="three")
        dry = self.run_actions(proc, [self.request("d1", changed, dry=True)])["d1"]
        self.assertEqual(dry["status"], "dry")
        self.assertEqual(dry["changes"], {"content": {"current": "one", "desired": "three"}})
        with open(self.path("a")) as f:
            self.assertEqual(f.read(), "one")

        # Deploy it: updated.
        upd = self.run_actions(proc, [self.request("u1", changed)])["u1"]
        self.assertEqual((upd["status"], upd["change"]), ("deployed", "updated"), upd)
        with open(self.path("a")) as f:
            self.assertEqual(f.read(), "three")

        # Purged: deleted.
        gone = self.run_actions(proc, [self.request("p1", dict(res["b"], purged=True))])["p1"]
        self.assertEqual((gone["status"], gone["change"]), ("deployed", "purged"), gone)
        self.assertFalse(os.path.exists(self.path("b")))
        self.stop(proc)

    def test_skip_and_python_failure(self):
        res = self.export([("skipme", "x", False), ("bad", "fail", False)])
        proc = self.start()
        got = self.run_actions(proc, [self.request("s1", res["skipme"]), self.request("f1", res["bad"])])
        self.assertEqual(got["s1"]["status"], "skipped", got["s1"])
        self.assertTrue(any("paths with skip are skipped" in json.dumps(l) for l in got["s1"]["logs"]))
        self.assertEqual(got["f1"]["status"], "failed", got["f1"])
        text = json.dumps(got["f1"]["logs"])
        self.assertIn("RuntimeError: refusing to write 'fail'", text)
        self.assertIn("in create_resource", text)
        self.assertFalse(os.path.exists(self.path("bad")))
        self.stop(proc)

    def test_broken_artifact_code_is_a_clear_error(self):
        bad = os.path.join(self.dir, "bad.json")
        with open(bad, "w") as f:
            json.dump({"python_code": [{"module": "m", "files": {"plugins/__init__.py": "0" * 40},
                                        "requirements": []}], "files": {}}, f)
        p = subprocess.run([harness.INMANTA, "executor", "--python-artifact", bad], stdin=subprocess.DEVNULL,
                           capture_output=True, text=True, timeout=30)
        self.assertEqual(p.returncode, 2)
        self.assertIn("is not in the artifact's files", p.stderr)


if __name__ == "__main__":
    unittest.main()
