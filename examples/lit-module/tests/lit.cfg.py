# Model tests of the litdemo module (lit + FileCheck). The inmanta binary writes the real configuration
# (`inmanta lit-config`, docs/testing.md "For users"), so its paths are always those of the binary in use.
# Run: `$(inmanta lit-config --lit) -sv tests`; a binary not on PATH: `--param inmanta=/path/to/inmanta`.
import os
import subprocess

inmanta = lit_config.params.get("inmanta") or os.environ.get("INMANTA") or "inmanta"
if os.sep in inmanta:
    inmanta = os.path.abspath(inmanta)
exec(subprocess.run([inmanta, "lit-config"], check=True, capture_output=True, text=True).stdout)
