// Private state of the Python bridge shared by its files: the interpreter's cached objects (the `_bridge`
// functions, proxy and marker classes), the scope of the call in progress (what `_inm` callbacks read), and
// value conversion between runtime::Value and Python objects. Invariant: single-threaded; the main thread
// holds the GIL for the whole process once the interpreter is started.
#pragma once

// clang-format off
#define PY_SSIZE_T_CLEAN
#include <Python.h> // first: CPython must precede the standard headers
// clang-format on

#include "exporter/ResourceRegistry.h"
#include "runtime/Plugins.h"

#include <string>

namespace inm::pybridge {

/// What the `_inm` callbacks may touch during one plugin call or mapper call.
struct Scope {
  runtime::PluginContext* plugin = nullptr;  ///< during a plugin call
  exporter::MapperContext* mapper = nullptr; ///< during a mapper call
  const runtime::Model* model = nullptr;
  runtime::ValueArena* arena = nullptr;
};

/// The current scope (nullptr outside calls); set with ScopeGuard.
Scope* currentScope();

class ScopeGuard {
 public:
  explicit ScopeGuard(Scope& s);
  ~ScopeGuard();

 private:
  Scope* saved_;
};

/// Objects of the interpreter looked up once.
struct PyRefs {
  PyObject* bridgeCall = nullptr;     // inmanta._bridge.call
  PyObject* bridgeMap = nullptr;      // inmanta._bridge.map_field
  PyObject* bridgeLoad = nullptr;     // inmanta._bridge.load
  PyObject* instanceProxy = nullptr;  // inmanta.execute.proxy.InstanceProxy
  PyObject* unknownClass = nullptr;   // inmanta.execute.util.Unknown
  PyObject* noneValueClass = nullptr; // inmanta.execute.util.NoneValue
  PyObject* retryError = nullptr;     // _inm.Retry
  PyObject* handleName = nullptr;     // "_handle"
};
PyRefs& refs();

/// False once the project's own std's Python is loaded: `_inm.std_resource` then knows no native std
/// resource.
extern bool gNativeStd;

/// Initialises the interpreter and the `_inm` module once; false (and `error`) if that fails.
bool startInterpreter(std::string& error);

/// Model value -> new reference (nullptr with a Python error set on failure).
PyObject* toPython(const runtime::Value& v);
/// Python object -> model value allocated in `arena`; false with `error` on an unconvertible object.
bool fromPython(PyObject* o, runtime::ValueArena& arena, runtime::Value& out, std::string& error);

/// The `_inm.ctx_*` functions (Handlers.cpp): a Python handler's HandlerContext writing into the C++ one.
PyMethodDef* handlerContextMethods();

/// Text of the pending Python exception (with traceback), clearing it.
std::string takePythonError();

} // namespace inm::pybridge
