"""Handlers of test/integration/test_pybridge_api.py, written for this project against the reference's handler
API: file transfer (get_file/stat_file/upload_file), LocalIO methods, provider selection with available(), the
default list_changes (check_resource + _diff), get_client(), fields_updated, Config reads and errors."""

import hashlib
import os

from inmanta.agent import io as agent_io
from inmanta.agent.handler import CRUDHandler, HandlerContext, ResourceHandler, ResourcePurged, provider
from inmanta.config import Config
from inmanta.protocol.common import Result
from inmanta.resources import Id, PurgeableResource, Resource, ResourceNotFoundExcpetion, resource


@resource("pyapi::Copy", agent="agent", id_attribute="path")
class Copy(PurgeableResource):
    fields = ("path", "hash", "permissions")


@provider("pyapi::Copy", name="copy")
class CopyHandler(CRUDHandler):
    """A file whose content comes from the server's file store; a changed local content is offered back."""

    def read_resource(self, ctx: HandlerContext, resource: Copy) -> None:
        if not self._io.file_exists(resource.path):
            raise ResourcePurged()
        resource.hash = self._io.hash_file(resource.path)
        content = self._io.read_binary(resource.path)
        if not self.stat_file(resource.hash):
            self.upload_file(resource.hash, content)
            ctx.info("uploaded %(hash)s", hash=resource.hash)
        resource.permissions = str(self._io.file_stat(resource.path)["permissions"])

    def create_resource(self, ctx: HandlerContext, resource: Copy) -> None:
        data = self.get_file(resource.hash)
        if data is None:
            raise Exception("file %s is not on the server" % resource.hash)
        self._io.put(resource.path, data)
        self._io.chmod(resource.path, resource.permissions)
        ctx.set_created()

    def update_resource(self, ctx: HandlerContext, changes: dict, resource: Copy) -> None:
        if "hash" in changes:
            self._io.put(resource.path, self.get_file(resource.hash))
        if "permissions" in changes:
            self._io.chmod(resource.path, resource.permissions)
        ctx.set_updated()

    def delete_resource(self, ctx: HandlerContext, resource: Copy) -> None:
        self._io.remove(resource.path)
        ctx.set_purged()


class Base(Resource):
    fields = ("path",)


@resource("pyapi::Value", agent="agent", id_attribute="path")
class Value(Base):
    """Fields merged over the base class: path (Base) + value."""

    fields = ("value",)


@provider("pyapi::Value", name="value")
class ValueHandler(ResourceHandler):
    """Relies on the default list_changes: check_resource + _diff over Value.fields."""

    def check_resource(self, ctx, resource):
        current = resource.clone()
        current.value = self._io.read(resource.path) if self._io.file_exists(resource.path) else None
        return current

    def do_changes(self, ctx, resource, changes):
        if "value" in changes:
            self._io.put(resource.path, resource.value.encode())
            ctx.fields_updated(["value"])
            ctx.set_updated()


@resource("pyapi::Choice", agent="agent", id_attribute="name")
class Choice(Resource):
    fields = ("name", "mode", "path")


class _Chooser(ResourceHandler):
    def list_changes(self, ctx, resource):
        return {"chosen": {"current": None, "desired": self.__inmanta_provider__[1]}}

    def do_changes(self, ctx, resource, changes):
        with open(resource.path, "w") as f:
            f.write(self.__inmanta_provider__[1])


@provider("pyapi::Choice", name="alpha")
class Alpha(_Chooser):
    def available(self, resource):
        return resource.mode in ("alpha", "both")


@provider("pyapi::Choice", name="beta")
class Beta(_Chooser):
    def available(self, resource):
        return resource.mode in ("beta", "both")


@resource("pyapi::Probe", agent="agent", id_attribute="name")
class Probe(Resource):
    fields = ("name", "dir", "fail")


@provider("pyapi::Probe", name="probe")
class ProbeHandler(ResourceHandler):
    """Exercises LocalIO, get_client, self._agent, Config and the context's extras; logs what it saw."""

    def list_changes(self, ctx, resource):
        return {}

    def do_changes(self, ctx, resource, changes):
        if resource.fail:
            raise Exception(resource.fail)
        io = self._io
        d = resource.dir
        out, err, code = io.run("sh", ["-c", 'echo "$PYAPI_X:${PYTHONPATH:-none}:$PYAPI_BASE"; echo e >&2; exit 3'],
                                env={"PYAPI_X": "merged"}, cwd=d)
        io.mkdir(os.path.join(d, "sub"))
        io.put(os.path.join(d, "sub", "f"), b"hello")
        io.symlink(os.path.join(d, "sub", "f"), os.path.join(d, "link"))
        stat = io.file_stat(os.path.join(d, "sub", "f"))
        io.chmod(os.path.join(d, "sub", "f"), "640")
        io.chown(os.path.join(d, "sub", "f"), stat["owner"], stat["group"])
        seen = {
            "run": [out, err, code],
            "hash": io.hash_file(os.path.join(d, "sub", "f")),
            "read": io.read(os.path.join(d, "link")),
            "is_symlink": io.is_symlink(os.path.join(d, "link")),
            "readlink": io.readlink(os.path.join(d, "link")),
            "perm": io.file_stat(os.path.join(d, "sub", "f"))["permissions"],
            "is_remote": io.is_remote(),
            "uri": agent_io.parse_agent_uri("ssh://u@h:22?python=python3"),
        }
        io.remove(os.path.join(d, "link"))
        io.rmdir(os.path.join(d, "sub"))
        seen["exists_after"] = io.file_exists(os.path.join(d, "sub"))
        client = self.get_client()
        stat_result = self.run_sync(lambda: client.stat_file(id=hashlib.sha1(b"none").hexdigest()))
        seen["client_stat"] = [isinstance(stat_result, Result), stat_result.code]
        try:
            client.list_environments()
        except NotImplementedError as e:
            seen["client_other"] = str(e)
        seen["agent"] = [self._agent.name, self._agent.uri]
        seen["config"] = [Config.get("pyapi", "greeting", "none"), Config.get("pyapi", "absent", "dflt")]
        seen["action_id"] = bool(str(ctx.action_id))
        seen["logger"] = hasattr(ctx.logger, "info")
        rid = Id.parse_id(str(resource.id))
        seen["id"] = [rid.resource_version_str(), rid.copy(version=7).to_dict(), Id.is_resource_id(rid.resource_str())]
        seen["excpetion"] = issubclass(ResourceNotFoundExcpetion, Exception)
        ctx.info("seen", **seen)
