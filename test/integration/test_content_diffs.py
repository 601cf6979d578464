"""Content diffs (docs/cli.md "dryrun", docs/server.md): a file resource's content change shows as a unified
text diff, with the hashes kept, in the dry-run report (API and `inmanta-cli dryrun request --wait|show`) and in
the desired-state diff between two versions, and the deploy that changes the file logs the diff of what was on
disk and what it wrote (its change log). Real server, scheduler and executor; the model is exported with
`inmanta export` to an environment made with inmanta-cli."""
import json
import os
import re
import unittest
import urllib.parse

import harness
from test_client_server import ServerCliMixin

MODEL = """import std
h = std::Host(name="internal", os=std::linux)
std::ConfigFile(host=h, path="{path}", content="{content}")
"""


class ContentDiffTest(ServerCliMixin, unittest.TestCase):
    def write_model(self, content):
        with open(os.path.join(self.project, "main.cf"), "w") as f:
            f.write(MODEL.format(path=self.target, content=content.replace("\n", "\\n")))

    def test_dry_run_and_version_diff_show_the_text(self):
        self.start_server()
        self.cli(["project", "create", "-n", "p"])
        env = json.loads(self.cli(["--json", "environment", "create", "-n", "dev", "-p", "p"]).stdout)["id"]
        self.project = os.path.join(self.tmp, "proj")
        os.makedirs(self.project)
        with open(os.path.join(self.project, "project.yml"), "w") as f:
            f.write("name: proj\nmodulepath: libs\ndownloadpath: libs\n")
        self.target = os.path.join(self.tmp, "managed", "app.conf")
        os.makedirs(os.path.dirname(self.target))
        self.cli(["environment", "save", "dev"], cwd=self.project)
        self.write_model("alpha\nbeta\ngamma\n")
        v1 = int(re.search(r"Committed resources with version (\d+)", self.export(self.project).stdout).group(1))
        harness.wait_for(lambda: os.path.exists(self.target) and open(self.target).read() == "alpha\nbeta\ngamma\n",
                         timeout=60, what="the file deployed")
        # Drift on disk: the dry run shows what a deploy would put back, as a diff of current -> desired.
        with open(self.target, "w") as f:
            f.write("alpha\nBETA\ngamma\n")
        out = self.cli(["dryrun", "request", "-e", "dev", "--wait", str(v1)]).stdout
        rid = f"std::File[internal,path={self.target}]"
        self.assertIn(f"modified {rid}", out)
        self.assertRegex(out, r"hash: [0-9a-f]{40} -> [0-9a-f]{40}")
        self.assertIn("    --- current\n    +++ desired\n    @@ -1,3 +1,3 @@\n     alpha\n    -BETA\n    +beta\n"
                      "     gamma\n", out)
        self.assertEqual(open(self.target).read(), "alpha\nBETA\ngamma\n", "a dry run changed the file")
        listed = json.loads(self.cli(["--json", "dryrun", "list", "-e", "dev", str(v1)]).stdout)
        self.assertEqual(len(listed), 1)
        shown = self.cli(["dryrun", "show", "-e", "dev", str(v1), listed[0]["id"]]).stdout
        self.assertIn("    -BETA\n    +beta\n", shown)
        report = json.loads(self.cli(["--json", "dryrun", "show", "-e", "dev", str(v1), listed[0]["id"]]).stdout)
        (entry,) = [d for d in report["diff"] if d["resource_id"] == rid]
        self.assertRegex(entry["attributes"]["hash"]["to_value"], "^[0-9a-f]{40}$")  # the hashes stay
        # A new version with other content: the desired-state diff carries the text too.
        self.write_model("alpha\nbeta\ngamma\ndelta\n")
        v2 = int(re.search(r"Committed resources with version (\d+)", self.export(self.project).stdout).group(1))
        st, body, _ = harness.http("GET", f"http://127.0.0.1:{self.port}/api/v2/desiredstate/diff/{v1}/{v2}",
                                   headers={"X-Inmanta-tid": env})
        self.assertEqual(st, 200, body)
        (entry,) = [d for d in body["data"] if d["resource_id"] == rid]
        self.assertEqual(entry["attributes"]["hash"]["diff"],
                         f"--- version {v1}\n+++ version {v2}\n@@ -1,3 +1,4 @@\n alpha\n beta\n gamma\n+delta\n")
        # The same compare from the CLI.
        out = self.cli(["version", "compare", "-e", "dev", str(v1), str(v2)]).stdout
        self.assertIn(f"modified {rid}", out)
        self.assertIn(f"    --- version {v1}\n    +++ version {v2}\n    @@ -1,3 +1,4 @@\n     alpha\n     beta\n"
                      "     gamma\n    +delta\n", out)
        # Version 2 deploys over the drifted file: the deploy's change log carries the diff of what was on disk
        # and what it wrote.
        harness.wait_for(lambda: open(self.target).read() == "alpha\nbeta\ngamma\ndelta\n", timeout=60,
                         what="version 2 deployed")

        def change_log():
            st, body, _ = harness.http("GET", f"http://127.0.0.1:{self.port}/api/v2/resource/"
                                              f"{urllib.parse.quote(rid, safe='')}/logs?limit=50",
                                       headers={"X-Inmanta-tid": env})
            self.assertEqual(st, 200, body)
            return [m["msg"] for m in body["data"] if m["msg"].startswith("Updated the content of")]
        logged = harness.wait_for(change_log, timeout=30, what="the deploy's content change log line")
        self.assertEqual(logged[0], f"Updated the content of {self.target}:\n--- previous\n+++ deployed\n"
                                    "@@ -1,3 +1,4 @@\n alpha\n-BETA\n+beta\n gamma\n+delta\n")


if __name__ == "__main__":
    unittest.main()
