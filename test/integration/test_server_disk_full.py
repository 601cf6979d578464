"""A full temp dir during an upload (issue #25, docs/server.md "Life cycle"): a put_version whose body is spooled
to $TMPDIR (request_spool_size) on a 16 MiB tmpfs filled up answers 507 naming "No space left on device" and the
directory, logs `request_spool_failed`, the server lives, and the same upload succeeds once the filler is gone.
Needs root and `mount -t tmpfs` (skipped with the reason otherwise); the mount is removed at cleanup and the
server stopped by PID. Also: the spool files a killed server left are removed at the next start, and only those."""
import os
import shutil
import subprocess
import tempfile
import unittest

import harness
import server_fixture as sf


def mount_tmpfs(test, size="2m"):
    d = tempfile.mkdtemp(prefix="inm-full-")
    r = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", d], capture_output=True, text=True)
    if r.returncode != 0:
        os.rmdir(d)
        raise unittest.SkipTest(f"cannot mount a tmpfs here ({r.stderr.strip() or 'mount failed'}); "
                                "the disk-full test needs root and mount rights")
    test.addCleanup(lambda: (subprocess.run(["umount", "-l", d]), shutil.rmtree(d, True)))
    return d


def fill(d):
    path = os.path.join(d, "filler")
    subprocess.run(["dd", "if=/dev/zero", f"of={path}", "bs=64k"], capture_output=True)
    return path


class DiskFullTest(unittest.TestCase):
    def test_full_temp_dir_answers_507_and_recovers(self):
        tmp = mount_tmpfs(self, "16m")
        srv = sf.Server(env=dict(os.environ, TMPDIR=tmp), server_extra="request_spool_size = 1024\n")
        self.addCleanup(srv.stop)
        _, env = srv.project_env("full")
        big = "x" * 40000  # 8 MB in all: more than the socket buffers hold, so the client is still sending at the 507
        resources = [{"rid": f"std::testing::NullResource[internal,name=r{i}]", "name": f"r{i}",
                      "agentname": "internal", "value": big, "fail": False} for i in range(200)]
        filler = fill(tmp)
        _, (status, body) = sf.put_version(srv, env, resources)
        self.assertEqual(status, 507, body)
        self.assertIn("No space left on device", body["message"])
        self.assertIn(tmp, body["message"])
        self.assertIn("request_spool_failed", srv.proc.output())
        self.assertIn("No space left on device", srv.proc.output())
        self.assertTrue(srv.proc.alive())
        harness.wait_for(lambda: not [n for n in os.listdir(tmp) if n.startswith("inmanta-body-")], timeout=10,
                         what="the partial spool file to be removed: " + str([(n, os.path.getsize(os.path.join(tmp, n))) for n in os.listdir(tmp)]) + srv.proc.output()[-1500:])
        os.unlink(filler)
        _, (status, body) = sf.put_version(srv, env, resources)
        self.assertEqual(status, 200, body)


class StaleSpoolFilesTest(unittest.TestCase):
    def test_a_killed_servers_spool_files_are_removed_at_start(self):
        tmp = tempfile.mkdtemp(prefix="inm-spool-")
        self.addCleanup(shutil.rmtree, tmp, True)
        dead = subprocess.Popen(["true"])
        dead.wait()  # its pid names no living process now
        names = {"dead": f"inmanta-body-{dead.pid}-AbCdEf", "alive": f"inmanta-body-{os.getpid()}-XyZ123",
                 "foreign": "inmanta-body-notapid", "other": "unrelated-file"}
        for n in names.values():
            with open(os.path.join(tmp, n), "w") as f:
                f.write("partial body")
        srv = sf.Server(env=dict(os.environ, TMPDIR=tmp))
        self.addCleanup(srv.stop)
        srv.project_env("stale")  # the server is up and serving
        left = set(os.listdir(tmp))
        self.assertNotIn(names["dead"], left, srv.proc.output()[-1500:])
        self.assertTrue({names["alive"], names["foreign"], names["other"]} <= left, left)
        self.assertIn("stale_request_file_removed", srv.proc.output())
        self.assertIn(names["dead"], srv.proc.output())


if __name__ == "__main__":
    unittest.main()
