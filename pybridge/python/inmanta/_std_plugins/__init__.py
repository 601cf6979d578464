"""`inmanta_plugins.std` as module code imports it: our std module's plugins are native (C++), so this
package only carries the Python helpers other modules import from std."""

import os

import _inm
from inmanta.plugins import PluginException


def get_file_content(ctx, dir_name, path):
    """Content of `<module>/<dir_name>/<rest>` for a path "module/rest" (std::file / std::source
    convention); a path without a module part is looked up in the project's module of the same name."""
    module, _, rest = path.partition("/")
    if not rest:
        raise PluginException("%s is not a path of the form module/path" % path)
    module_dir = _inm.module_dir(module)
    if not module_dir:
        raise PluginException("Unable to locate the module %s for the file %s" % (module, path))
    full = os.path.join(module_dir, dir_name, rest)
    if not os.path.isfile(full):
        raise PluginException("Unable to locate the file %s (looked for %s)" % (path, full))
    with open(full, encoding="utf-8") as f:
        return f.read()
