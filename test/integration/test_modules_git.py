"""`inmanta project install|update|freeze` and the `module` verbs against real git repositories made here (module
sources written by the test, released as tags), served as file:// URLs and by `git daemon` on loopback (stopped
by PID): tag selection per operator and install_mode, transitive requirements, a conflict, a missing
repository, no matching tag, an off-tag dirty checkout, idempotent re-install, update after a new tag, freeze
output, and the compile-time check of installed versions."""
import json
import os
import shutil
import subprocess
import tempfile
import unittest

import harness
from autonomous_util import Database, GitDaemon, run_service


def git(cwd, *args):
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True).stdout.strip()


class ModuleRepos:
    """Bare-bones v1 module repositories under <base>/repos/<name>, one commit and tag per release."""

    def __init__(self, base):
        self.base = os.path.join(base, "repos")
        os.makedirs(self.base)

    def release(self, name, version, requires=(), init_cf="", tag=None, compiler_version=None):
        path = os.path.join(self.base, name)
        if not os.path.exists(path):
            os.makedirs(os.path.join(path, "model"))
            git(path, "init", "-q", "-b", "master")
            git(path, "config", "user.email", "t@example.com")
            git(path, "config", "user.name", "test")
        reqs = "".join(f"  - {r}\n" for r in requires)
        with open(os.path.join(path, "module.yml"), "w") as f:
            f.write(f"name: {name}\nlicense: ASL 2.0\nversion: {version}\nrequires:\n{reqs or '  []'}\n"
                    if not reqs else f"name: {name}\nlicense: ASL 2.0\nversion: {version}\nrequires:\n{reqs}")
        if compiler_version:
            with open(os.path.join(path, "module.yml"), "a") as f:
                f.write(f"compiler_version: {compiler_version}\n")
        with open(os.path.join(path, "model", "_init.cf"), "w") as f:
            f.write(init_cf or f'version = "{name}-{version}"\n')
        git(path, "add", "-A")
        git(path, "commit", "-q", "-m", f"release {version}")
        if tag is not False:
            git(path, "tag", tag or version)
        return git(path, "rev-parse", "HEAD")

    def file_url(self):
        return "file://" + self.base + "/{}"


def inmanta(cwd, *args, check=None):
    p = subprocess.run([harness.INMANTA, *args], cwd=cwd, capture_output=True, text=True, timeout=120)
    if check is not None:
        assert p.returncode == check, f"inmanta {' '.join(args)} -> {p.returncode}\n{p.stdout}\n{p.stderr}"
    return p


class ModulesGitTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="inm-modgit-")
        self.repos = ModuleRepos(self.tmp)
        self.n = 0

    def tearDown(self):
        shutil.rmtree(self.tmp, ignore_errors=True)

    def project(self, requires, main_cf="", repo=None, extra=""):
        self.n += 1
        d = os.path.join(self.tmp, f"proj{self.n}")
        os.makedirs(d)
        repo = repo or self.repos.file_url()
        reqs = "".join(f"  - {r}\n" for r in requires)
        with open(os.path.join(d, "project.yml"), "w") as f:
            f.write(f"name: p{self.n}\nmodulepath: libs\ndownloadpath: libs\nrepo:\n  - type: git\n    url: {repo}\n"
                    f"requires:\n{reqs}{extra}")
        with open(os.path.join(d, "main.cf"), "w") as f:
            f.write(main_cf)
        return d

    def installed(self, proj, name):
        with open(os.path.join(proj, "libs", name, "module.yml")) as f:
            for line in f:
                if line.startswith("version:"):
                    return line.split(":", 1)[1].strip()
        return None

    def test_tag_selection_per_operator_and_mode(self):
        for v in ("1.0.0", "1.1.0", "1.2.0rc1", "2.0.0"):
            self.repos.release("a", v)
        self.repos.release("a", "2.1.0.dev0", tag=False)  # the master head: no tag
        cases = [("a", "2.0.0"), ("a<2.0", "1.1.0"), ("a~=1.0", "1.1.0"), ("a==1.0.0", "1.0.0"),
                 ("a!=2.0.0", "1.1.0"), ("a>1.0,<=1.1.0", "1.1.0"), ("a >= 1.0, < 2", "1.1.0"), ("a==1.*", "1.1.0"),
                 ("a~=1.1.0", "1.1.0"), ("a>2.0.0", None)]
        for req, want in cases:
            p = self.project([req])
            r = inmanta(p, "project", "install")
            if want is None:
                self.assertEqual(r.returncode, 1, r.stdout + r.stderr)
                self.assertIn("no version of module a matches a>2.0.0", r.stderr)
                self.assertIn("available versions: 1.0.0, 1.1.0, 1.2.0rc1, 2.0.0", r.stderr)
                continue
            self.assertEqual(r.returncode, 0, f"{req}: {r.stdout}{r.stderr}")
            self.assertEqual(self.installed(p, "a"), want, req)
            self.assertEqual(git(os.path.join(p, "libs", "a"), "describe", "--tags", "--exact-match"), want)
        p = self.project(["a<2.0"], extra="install_mode: prerelease\n")
        inmanta(p, "project", "install", check=0)
        self.assertEqual(self.installed(p, "a"), "1.2.0rc1")
        p = self.project(["a"], extra="install_mode: master\n")
        inmanta(p, "project", "install", check=0)
        self.assertEqual(self.installed(p, "a"), "2.1.0.dev0")

    def test_transitive_idempotent_update_over_git_daemon(self):
        self.repos.release("b", "1.0.0")
        self.repos.release("b", "1.1.0")
        self.repos.release("c", "0.1.0")
        self.repos.release("a", "1.0.0", requires=["b>=1.0,<1.5"], init_cf='import b\nimport c\nx = b::version\n')
        daemon = GitDaemon(self.repos.base)
        try:
            p = self.project(["a"], main_cf="import a\nstd::print(a::x)\n", repo=daemon.url("{}"))
            r = inmanta(p, "project", "install", check=0)
            self.assertEqual(self.installed(p, "a"), "1.0.0")
            self.assertEqual(self.installed(p, "b"), "1.1.0")
            self.assertEqual(self.installed(p, "c"), "0.1.0")  # imported by a's model, no constraint
            self.assertIn("git://127.0.0.1", r.stdout)
            c = inmanta(p, "compile", check=0)
            self.assertIn("b-1.1.0", c.stdout)
            # Re-running touches nothing: same HEADs, same file times, "up to date".
            heads = {m: git(os.path.join(p, "libs", m), "rev-parse", "HEAD") for m in "abc"}
            mtime = os.stat(os.path.join(p, "libs", "b", "module.yml")).st_mtime_ns
            r = inmanta(p, "project", "install", check=0)
            self.assertIn("All 3 modules are up to date", r.stdout)
            self.assertEqual(heads, {m: git(os.path.join(p, "libs", m), "rev-parse", "HEAD") for m in "abc"})
            self.assertEqual(mtime, os.stat(os.path.join(p, "libs", "b", "module.yml")).st_mtime_ns)
            # A new tag: install keeps the matching installed version, update moves to the newest matching.
            self.repos.release("b", "1.2.0")
            self.repos.release("b", "1.5.0")  # outside a's constraint
            inmanta(p, "project", "install", check=0)
            self.assertEqual(self.installed(p, "b"), "1.1.0")
            r = inmanta(p, "project", "update", check=0)
            self.assertEqual(self.installed(p, "b"), "1.2.0")
            self.assertIn("Moved b 1.2.0", r.stdout)
            c = inmanta(p, "compile", check=0)
            self.assertIn("b-1.2.0", c.stdout)
            # freeze: direct (project requires + main.cf imports) by default, recursive with -r.
            r = inmanta(p, "project", "freeze", "-o", "-", check=0)
            self.assertIn("requires:\n  - a~=1.0.0\n", r.stdout)
            self.assertNotIn("b~=", r.stdout)
            r = inmanta(os.path.join(p, "libs", "a"), "module", "freeze", "-o", "-", check=0)
            self.assertIn("requires:\n  - b~=1.2.0\n  - c~=0.1.0\n", r.stdout)
            inmanta(p, "project", "freeze", "-r", "--operator", "==", check=0)
            with open(os.path.join(p, "project.yml")) as f:
                text = f.read()
            self.assertIn("requires:\n  - a==1.0.0\n  - b==1.2.0\n  - c==0.1.0\n", text)
            self.assertIn("repo:\n  - type: git\n", text)  # the rest of the file is kept
            inmanta(p, "project", "install", check=0)
        finally:
            daemon.stop()

    def test_conflict_missing_repo_and_no_match(self):
        self.repos.release("b", "1.0.0")
        self.repos.release("b", "1.1.0")
        self.repos.release("a", "1.0.0", requires=["b>=1.1"])
        p = self.project(["a", "b<1.1"])
        r = inmanta(p, "project", "install", check=1)
        self.assertIn("conflict for module b", r.stderr)
        self.assertIn("project.yml requires b<1.1", r.stderr)
        self.assertIn("a 1.0.0 requires b>=1.1", r.stderr)
        # Nothing was checked out: the clones made for resolving stay on their default branch.
        # A missing repository: every URL tried is named.
        p = self.project(["nosuch"])
        yml = open(os.path.join(p, "project.yml")).read().replace(
            "repo:\n", "repo:\n  - https://127.0.0.1:1/nothing/{}.git\n  - type: package\n    url: https://pypi.example/simple\n")
        open(os.path.join(p, "project.yml"), "w").write(yml)
        r = inmanta(p, "project", "install", check=1)
        self.assertIn("module nosuch: no repository has it; tried:", r.stderr)
        self.assertIn("https://127.0.0.1:1/nothing/nosuch.git", r.stderr)
        self.assertIn(self.repos.base + "/nosuch", r.stderr)
        self.assertIn("type: package", r.stderr)
        p = self.project(["b>=3"])
        r = inmanta(p, "project", "install", check=1)
        self.assertIn("no version of module b matches b>=3 (required by project.yml); available versions: 1.0.0, 1.1.0",
                      r.stderr)

    def std_release(self, version):
        """Our own std (modules/std) released as `version` in repos/std, with a marker the compile prints."""
        path = os.path.join(self.repos.base, "std")
        if not os.path.exists(path):
            shutil.copytree(os.path.join(harness.ROOT, "modules", "std"), path)
            git(path, "init", "-q", "-b", "master")
        yml = os.path.join(path, "module.yml")
        lines = [ln for ln in open(yml).read().splitlines() if not ln.startswith("version:")]
        open(yml, "w").write("\n".join(lines + [f"version: {version}"]) + "\n")
        base = open(os.path.join(harness.ROOT, "modules", "std", "model", "_init.cf")).read()
        with open(os.path.join(path, "model", "_init.cf"), "w") as f:
            f.write(base + f'std_release = "git std {version}"\n')
        git(path, "add", "-A")
        git(path, "-c", "user.email=t@e", "-c", "user.name=t", "commit", "-q", "-m", f"release {version}")
        git(path, "tag", version)

    def test_std_from_git_when_the_built_in_does_not_satisfy(self):
        builtin = next(ln.split(":", 1)[1].strip() for ln in open(os.path.join(harness.ROOT, "modules", "std",
                                                                                 "module.yml"))
                       if ln.startswith("version:"))
        self.repos.release("old", "1.0.0", requires=["std<5"])
        main = "import old\nimport std\nstd::print(std::std_release)\n"
        # No std in the repositories: install names the built-in version, the constraint and the URLs tried.
        p = self.project(["old"], main_cf=main)
        c = inmanta(p, "compile", check=1)
        self.assertIn("is not installed: run `inmanta project install`", c.stderr)
        r = inmanta(p, "project", "install", check=1)
        self.assertIn(f"module std: the built-in std is version {builtin}, which does not satisfy <5 "
                      "(required by old 1.0.0), and no repository has std; tried:", r.stderr)
        self.assertIn(self.repos.base + "/std", r.stderr)
        # With std released in git: the newest std<5 is installed and is the std the compile loads.
        for v in ("4.0.0", "4.1.0", "5.0.0"):
            self.std_release(v)
        inmanta(p, "project", "install", check=0)
        self.assertEqual(self.installed(p, "std"), "4.1.0")
        out = inmanta(p, "compile", check=0).stdout
        self.assertIn("git std 4.1.0", out)
        mods = {m["name"]: m for m in json.loads(inmanta(p, "module", "list", "--json", check=0).stdout)}
        self.assertEqual((mods["std"]["version"], mods["std"]["source"]), ("4.1.0", "file://" + self.repos.base + "/std"))
        self.assertIn("the project's own std 4.1.0", inmanta(p, "module", "list", check=0).stdout)
        # A project that only imports std keeps the built-in one (no clone); one that requires std in project.yml
        # gets it from git like the reference does.
        q = self.project([], main_cf="import std\n")
        inmanta(q, "project", "install", check=0)
        self.assertFalse(os.path.exists(os.path.join(q, "libs", "std")))
        q = self.project(["std>=5"], main_cf="import std\n")
        inmanta(q, "project", "install", check=0)
        self.assertEqual(self.installed(q, "std"), "5.0.0")
        # The compile check names the built-in std when a pin excludes it and nothing is installed.
        q = self.project(["std~=4.0"], main_cf="import std\n")
        c = inmanta(q, "compile", check=1)
        self.assertIn(f"module std: the built-in std is version {builtin}, which does not satisfy std~=4.0 "
                      "(required by project.yml): run `inmanta project install`", c.stderr)

    def test_compiler_version_passes_over_newer_releases(self):
        self.repos.release("web", "1.0.0", compiler_version="2020.1")
        self.repos.release("web", "1.1.0", compiler_version="2099.1")
        p = self.project(["web"])
        inmanta(p, "project", "install", check=0)
        self.assertEqual(self.installed(p, "web"), "1.0.0")
        p = self.project(["web>=1.1"])
        r = inmanta(p, "project", "install", check=1)
        self.assertIn("no version of module web matches web>=1.1", r.stderr)
        self.assertIn("made for a newer compiler than 2024.1.1: 1.1.0 (compiler_version 2099.1)", r.stderr)
        # A newer tag without module.yml (a v2 release in the same repository) is passed over too.
        web = os.path.join(self.repos.base, "web")
        git(web, "rm", "-q", "module.yml")
        git(web, "commit", "-q", "-m", "v2 layout")
        git(web, "tag", "2.0.0")
        p = self.project(["web"])
        inmanta(p, "project", "install", check=0)
        self.assertEqual(self.installed(p, "web"), "1.0.0")
        r = inmanta(self.project(["web>=2"]), "project", "install", check=1)
        self.assertIn("matching but without module.yml (v2 releases, not installable from git): 2.0.0", r.stderr)

    def test_dirty_off_tag_and_compile_check(self):
        self.repos.release("a", "1.0.0")
        self.repos.release("a", "1.1.0")
        p = self.project(["a==1.0.0"], main_cf="import a\n")
        inmanta(p, "project", "install", check=0)
        lib = os.path.join(p, "libs", "a")
        mods = {m["name"]: m for m in json.loads(inmanta(p, "module", "list", "--json", check=0).stdout)}
        self.assertEqual((mods["a"]["version"], mods["a"]["tag"], mods["a"]["dirty"], mods["a"]["off_tag"]),
                         ("1.0.0", "1.0.0", False, False))
        with open(os.path.join(lib, "model", "_init.cf"), "a") as f:
            f.write("y = 1\n")
        git(lib, "checkout", "-q", "--detach", "HEAD")
        git(lib, "-c", "user.email=t@e", "-c", "user.name=t", "commit", "-q", "-am", "local")  # off-tag
        with open(os.path.join(lib, "model", "_init.cf"), "a") as f:
            f.write("z = 2\n")  # and dirty
        mods = {m["name"]: m for m in json.loads(inmanta(p, "module", "list", "--json", check=0).stdout)}
        self.assertEqual((mods["a"]["dirty"], mods["a"]["off_tag"]), (True, True))
        table = inmanta(p, "module", "list", check=0).stdout
        self.assertIn("off-tag, dirty", table)
        self.assertIn("std: the built-in std module", table)
        st = inmanta(p, "module", "status", check=0).stdout
        self.assertIn("changed: model/_init.cf", st)
        # The project now wants 1.1.0: the compile names the fixing command; install refuses to overwrite.
        yml = os.path.join(p, "project.yml")
        text = open(yml).read()
        open(yml, "w").write(text.replace("a==1.0.0", "a==1.1.0"))
        c = inmanta(p, "compile", check=1)
        self.assertIn("Not all module dependencies have been met", c.stderr)
        self.assertIn("does not satisfy a==1.1.0 (required by project.yml): run `inmanta project install`", c.stderr)
        v = inmanta(p, "module", "verify", check=1)
        self.assertIn("does not satisfy a==1.1.0", v.stderr)
        r = inmanta(p, "project", "install", check=1)
        self.assertIn("has local changes (model/_init.cf)", r.stderr)
        git(lib, "checkout", "-q", "--", ".")
        inmanta(p, "project", "install", check=0)
        self.assertEqual(self.installed(p, "a"), "1.1.0")
        inmanta(p, "compile", check=0)
        inmanta(p, "module", "verify", check=0)

    def test_module_verbs(self):
        self.repos.release("b", "1.0.0")
        self.repos.release("b", "2.0.0")
        out = os.path.join(self.tmp, "new")
        os.makedirs(out)
        inmanta(out, "project", "init", "-n", "demo", "-o", out, check=0)
        proj = os.path.join(out, "demo")
        yml = os.path.join(proj, "project.yml")
        text = open(yml).read()
        open(yml, "w").write(text.replace("https://github.com/inmanta/{}", self.repos.file_url()))
        r = inmanta(proj, "module", "add", "b<2", check=0)
        self.assertIn("requires:\n  - b<2\n", open(yml).read())
        self.assertEqual(self.installed(proj, "b"), "1.0.0")
        r = inmanta(proj, "module", "add", "b>=2", check=1)
        self.assertIn("use --override", r.stderr)
        inmanta(proj, "module", "add", "b>=2", "--override", check=0)
        self.assertEqual(self.installed(proj, "b"), "2.0.0")
        inmanta(proj, "module", "create", "mymod", check=0)
        self.assertTrue(os.path.exists(os.path.join(proj, "mymod", "model", "_init.cf")))
        self.assertIn("version: 0.0.1", open(os.path.join(proj, "mymod", "module.yml")).read())


