"""Per-command help and "did you mean" of the command lines (docs/cli.md "Help"): `inmanta VERB --help` for every
row of the verb table (tools/Verbs.cpp, enumerated with the hidden `--list-verbs`) and `inmanta-cli GROUP VERB
--help` for every command of orchestrator/cli/CliHelp.cpp print that command's own usage and options and exit 0;
every command orchestrator/cli/CliCommands.cpp dispatches has a help row (checked from the dispatch code); misspelt
commands suggest the nearest; a 401 answer tells how to pass a token. Needs no PostgreSQL: the 401 comes from a tiny loopback
server.
"""
import os
import re
import shutil
import subprocess
import tempfile
import threading
import unittest
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import harness

ROOT = harness.ROOT
CLI = os.path.join(os.path.dirname(harness.INMANTA), "inmanta-cli")
ENV = "6f0b1c2d-0000-4000-8000-000000000001"


def run(args, **kw):
    return subprocess.run(args, capture_output=True, text=True, timeout=60, **kw)


class Unauthorized:
    """A loopback HTTP server that answers 401 to everything, as a server with auth does without a token."""

    def __init__(self):
        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *a):
                pass

            def handle_any(self):
                n = int(self.headers.get("Content-Length") or 0)
                if n:
                    self.rfile.read(n)
                out = b'{"message": "Access to this resource is unauthorized."}'
                self.send_response(401)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(out)))
                self.end_headers()
                self.wfile.write(out)

            do_GET = do_PUT = do_POST = do_DELETE = handle_any

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.server.server_address[1]
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def stop(self):
        self.server.shutdown()
        self.server.server_close()


class InmantaVerbHelp(unittest.TestCase):
    def test_every_verb_prints_its_own_usage(self):
        verbs = run([harness.INMANTA, "--list-verbs"]).stdout.split()
        # The table holds the compiler's commands and the orchestrator's verbs.
        for v in ("compile", "export", "server", "deploy", "scheduler", "executor", "agent", "lit-config"):
            self.assertIn(v, verbs)
        overview = run([harness.INMANTA, "--help"]).stdout
        for v in verbs:
            self.assertRegex(overview, rf"(?m)^  {re.escape(v)}\s")  # listed in the overview
            for flag in ("--help", "-h"):
                r = run([harness.INMANTA, v, flag])
                self.assertEqual(r.returncode, 0, f"{v} {flag}: {r.stderr}")
                first = r.stdout.splitlines()[0] if r.stdout else ""
                self.assertRegex(first, rf"^usage: inmanta (\[-v…\] )?{re.escape(v)}\b", f"{v}: {r.stdout}")
                self.assertIn("\noptions:\n", r.stdout, f"{v} lists no options")
                self.assertNotEqual(r.stdout, overview, f"{v} prints the global help")

    def test_command_options_are_the_ones_it_parses(self):
        export = run([harness.INMANTA, "export", "--help"]).stdout
        for opt in ("-j", "-e ENV", "-d", "--server_address", "--token", "--partial", "-f FILE"):
            self.assertIn(opt, export)
        self.assertIn("--export-json", run([harness.INMANTA, "compile", "--help"]).stdout)
        self.assertNotIn("-d  ", run([harness.INMANTA, "compile", "--help"]).stdout)
        self.assertIn("--dry-run", run([harness.INMANTA, "deploy", "--help"]).stdout)
        # the program names of the compiler
        r = run([os.path.join(os.path.dirname(harness.INMANTA), "inmanta-export"), "--help"])
        self.assertEqual((r.returncode, r.stdout.splitlines()[0][:22]), (0, "usage: inmanta [-v…] e"))

    def test_unknown_verb_suggests_the_nearest(self):
        r = run([harness.INMANTA, "exprot"])
        self.assertEqual(r.returncode, 2)
        self.assertIn("unknown command 'exprot'; did you mean 'export'?", r.stderr)
        r = run([harness.INMANTA, "sever"])
        self.assertIn("did you mean 'server'?", r.stderr)
        r = run([harness.INMANTA, "frobnicate"])
        self.assertIn("unknown command 'frobnicate'", r.stderr)
        self.assertNotIn("did you mean", r.stderr)


