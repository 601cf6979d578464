"""Integers wider than 64 bits in request bodies (model/JsonNumbers.h, docs/limits.md): the compiler's ints are
exact, the server's JSON values are not beyond 64 bits, so put_version refuses such a number with a 400 naming the
resource and the attribute instead of storing a different value; 64-bit values at both ends round-trip exactly.
Both body readers: the whole-body one and the streamed one (request_spool_size = 0). Nothing is stored on a 400.
"""
import os
import subprocess
import tempfile
import shutil
import unittest
import uuid

import harness
import server_fixture as sf

NULL = "std::testing::NullResource"
WIDE = 123456789012345678901234567890
psql = harness.psql


class WholeBodyTest(sf.ServerTestCase):
    def setUp(self):
        self.pid, self.env = self.s.project_env("w" + uuid.uuid4().hex[:8])

    def stored(self, v):
        return psql(self.s.db, f"SELECT count(*) FROM configurationmodel WHERE environment = '{self.env}' "
                               f"AND version = {v}")

    def test_a_wide_integer_attribute_is_refused_with_its_resource_and_attribute(self):
        s, env = self.s, self.env
        v, (status, body) = sf.put_version(s, env, [dict(rid=f"{NULL}[internal,name=ok]", name="ok"),
                                                    dict(rid=f"{NULL}[internal,name=t]", name="t", big=WIDE)])
        self.assertEqual(status, 400, body)
        msg = body["message"]
        self.assertIn(f"resources[1] ({NULL}[internal,name=t],v={v}), attribute 'big'", msg)
        self.assertIn(str(WIDE), msg)
        self.assertIn("does not fit 64 bits", msg)
        self.assertEqual(self.stored(v), "0")

    def test_nested_and_negative_wide_integers_are_refused(self):
        s, env = self.s, self.env
        v, (status, body) = sf.put_version(s, env, [dict(rid=f"{NULL}[internal,name=n]", name="n",
                                                         deep={"list": [1, -WIDE]})])
        self.assertEqual(status, 400, body)
        self.assertIn("attribute 'deep.list[1]'", body["message"])
        self.assertIn(str(-WIDE), body["message"])
        self.assertEqual(self.stored(v), "0")
        # The same number outside the resources: the path alone.
        v, (status, body) = sf.put_version(s, env, [dict(rid=f"{NULL}[internal,name=m]", name="m")],
                                           version_info={"export_metadata": {"type": "api", "n": WIDE}})
        self.assertEqual(status, 400, body)
        self.assertIn(f"version_info.export_metadata.n: the integer {WIDE}", body["message"])
        self.assertEqual(self.stored(v), "0")

    def test_64_bit_integers_round_trip_exactly(self):
        s, env = self.s, self.env
        edges = {"umax": 2 ** 64 - 1, "imin": -2 ** 63, "imax": 2 ** 63 - 1}
        v, (status, body) = sf.put_version(s, env, [dict(rid=f"{NULL}[internal,name=e]", name="e", **edges)])
        self.assertEqual(status, 200, body)
        attrs = s.ok("GET", f"/api/v1/version/{v}", env=env)["resources"][0]["attributes"]
        for k, want in edges.items():
            self.assertEqual(attrs[k], want, k)
            self.assertEqual(type(attrs[k]), type(want), k)


class StreamedBodyTest(WholeBodyTest):
    @classmethod
    def setUpClass(cls):
        cls.s = sf.Server(server_extra="request_spool_size = 0\n")



class ExportTest(sf.ServerTestCase):
    def test_an_export_with_a_wide_int_attribute_fails_at_the_push_and_stores_nothing(self):
        # The compiler's ints are exact and its export writes all digits (std::File's mode -> permissions).
        _, env = self.s.project_env("x" + uuid.uuid4().hex[:8])
        d = tempfile.mkdtemp(prefix="inm-wide-")
        self.addCleanup(shutil.rmtree, d, True)
        with open(os.path.join(d, "project.yml"), "w") as f:
            f.write("name: wide\n")
        with open(os.path.join(d, "main.cf"), "w") as f:
            f.write('import std\nhost = std::Host(name="h", os=std::linux)\n'
                    f'std::File(host=host, path="/tmp/x", content="", owner="root", group="root", mode={WIDE})\n')
        p = subprocess.run([harness.INMANTA, "export", "-e", env, "--server_address", "127.0.0.1",
                            "--server_port", str(self.s.port)], cwd=d, capture_output=True, text=True, timeout=120)
        out = p.stdout + p.stderr
        self.assertNotEqual(p.returncode, 0, out)
        self.assertIn("std::File[h,path=/tmp/x]", out)
        self.assertIn(f"attribute 'permissions': the integer {WIDE} does not fit 64 bits", out)
        self.assertEqual(psql(self.s.db, f"SELECT count(*) FROM configurationmodel WHERE environment = '{env}'"), "0")


if __name__ == "__main__":
    unittest.main()
