# Our own implementation of the `inmanta` Python API that Inmanta modules import (plugins, resources,
# handlers), backed by the C++ compiler through the built-in `_inm` module. Only loaded when a model uses
# Python plugins (pybridge/, docs/pybridge.md).
