#!/usr/bin/env python3
"""Runs the orchestrator integration tests (test/integration/test_*.py, unittest) against one private
PostgreSQL cluster started here and destroyed afterwards, whatever happens. Prints unittest's report and a last
line `integration: N passed, N failed[, N skipped]`; exit status 1 if any test failed or errored.
Before that, the twelve slowest tests (`slowest: …`) and modules (`slowest modules: …`, set-up included).
Usage: run.py [-k PATTERN] [--build DIR] [test_module ...]
"""
import argparse
import os
import sys
import time
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import harness  # noqa: E402


class TimedResult(unittest.TextTestResult):
    """unittest's text result that also records each test's wall time (the slowest are listed at the end)."""

    def startTest(self, test):
        self._t0 = time.monotonic()
        module = test.id().split(".", 1)[0]
        if module != getattr(self, "_module", None):  # class/module set-up counts in the module's time
            self.modules_s = getattr(self, "modules_s", {})
            self._module, self._module_t0 = module, getattr(self, "_last_stop", self._t0)
        super().startTest(test)

    def stopTest(self, test):
        super().stopTest(test)
        self.durations_s = getattr(self, "durations_s", [])
        self._last_stop = time.monotonic()
        self.durations_s.append((self._last_stop - self._t0, test.id()))
        self.modules_s[self._module] = self._last_stop - self._module_t0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("-k", dest="pattern", action="append", default=None, help="only tests matching this")
    ap.add_argument("--build", help="build directory (default: <repo>/build)")
    ap.add_argument("modules", nargs="*", help="test modules (default: all test_*.py)")
    args = ap.parse_args()
    if args.build:
        os.environ["INM_BUILD"] = os.path.abspath(args.build)
        harness.BUILD = os.environ["INM_BUILD"]
        harness.INMANTA = os.path.join(harness.BUILD, "bin", "inmanta")

    cluster = harness.PgCluster().start()
    os.environ["INM_PG_HOST"] = "127.0.0.1"
    os.environ["INM_PG_PORT"] = str(cluster.port)
    try:
        loader = unittest.TestLoader()
        if args.pattern:
            loader.testNamePatterns = [p if "*" in p else f"*{p}*" for p in args.pattern]
        if args.modules:
            suite = unittest.TestSuite(loader.loadTestsFromName(os.path.splitext(os.path.basename(m))[0])
                                       for m in args.modules)
        else:
            suite = loader.discover(HERE, pattern="test_*.py", top_level_dir=HERE)
        result = unittest.TextTestRunner(verbosity=2, stream=sys.stdout, resultclass=TimedResult).run(suite)
        slow = sorted(getattr(result, "durations_s", []), reverse=True)[:12]
        if slow:
            print("slowest: " + ", ".join(f"{t.split('.', 1)[-1]} {d:.1f} s" for d, t in slow))
            mods = sorted(((d, m) for m, d in result.modules_s.items()), reverse=True)[:12]
            print("slowest modules: " + ", ".join(f"{m} {d:.0f} s" for d, m in mods))
    finally:
        cluster.destroy()
    failed = len(result.failures) + len(result.errors) + len(result.unexpectedSuccesses)
    skipped = len(result.skipped)
    passed = result.testsRun - failed - skipped
    print(f"integration: {passed} passed, {failed} failed" + (f", {skipped} skipped" if skipped else ""))
    return 1 if failed or result.testsRun == 0 else 0


if __name__ == "__main__":
    sys.exit(main())
