"""A lost COMMIT answer does not wedge an environment nor repeat work (docs/deploy.md "Lost commit answers"): the
server and its scheduler reach PostgreSQL through a proxy that understands enough of the wire protocol to see a
COMMIT on the scheduler's writer connection (the one that COPYs resourceaction rows) and cut that connection
either right after forwarding the COMMIT (it lands, the answer is lost) or instead of forwarding it (nothing
lands). Either way the scheduler resends the batch with the same key (migration 009): every resource ends
deployed with exactly one deploy action, and the environment keeps working. A third case loses the answer to the
COMMIT of the scheduler's DELETE that takes a deploy request: the request is acted on once, not lost."""
import socket
import struct
import threading
import time
import unittest

import harness
import server_fixture as sf

NULL = "std::testing::NullResource"
SSL_REQUEST, GSSENC_REQUEST = 80877103, 80877104


def rid(name):
    return f"{NULL}[internal,name={name}]"


class CommitDroppingProxy:
    """TCP proxy 127.0.0.1:<port> -> the run's PostgreSQL. arm(mode) drops the next COMMIT of a writer connection:
    mode "after" forwards it and then closes both sides (committed, answer lost), "before" closes without it."""

    def __init__(self, target_port):
        self.target = ("127.0.0.1", target_port)
        self.sock = socket.socket()
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(64)
        self.port = self.sock.getsockname()[1]
        self.mode = None
        self.dropped = []
        self.lock = threading.Lock()
        self.closing = False
        threading.Thread(target=self._accept, daemon=True).start()

    def arm(self, mode):
        with self.lock:
            self.mode = mode

    def close(self):
        self.closing = True
        self.sock.close()

    def _accept(self):
        while not self.closing:
            try:
                client, _ = self.sock.accept()
            except OSError:
                return
            server = socket.create_connection(self.target)
            mute = threading.Event()  # set: the backend's answers are swallowed (the lost COMMIT answer)
            state = {}  # per connection: "taking" a request DELETE was sent, "took" it deleted rows
            threading.Thread(target=self._backend, args=(server, client, mute, state), daemon=True).start()
            threading.Thread(target=self._frontend, args=(client, server, mute, state), daemon=True).start()

    def _backend(self, server, client, mute, state):
        try:
            first = self._read(server, 1)
            if first == b"N":  # the answer to an SSL request (untyped); a notice is never a connection's first
                client.sendall(first)
                first = self._read(server, 1)
            kind = first
            while True:
                length = struct.unpack("!i", self._read(server, 4))[0]
                body = self._read(server, length - 4)
                if kind == b"C" and state.get("taking") and body.startswith(b"DELETE ") and body[7:8] != b"0":
                    state["took"] = True  # this transaction deleted request rows
                if not mute.is_set():
                    client.sendall(kind + struct.pack("!i", length) + body)
                kind = self._read(server, 1)
        except (OSError, EOFError):
            pass
        for s in (client, server):
            try:
                s.close()
            except OSError:
                pass

    @staticmethod
    def _read(sock, n):
        buf = b""
        while len(buf) < n:
            chunk = sock.recv(n - len(buf))
            if not chunk:
                raise EOFError
            buf += chunk
        return buf

    def _frontend(self, client, server, mute, state):
        writer = False
        try:
            while True:  # untyped start-up messages: SSL/GSS requests, then the StartupMessage
                head = self._read(client, 8)
                length, code = struct.unpack("!ii", head)
                rest = self._read(client, length - 8)
                server.sendall(head + rest)
                if code not in (SSL_REQUEST, GSSENC_REQUEST):
                    break
            while True:
                head = self._read(client, 5)
                kind, length = head[:1], struct.unpack("!i", head[1:])[0]
                body = self._read(client, length - 4)
                if kind == b"Q" and body.lstrip().upper().startswith(b"COPY") and b"resourceaction" in body:
                    writer = True  # only the scheduler's deploy writer COPYs action rows
                if kind in (b"Q", b"P") and b"DELETE FROM scheduler_request" in body:  # P: exec_params
                    state["taking"] = True
                if kind == b"Q" and body.strip(b"\0 ;").upper() == b"COMMIT" and (writer or state.get("took")):
                    with self.lock:
                        mode = self.mode
                        # "request" waits for a COMMIT of a DELETE that took requests; the others for a writer's
                        if mode and (mode == "request") == bool(state.get("took")):
                            self.mode = None
                        else:
                            mode = None
                    state.pop("taking", None)
                    state.pop("took", None)
                    if mode:
                        if mode == "request":
                            mode = "after"
                            self.dropped.append("request")
                        else:
                            self.dropped.append(mode)
                        if mode == "after":
                            mute.set()
                            server.sendall(head + body)
                            time.sleep(0.3)  # let PostgreSQL commit before the cut
                        for s in (client, server):
                            s.shutdown(socket.SHUT_RDWR)
                            s.close()
                        return
                if kind == b"Q" and body.strip(b"\0 ;").upper() in (b"COMMIT", b"ROLLBACK"):
                    state.pop("taking", None)
                    state.pop("took", None)
                server.sendall(head + body)
        except (OSError, EOFError):
            pass
        for s in (client, server):
            try:
                s.close()
            except OSError:
                pass


