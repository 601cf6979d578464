#!/usr/bin/env python3
"""Checks that real public Inmanta modules (with their Python plugins) compile and export what their own tests
expect, through pybridge/. Their code is not in this repository: pass a directory holding checkouts of
github.com/inmanta/{exec,yaml,yum} (e.g. `git clone` or an archive of each); the network is not used here.

    python3 test/realmodules/check.py --inmanta build/bin/inmanta --modules /tmp/real/libs

Each check writes a project next to those modules (in a temporary directory), runs `inmanta export`, and
compares with the assertions of the module's own test suite (cited per check). Exit status 1 on any mismatch."""

import argparse
import json
import os
import shutil
import struct
import subprocess
import sys
import tempfile

CHECKS = {
    # exec/tests/test_exec.py::test_exec: one exec::Run per command, id attribute `command`, agent host.name;
    # exec::in_shell wraps the command in `sh -c` (the plugin's documented behaviour).
    "exec": (
        ["exec"],
        """
import exec
host = std::Host(name="server", os=std::linux)
exec::Run(host=host, command="/usr/bin/touch /tmp/file1")
exec::Run(host=host, command=exec::in_shell("echo hi > /tmp/x"), creates="/tmp/x", cwd="/tmp")
""",
        lambda out, art: [
            ("two exec::Run resources", sorted(r["id"] for r in art["resources"]) == [
                'exec::Run[server,command=/usr/bin/touch /tmp/file1],v=0',
                'exec::Run[server,command=sh -c "echo hi > /tmp/x"],v=0']),
            ("fields of Run", all(set(r) >= {"command", "creates", "cwd", "environment", "onlyif", "path", "reload",
                                             "reload_only", "returns", "timeout", "unless", "skip_on_fail"}
                                  for r in art["resources"])),
            ("creates/cwd exported", any(r["creates"] == "/tmp/x" and r["cwd"] == "/tmp" for r in art["resources"])),
            ("python code registered", [m["module"] for m in art.get("python_code", [])] == ["exec"]),
        ],
    ),
    # yaml/tests/test_basics.py::test_basics and ::test_readme.
    "yaml": (
        ["yaml"],
        '''
import yaml
import unittest
a = yaml::load("unittest/test.yaml")
b = yaml::loads("""a:
- a
- b
- c
""")
entity Out:
    dict a
    dict b
end
Out(a=a, b=b)
implement Out using std::none
std::print(a == {"a": ["a", "b", "c"]})
std::print(b == {"a": ["a", "b", "c"]})
yaml_dict_c = yaml::loads("""key: value""")
yaml_dict_c = {"key":"value"}
''',
        lambda out, art: [("instance.a == instance.b == test_content", out.split() == ["True", "True"])],
    ),
    # yum/tests/test_module.py::test_repository (baseurl+metalink): one std::File with the expected content,
    # and yum's Python dependency manager makes every std::Package require the repo files of its host.
    "yum": (
        ["yum"],
        """
import std
import yum
redhat = std::OS(name="redhat")
rocky8 = std::OS(name="rocky", version=8, family=redhat)
host = std::Host(name="localhost", os=rocky8)
yum::Repository(host=host, name="test", gpgcheck=true, enabled=true, baseurl="http://baseurl.com",
    mirrorlist=null, metalink="http://metalink.com", gpgkey="http://gpgkey.com", metadata_expire=7200,
    skip_if_unavailable=false)
std::Package(host=host, name="nginx", state="installed")
""",
        lambda out, art: [
            ("repo file content", [art["files"][r["hash"]].strip() for r in art["resources"] if r["id"].startswith(
                "std::File[localhost,path=/etc/yum.repos.d/test.repo]")] == [
                "[test]\nname = test\nenabled=1\ngpgcheck=1\nbaseurl = http://baseurl.com\nmetalink = "
                "http://metalink.com\ngpgkey = http://gpgkey.com\nmetadata_expire = 7200\nskip_if_unavailable=0"]),
            ("package requires repo (dependency manager)", [r["requires"] for r in art["resources"]
                                                            if r["id"].startswith("std::Package")] == [
                ["std::File[localhost,path=/etc/yum.repos.d/test.repo]"]]),
        ],
    ),
}


def frame(msg):
    body = json.dumps(msg).encode()
    return struct.pack(">I", len(body)) + body


def read_frame(stream):
    (n,) = struct.unpack(">I", stream.read(4))
    return json.loads(stream.read(n))


