// The embedded interpreter: started once on first use (never for a project without Python plugins), with
// the built-in `_inm` module through which our `inmanta` package reads the model (instance attributes,
// entity names and subtypes, the files set), and the conversions between runtime::Value and Python objects.
// Invariant: `_inm` functions only read the model through the current Scope; outside a call they raise.
#include "Bridge.h"
#include "pybridge/PyBridge.h"
#include "runtime/BigInt.h"

#include <llvm/Support/FileSystem.h>
#include <llvm/Support/Path.h>

#include <algorithm>
#include <cstdlib>
#include <string>

namespace inm::pybridge {

using runtime::InstanceId;
using runtime::Value;
using runtime::ValueKind;

bool gNativeStd = true;

namespace {

Scope* gScope = nullptr;
PyRefs gRefs;
ServerCall gServer;
std::string gEnvironment;

Scope* needScope() {
  if (!gScope)
    PyErr_SetString(PyExc_RuntimeError, "the model is only readable during a plugin or mapper call");
  return gScope;
}

const ir::Program* programOf(Scope* s) {
  if (s->plugin) return &s->plugin->model().program();
  return &s->model->program();
}

bool handleArg(PyObject* o, InstanceId& id) {
  long long h = PyLong_AsLongLong(o);
  if (h == -1 && PyErr_Occurred()) return false;
  Scope* s = gScope;
  const runtime::Model& m = s->plugin ? s->plugin->model() : *s->model;
  if (h < 0 || size_t(h) >= m.instances().size()) {
    PyErr_SetString(PyExc_ValueError, "no such instance");
    return false;
  }
  id = InstanceId{uint32_t(h)};
  return true;
}

const runtime::Model& modelOf(Scope* s) { return s->plugin ? s->plugin->model() : *s->model; }

ir::EntityId findEntity(const ir::Program& p, llvm::StringRef name) {
  for (uint32_t i = 0; i < p.entities.size(); ++i)
    if (p.entities[ir::EntityId{i}].fullName == name) return ir::EntityId{i};
  return {};
}

PyObject* inmAttr(PyObject*, PyObject* args) {
  PyObject* h;
  const char* name;
  if (!PyArg_ParseTuple(args, "Os", &h, &name) || !needScope()) return nullptr;
  InstanceId id;
  if (!handleArg(h, id)) return nullptr;
  const runtime::Model& m = modelOf(gScope);
  const Value* v = nullptr;
  bool exists = true;
  if (gScope->plugin) {
    v = gScope->plugin->attr(id, name, &exists);
    if (!v && exists) {
      PyErr_SetString(gRefs.retryError, name); // not final yet: the call is run again later
      return nullptr;
    }
  } else {
    v = m.get(id, llvm::StringRef(name));
    exists = v != nullptr;
  }
  if (!exists || !v) {
    PyErr_Format(PyExc_AttributeError, "%s has no attribute '%s'", m.describe(id).c_str(), name);
    return nullptr;
  }
  return toPython(*v);
}

PyObject* inmEntity(PyObject*, PyObject* arg) {
  InstanceId id;
  if (!needScope() || !handleArg(arg, id)) return nullptr;
  const runtime::Model& m = modelOf(gScope);
  const std::string& n = m.program().entities[m.entityOf(id)].fullName;
  return PyUnicode_FromStringAndSize(n.data(), Py_ssize_t(n.size()));
}

PyObject* inmDescribe(PyObject*, PyObject* arg) {
  InstanceId id;
  if (!needScope() || !handleArg(arg, id)) return nullptr;
  std::string d = modelOf(gScope).describe(id);
  return PyUnicode_FromStringAndSize(d.data(), Py_ssize_t(d.size()));
}

PyObject* inmAncestors(PyObject*, PyObject* arg) {
  InstanceId id;
  if (!needScope() || !handleArg(arg, id)) return nullptr;
  const runtime::Model& m = modelOf(gScope);
  const ir::Program& p = m.program();
  ir::EntityId e = m.entityOf(id);
  PyObject* list = PyList_New(0);
  PyObject* self = PyUnicode_FromString(p.entities[e].fullName.c_str());
  PyList_Append(list, self);
  Py_DECREF(self);
  for (ir::EntityId a : p.entities[e].ancestors) {
    if (a == e) continue;
    PyObject* s = PyUnicode_FromString(p.entities[a].fullName.c_str());
    PyList_Append(list, s);
    Py_DECREF(s);
  }
  return list;
}

PyObject* inmIsSubtype(PyObject*, PyObject* args) {
  PyObject* h;
  const char* name;
  if (!PyArg_ParseTuple(args, "Os", &h, &name) || !needScope()) return nullptr;
  InstanceId id;
  if (!handleArg(h, id)) return nullptr;
  const ir::Program& p = *programOf(gScope);
  ir::EntityId e = findEntity(p, name);
  return PyBool_FromLong(e.valid() && p.isSubtype(modelOf(gScope).entityOf(id), e));
}

PyObject* inmTypeKind(PyObject*, PyObject* arg) {
  if (!needScope()) return nullptr;
  const char* name = PyUnicode_AsUTF8(arg);
  if (!name) return nullptr;
  const ir::Program& p = *programOf(gScope);
  if (findEntity(p, name).valid()) return PyUnicode_FromString("entity");
  static const char* names[] = {"string", "int", "float", "number", "bool", "list", "dict", "any"};
  for (uint32_t i = 0; i < p.typedefs.size(); ++i) {
    const ir::Typedef& t = p.typedefs[ir::TypedefId{i}];
    if (t.fullName == name && unsigned(t.base) < 8)
      return PyUnicode_FromFormat("typedef:%s", names[unsigned(t.base)]);
  }
  return PyUnicode_FromString("");
}

/// typedef_ok(name, value): "" when `value` satisfies typedef `name` (base type and constraint, evaluated by
/// the compiler as for an assignment), else the assignment's error text. Outside a plugin call nothing is
/// checked.
PyObject* inmTypedefOk(PyObject*, PyObject* args) {
  const char* name;
  PyObject* value;
  if (!PyArg_ParseTuple(args, "sO", &name, &value) || !needScope()) return nullptr;
  if (!gScope->plugin) return PyUnicode_FromString("");
  Value v;
  std::string error;
  if (!fromPython(value, gScope->plugin->arena(), v, error)) return PyUnicode_FromString(error.c_str());
  if (gScope->plugin->checkTypedef(name, v, error)) return PyUnicode_FromString("");
  return PyUnicode_FromStringAndSize(error.data(), Py_ssize_t(error.size()));
}

/// server_environment(): the compile's environment id when a server is configured, else None.
PyObject* inmServerEnvironment(PyObject*, PyObject*) {
  if (!gServer) Py_RETURN_NONE;
  return PyUnicode_FromString(gEnvironment.c_str());
}

/// server_call(method, path, [(key, value)], body, tid) -> (status, body text); status 0 = no answer.
PyObject* inmServerCall(PyObject*, PyObject* args) {
  const char *method, *path, *body, *tid;
  PyObject* query;
  if (!PyArg_ParseTuple(args, "ssOss", &method, &path, &query, &body, &tid)) return nullptr;
  if (!gServer) {
    PyErr_SetString(PyExc_RuntimeError, "no server is configured for this compile");
    return nullptr;
  }
  ServerRequest req{method, path, {}, body, tid};
  PyObject* seq = PySequence_Fast(query, "query must be a list of (key, value) pairs");
  if (!seq) return nullptr;
  for (Py_ssize_t i = 0; i < PySequence_Fast_GET_SIZE(seq); ++i) {
    const char *k, *v;
    if (!PyArg_ParseTuple(PySequence_Fast_GET_ITEM(seq, i), "ss", &k, &v)) {
      Py_DECREF(seq);
      return nullptr;
    }
    req.query.emplace_back(k, v);
  }
  Py_DECREF(seq);
  ServerAnswer answer = gServer(req);
  return Py_BuildValue("(Is#)", answer.status, answer.body.data(), Py_ssize_t(answer.body.size()));
}

PyObject* inmProjectDir(PyObject*, PyObject*) {
  const frontend::Project* pr = gScope ? programOf(gScope)->project : nullptr;
  return PyUnicode_FromString(pr ? pr->dir.c_str() : ".");
}

PyObject* inmModuleDir(PyObject*, PyObject* arg) {
  const char* name = PyUnicode_AsUTF8(arg);
  if (!name || !needScope()) return nullptr;
  std::string dir;
  if (gScope->plugin) {
    dir = gScope->plugin->moduleDir(name);
  } else if (const frontend::Project* pr = programOf(gScope)->project) {
    for (const frontend::SourceFile& f : pr->files)
      if (f.moduleName == name) dir = f.moduleDir;
  }
  return PyUnicode_FromString(dir.c_str());
}

/// module_names() -> [name] of the loaded modules (Project.get().modules), in load order.
PyObject* inmModuleNames(PyObject*, PyObject*) {
  if (!needScope()) return nullptr;
  PyObject* list = PyList_New(0);
  std::vector<std::string> seen;
  if (const frontend::Project* pr = programOf(gScope)->project)
    for (const frontend::SourceFile& f : pr->files) {
      if (f.moduleName == "__config__" || std::find(seen.begin(), seen.end(), f.moduleName) != seen.end())
        continue;
      seen.push_back(f.moduleName);
      PyObject* n = PyUnicode_FromString(f.moduleName.c_str());
      PyList_Append(list, n);
      Py_DECREF(n);
    }
  return list;
}

/// lookup(name) -> (value,) for a variable visible at the plugin's call site, None when there is none; raises
/// _inm.Retry when it exists but is not final yet (the call is retried).
PyObject* inmLookup(PyObject*, PyObject* arg) {
  const char* name = PyUnicode_AsUTF8(arg);
  if (!name || !needScope()) return nullptr;
  if (!gScope->plugin) {
    PyErr_SetString(PyExc_RuntimeError, "variables are only visible during a plugin call");
    return nullptr;
  }
  if (const Value* v = gScope->plugin->lookupVariable(name)) {
    PyObject* py = toPython(*v);
    return py ? Py_BuildValue("(N)", py) : nullptr;
  }
  if (gScope->plugin->hasVariable(name)) {
    PyErr_SetNone(gRefs.retryError);
    return nullptr;
  }
  Py_RETURN_NONE;
}

PyObject* inmAddFile(PyObject*, PyObject* arg) {
  if (!needScope()) return nullptr;
  if (!gScope->mapper) {
    PyErr_SetString(PyExc_RuntimeError, "files can only be uploaded while exporting");
    return nullptr;
  }
  Py_ssize_t n;
  const char* s = PyUnicode_AsUTF8AndSize(arg, &n);
  if (!s) return nullptr;
  std::string h = gScope->mapper->addFile(llvm::StringRef(s, size_t(n)));
  return PyUnicode_FromString(h.c_str());
}

PyObject* inmStdResource(PyObject*, PyObject* arg) {
  const char* name = PyUnicode_AsUTF8(arg);
  if (!name) return nullptr;
  if (!gNativeStd) Py_RETURN_NONE; // the project's own std registers its resources in Python
  const exporter::ResourceType* t = exporter::ResourceRegistry::standard().find(name);
  if (!t) Py_RETURN_NONE;
  return Py_BuildValue("(sss)", t->entity.c_str(), t->agentPath.c_str(), t->idAttribute.c_str());
}

PyMethodDef kMethods[] = {
    {"attr", inmAttr, METH_VARARGS, "final value of an instance attribute"},
    {"entity", inmEntity, METH_O, "entity name of an instance"},
    {"describe", inmDescribe, METH_O, "description of an instance"},
    {"ancestors", inmAncestors, METH_O, "entity and ancestor names of an instance"},
    {"is_subtype", inmIsSubtype, METH_VARARGS, "instance is of the entity or a subtype"},
    {"type_kind", inmTypeKind, METH_O, "entity / typedef:<base> / ''"},
    {"typedef_ok", inmTypedefOk, METH_VARARGS, "typedef constraint check"},
    {"server_environment", inmServerEnvironment, METH_NOARGS, "environment id when a server is configured"},
    {"server_call", inmServerCall, METH_VARARGS, "one request to the configured server"},
    {"project_dir", inmProjectDir, METH_NOARGS, "project directory"},
    {"module_dir", inmModuleDir, METH_O, "directory of a loaded module, '' if none"},
    {"add_file", inmAddFile, METH_O, "store file content in the export, returns sha1"},
    {"module_names", inmModuleNames, METH_NOARGS, "names of the loaded modules"},
    {"lookup", inmLookup, METH_O, "(value,) of a variable visible at the plugin call, None if there is none"},
    {"std_resource", inmStdResource, METH_O, "(entity, agent, id attribute) of a std resource"},
    {nullptr, nullptr, 0, nullptr}};

PyModuleDef kModule = {PyModuleDef_HEAD_INIT,
                       "_inm",
                       "the compiler, as seen from Python",
                       -1,
                       kMethods,
                       nullptr,
                       nullptr,
                       nullptr,
                       nullptr};

PyObject* initInm() {
  PyObject* m = PyModule_Create(&kModule);
  if (!m) return nullptr;
  if (PyModule_AddFunctions(m, handlerContextMethods()) < 0) return nullptr;
  // BaseException: module code catching `Exception` must not swallow the compiler's retry signal.
  gRefs.retryError = PyErr_NewException("_inm.Retry", PyExc_BaseException, nullptr);
  Py_INCREF(gRefs.retryError);
  PyModule_AddObject(m, "Retry", gRefs.retryError);
  return m;
}

PyObject* attrOf(const char* module, const char* name) {
  PyObject* mod = PyImport_ImportModule(module);
  if (!mod) return nullptr;
  PyObject* a = PyObject_GetAttrString(mod, name);
  Py_DECREF(mod);
  return a;
}

} // namespace

Scope* currentScope() { return gScope; }

void setServer(ServerCall call, std::string environment) {
  gServer = std::move(call);
  gEnvironment = std::move(environment);
}
ScopeGuard::ScopeGuard(Scope& s) : saved_(gScope) { gScope = &s; }
ScopeGuard::~ScopeGuard() { gScope = saved_; }
PyRefs& refs() { return gRefs; }

std::string pythonPackageDir() {
  static int anchor;
  std::string exe = llvm::sys::fs::getMainExecutable("inmanta", &anchor);
  if (!exe.empty()) {
    llvm::SmallString<256> p(llvm::sys::path::parent_path(exe));
    llvm::sys::path::append(p, "..", "share", "inmanta", "python");
    llvm::sys::path::remove_dots(p, /*remove_dot_dot=*/true);
    if (llvm::sys::fs::exists(p + "/inmanta/plugins.py")) return std::string(p.str());
  }
#ifdef INM_SOURCE_PYTHON_DIR
  if (llvm::sys::fs::exists(INM_SOURCE_PYTHON_DIR "/inmanta/plugins.py")) return INM_SOURCE_PYTHON_DIR;
#endif
  return {};
}

bool startInterpreter(std::string& error) {
  static int state = 0; // 0 not started, 1 ok, 2 failed
  static std::string startError;
  if (state) {
    error = startError;
    return state == 1;
  }
  state = 2;
  std::string dir = pythonPackageDir();
  if (dir.empty()) {
    startError = error = "cannot find the inmanta Python package (share/inmanta/python next to the binary)";
    return false;
  }
  PyImport_AppendInittab("_inm", initInm);
  PyConfig config;
  PyConfig_InitPythonConfig(&config);
  config.install_signal_handlers = 0;
  config.parse_argv = 0;
  config.write_bytecode = 0; // never write __pycache__ into module directories
#ifdef INM_PYTHON_HOME
  // Without a home the prefix is guessed from the `python3` on PATH (a pyenv or venv interpreter of another
  // build); PYTHONHOME still overrides.
  if (!std::getenv("PYTHONHOME")) {
    PyStatus hs = PyConfig_SetBytesString(&config, &config.home, INM_PYTHON_HOME);
    if (!PyStatus_Exception(hs))
      hs = PyConfig_SetBytesString(&config, &config.executable, INM_PYTHON_HOME "/bin/python3");
    if (PyStatus_Exception(hs)) {
      PyConfig_Clear(&config);
      startError = error = "cannot configure the Python interpreter's home";
      return false;
    }
  }
#endif
  PyStatus st = Py_InitializeFromConfig(&config);
  PyConfig_Clear(&config);
  if (PyStatus_Exception(st)) {
    startError = error =
        std::string("cannot start the Python interpreter: ") + (st.err_msg ? st.err_msg : "");
    return false;
  }
  PyObject* sysPath = PySys_GetObject("path"); // borrowed
  PyObject* d = PyUnicode_FromString(dir.c_str());
  PyList_Insert(sysPath, 0, d);
  Py_DECREF(d);
  gRefs.bridgeCall = attrOf("inmanta._bridge", "call");
  gRefs.bridgeMap = attrOf("inmanta._bridge", "map_field");
  gRefs.bridgeLoad = attrOf("inmanta._bridge", "load");
  gRefs.instanceProxy = attrOf("inmanta.execute.proxy", "InstanceProxy");
  gRefs.unknownClass = attrOf("inmanta.execute.util", "Unknown");
  gRefs.noneValueClass = attrOf("inmanta.execute.util", "NoneValue");
  gRefs.handleName = PyUnicode_InternFromString("_handle");
  if (!gRefs.bridgeCall || !gRefs.bridgeMap || !gRefs.bridgeLoad || !gRefs.instanceProxy ||
      !gRefs.unknownClass || !gRefs.noneValueClass) {
    startError = error = "cannot import the inmanta Python package from " + dir + ": " + takePythonError();
    return false;
  }
  state = 1;
  return true;
}

std::string takePythonError() {
  PyObject *type, *value, *tb;
  PyErr_Fetch(&type, &value, &tb);
  if (!type) return "unknown Python error";
  PyErr_NormalizeException(&type, &value, &tb);
  std::string text;
  PyObject* fmt = attrOf("traceback", "format_exception");
  PyObject* lines =
      fmt ? PyObject_CallFunctionObjArgs(fmt, type, value ? value : Py_None, tb ? tb : Py_None, nullptr)
          : nullptr;
  if (lines) {
    PyObject* empty = PyUnicode_FromString("");
    PyObject* joined = PyUnicode_Join(empty, lines);
    if (joined) text = PyUnicode_AsUTF8(joined);
    Py_XDECREF(joined);
    Py_DECREF(empty);
  } else {
    PyErr_Clear();
    PyObject* s = value ? PyObject_Str(value) : nullptr;
    text = s ? PyUnicode_AsUTF8(s) : "Python error";
    Py_XDECREF(s);
  }
  Py_XDECREF(lines);
  Py_XDECREF(fmt);
  Py_XDECREF(type);
  Py_XDECREF(value);
  Py_XDECREF(tb);
  while (!text.empty() && text.back() == '\n') text.pop_back();
  return text;
}

PyObject* toPython(const Value& v) {
  switch (v.kind) {
  case ValueKind::Null: Py_RETURN_NONE;
  case ValueKind::Bool: return PyBool_FromLong(v.b);
  case ValueKind::Int: return PyLong_FromLongLong(v.i);
  case ValueKind::BigInt: { // base 16: not subject to Python's limit on decimal int conversion
    std::string hex = (runtime::intIsNegative(v) ? "-" : "") + runtime::intMagnitudeText(v, 16);
    return PyLong_FromString(hex.c_str(), nullptr, 16);
  }
  case ValueKind::Float: return PyFloat_FromDouble(v.f);
  case ValueKind::String: return PyUnicode_FromStringAndSize(v.s->data, Py_ssize_t(v.s->size));
  case ValueKind::List: {
    PyObject* list = PyList_New(Py_ssize_t(v.l->size));
    for (uint32_t i = 0; i < v.l->size; ++i) {
      PyObject* item = toPython(v.l->items[i]);
      if (!item) {
        Py_DECREF(list);
        return nullptr;
      }
      PyList_SET_ITEM(list, Py_ssize_t(i), item);
    }
    return list;
  }
  case ValueKind::Dict: {
    PyObject* dict = PyDict_New();
    for (uint32_t i = 0; i < v.d->size; ++i) {
      PyObject* item = toPython(v.d->entries[i].value);
      PyObject* key =
          PyUnicode_FromStringAndSize(v.d->entries[i].key->data, Py_ssize_t(v.d->entries[i].key->size));
      if (!item || !key || PyDict_SetItem(dict, key, item) < 0) {
        Py_XDECREF(item);
        Py_XDECREF(key);
        Py_DECREF(dict);
        return nullptr;
      }
      Py_DECREF(item);
      Py_DECREF(key);
    }
    return dict;
  }
  case ValueKind::Instance: {
    PyObject* h = PyLong_FromUnsignedLong(v.inst);
    PyObject* p = PyObject_CallOneArg(gRefs.instanceProxy, h);
    Py_DECREF(h);
    return p;
  }
  case ValueKind::Unknown: return PyObject_CallNoArgs(gRefs.unknownClass);
  }
  Py_RETURN_NONE;
}

namespace {
/// Python containers nest at most this deep (a list that contains itself must not overflow the stack).
constexpr int kMaxDepth = 500;
int gDepth = 0;
struct DepthGuard {
  DepthGuard() { ++gDepth; }
  ~DepthGuard() { --gDepth; }
};
} // namespace

bool fromPython(PyObject* o, runtime::ValueArena& arena, Value& out, std::string& error) {
  DepthGuard depth;
  if (gDepth > kMaxDepth) {
    error = "a value nested more than " + std::to_string(kMaxDepth) +
            " levels deep (a container that contains itself?)";
    return false;
  }
  if (o == Py_None || PyObject_TypeCheck(o, (PyTypeObject*)gRefs.noneValueClass)) {
    out = Value::null();
  } else if (PyBool_Check(o)) {
    out = Value::boolean(o == Py_True);
  } else if (PyLong_Check(o)) {
    int overflow = 0;
    long long n = PyLong_AsLongLongAndOverflow(o, &overflow);
    if (overflow) { // an int beyond 64 bits: exact, through its base-16 text
      PyObject* hex = PyNumber_ToBase(o, 16);
      const char* s = hex ? PyUnicode_AsUTF8(hex) : nullptr;
      if (!s) {
        Py_XDECREF(hex);
        error = takePythonError();
        return false;
      }
      llvm::StringRef text(s);
      std::string digits = text.startswith("-") ? "-" + text.drop_front(3).str() : text.drop_front(2).str();
      Py_DECREF(hex);
      std::string err;
      if (!runtime::parseInt(arena, digits, 16, out, err)) {
        error = err.empty() ? "cannot convert the int " + digits : err;
        return false;
      }
      return true;
    }
    out = Value::integer(n);
  } else if (PyFloat_Check(o)) {
    out = Value::real(PyFloat_AS_DOUBLE(o));
  } else if (PyUnicode_Check(o)) {
    Py_ssize_t n;
    const char* s = PyUnicode_AsUTF8AndSize(o, &n);
    if (!s) {
      error = takePythonError();
      return false;
    }
    out = arena.str(llvm::StringRef(s, size_t(n)));
  } else if (PyObject_TypeCheck(o, (PyTypeObject*)gRefs.instanceProxy)) {
    PyObject* h = PyObject_GetAttr(o, gRefs.handleName);
    long long id = h ? PyLong_AsLongLong(h) : -1;
    Py_XDECREF(h);
    PyErr_Clear();
    const runtime::Model* m = gScope ? (gScope->plugin ? &gScope->plugin->model() : gScope->model) : nullptr;
    if (!m || id < 0 || size_t(id) >= m->instances().size()) {
      error = "an instance proxy that names no instance of this model";
      return false;
    }
    out = Value::instance(InstanceId{uint32_t(id)});
  } else if (PyObject_TypeCheck(o, (PyTypeObject*)gRefs.unknownClass)) {
    out = Value::unknown();
  } else if (PyDict_Check(o)) {
    std::vector<std::pair<llvm::StringRef, Value>> entries;
    std::vector<std::string> keys;
    keys.reserve(size_t(PyDict_Size(o)));
    PyObject *k, *v;
    Py_ssize_t pos = 0;
    while (PyDict_Next(o, &pos, &k, &v)) {
      if (!PyUnicode_Check(k)) {
        error = "dict keys must be strings";
        return false;
      }
      Value item;
      if (!fromPython(v, arena, item, error)) return false;
      keys.emplace_back(PyUnicode_AsUTF8(k));
      entries.emplace_back(keys.back(), item);
    }
    for (size_t i = 0; i < entries.size(); ++i) entries[i].first = keys[i];
    out = arena.dict(entries);
  } else if (PyList_Check(o) || PyTuple_Check(o)) {
    PyObject* seq = PySequence_Fast(o, "");
    Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
    std::vector<Value> items(static_cast<size_t>(n));
    for (Py_ssize_t i = 0; i < n; ++i)
      if (!fromPython(PySequence_Fast_GET_ITEM(seq, i), arena, items[size_t(i)], error)) {
        Py_DECREF(seq);
        return false;
      }
    Py_DECREF(seq);
    out = arena.list(items);
  } else {
    error = std::string("a value of Python type '") + Py_TYPE(o)->tp_name + "' has no model equivalent";
    return false;
  }
  return true;
}

} // namespace inm::pybridge
