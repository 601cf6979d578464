"""The API's request -> response goldens (test/api/cases/*.api, runner test/api/run.py; issue #26): every case
against a fresh `inmanta server` on the run's PostgreSQL. A failure prints the unified diff between the expected
answers and the server's; if the change is intended, `python3 test/api/run.py --update` rewrites the files (review
that diff before committing it)."""
import glob
import importlib.util
import io
import os
import unittest
from contextlib import redirect_stdout

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
# test/api/run.py by path: this folder has a run.py of its own.
_spec = importlib.util.spec_from_file_location("api_goldens", os.path.join(ROOT, "test", "api", "run.py"))
api_goldens = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(api_goldens)


class ApiGoldensTest(unittest.TestCase):
    def test_every_case(self):
        cases = sorted(glob.glob(os.path.join(ROOT, "test", "api", "cases", "*.api")))
        self.assertGreaterEqual(len(cases), 5, "the API goldens are gone")
        out = io.StringIO()
        with redirect_stdout(out):
            rc = api_goldens.run_all(cases, update=False)
        self.assertEqual(rc, 0, out.getvalue())
        self.assertIn(f"api goldens: {len(cases)} passed, 0 failed", out.getvalue())


if __name__ == "__main__":
    unittest.main()