class ExampleEndToEndTest(unittest.TestCase):
    """examples/git-modules on a copy: repositories made from the module sources, `project install`, compile,
    export, `inmanta deploy` (embedded: private PostgreSQL, server, scheduler, executor), freeze."""

    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="inm-modex-")
        self.root = os.path.join(self.tmp, "git-modules")
        shutil.copytree(os.path.join(harness.ROOT, "examples", "git-modules"), self.root,
                        ignore=shutil.ignore_patterns("repos", "libs", "data", "managed"))
        self.project = os.path.join(self.root, "project")

    def tearDown(self):
        data = os.path.join(self.project, "data")
        if os.path.isdir(data):
            for name in os.listdir(data):
                cluster_file = os.path.join(data, name, "cluster")
                if os.path.exists(cluster_file):
                    shutil.rmtree(open(cluster_file).read().strip(), ignore_errors=True)
        shutil.rmtree(self.tmp, ignore_errors=True)

    def test_example_end_to_end(self):
        subprocess.run([os.path.join(self.root, "make-repos.sh")], check=True, capture_output=True)
        r = inmanta(self.project, "project", "install", check=0)
        self.assertIn("Installed site 1.0.0 (tag 1.0.0)", r.stdout)
        self.assertIn("Installed greeting 1.1.0 (tag 1.1.0)", r.stdout)  # 2.0.0 is outside site's ~= 1.0
        inmanta(self.project, "compile", check=0)
        out = os.path.join(self.tmp, "artifact.json")
        inmanta(self.project, "export", "-j", out, check=0)
        self.assertIn("hello from greeting 1.1.0", open(out).read())
        d = subprocess.run([harness.INMANTA, "deploy"], cwd=self.project, capture_output=True, text=True, timeout=300)
        self.assertEqual(d.returncode, 0, d.stdout + d.stderr)
        with open(os.path.join(self.project, "managed", "index.html")) as f:
            self.assertEqual(f.read(), "hello from greeting 1.1.0\n")
        r = inmanta(self.project, "project", "freeze", "-o", "-", check=0)
        self.assertIn("requires:\n  - site==1.0.0\n", r.stdout)


