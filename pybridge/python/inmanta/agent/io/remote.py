"""`SshIO`: the agent's IO for an `ssh://` agent URI (docs/deploy.md "Agentless over SSH"). Every operation is one
POSIX-shell command run over ssh, its arguments single-quoted, file content on stdin, so the remote host needs a
shell and coreutils only (the reference ran a remote Python instead). Inside the executor the command goes over
the agent's multiplexed OpenSSH master (the prefix comes from the executor, which starts the master on first
use); `get_io` outside an executor opens plain ssh connections with the same host-key rules (BatchMode,
StrictHostKeyChecking=yes, the URI's `known_hosts`/`identity_file` options). Method names and results are
LocalIO's. An ssh failure (exit 255 and no live master: unreachable, refused key, wrong host key) raises
ConnectionError naming the host; a failed operation raises OSError naming the path and the host. With the URI
option `run_as=USER` (not the login user) every command runs through `sudo -n -u USER` on the remote host, as
the executor's own operations do; no sudo there, or a sudo that wants a password, raises PermissionError with
a message naming the host (and the login user)."""

import shlex
import subprocess

from inmanta.agent.io.local import IOBase

_NO_SUDO = "inmanta-io: sudo is not installed"
# $1 the user, $2 the command line; the same check as the executor's sessions (SshIo.cpp kSudoWrapper).
_SUDO_WRAPPER = ("command -v sudo >/dev/null 2>&1 || { echo '%s' >&2; exit 97; }\n"
                 'u=$1; shift; exec sudo -n -u "$u" -- sh -c "$1"' % _NO_SUDO)


