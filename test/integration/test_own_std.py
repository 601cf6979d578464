"""The project's own std (issue #31, docs/modules.md "The std module"): a `libs/std` with a plugins/ package is
loaded like any other module. The test std (test/lang/project/Inputs/own_std_python, written for this project)
brings a plugin whose name the native std also has (upper), a std::File @resource with a field of its own and a
@provider that writes a marker file. Checked: its plugins are the ones called, a native-only plugin is not
available, the export carries its fields and its code, `inmanta executor --python-artifact` deploys through
its handler (native std handlers are not registered for it), a syntax error in it is a compile error at its
file:line, `module list` says which std is used, and `builtin_std` / `--builtin-std` choose the built-in std.
With the built-in std, a native handler takes part in the `available()` choice among a type's Python providers.
No PostgreSQL; the executor is stopped by PID."""
import base64
import json
import os
import shutil
import subprocess
import tempfile
import unittest

import harness

SOURCE = os.path.join(harness.ROOT, "test", "lang", "project", "Inputs", "own_std_python")
frame, read_frame = harness.frame, harness.read_frame


class OwnStdTest(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="inm-ownstd-")
        self.addCleanup(shutil.rmtree, self.dir, True)
        self.proj = os.path.join(self.dir, "project")
        shutil.copytree(SOURCE, self.proj)
        self.target = os.path.join(self.dir, "deployed.txt")
        self.main("std::print(std::upper(\"abc\"))\n"
                  "h = std::Host(name=\"localhost\")\n"
                  f"std::File(host=h, path=\"{self.target}\", content=std::flavour())\n")

    def main(self, text):
        with open(os.path.join(self.proj, "main.cf"), "w") as f:
            f.write("import std\n" + text)

    def inmanta(self, *args):
        return subprocess.run([harness.INMANTA, *args], cwd=self.proj, capture_output=True, text=True, timeout=120)

    def export(self, *extra):
        p = self.inmanta("export", "-j", "out.json", *extra)
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        with open(os.path.join(self.proj, "out.json")) as f:
            return p.stdout, json.load(f)

    def deploy(self, artifact, requests, files=None):
        proc = harness.start_executor(self, "--python-artifact", artifact)
        proc.stdin.write(frame({"type": "hello", "protocol": 1}))
        proc.stdin.flush()
        hello = read_frame(proc.stdout)
        self.assertIsNotNone(hello, proc.stderr.read().decode() if proc.poll() is not None else "no hello")
        proc.stdin.write(frame({"type": "deploy", "requests": requests}))
        proc.stdin.flush()
        got = {}
        while len(got) < len(requests):
            m = read_frame(proc.stdout)
            self.assertIsNotNone(m, "executor ended early")
            if m["type"] == "result":
                got[m["action_id"]] = m
            elif m["type"] == "get_file":
                content = (files or {}).get(m["hash"])
                answer = {"type": "file", "request": m["request"], "found": content is not None}
                if content is not None:
                    answer["content_base64"] = base64.b64encode(content.encode()).decode()
                proc.stdin.write(frame(answer))
                proc.stdin.flush()
        proc.stdin.write(frame({"type": "shutdown"}))
        proc.stdin.flush()
        self.assertEqual(read_frame(proc.stdout)["type"], "bye")
        self.assertEqual(proc.wait(10), 0)
        return got

    @staticmethod
    def request(aid, rid, attrs):
        return {"action_id": aid, "id": rid, "attributes": attrs, "reason": "test", "dry_run": False}

    def test_project_std_plugins_resources_and_handlers(self):
        out, art = self.export()
        # The project's plugin wins over the native std::upper of the same name.
        self.assertIn("own-std:ABC\n", out)
        (res,) = art["resources"]
        self.assertEqual(res["id"], f"std::File[localhost,path={self.target}],v=0")
        # The fields the Python @resource declares (note from its mapper), none of the native std::File's.
        self.assertEqual(sorted(res), ["content", "id", "note", "path", "purge_on_delete", "purged", "requires",
                                       "send_event", "undefined", "version"])
        self.assertEqual(res["note"], "exported by the project's std for localhost")
        self.assertEqual(res["content"], "the project's own std, from its Python")
        self.assertEqual([m["module"] for m in art["python_code"]], ["std"])
        self.assertEqual(sorted(art["python_code"][0]["files"]), ["plugins/__init__.py"])

        # Deployed through the project's handler: the file and its marker. A type only the native std handles
        # (std::Directory) has no handler in this code: the built-in std's handlers are not registered.
        attrs = {k: v for k, v in res.items() if k not in ("id", "version", "requires", "undefined")}
        folder = os.path.join(self.dir, "folder")
        got = self.deploy(os.path.join(self.proj, "out.json"), [
            self.request("f1", res["id"].replace(",v=0", ",v=1"), attrs),
            self.request("d1", f"std::Directory[localhost,path={folder}],v=1",
                         {"path": folder, "mode": 755, "owner": None, "group": None, "purged": False,
                          "purge_on_delete": False, "send_event": False}),
        ])
        self.assertEqual((got["f1"]["status"], got["f1"]["change"]), ("deployed", "created"), got["f1"])
        with open(self.target) as f:
            self.assertEqual(f.read(), "the project's own std, from its Python")
        with open(self.target + ".own-std-handler") as f:
            self.assertEqual(f.read(), "exported by the project's std for localhost")
        self.assertNotEqual(got["d1"]["status"], "deployed", got["d1"])
        self.assertFalse(os.path.exists(folder))

        listing = self.inmanta("module", "list")
        self.assertEqual(listing.returncode, 0, listing.stderr)
        self.assertIn("std: the project's own std 9.1.0 in " + os.path.join(self.proj, "libs", "std") +
                      " (its Python plugins/ are loaded", listing.stdout)

    def test_native_only_plugin_is_not_available(self):
        # std::length is a native std plugin; the project's std does not define it.
        self.main("std::print(std::length(\"abc\"))\n")
        p = self.inmanta("compile")
        self.assertNotEqual(p.returncode, 0, p.stdout)
        self.assertIn("std::length", p.stderr)
        self.assertNotIn("\n3\n", "\n" + p.stdout)

    def test_syntax_error_in_project_std_is_reported_at_its_line(self):
        init = os.path.join(self.proj, "libs", "std", "plugins", "__init__.py")
        with open(init) as f:
            lines = f.read().split("\n")
        lines.insert(11, "def broken(:")  # line 12
        with open(init, "w") as f:
            f.write("\n".join(lines))
        p = self.inmanta("compile")
        self.assertNotEqual(p.returncode, 0, p.stdout)
        self.assertIn(init + ":12", p.stderr)
        self.assertIn("SyntaxError", p.stderr)
        self.assertIn("Failed to load module std", p.stderr)

    def test_builtin_std_when_asked(self):
        self.main("std::print(std::upper(\"abc\"))\nstd::print(std::length(\"abcd\"))\n")
        # On the command line.
        p = self.inmanta("compile", "--builtin-std")
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        self.assertEqual(p.stdout.split(), ["ABC", "4"])
        # In project.yml.
        with open(os.path.join(self.proj, "project.yml"), "a") as f:
            f.write("builtin_std: true\n")
        out, art = self.export()
        self.assertEqual(out.split(), ["ABC", "4"])
        self.assertNotIn("python_code", art)
        listing = self.inmanta("module", "list")
        self.assertIn("std: the built-in std module (", listing.stdout)
        self.assertIn("the std in " + os.path.join(self.proj, "libs", "std") + " is not used", listing.stdout)

    def test_native_handler_takes_part_in_the_provider_choice(self):
        # The built-in std (no libs/std) and a module with a second std::File provider, available for paths
        # ending in ".python": the native handler is the provider "posix_file", always available.
        shutil.rmtree(os.path.join(self.proj, "libs", "std"))
        mod = os.path.join(self.proj, "libs", "altfile")
        os.makedirs(os.path.join(mod, "model"))
        os.makedirs(os.path.join(mod, "plugins"))
        with open(os.path.join(mod, "module.yml"), "w") as f:
            f.write("name: altfile\nlicense: ASL 2.0\nversion: 1.0.0\n")
        with open(os.path.join(mod, "model", "_init.cf"), "w") as f:
            f.write("")
        with open(os.path.join(mod, "plugins", "__init__.py"), "w") as f:
            f.write(ALT_PROVIDER)
        native, python = os.path.join(self.dir, "native.txt"), os.path.join(self.dir, "both.python")
        self.main("import altfile\nh = std::Host(name=\"localhost\", os=std::linux)\n" + "".join(
            f'std::File(host=h, path="{p}", content="x", owner="root", group="root", mode=644)\n' for p in (native, python)))
        _, art = self.export()
        by_path = {r["path"]: r for r in art["resources"] if r["id"].startswith("std::File")}
        reqs = [self.request(aid, by_path[p]["id"].replace(",v=0", ",v=1"),
                             {k: v for k, v in by_path[p].items() if k not in ("id", "version", "requires", "undefined")})
                for aid, p in (("n1", native), ("p1", python))]
        got = self.deploy(os.path.join(self.proj, "out.json"), reqs, files=art["files"])
        # Only the native handler is available: it deploys the file.
        self.assertEqual((got["n1"]["status"], got["n1"]["change"]), ("deployed", "created"), got["n1"])
        with open(native) as f:
            self.assertEqual(f.read(), "x")
        # Both available: unavailable (the reference's get_provider failure), the log naming them, nothing written.
        self.assertEqual(got["p1"]["status"], "unavailable", got["p1"])
        self.assertIn("More than one handler selected for resource std::File[localhost,path=%s],v=1 (available: "
                      "posix_file, conditional)" % python, json.dumps(got["p1"]["logs"]))
        self.assertFalse(os.path.exists(python))


ALT_PROVIDER = """
from inmanta.agent.handler import CRUDHandler, provider


@provider("std::File", name="conditional")
class Conditional(CRUDHandler):
    def available(self, resource):
        return resource.path.endswith(".python")

    def read_resource(self, ctx, resource):
        raise RuntimeError("not expected to run")
"""

if __name__ == "__main__":
    unittest.main()
