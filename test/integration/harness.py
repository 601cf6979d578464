"""Shared fixtures for the orchestrator's integration tests: a private PostgreSQL 15 cluster on loopback and
real `inmanta` processes, every one started and stopped by PID.

One cluster serves a whole test run (run.py starts it and exports INM_PG_PORT / INM_PG_HOST); each test takes a
fresh database from it with `fresh_database()`, so tests never see each other's rows. PostgreSQL refuses to run
as root: as root, initdb and postgres run as the `postgres` user (the cluster lives in a mkdtemp folder made
traversable for it); as an ordinary user they run as that user.
"""
import json
import os
import pwd
import shutil
import signal
import socket
import struct
import subprocess
import tempfile
import time
import urllib.error
import urllib.request
import uuid

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BUILD = os.environ.get("INM_BUILD", os.path.join(ROOT, "build"))
INMANTA = os.path.join(BUILD, "bin", "inmanta")


def pg_bindir():
    for v in ("15", "16", "17"):
        d = f"/usr/lib/postgresql/{v}/bin"
        if os.path.exists(os.path.join(d, "postgres")):
            return d
    raise RuntimeError("PostgreSQL server binaries not found under /usr/lib/postgresql/*/bin (apt-get install postgresql-15)")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class PgCluster:
    """A private cluster: initdb into a temp dir, postgres on 127.0.0.1:<free port>, trust auth for user postgres."""

    def __init__(self, base=None):
        self.bindir = pg_bindir()
        self.dir = tempfile.mkdtemp(prefix="inm-pg-", dir=base)
        self.data = os.path.join(self.dir, "data")
        self.port = free_port()
        self.proc = None
        self.user = "postgres"
        self._demote = None
        if os.geteuid() == 0:
            pw = pwd.getpwnam("postgres")
            os.chmod(self.dir, 0o755)
            os.chown(self.dir, pw.pw_uid, pw.pw_gid)
            self._uid, self._gid = pw.pw_uid, pw.pw_gid
            self._demote = self._drop_root
        self.log = os.path.join(self.dir, "postgres.log")

    def _drop_root(self):
        os.setgid(self._gid)
        os.setuid(self._uid)

    def start(self):
        if not os.path.exists(self.data):
            subprocess.run([os.path.join(self.bindir, "initdb"), "-D", self.data, "-U", "postgres", "--auth=trust",
                            "-E", "UTF8", "--no-sync"], check=True, stdout=subprocess.DEVNULL,
                           stderr=subprocess.PIPE, preexec_fn=self._demote, cwd=self.dir)
        logf = open(self.log, "ab")
        if self._demote:
            os.chown(self.log, self._uid, self._gid)
        self.proc = subprocess.Popen(
            [os.path.join(self.bindir, "postgres"), "-D", self.data, "-p", str(self.port), "-k", self.dir,
             "-c", "listen_addresses=127.0.0.1", "-c", "fsync=off", "-c", "max_connections=300",
             "-c", "shared_buffers=128MB"],
            stdout=logf, stderr=subprocess.STDOUT, preexec_fn=self._demote, cwd=self.dir, start_new_session=True)
        deadline = time.time() + 30
        while time.time() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"postgres exited with {self.proc.returncode}; log:\n{open(self.log).read()}")
            if self.psql("SELECT 1", check=False).returncode == 0:
                return self
            time.sleep(0.1)
        raise RuntimeError("postgres did not accept connections within 30 s")

    def psql(self, sql, db="postgres", check=True):
        return subprocess.run([os.path.join(self.bindir, "psql"), "-h", "127.0.0.1", "-p", str(self.port), "-U",
                               "postgres", "-d", db, "-v", "ON_ERROR_STOP=1", "-Atqc", sql],
                              capture_output=True, text=True, check=check)

    def stop(self, mode="fast"):
        """Stops postgres by PID (SIGINT = fast shutdown, SIGQUIT = immediate); keeps the data directory."""
        if self.proc and self.proc.poll() is None:
            sig = signal.SIGINT if mode == "fast" else signal.SIGQUIT
            os.kill(self.proc.pid, sig)
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:
                os.kill(self.proc.pid, signal.SIGKILL)
                self.proc.wait()
        self.proc = None

    def destroy(self):
        self.stop()
        shutil.rmtree(self.dir, ignore_errors=True)


def shared_cluster():
    """(host, port) of the run's cluster, from run.py's environment."""
    port = os.environ.get("INM_PG_PORT")
    if not port:
        raise RuntimeError("INM_PG_PORT is not set: run the integration tests through test/integration/run.py")
    return "127.0.0.1", int(port)


