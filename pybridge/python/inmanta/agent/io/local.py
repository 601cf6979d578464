"""The agent's IO layer as handlers see it (`self._io`): `IOBase`, and `LocalIO`, which acts on the machine the
executor runs on. Method names, arguments and results follow the reference's stable API (inmanta-core
`inmanta.agent.io.local`): `run` returns (stdout stripped, stderr stripped, returncode) and runs with the
process environment updated by `env`, minus an inherited PYTHONPATH unless `env` sets one; `file_stat` gives
owner, group and permissions as an int of the octal digits (644); `chmod` takes an octal string; `rmdir`
removes the whole tree. `BashIO` runs the same operations through shell commands, optionally as another user
through sudo (`run_as`)."""

import grp
import hashlib
import os
import pwd
import shutil
import subprocess


class IOBase:
    """Base of every IO: `uri` as configured and `config`, its parsed settings."""

    def __init__(self, uri, config):
        self.uri = uri
        self.config = config

    def is_remote(self):
        raise NotImplementedError("%s does not say whether it is remote" % type(self).__name__)

    def close(self):
        pass

    def __del__(self):
        try:
            self.close()
        except Exception:
            pass

    def __repr__(self):
        return "%s(%r)" % (type(self).__name__, self.uri)

    __str__ = __repr__


def _command_env(env):
    merged = os.environ.copy()
    if env is not None:
        merged.update({k: str(v) for k, v in env.items()})
    if (not env or "PYTHONPATH" not in env) and "PYTHONPATH" in merged:
        del merged["PYTHONPATH"]
    return merged


def _uid(user):
    if isinstance(user, int):
        return user
    try:
        return pwd.getpwnam(user).pw_uid
    except KeyError:
        raise LookupError("no such user: %r" % (user,)) from None


def _gid(group):
    if isinstance(group, int):
        return group
    try:
        return grp.getgrnam(group).gr_gid
    except KeyError:
        raise LookupError("no such group: %r" % (group,)) from None


class LocalIO(IOBase):
    """IO on the local machine (the executor's host)."""

    def __init__(self, uri="local:", config=None):
        super().__init__(uri, config if config is not None else {})

    def is_remote(self):
        return False

    def hash_file(self, path):
        with open(path, "rb") as f:
            return hashlib.sha1(f.read()).hexdigest()

    def read(self, path):
        with open(path, "rb") as f:
            return f.read().decode("utf-8")

    def read_binary(self, path):
        with open(path, "rb") as f:
            return f.read()

    def run(self, command, arguments=[], env=None, cwd=None, timeout=None):  # noqa: B006 - the reference's signature
        proc = subprocess.Popen([command] + list(arguments), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                env=_command_env(env), cwd=cwd)
        try:
            out, err = proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.communicate()
            raise
        return out.strip().decode("utf-8"), err.strip().decode("utf-8"), proc.returncode

    def file_exists(self, path):
        return os.path.lexists(path)

    def readlink(self, path):
        return os.readlink(path)

    def symlink(self, source, target):
        os.symlink(source, target)

    def is_symlink(self, path):
        return os.path.islink(path)

    def file_stat(self, path):
        st = os.stat(path)
        return {
            "owner": pwd.getpwuid(st.st_uid).pw_name,
            "group": grp.getgrgid(st.st_gid).gr_name,
            "permissions": int(oct(st.st_mode)[-4:]),
        }

    def remove(self, path):
        os.remove(path)

    def put(self, path, content):
        with open(path, "wb+") as f:
            f.write(content if isinstance(content, bytes) else content.encode("utf-8"))

    def chown(self, path, user=None, group=None):
        if user is None and group is None:
            raise ValueError("user and/or group must be set")
        os.chown(path, -1 if user is None else _uid(user), -1 if group is None else _gid(group))

    def chmod(self, path, permissions):
        os.chmod(path, int(str(permissions), 8))

    def mkdir(self, path):
        os.mkdir(path)

    def rmdir(self, path):
        shutil.rmtree(path)


class BashIO(IOBase):
    """The same operations through shell commands, as `run_as` (through sudo) when given."""

    def __init__(self, uri="local:", config=None, run_as=None):
        super().__init__(uri, config if config is not None else {})
        self.run_as = run_as
        self._local = LocalIO(uri, self.config)

    def _args(self, *args):
        if self.run_as is None:
            return list(args)
        return ["sudo", "-E", "-u", self.run_as] + list(args)

    def is_remote(self):
        return False

    def _check(self, *args):
        out, err, code = self._local.run(*self._split(self._args(*args)))
        if code != 0:
            raise IOError("%s failed (exit %d): %s" % (" ".join(args), code, err))
        return out

    @staticmethod
    def _split(cmd):
        return cmd[0], cmd[1:]

    def run(self, command, arguments=[], env=None, cwd=None, timeout=None):  # noqa: B006
        cmd = self._args(command, *arguments)
        return self._local.run(cmd[0], cmd[1:], env, cwd, timeout)

    def hash_file(self, path):
        return self._check("sha1sum", "--", path).split()[0]

    def read(self, path):
        return self._check("cat", "--", path)

    def read_binary(self, path):
        return self.read(path).encode("utf-8")

    def file_exists(self, path):
        return self.run("test", ["-e", path])[2] == 0 or self.is_symlink(path)

    def readlink(self, path):
        return self._check("readlink", "--", path)

    def symlink(self, source, target):
        self._check("ln", "-s", source, target)

    def is_symlink(self, path):
        return self.run("test", ["-L", path])[2] == 0

    def file_stat(self, path):
        owner, group, mode = self._check("stat", "-c", "%U %G %a", "--", path).split()
        return {"owner": owner, "group": group, "permissions": int(mode)}

    def remove(self, path):
        self._check("rm", "-f", "--", path)

    def put(self, path, content):
        data = content if isinstance(content, bytes) else content.encode("utf-8")
        proc = subprocess.run(self._args("dd", "of=" + path, "status=none"), input=data, capture_output=True)
        if proc.returncode != 0:
            raise IOError("writing %s failed: %s" % (path, proc.stderr.decode(errors="replace").strip()))

    def chown(self, path, user=None, group=None):
        if user is None and group is None:
            raise ValueError("user and/or group must be set")
        spec = (user or "") + ((":" + group) if group else "")
        self._check("chown", spec, "--", path)

    def chmod(self, path, permissions):
        self._check("chmod", str(permissions), "--", path)

    def mkdir(self, path):
        self._check("mkdir", "--", path)

    def rmdir(self, path):
        self._check("rm", "-rf", "--", path)
