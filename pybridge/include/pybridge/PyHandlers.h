// The executor side of the Python bridge: the `@provider` handlers of a version's Python code registered in
// the executor's HandlerRegistry, so they run through the same C++ handler API as the std handlers (the CRUD
// algorithm, the dependency gate, HandlerContext logs with kwargs, changes, facts). Used by `inmanta executor
// --python-artifact FILE` / `--python-code DIR`. Invariant: the interpreter is started only when there is
// code, and every Python call holds the GIL (executor workers run on several threads).
#pragma once

#include "executor/Handler.h"
#include "pybridge/PyBridge.h"

#include <llvm/Support/Error.h>

#include <string>
#include <vector>

namespace inm::pybridge {

/// Writes the `python_code` of an artifact (docs/artifact.md) under `dir` as `<dir>/<module>/<path>` and
/// returns the modules it wrote. Fails on an unreadable or malformed artifact or a file missing from its
/// `files`.
llvm::Expected<std::vector<PythonModule>> materializeCode(const std::string& artifactPath,
                                                          const std::string& dir);

/// The modules of a directory laid out as `<dir>/<module>/plugins/__init__.py`.
std::vector<PythonModule> modulesInDir(const std::string& dir);

/// Imports the modules' plugins packages and registers a handler for every `@provider` class (after the std
/// handlers: a Python provider of the same type wins). Import errors are returned with the traceback.
llvm::Error registerPythonHandlers(const std::vector<PythonModule>& modules,
                                   executor::HandlerRegistry& registry);

} // namespace inm::pybridge