class LostCommitTest(unittest.TestCase):
    def setUp(self):
        _, pg_port = harness.shared_cluster()
        self.proxy = CommitDroppingProxy(pg_port)
        self.addCleanup(self.proxy.close)
        self.srv = sf.Server(pg_port=self.proxy.port, schedulers=True)
        self.addCleanup(self.srv.stop)
        _, self.env = self.srv.project_env("lost")
        for k in ("autostart_agent_deploy_interval", "autostart_agent_repair_interval"):
            self.srv.ok("POST", f"/api/v2/environment_settings/{k}", {"value": "0"}, env=self.env)

    def sql(self, text):
        return harness.psql(self.srv.db, text)  # straight to PostgreSQL, not through the proxy

    def deploys(self):
        rows = self.sql("SELECT x.resource_id, count(*) FROM resourceaction a JOIN resourceaction_resource x ON "
                        f"x.resource_action_id = a.action_id WHERE a.environment = '{self.env}' AND a.action = "
                        "'deploy' AND a.finished IS NOT NULL GROUP BY x.resource_id")
        return {line.split("|")[0]: int(line.split("|")[1]) for line in rows.splitlines() if line}

    def deployed(self):
        return int(self.sql("SELECT count(*) FROM resource_persistent_state WHERE environment = "
                            f"'{self.env}' AND last_non_deploying_status = 'deployed' AND NOT is_deploying"))

    def run_case(self, mode):
        names = [f"r{i}" for i in range(30)]
        self.proxy.arm(mode)
        _, (code, body) = sf.put_version(self.srv, self.env, [
            dict(rid=rid(n), name=n, agentname="internal", value="", fail=False) for n in names])
        self.assertEqual(code, 200, body)
        harness.wait_for(lambda: self.deployed() == len(names), timeout=60,
                         what=f"every resource deployed after a COMMIT dropped {mode} reaching PostgreSQL")
        self.assertEqual(self.proxy.dropped, [mode], "the proxy did not cut a writer's COMMIT")
        time.sleep(1)  # anything written twice would show now
        self.assertEqual(self.deploys(), {rid(n): 1 for n in names}, "a deploy was recorded twice or lost")
        # Not wedged: a repair request deploys every resource once more.
        self.srv.ok("POST", "/api/v1/deploy", {}, env=self.env)
        harness.wait_for(lambda: self.deploys() == {rid(n): 2 for n in names}, timeout=60,
                         what="the repair after the lost commit")
        self.assertTrue(self.srv.proc.alive())

    def test_commit_landed_but_its_answer_was_lost(self):
        self.run_case("after")

    def test_commit_never_reached_the_database(self):
        self.run_case("before")

    def test_request_taken_but_the_answer_was_lost(self):
        names = [f"q{i}" for i in range(10)]
        _, (code, body) = sf.put_version(self.srv, self.env, [
            dict(rid=rid(n), name=n, agentname="internal", value="", fail=False) for n in names])
        self.assertEqual(code, 200, body)
        harness.wait_for(lambda: self.deploys() == {rid(n): 1 for n in names}, timeout=60, what="the first deploy")
        self.proxy.arm("request")
        self.srv.ok("POST", "/api/v1/deploy", {}, env=self.env)  # a repair: every resource deploys once more
        harness.wait_for(lambda: self.proxy.dropped, timeout=30, what="the proxy to cut the request's COMMIT")
        self.assertEqual(self.proxy.dropped, ["request"])
        harness.wait_for(lambda: self.deploys() == {rid(n): 2 for n in names}, timeout=60,
                         what="the repair whose request was taken while the COMMIT answer was lost")
        time.sleep(1)  # a request acted on twice would show now
        self.assertEqual(self.deploys(), {rid(n): 2 for n in names}, "the request was acted on twice")
        self.assertTrue(self.srv.proc.alive())


if __name__ == "__main__":
    unittest.main()