def deploy_exec(inmanta, tmp):
    """exec/tests/test_exec.py::test_exec through our executor and exec's own Python handler (PosixRun): the
    first Run touches file1 (deployed, updated); a Run with creates=file1 then does nothing (nochange)."""
    proj = os.path.join(tmp, "p_exec_deploy")
    os.makedirs(proj)
    f1, f2 = os.path.join(tmp, "file1"), os.path.join(tmp, "file2")
    with open(os.path.join(proj, "project.yml"), "w") as f:
        f.write("name: p_exec_deploy\nmodulepath: ../libs\n")
    with open(os.path.join(proj, "main.cf"), "w") as f:
        f.write('import exec\nhost = std::Host(name="server", os=std::linux)\n'
                'exec::Run(host=host, command="/usr/bin/touch %s")\n'
                'exec::Run(host=host, command="/usr/bin/touch %s", creates="%s")\n' % (f1, f2, f1))
    subprocess.run([inmanta, "export", "-j", "out.json"], cwd=proj, check=True, capture_output=True)
    with open(os.path.join(proj, "out.json")) as f:
        art = json.load(f)
    reqs = {}
    for r in art["resources"]:
        attrs = {k: v for k, v in r.items() if k not in ("id", "version", "requires", "undefined")}
        reqs[r["command"].split()[-1]] = {"action_id": r["command"], "id": r["id"], "attributes": attrs}
    p = subprocess.Popen([inmanta, "executor", "--python-artifact", os.path.join(proj, "out.json")],
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    try:
        p.stdin.write(frame({"type": "hello", "protocol": 1}))
        p.stdin.write(frame({"type": "deploy", "requests": [reqs[f1]]}))
        p.stdin.flush()
        read_frame(p.stdout)
        first = read_frame(p.stdout)
        p.stdin.write(frame({"type": "deploy", "requests": [reqs[f2]]}))
        p.stdin.flush()
        second = read_frame(p.stdout)
        p.stdin.write(frame({"type": "shutdown"}))
        p.stdin.flush()
        read_frame(p.stdout)
        p.wait(10)
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    return [
        ("handler: first Run deployed+updated, file1 exists",
         (first["status"], first["change"], os.path.exists(f1)) == ("deployed", "updated", True)),
        ("handler: Run with creates=file1 is nochange, file2 absent",
         (second["status"], second["change"], os.path.exists(f2)) == ("deployed", "nochange", False)),
    ]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--inmanta", required=True)
    ap.add_argument("--modules", required=True, help="directory with checkouts of exec, yaml, yum")
    args = ap.parse_args()
    inmanta = os.path.abspath(args.inmanta)
    failed = 0
    with tempfile.TemporaryDirectory() as tmp:
        libs = os.path.join(tmp, "libs")
        os.makedirs(os.path.join(libs, "unittest", "model"))
        os.makedirs(os.path.join(libs, "unittest", "files"))
        with open(os.path.join(libs, "unittest", "module.yml"), "w") as f:
            f.write("name: unittest\nversion: 1.0.0\n")
        open(os.path.join(libs, "unittest", "model", "_init.cf"), "w").close()
        with open(os.path.join(libs, "unittest", "files", "test.yaml"), "w") as f:
            f.write("a:\n- a\n- b\n- c\n")
        for name, (modules, model, check) in CHECKS.items():
            for m in modules:
                if not os.path.isdir(os.path.join(libs, m)):
                    shutil.copytree(os.path.join(args.modules, m), os.path.join(libs, m),
                                    ignore=shutil.ignore_patterns(".git", "__pycache__"))
            proj = os.path.join(tmp, "p_" + name)
            os.makedirs(proj)
            with open(os.path.join(proj, "project.yml"), "w") as f:
                f.write("name: p_%s\nmodulepath: ../libs\n" % name)
            with open(os.path.join(proj, "main.cf"), "w") as f:
                f.write(model)
            p = subprocess.run([inmanta, "export", "-j", "out.json"], cwd=proj, capture_output=True, text=True)
            if p.returncode != 0:
                print("FAIL %s: exit %d\n%s" % (name, p.returncode, p.stderr[-2000:]))
                failed += 1
                continue
            with open(os.path.join(proj, "out.json")) as f:
                art = json.load(f)
            for what, ok in check(p.stdout, art):
                print("%s %s: %s" % ("ok  " if ok else "FAIL", name, what))
                failed += 0 if ok else 1
        if "exec" in CHECKS:
            for what, ok in deploy_exec(inmanta, tmp):
                print("%s exec: %s" % ("ok  " if ok else "FAIL", what))
                failed += 0 if ok else 1
    print("real modules: %s" % ("all checks agree" if not failed else "%d check(s) failed" % failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