def fresh_database(prefix="t"):
    """Creates an empty database on the run's cluster and returns its name."""
    host, port = shared_cluster()
    name = f"{prefix}_{uuid.uuid4().hex[:12]}"
    subprocess.run([os.path.join(pg_bindir(), "createdb"), "-h", host, "-p", str(port), "-U", "postgres", name],
                   check=True, capture_output=True)
    return name


class Process:
    """A child process started in its own session, stopped by PID (and its process group) at `stop()`."""

    def __init__(self, args, cwd=None, env=None, log=None):
        self.args = args
        self.log_path = log or tempfile.mktemp(prefix="inm-proc-", suffix=".log")
        self._log = open(self.log_path, "ab")
        self.proc = subprocess.Popen(args, cwd=cwd, env=env, stdout=self._log, stderr=subprocess.STDOUT,
                                     stdin=subprocess.DEVNULL, start_new_session=True)
        self.pid = self.proc.pid

    def alive(self):
        return self.proc.poll() is None

    def output(self):
        self._log.flush()
        with open(self.log_path, errors="replace") as f:
            return f.read()

    def kill(self, sig=signal.SIGKILL):
        if self.alive():
            os.kill(self.pid, sig)

    def stop(self, timeout=20):
        """SIGTERM, wait, then SIGKILL the whole process group (children such as executors go too)."""
        if self.alive():
            os.kill(self.pid, signal.SIGTERM)
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                pass
        try:
            os.killpg(self.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        if self.proc.poll() is None:
            self.proc.wait()
        return self.proc.returncode


def http(method, url, body=None, headers=None, timeout=30):
    """One request; returns (status, parsed JSON or raw bytes, headers). Never raises on HTTP error codes."""
    data = None
    hdrs = dict(headers or {})
    if body is not None:
        data = body if isinstance(body, (bytes, bytearray)) else json.dumps(body).encode()
        hdrs.setdefault("Content-Type", "application/json")
    req = urllib.request.Request(url, data=data, method=method, headers=hdrs)
    try:
        with urllib.request.urlopen(req, timeout=timeout) as r:
            raw, status, rh = r.read(), r.status, r.headers
    except urllib.error.HTTPError as e:
        raw, status, rh = e.read(), e.code, e.headers
    try:
        return status, json.loads(raw) if raw else None, rh
    except ValueError:
        return status, raw, rh


def psql(db, sql, port=None):
    """Runs `sql` (ON_ERROR_STOP) on database `db` of the run's cluster (or of the cluster on `port`); returns
    psql's unaligned output, stripped. A failing statement raises AssertionError with psql's message."""
    host, shared_port = shared_cluster() if port is None else ("127.0.0.1", port)
    r = subprocess.run([os.path.join(pg_bindir(), "psql"), "-h", host, "-p", str(shared_port), "-U", "postgres",
                        "-d", db, "-v", "ON_ERROR_STOP=1", "-Atqc", sql], capture_output=True, text=True)
    if r.returncode != 0:
        raise AssertionError(f"psql failed: {r.stderr}\nSQL: {sql[:500]}")
    return r.stdout.strip()


def frame(msg):
    """One message of the executor protocol (docs/deploy.md): a 4-byte big-endian length, then JSON."""
    body = json.dumps(msg).encode()
    return struct.pack(">I", len(body)) + body


def read_frame(stream):
    """The next executor-protocol message from `stream`, or None at end of stream."""
    head = stream.read(4)
    if len(head) < 4:
        return None
    (n,) = struct.unpack(">I", head)
    return json.loads(stream.read(n))


def start_executor(test, *args):
    """Starts `inmanta executor --threads 2 *args` with piped stdio; `test` kills and reaps it at cleanup."""
    proc = subprocess.Popen([INMANTA, "executor", "--threads", "2", *args], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    test.addCleanup(lambda: (proc.poll() is None and proc.kill(), proc.wait()))
    return proc


def listening(port, host="127.0.0.1"):
    """Whether something accepts TCP connections on host:port now (for wait_for: sshd, git daemon, …)."""
    try:
        with socket.create_connection((host, port), timeout=0.5):
            return True
    except OSError:
        return False


def wait_for(pred, timeout=30, interval=0.1, what="condition"):
    deadline = time.time() + timeout
    last = None
    while time.time() < deadline:
        last = pred()
        if last:
            return last
        time.sleep(interval)
    raise AssertionError(f"timed out after {timeout} s waiting for {what} (last: {last!r})")
