"""`inmanta deploy` (embedded mode) on a copy of examples/deploy in a mktemp folder: a private PostgreSQL kept under
data/deploy (as root: run as `postgres` from a postgres-accessible folder in /var/tmp, recorded in
data/deploy/cluster during the run and moved back to data/deploy/pg at its end), the server, its scheduler and executor processes. First run deploys; a second run changes
nothing; a file changed by hand is repaired; --dry-run shows the diff (file contents as a unified diff), changes nothing and deletes the version it stored; nothing it started is
left running; a failing resource makes it exit non-zero."""
import os
import shutil
import subprocess
import tempfile
import unittest

import harness

EXAMPLE = os.path.join(harness.ROOT, "examples", "deploy")


def leftovers(marker):
    out = []
    for p in os.listdir("/proc"):
        if p.isdigit():
            try:
                with open(f"/proc/{p}/cmdline", "rb") as f:
                    if marker.encode() in f.read():
                        out.append(int(p))
            except OSError:
                pass
    return out


class EmbeddedDeployTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="inm-embedded-")
        self.addCleanup(self.cleanup)
        self.project = os.path.join(self.tmp, "deploy")
        self.var_tmp = set(os.listdir("/var/tmp"))
        shutil.copytree(EXAMPLE, self.project, ignore=shutil.ignore_patterns("data", "managed"))

    def cleanup(self):
        cluster_file = os.path.join(self.project, "data", "deploy", "cluster")
        if os.path.exists(cluster_file):
            shutil.rmtree(open(cluster_file).read().strip(), ignore_errors=True)
        shutil.rmtree(self.tmp, ignore_errors=True)

    def left(self):
        marks = [self.project]
        cluster_file = os.path.join(self.project, "data", "deploy", "cluster")
        if os.path.exists(cluster_file):
            marks.append(open(cluster_file).read().strip())
        return [p for m in marks for p in leftovers(m)]

    def assert_parked(self):
        """After a run: the cluster is under data/deploy/pg, nothing is recorded or left in /var/tmp for it."""
        deploy = os.path.join(self.project, "data", "deploy")
        self.assertTrue(os.path.isfile(os.path.join(deploy, "pg", "data", "PG_VERSION")))
        self.assertFalse(os.path.exists(os.path.join(deploy, "cluster")), "a /var/tmp cluster is still recorded")
        self.assertEqual(sorted(set(os.listdir("/var/tmp")) - self.var_tmp), [], "left behind in /var/tmp")

    def deploy(self, *args):
        r = subprocess.run([harness.INMANTA, "deploy", *args], cwd=self.project, capture_output=True, text=True,
                           timeout=300)
        return r.returncode, r.stdout + r.stderr

    def test_deploy_second_run_repair_and_dry_run(self):
        code, out = self.deploy()
        self.assertEqual(code, 0, out)
        page = os.path.join(self.project, "managed", "site", "index.html")
        with open(page) as f:
            self.assertEqual(f.read(), "hello from inmanta deploy\n")
        self.assertEqual(os.readlink(os.path.join(self.project, "managed", "index.html")), page)
        self.assertIn("deployed         std::File", out)
        self.assertEqual(self.left(), [], "processes left running")
        self.assert_parked()
        if os.geteuid() == 0:
            # A cluster left in /var/tmp by a killed run or an earlier version (recorded in data/deploy/cluster)
            # is used, then moved back under data/deploy: /var/tmp ends clean and the state is kept.
            legacy = tempfile.mkdtemp(prefix="inmanta-deploy-legacy-", dir="/var/tmp")
            self.addCleanup(shutil.rmtree, legacy, True)
            os.chmod(legacy, 0o755)
            shutil.move(os.path.join(self.project, "data", "deploy", "pg", "data"), os.path.join(legacy, "data"))
            with open(os.path.join(self.project, "data", "deploy", "cluster"), "w") as f:
                f.write(legacy + "\n")
        # Second run: nothing changes.
        code, out = self.deploy()
        self.assertEqual(code, 0, out)
        self.assertIn("0 of 4 resources changed", out)
        self.assert_parked()
        if os.geteuid() == 0:
            self.assertFalse(os.path.exists(legacy), "the earlier cluster folder in /var/tmp was not cleaned up")
        # A hand edit: --dry-run shows it and leaves it; a deploy repairs it.
        with open(page, "w") as f:
            f.write("edited\n")
        code, out = self.deploy("--dry-run")
        self.assertEqual(code, 0, out)
        self.assertRegex(out, r"modified\s+std::File")
        # The content diff of the hand edit (current -> desired), and the dry run's version removed again.
        self.assertIn("--- current", out)
        self.assertIn("-edited", out)
        self.assertIn("+hello from inmanta deploy", out)
        self.assertRegex(out, r"Version \d+ was stored for this dry run only and is deleted again")
        with open(page) as f:
            self.assertEqual(f.read(), "edited\n")
        code, out = self.deploy()
        self.assertEqual(code, 0, out)
        with open(page) as f:
            self.assertEqual(f.read(), "hello from inmanta deploy\n")
        self.assertEqual(self.left(), [])

    @unittest.skipUnless(os.geteuid() == 0, "needs root to switch to the unprivileged user `nobody`")
    def test_as_an_ordinary_user(self):
        import pwd
        nobody = pwd.getpwnam("nobody")
        os.chmod(self.tmp, 0o755)
        # A checkout inside a private folder (a `mktemp -d` clone is 0700) cannot be traversed by `nobody`: open
        # every ancestor of the checkout for traversal (o+x) for this test only, as an administrator would.
        opened = []
        for start in (harness.ROOT, os.path.dirname(harness.INMANTA)):
            d = os.path.abspath(start)
            while True:
                mode = os.stat(d).st_mode
                if not mode & 0o001:
                    os.chmod(d, mode | 0o001)
                    opened.append((d, mode))
                if d == os.path.dirname(d):
                    break
                d = os.path.dirname(d)
        self.addCleanup(lambda: [os.chmod(p, m) for p, m in reversed(opened)])
        for d, _, files in os.walk(self.project):
            os.chown(d, nobody.pw_uid, nobody.pw_gid)
            for f in files:
                os.chown(os.path.join(d, f), nobody.pw_uid, nobody.pw_gid)
        r = subprocess.run(["runuser", "-u", "nobody", "--", "env", f"HOME={self.tmp}", harness.INMANTA, "deploy"],
                           cwd=self.project, capture_output=True, text=True, timeout=300)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        page = os.path.join(self.project, "managed", "site", "index.html")
        self.assertEqual(os.stat(page).st_uid, nobody.pw_uid)
        self.assertTrue(os.path.isdir(os.path.join(self.project, "data", "deploy", "pg", "data")),
                        "as an ordinary user the cluster lives under data/deploy")
        self.assertIn("3 of 4 resources changed", r.stdout)
        self.assertEqual(self.left(), [])

    def test_failing_resource_exits_non_zero(self):
        with open(os.path.join(self.project, "main.cf"), "a") as f:
            f.write('\nstd::testing::NullResource(name="broken", fail=true)\n')
        code, out = self.deploy()
        self.assertNotEqual(code, 0, out)
        self.assertIn("failed           std::testing::NullResource[internal,name=broken]", out)
        self.assertEqual(self.left(), [])


if __name__ == "__main__":
    unittest.main()
