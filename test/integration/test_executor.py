"""Executor processes end to end (orchestrator/executor, docs/deploy.md "Executor protocol").

Two drivers: the raw protocol spoken from Python to `inmanta executor` (framing, hello/version, heartbeat,
shutdown), and `inm-executor-probe`, which runs the real ExecutorPool client the scheduler uses, for deploys of
Files/Directories/Symlinks/NullResources in a temp dir, dry runs, an executor killed with SIGKILL mid-batch, a hung
(SIGSTOPped) executor, and reaping. No PostgreSQL is needed; every process started is stopped by PID.
"""
import base64
import hashlib
import json
import os
import queue
import shutil
import signal
import struct
import subprocess
import tempfile
import threading
import time
import unittest

import harness

PROBE = os.path.join(harness.BUILD, "bin", "inm-executor-probe")


def pid_gone(pid):
    """True when `pid` no longer runs (absent, or a zombie waiting for a reaper that is not us)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] == "Z"
    except FileNotFoundError:
        return True


class Probe:
    """inm-executor-probe with pipes; commands in, JSON events out (read by a thread into a queue)."""

    def __init__(self, *extra):
        self.proc = subprocess.Popen([PROBE, "--executable", harness.INMANTA, *extra], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self.events = queue.Queue()
        self.history = []  # every event taken from the queue, in order
        self.stderr = []
        threading.Thread(target=self._read, daemon=True).start()
        threading.Thread(target=lambda: self.stderr.extend(self.proc.stderr), daemon=True).start()

    def _read(self):
        for line in self.proc.stdout:
            self.events.put(json.loads(line))
        self.events.put(None)

    def send(self, **cmd):
        self.proc.stdin.write(json.dumps(cmd) + "\n")
        self.proc.stdin.flush()

    def next(self, event, timeout=30):
        deadline = time.time() + timeout
        while True:
            left = deadline - time.time()
            if left <= 0:
                raise AssertionError(f"no {event!r} event within {timeout} s; stderr: {''.join(self.stderr)}")
            try:
                e = self.events.get(timeout=left)
            except queue.Empty:
                continue
            if e is None:
                raise AssertionError(f"probe exited while waiting for {event!r}; stderr: {''.join(self.stderr)}")
            self.history.append(e)
            if e["event"] == event:
                return e

    def put_file(self, content):
        self.send(cmd="put_file", content=content)
        return self.next("file")["hash"]

    def deploy(self, requests, key="env/agents/v1", timeout=30):
        """Sends one batch and returns {action_id: result} once every request has its result."""
        self.send(cmd="deploy", key=key, requests=requests)
        sent = self.next("sent")
        results = {}
        while len(results) < len(requests):
            r = self.next("result", timeout)
            results[r["action_id"]] = r
        return sent["pid"], results

    def shutdown(self):
        self.send(cmd="shutdown")
        bye = self.next("bye")
        self.proc.wait(20)
        return bye

    def stop(self):
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()


def file_req(aid, path, h, perms=644, purged=False, deps=None, dry=False):
    return {"action_id": aid, "id": f"std::File[localhost,path={path}],v=1", "reason": "test",
            "attributes": {"path": path, "hash": h, "owner": None, "group": None, "permissions": perms,
                           "purged": purged, "purge_on_delete": False, "reload": False, "send_event": False},
            "dependencies": deps or {}, "dry_run": dry}


def dir_req(aid, path, perms=755, purged=False, dry=False):
    return {"action_id": aid, "id": f"std::Directory[localhost,path={path}],v=1", "dry_run": dry,
            "attributes": {"path": path, "owner": None, "group": None, "permissions": perms, "purged": purged}}


def link_req(aid, source, target, dry=False):
    return {"action_id": aid, "id": f"std::Symlink[localhost,target={target}],v=1", "dry_run": dry,
            "attributes": {"source": source, "target": target, "purged": False}}


def null_req(aid, name, fail=False):
    return {"action_id": aid, "id": f"std::testing::NullResource[internal,name={name}],v=1",
            "attributes": {"name": name, "agentname": "internal", "fail": fail, "managed": True, "purged": False}}


class ExecutorProbeTest(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="inm-exec-")
        self.probes = []

    def tearDown(self):
        for p in self.probes:
            p.stop()
        shutil.rmtree(self.dir, ignore_errors=True)

    def probe(self, *extra):
        p = Probe(*extra)
        self.probes.append(p)
        return p

    def test_deploy_files_directories_symlinks_nulls(self):
        p = self.probe()
        d = os.path.join(self.dir, "app")
        f = os.path.join(d, "app.conf")
        link = os.path.join(self.dir, "current")
        h = p.put_file("port=8080\n")
        pid, r = p.deploy([dir_req("d", d, 750)])
        self.assertEqual(r["d"]["status"], "deployed")
        pid2, r = p.deploy([file_req("f", f, h, 640, deps={f"std::Directory[localhost,path={d}]": "deployed"}),
                            link_req("l", f, link), null_req("n1", "ok"), null_req("n2", "bad", fail=True)])
        self.assertEqual(pid, pid2, "one process serves consecutive batches")
        self.assertEqual({k: v["status"] for k, v in r.items()},
                         {"f": "deployed", "l": "deployed", "n1": "deployed", "n2": "failed"})
        self.assertEqual(r["f"]["change"], "created")
        self.assertEqual(open(f).read(), "port=8080\n")
        self.assertEqual(os.stat(f).st_mode & 0o7777, 0o640)
        self.assertEqual(os.stat(d).st_mode & 0o7777, 0o750)
        self.assertEqual(os.readlink(link), f)
        self.assertTrue(any("This resource is set to fail" in line["msg"] for line in r["n2"]["logs"]))
        self.assertEqual(sorted(os.listdir(d)), ["app.conf"], "no temporary file left behind")

        # Second run: nothing changes.
        _, r = p.deploy([file_req("f2", f, h, 640), dir_req("d2", d, 750), link_req("l2", f, link)])
        self.assertEqual({k: (v["status"], v["change"]) for k, v in r.items()},
                         {"f2": ("deployed", "nochange"), "d2": ("deployed", "nochange"),
                          "l2": ("deployed", "nochange")})

        # A file changed by hand is repaired; a failed dependency skips without touching the file.
        with open(f, "w") as out:
            out.write("tampered")
        _, r = p.deploy([file_req("f3", f, h, 640, deps={"std::testing::NullResource[internal,name=bad]": "failed"})])
        self.assertEqual(r["f3"]["status"], "skipped_for_dependency")
        self.assertEqual(open(f).read(), "tampered")
        _, r = p.deploy([file_req("f4", f, h, 640)])
        self.assertEqual((r["f4"]["status"], r["f4"]["change"]), ("deployed", "updated"))
        self.assertEqual(r["f4"]["changes"]["hash"]["current"], hashlib.sha1(b"tampered").hexdigest())
        self.assertEqual(open(f).read(), "port=8080\n")
        bye = p.shutdown()
        self.assertEqual(bye["started"], 1)
        for q in bye["pids"]:
            self.assertTrue(pid_gone(q), f"executor {q} still runs after shutdown")

    def test_dry_run_changes_nothing_and_reports_the_diff(self):
        p = self.probe()
        f = os.path.join(self.dir, "a.txt")
        with open(f, "w") as out:
            out.write("old\n")
        os.chmod(f, 0o644)
        h = p.put_file("new\n")
        _, r = p.deploy([file_req("f", f, h, 600, dry=True), dir_req("d", os.path.join(self.dir, "sub"), dry=True),
                         link_req("l", f, os.path.join(self.dir, "ln"), dry=True)])
        self.assertEqual({k: v["status"] for k, v in r.items()}, {"f": "dry", "d": "dry", "l": "dry"})
        self.assertEqual(r["f"]["changes"]["hash"], {"current": hashlib.sha1(b"old\n").hexdigest(), "desired": h})
        self.assertEqual(r["f"]["changes"]["permissions"], {"current": 644, "desired": 600})
        # The current content was offered to the file store for the diff (before the result).
        offered = [e for e in p.history if e["event"] == "put_file"]
        self.assertEqual([(e["hash"], e["size"]) for e in offered], [(hashlib.sha1(b"old\n").hexdigest(), 4)])
        self.assertEqual(r["d"]["changes"], {"purged": {"current": True, "desired": False}})
        self.assertEqual(open(f).read(), "old\n")
        self.assertEqual(os.stat(f).st_mode & 0o7777, 0o644)
        self.assertEqual(sorted(os.listdir(self.dir)), ["a.txt"])

    def test_executor_killed_mid_batch_fails_in_flight_as_unavailable(self):
        p = self.probe()
        h = p.put_file("content\n")
        p.send(cmd="file_delay", ms=4000)
        p.next("ok")
        paths = [os.path.join(self.dir, f"f{i}") for i in range(3)]
        p.send(cmd="deploy", key="k", requests=[file_req(f"a{i}", path, h) for i, path in enumerate(paths)]
               + [null_req("n", "quick")])
        pid = p.next("sent")["pid"]
        results = {"n": p.next("result")}  # the NullResource finishes; the files wait 4 s for their content
        time.sleep(0.3)
        os.kill(pid, signal.SIGKILL)
        t0 = time.time()
        while len(results) < 4:
            e = p.next("result", 15)
            results[e["action_id"]] = e
        self.assertLess(time.time() - t0, 3.0, "death is detected by EOF, not by a timeout")
        self.assertEqual(results["n"]["status"], "deployed")
        for i in range(3):
            res = results[f"a{i}"]
            self.assertEqual(res["status"], "unavailable", res)
            msg = res["logs"][-1]["msg"]
            self.assertIn(f"executor process {pid}", msg)
            self.assertIn("killed by signal 9", msg)
        for path in paths:
            self.assertFalse(os.path.exists(path))
        self.assertEqual(os.listdir(self.dir), [], "no half-written or temporary file")
        self.assertTrue(pid_gone(pid))
        # The next batch runs in a new process.
        p.send(cmd="file_delay", ms=0)
        p.next("ok")
        pid2, r = p.deploy([file_req("b", paths[0], h)], key="k")
        self.assertNotEqual(pid2, pid)
        self.assertEqual(r["b"]["status"], "deployed")
        self.assertEqual(open(paths[0]).read(), "content\n")
        self.assertEqual(p.shutdown()["started"], 2)

    def test_crashed_executor_names_the_signal(self):
        p = self.probe()
        h = p.put_file("x")
        p.send(cmd="file_delay", ms=3000)
        p.next("ok")
        p.send(cmd="deploy", key="k", requests=[file_req("a", os.path.join(self.dir, "segv"), h)])
        pid = p.next("sent")["pid"]
        p.next("get_file")
        os.kill(pid, signal.SIGSEGV)
        r = p.next("result", 15)
        self.assertEqual(r["status"], "unavailable")
        self.assertIn(f"executor process {pid} for k crashed with signal 11 (SIGSEGV)", r["logs"][-1]["msg"])
        self.assertTrue(pid_gone(pid))
        p.shutdown()

    def test_hung_executor_is_killed_and_fails_in_flight(self):
        p = self.probe("--heartbeat-interval-ms", "200", "--heartbeat-timeout-ms", "1500")
        h = p.put_file("x")
        p.send(cmd="file_delay", ms=500)
        p.next("ok")
        p.send(cmd="deploy", key="k", requests=[file_req("a", os.path.join(self.dir, "hung"), h)])
        pid = p.next("sent")["pid"]
        p.next("get_file")
        os.kill(pid, signal.SIGSTOP)
        r = p.next("result", 15)
        self.assertEqual(r["status"], "unavailable")
        self.assertIn("hung: no heartbeat answer", r["logs"][-1]["msg"])
        harness.wait_for(lambda: pid_gone(pid), timeout=5, what="the hung executor to be reaped")
        pid2, r = p.deploy([null_req("n", "after")], key="k")
        self.assertNotEqual(pid2, pid)
        self.assertEqual(r["n"]["status"], "deployed")
        p.shutdown()

    def test_batch_as_one_awaitable(self):
        p = self.probe()
        h = p.put_file("awaited\n")
        path = os.path.join(self.dir, "aw")
        p.send(cmd="deploy", key="k", requests=[file_req("f", path, h), null_req("n", "x", fail=True)], **{"await": True})
        p.next("sent")
        done = p.next("batch_done")
        self.assertEqual(done["count"], 2)
        # The operation completes once, with every result: they are emitted together right before batch_done.
        self.assertEqual([e["event"] for e in p.history[-3:]], ["result", "result", "batch_done"])
        results = {e["action_id"]: e["status"] for e in p.history if e["event"] == "result"}
        self.assertEqual(results, {"f": "deployed", "n": "failed"})
        self.assertEqual(open(path).read(), "awaited\n")
        p.shutdown()

    def test_idle_executor_is_stopped_and_replaced(self):
        p = self.probe()
        pid, r = p.deploy([null_req("n", "a")], key="k")
        self.assertEqual(r["n"]["status"], "deployed")
        p.send(cmd="stop_idle", ms=60000)
        self.assertEqual(p.next("stopped")["count"], 0, "recently used: kept")
        p.send(cmd="stop_idle", ms=0)
        self.assertEqual(p.next("stopped")["count"], 1)
        harness.wait_for(lambda: pid_gone(pid), timeout=10, what="the idle executor to stop")
        pid2, r = p.deploy([null_req("n2", "b")], key="k")
        self.assertNotEqual(pid2, pid)
        self.assertEqual(r["n2"]["status"], "deployed")
        self.assertEqual(p.shutdown()["started"], 2)

    def test_executor_dies_with_its_parent(self):
        p = self.probe()
        p.send(cmd="pid", key="k")
        pid = p.next("pid")["pid"]
        self.assertFalse(pid_gone(pid))
        p.proc.kill()  # the scheduler dies without shutting anything down
        p.proc.wait()
        harness.wait_for(lambda: pid_gone(pid), timeout=5, what="the orphaned executor to die (PR_SET_PDEATHSIG)")


frame, read_frame = harness.frame, harness.read_frame


class RawProtocolTest(unittest.TestCase):
    def start(self):
        return harness.start_executor(self)

    def test_hello_heartbeat_deploy_shutdown(self):
        proc = self.start()
        proc.stdin.write(frame({"type": "hello", "protocol": 1}))
        proc.stdin.write(frame({"type": "heartbeat", "seq": 7}))
        proc.stdin.write(frame({"type": "deploy", "requests": [null_req("a1", "n1"),
                                                              {"action_id": "bad"}]}))
        proc.stdin.flush()
        hello = read_frame(proc.stdout)
        self.assertEqual((hello["type"], hello["protocol"], hello["pid"]), ("hello", 1, proc.pid))
        got = {}
        while len(got) < 3:
            m = read_frame(proc.stdout)
            got[m.get("action_id", m["type"])] = m
        self.assertEqual(got["heartbeat"]["seq"], 7)
        self.assertEqual(got["a1"]["status"], "deployed")
        self.assertEqual(got["bad"]["status"], "unavailable")
        self.assertIn('missing field "id"', got["bad"]["logs"][0]["msg"])
        proc.stdin.write(frame({"type": "shutdown"}))
        proc.stdin.flush()
        self.assertEqual(read_frame(proc.stdout)["type"], "bye")
        self.assertEqual(proc.wait(10), 0)

    def test_get_file_round_trip_and_facts(self):
        proc = self.start()
        d = tempfile.mkdtemp(prefix="inm-raw-")
        self.addCleanup(shutil.rmtree, d, True)
        content = b"\x00binary\xffcontent"
        h = hashlib.sha1(content).hexdigest()
        path = os.path.join(d, "bin")
        proc.stdin.write(frame({"type": "hello", "protocol": 1}))
        proc.stdin.write(frame({"type": "deploy", "requests": [file_req("f", path, h)]}))
        proc.stdin.write(frame({"type": "facts", "requests": [null_req("q", "n")]}))
        proc.stdin.flush()
        self.assertEqual(read_frame(proc.stdout)["type"], "hello")
        got = {}
        while len(got) < 2:
            m = read_frame(proc.stdout)
            if m["type"] == "get_file":
                self.assertEqual(m["hash"], h)
                proc.stdin.write(frame({"type": "file", "request": m["request"], "found": True,
                                        "content_base64": base64.b64encode(content).decode()}))
                proc.stdin.flush()
            else:
                got[m["action_id"]] = m
        self.assertEqual((got["f"]["type"], got["f"]["status"], got["f"]["change"]), ("result", "deployed", "created"))
        with open(path, "rb") as f:
            self.assertEqual(f.read(), content)
        self.assertEqual((got["q"]["type"], got["q"]["status"], got["q"]["facts"]), ("facts_result", "deployed", {}))
        proc.stdin.close()  # EOF = the scheduler is gone: the executor stops
        self.assertEqual(proc.wait(10), 0)

    def test_protocol_version_mismatch_is_refused(self):
        proc = self.start()
        proc.stdin.write(frame({"type": "hello", "protocol": 99}))
        proc.stdin.flush()
        err = read_frame(proc.stdout)
        self.assertEqual(err["type"], "error")
        self.assertIn("protocol version 1", err["message"])
        self.assertIn("version 99", err["message"])
        self.assertEqual(proc.wait(10), 2)

    def test_garbage_frame_is_a_clear_error(self):
        proc = self.start()
        proc.stdin.write(struct.pack(">I", 5) + b"nope!")
        proc.stdin.flush()
        err = read_frame(proc.stdout)
        self.assertEqual(err["type"], "error")
        self.assertIn("not a JSON object", err["message"])
        self.assertEqual(proc.wait(10), 2)


if __name__ == "__main__":
    unittest.main()