class ServerCompileModulesTest(unittest.TestCase):
    """The autonomous compile's "Installing modules" stage: the first compile clones into the environment's
    cache, the next reuses it (nothing fetched or moved), a notify with update moves to a new matching tag."""

    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="inm-modsrv-")
        self.repos = ModuleRepos(self.tmp)
        self.repos.release("a", "1.0.0", init_cf='x = "a-1.0.0"\n')
        self.project = os.path.join(self.tmp, "project.git")
        os.makedirs(self.project)
        git(self.project, "init", "-q", "-b", "main")
        with open(os.path.join(self.project, "project.yml"), "w") as f:
            f.write(f"name: srv\nmodulepath: libs\ndownloadpath: libs\nrepo: {self.repos.file_url()}\n"
                    "requires:\n  - a~=1.0\n")
        with open(os.path.join(self.project, "main.cf"), "w") as f:
            f.write("import a\nimport std::testing\n"
                    'std::testing::NullResource(name=a::x, agentname="a1")\n')
        git(self.project, "add", "-A")
        git(self.project, "-c", "user.email=t@e", "-c", "user.name=t", "commit", "-q", "-m", "project")
        self.db = Database()
        self.env = self.db.add_environment(self.project)
        self.state = os.path.join(self.tmp, "state")

    def tearDown(self):
        shutil.rmtree(self.tmp, ignore_errors=True)

    def compile(self, *extra):
        rc, out = run_service(self.db, self.state, "-e", self.env, "--request", "--no-export", *extra)
        self.assertEqual(rc, 0, out)
        c = self.db.compiles(self.env)[-1]
        reports = {r["name"]: r for r in self.db.reports(c["id"])}
        self.assertTrue(c["success"], (c, reports))
        stages = [r["name"] for r in self.db.reports(c["id"])]
        self.assertLess(stages.index("Installing modules"), stages.index("Recompiling configuration model"))
        artifact = os.path.join(self.state, "server", self.env, "artifacts", c["id"] + ".json")
        return reports["Installing modules"], open(artifact).read()

    def test_install_stage_cache_and_update(self):
        rep, art = self.compile()
        self.assertIn("Cloning a from", rep["outstream"])
        self.assertIn("Installed a 1.0.0", rep["outstream"])
        self.assertEqual(rep["command"], "inmanta project install")
        self.assertIn("a-1.0.0", art)
        cache = os.path.join(self.state, "server", self.env, "modules", "a")
        self.assertTrue(os.path.isdir(os.path.join(cache, ".git")))
        rep, art = self.compile()
        self.assertNotIn("Cloning", rep["outstream"])
        self.assertNotIn("Fetching", rep["outstream"])
        self.assertIn("already installed", rep["outstream"])
        self.assertIn("modules are up to date", rep["outstream"])
        self.assertIn("Using the built-in std module", rep["outstream"])
        self.repos.release("a", "1.1.0", init_cf='x = "a-1.1.0"\n')
        self.repos.release("a", "2.0.0", init_cf='x = "a-2.0.0"\n')
        rep, art = self.compile()  # no update: the installed 1.0.0 still matches
        self.assertIn("a-1.0.0", art)
        rep, art = self.compile("--update")
        self.assertEqual(rep["command"], "inmanta project update")
        self.assertIn("Moved a 1.1.0", rep["outstream"])
        self.assertIn("a-1.1.0", art)


if __name__ == "__main__":
    unittest.main()