class SshIO(IOBase):
    """IO on the host of an ssh:// agent URI. `prefix` is a callable returning the argv that runs one command
    string there (the executor's master); without it a direct ssh command is built from `config`."""

    def __init__(self, uri, config, prefix=None):
        super().__init__(uri, config if config is not None else {})
        self._prefix_fn = prefix
        self._prefix = None
        run_as = self.config.get("run_as")
        self._run_as = run_as if run_as and run_as != self.config.get("user") else None

    def is_remote(self):
        return True

    def _target(self):
        host = self.config.get("host") or "?"
        return "%s%s:%s" % ((self.config.get("user") + "@") if self.config.get("user") else "", host,
                            self.config.get("port") or 22)

    def _argv(self):
        if self._prefix is None:
            if self._prefix_fn is not None:
                self._prefix = list(self._prefix_fn())
            else:
                argv = ["ssh", "-o", "BatchMode=yes", "-o", "StrictHostKeyChecking=yes"]
                if self.config.get("known_hosts"):
                    argv += ["-o", "UserKnownHostsFile=" + self.config["known_hosts"]]
                if self.config.get("identity_file"):
                    argv += ["-i", self.config["identity_file"], "-o", "IdentitiesOnly=yes"]
                argv += ["-p", str(self.config.get("port") or 22)]
                if self.config.get("user"):
                    argv += ["-l", self.config["user"]]
                self._prefix = argv + [self.config["host"], "--"]
        return self._prefix

    def _exec(self, command, data=None, timeout=None):
        if self._run_as:
            command = "sh -c %s inmanta-sudo %s %s" % (shlex.quote(_SUDO_WRAPPER), shlex.quote(self._run_as),
                                                       shlex.quote(command))
        proc = subprocess.run(self._argv() + [command], input=data if data is not None else b"",
                              capture_output=True, timeout=timeout)
        if proc.returncode == 255 and not self._master_alive():
            raise ConnectionError("cannot reach ssh://%s over ssh: %s" % (
                self._target(), " ".join(l for l in proc.stderr.decode(errors="replace").splitlines()
                                         if l.strip() and not l.startswith("@"))))
        if self._run_as and proc.returncode in (1, 97):
            self._check_sudo(proc.stderr.decode(errors="replace"))
        return proc

    def _check_sudo(self, err):
        """Raises PermissionError when `err` says sudo itself refused (not the command run through it)."""
        if _NO_SUDO in err:
            raise PermissionError("sudo is not installed on ssh://%s" % self._target())
        if err.startswith("sudo: ") and ("password is required" in err or "a terminal is required" in err):
            raise PermissionError("sudo needs a password for %s on ssh://%s (configure NOPASSWD)" % (
                self.config.get("user") or "the login user", self._target()))

    def _master_alive(self):
        """Over the executor's master, 255 may be the remote command's own status: true when the master is up."""
        argv = self._argv()
        if "-S" not in argv:
            return False
        check = [argv[0], "-O", "check"] + [a for a in argv[1:] if a != "--"]
        return subprocess.run(check, capture_output=True).returncode == 0

    def _sh(self, script, *args, data=None):
        return self._exec("sh -c %s inmanta-io %s" % (shlex.quote(script), " ".join(shlex.quote(str(a)) for a in args)),
                          data)

    def _check(self, what, path, script, *args, data=None):
        proc = self._sh(script, *args, data=data)
        if proc.returncode != 0:
            raise OSError("%s %s on ssh://%s: %s" % (what, path, self._target(),
                                                     proc.stderr.decode(errors="replace").strip()
                                                     or "exit status %d" % proc.returncode))
        return proc.stdout

    def run(self, command, arguments=[], env=None, cwd=None, timeout=None):  # noqa: B006 - the reference's signature
        line = " ".join(shlex.quote(str(a)) for a in [command] + list(arguments))
        if env:
            line = "env " + " ".join(shlex.quote("%s=%s" % (k, v)) for k, v in env.items()) + " " + line
        if cwd:
            line = "cd %s && %s" % (shlex.quote(cwd), line)
        proc = self._exec(line, timeout=timeout)
        return (proc.stdout.strip().decode("utf-8"), proc.stderr.strip().decode("utf-8"), proc.returncode)

    def hash_file(self, path):
        return self._check("cannot hash", path, 'sha1sum -- "$1"', path).split()[0].decode()

    def read(self, path):
        return self.read_binary(path).decode("utf-8")

    def read_binary(self, path):
        return self._check("cannot read", path, 'exec cat -- "$1"', path)

    def file_exists(self, path):
        return self._sh('[ -e "$1" ] || [ -L "$1" ]', path).returncode == 0

    def readlink(self, path):
        return self._check("cannot read link", path, 'exec readlink -- "$1"', path).decode().rstrip("\n")

    def symlink(self, source, target):
        self._check("cannot create symlink", target, 'ln -s -- "$1" "$2"', source, target)

    def is_symlink(self, path):
        return self._sh('[ -L "$1" ]', path).returncode == 0

    def file_stat(self, path):
        owner, group, mode = self._check("cannot stat", path, 'exec stat -L -c "%U %G %a" -- "$1"', path).split()
        return {"owner": owner.decode(), "group": group.decode(), "permissions": int(mode)}

    def remove(self, path):
        self._check("cannot remove", path, 'rm -- "$1"', path)

    def put(self, path, content):
        data = content if isinstance(content, bytes) else content.encode("utf-8")
        self._check("cannot write", path, 'cat > "$1"', path, data=data)

    def chown(self, path, user=None, group=None):
        if user is None and group is None:
            raise ValueError("user and/or group must be set")
        spec = (user or "") + ((":" + group) if group else "")
        self._check("cannot change owner/group of", path, 'chown -- "$2" "$1"', path, spec)

    def chmod(self, path, permissions):
        self._check("cannot chmod", path, 'chmod -- "$2" "$1"', path, str(permissions))

    def mkdir(self, path):
        self._check("cannot create directory", path, 'mkdir -- "$1"', path)

    def rmdir(self, path):
        self._check("cannot remove directory", path, 'rm -rf -- "$1"', path)