class InmantaCliHelp(unittest.TestCase):
    def commands(self):
        return [line.split() for line in run([CLI, "--list-verbs"]).stdout.splitlines() if line.strip()]

    def test_every_command_prints_its_own_usage(self):
        commands = self.commands()
        self.assertGreater(len(commands), 30)
        overview = run([CLI, "--help"]).stdout
        for words in commands:
            r = run([CLI, *words, "--help"])
            self.assertEqual(r.returncode, 0, f"{words}: {r.stderr}")
            self.assertTrue(r.stdout.startswith("usage: inmanta-cli [global options] " + " ".join(words)),
                            f"{words}: {r.stdout}")
            self.assertIn("global options", r.stdout)
            self.assertNotEqual(r.stdout, overview)
            # Every option the synopsis names is explained.
            synopsis = r.stdout.splitlines()[0]
            for opt in re.findall(r"(?<![\w-])(--?[a-z][\w-]*)", synopsis.split(" ".join(words), 1)[1]):
                self.assertIn("\noptions:\n", r.stdout, f"{words}")
                self.assertRegex(r.stdout.split("\noptions:\n", 1)[1], rf"(?m)^  .*{re.escape(opt)}\b", f"{words}")
        # A group alone lists its commands; options may come before the words.
        r = run([CLI, "--json", "version", "--help"])
        self.assertEqual(r.returncode, 0)
        for v in ("list", "release", "report"):
            self.assertIn(f"version {v}", r.stdout)
        r = run([CLI, "environment", "setting", "set", "-h"])
        self.assertIn("-o, --value VALUE", r.stdout)

    def test_dispatched_commands_have_help(self):
        """Every `verb == "x"` of a group function that runCommand() dispatches to (orchestrator/cli/Cli*.cpp)
        is a command of --list-verbs."""
        cli_dir = os.path.join(ROOT, "orchestrator", "cli")
        src = "".join(open(os.path.join(cli_dir, f), encoding="utf-8").read() + "\n"
                      for f in sorted(os.listdir(cli_dir))
                      if f.startswith("Cli") and f.endswith(".cpp"))
        groups = dict((fn, g) for g, fn in re.findall(r'if \(group == "([\w-]+)"\) return (\w+)\(', src))
        groups["setting"] = "environment setting"
        listed = {" ".join(w) for w in self.commands()}
        found = 0
        for fn, group in groups.items():
            m = re.search(rf"^int {fn}\(Cli& cli, const std::string& verb, Args& a\) \{{\n(.*?)^\}}", src, re.M | re.S)
            self.assertTrue(m, f"no dispatch function {fn} for group {group}")
            for verb in re.findall(r'verb == "([\w-]+)"', m.group(1)):
                found += 1
                self.assertIn(f"{group} {verb}", listed,
                              f"inmanta-cli {group} {verb} has no row in orchestrator/cli/CliHelp.cpp")
        self.assertGreater(found, 25)
        self.assertIn("monitor", listed)

    def test_misspelt_commands_suggest(self):
        r = run([CLI, "enviroment", "list"])
        self.assertEqual(r.returncode, 2)
        self.assertIn("unknown command 'enviroment'; did you mean 'environment'?", r.stderr)
        r = run([CLI, "version", "lst", "-e", ENV])
        self.assertIn("unknown command 'version lst'; did you mean 'version list'?", r.stderr)
        r = run([CLI, "environment", "setting", "gte", "-e", ENV, "-k", "x"])
        self.assertIn("did you mean 'environment setting get'?", r.stderr)


class TokenHint(unittest.TestCase):
    def setUp(self):
        self.server = Unauthorized()
        self.addCleanup(self.server.stop)
        self.tmp = tempfile.mkdtemp(prefix="inm-cli-help-")
        self.addCleanup(shutil.rmtree, self.tmp, True)

    def test_cli_401_says_how_to_pass_a_token(self):
        r = run([CLI, "--host", "127.0.0.1", "--port", str(self.server.port), "project", "list"], cwd=self.tmp)
        self.assertEqual(r.returncode, 1)
        self.assertIn("HTTP 401", r.stderr)
        self.assertIn("--token", r.stderr)
        self.assertIn("token=TOKEN in the [cmdline_rest_transport] section of .inmanta", r.stderr)

    def test_export_401_says_how_to_pass_a_token(self):
        with open(os.path.join(self.tmp, "main.cf"), "w") as f:
            f.write("x = 1\n")
        with open(os.path.join(self.tmp, "project.yml"), "w") as f:
            f.write("name: p\n")
        r = run([harness.INMANTA, "export", "-e", ENV, "--server_address", "127.0.0.1", "--server_port",
                 str(self.server.port)], cwd=self.tmp)
        self.assertEqual(r.returncode, 1)
        self.assertIn("HTTP 401", r.stderr)
        self.assertIn("note: the server requires a token: pass --token TOKEN", r.stderr)
        self.assertIn("[compiler_rest_transport]", r.stderr)


if __name__ == "__main__":
    unittest.main()
