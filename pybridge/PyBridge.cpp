// Loading a project's Python code (see PyBridge.h): which modules have a plugins package, importing them,
// and turning what they registered into the pipeline's registries — plugin signatures and implementations
// (each call goes through inmanta._bridge.call, which checks the declared types), resource registrations
// whose `get_<field>` mappers call back into Python, and the module code registered with the version.
// Invariant: every Python failure becomes a diagnostic or an error result; none escapes as a crash.
#include "pybridge/PyBridge.h"

#include "Bridge.h"

#include <fmt/format.h>
#include <llvm/ADT/StringSet.h>
#include <llvm/Support/FileSystem.h>
#include <llvm/Support/MemoryBuffer.h>
#include <llvm/Support/Path.h>

#include <algorithm>
#include <optional>

namespace inm::pybridge {

using runtime::PluginContext;
using runtime::PluginResult;
using runtime::Value;

namespace {

bool isFile(const std::string& p) { return llvm::sys::fs::is_regular_file(p); }

SourceRange rangeAt(SourceManager& sm, const std::string& path, uint32_t line) {
  auto file = sm.loadFile(path);
  if (!file) {
    llvm::consumeError(file.takeError());
    return {};
  }
  // Column 0: Python locations are reported as file:line.
  return SourceRange{*file, line, 0, line, 0};
}

/// Element `i` of a bridge result tuple when it is a non-empty string (a typedef constraint's error text).
std::optional<std::string> constraintError(PyObject* res, Py_ssize_t i) {
  if (PyTuple_GET_SIZE(res) <= i) return std::nullopt;
  PyObject* o = PyTuple_GET_ITEM(res, i);
  if (!PyUnicode_Check(o)) return std::nullopt;
  const char* s = PyUnicode_AsUTF8(o);
  if (!s || !*s) return std::nullopt;
  return std::string(s);
}

/// One plugin call: bind, call inmanta._bridge.call, read its tagged tuple.
PluginResult callPlugin(size_t index, const std::string& fullName, PluginContext& ctx,
                        llvm::ArrayRef<Value> args) {
  Scope scope;
  scope.plugin = &ctx;
  scope.arena = &ctx.arena();
  ScopeGuard guard(scope);
  PyObject* pyArgs = PyTuple_New(Py_ssize_t(args.size()));
  PyObject* given = PyTuple_New(Py_ssize_t(args.size()));
  for (size_t i = 0; i < args.size(); ++i) {
    PyObject* v = toPython(args[i]);
    if (!v) {
      Py_DECREF(pyArgs);
      Py_DECREF(given);
      return PluginResult::error(DiagKind::External, takePythonError());
    }
    PyTuple_SET_ITEM(pyArgs, Py_ssize_t(i), v);
    PyObject* g = ctx.argGiven(i) ? Py_True : Py_False;
    Py_INCREF(g);
    PyTuple_SET_ITEM(given, Py_ssize_t(i), g);
  }
  PyObject* idx = PyLong_FromSize_t(index);
  PyObject* res = PyObject_CallFunctionObjArgs(refs().bridgeCall, idx, pyArgs, given, nullptr);
  Py_DECREF(idx);
  Py_DECREF(pyArgs);
  Py_DECREF(given);
  if (!res) {
    if (PyErr_ExceptionMatches(refs().retryError)) {
      PyErr_Clear();
      return PluginResult::retry();
    }
    return PluginResult::error(DiagKind::External, takePythonError());
  }
  std::string tag = PyUnicode_AsUTF8(PyTuple_GET_ITEM(res, 0));
  PluginResult out;
  std::string error;
  if (tag == "ok") {
    Value v;
    if (!fromPython(PyTuple_GET_ITEM(res, 1), ctx.arena(), v, error))
      out = PluginResult::failure(DiagKind::PluginReturnUnusable, fullName, error);
    else
      out = PluginResult::ok(v);
  } else if (tag == "argtype") {
    size_t i = PyLong_AsSize_t(PyTuple_GET_ITEM(res, 1));
    std::string type = PyUnicode_AsUTF8(PyTuple_GET_ITEM(res, 2));
    std::string name = PyUnicode_AsUTF8(PyTuple_GET_ITEM(res, 3));
    std::string repr = i < args.size() ? ctx.model().repr(args[i]) : "?";
    out = PluginResult::failure(DiagKind::PluginType, repr, name, fullName, type);
    // The cause shows the value with str() (a string without quotes), the headline with repr().
    std::string shown = i >= args.size()                           ? std::string("?")
                        : args[i].kind == runtime::ValueKind::Null ? std::string("null")
                                                                   : ctx.model().display(args[i], true);
    out.cause = constraintError(res, 4).value_or(diagText(DiagKind::InvalidAttributeValue, shown, type));
  } else if (tag == "rettype") {
    std::string type = PyUnicode_AsUTF8(PyTuple_GET_ITEM(res, 1));
    Value v;
    std::string repr =
        fromPython(PyTuple_GET_ITEM(res, 2), ctx.arena(), v, error) ? ctx.model().repr(v) : error;
    out = PluginResult::failure(DiagKind::PluginReturnType, repr, fullName, type);
    out.cause = constraintError(res, 3).value_or(diagText(DiagKind::InvalidAttributeValue, repr, type));
  } else if (tag == "explicit") {
    out = PluginResult::error(DiagKind::ExplicitPlugin, PyUnicode_AsUTF8(PyTuple_GET_ITEM(res, 1)));
  } else {
    out = PluginResult::error(DiagKind::External, PyUnicode_AsUTF8(PyTuple_GET_ITEM(res, 1)));
  }
  Py_DECREF(res);
  return out;
}

/// One field mapper call of a Python resource class.
exporter::FieldResult callMapper(size_t index, const std::string& field, exporter::MapperContext& ctx,
                                 runtime::InstanceId inst) {
  Scope scope;
  scope.mapper = &ctx;
  scope.model = &ctx.model();
  scope.arena = &ctx.arena();
  ScopeGuard guard(scope);
  PyObject* res =
      PyObject_CallFunction(refs().bridgeMap, "nsI", Py_ssize_t(index), field.c_str(), inst.index);
  if (!res) return exporter::FieldResult::error(takePythonError());
  std::string tag = PyUnicode_AsUTF8(PyTuple_GET_ITEM(res, 0));
  exporter::FieldResult out;
  if (tag == "ok") {
    Value v;
    std::string error;
    if (fromPython(PyTuple_GET_ITEM(res, 1), ctx.arena(), v, error))
      out = exporter::FieldResult::ok(v);
    else
      out = exporter::FieldResult::error("field " + field + ": " + error);
  } else if (tag == "ignore") {
    out = exporter::FieldResult::ignore();
  } else {
    out = exporter::FieldResult::error("the mapper of field " + field + " failed:\n" +
                                       PyUnicode_AsUTF8(PyTuple_GET_ITEM(res, 1)));
  }
  Py_DECREF(res);
  return out;
}

/// A Python dependency manager over the exported resources: their ids, agents and field values go to Python
/// as Resource objects; the requires it adds come back as edges.
void runDependencyManager(size_t index, const exporter::ResourceRegistry& registry,
                          const exporter::DependencyView& view,
                          std::vector<std::pair<uint32_t, uint32_t>>& edges) {
  PyObject* list = PyList_New(0);
  for (uint32_t r = 0; r < view.size(); ++r) {
    PyObject* fields = PyDict_New();
    if (const exporter::ResourceType* t = registry.find(view.typeName(r)))
      for (const exporter::FieldSpec& f : t->fields)
        if (const Value* v = view.field(r, f.name)) {
          PyObject* pv = toPython(*v);
          if (!pv) {
            PyErr_Clear();
            continue;
          }
          PyDict_SetItemString(fields, f.name.c_str(), pv);
          Py_DECREF(pv);
        }
    PyObject* t =
        Py_BuildValue("(s#s#s#NI)", view.id(r).data(), Py_ssize_t(view.id(r).size()), view.typeName(r).data(),
                      Py_ssize_t(view.typeName(r).size()), view.agent(r).data(),
                      Py_ssize_t(view.agent(r).size()), fields, view.instance(r).index);
    PyList_Append(list, t);
    Py_DECREF(t);
  }
  // `resource.model` (the instance, as std's dir_before_file reads it) is readable during the call.
  Scope scope;
  scope.model = &view.model();
  ScopeGuard guard(scope);
  PyObject* fn = PyObject_GetAttrString(PyImport_AddModule("inmanta._bridge"), "run_dependency_manager");
  PyObject* res = fn ? PyObject_CallFunction(fn, "nO", Py_ssize_t(index), list) : nullptr;
  Py_XDECREF(fn);
  Py_DECREF(list);
  if (!res) {
    view.error(takePythonError());
    return;
  }
  PyObject* payload = PyTuple_GET_ITEM(res, 1);
  if (std::string(PyUnicode_AsUTF8(PyTuple_GET_ITEM(res, 0))) != "ok") {
    view.error(PyUnicode_AsUTF8(payload));
  } else {
    for (Py_ssize_t i = 0; i < PyList_Size(payload); ++i) {
      unsigned from, to;
      if (PyArg_ParseTuple(PyList_GET_ITEM(payload, i), "II", &from, &to))
        edges.emplace_back(from, to);
      else
        PyErr_Clear();
    }
  }
  Py_DECREF(res);
}

std::vector<std::string> strings(PyObject* list) {
  std::vector<std::string> out;
  for (Py_ssize_t i = 0; i < PyList_Size(list); ++i)
    out.emplace_back(PyUnicode_AsUTF8(PyList_GET_ITEM(list, i)));
  return out;
}

/// The module's Python files (plugins/ tree, relative to the module dir) and requirements.
exporter::ModuleCode collectCode(const PythonModule& m) {
  exporter::ModuleCode code;
  code.module = m.name;
  std::error_code ec;
  std::vector<std::string> paths;
  for (llvm::sys::fs::recursive_directory_iterator it(m.moduleDir + "/plugins", ec), end; it != end && !ec;
       it.increment(ec)) {
    llvm::StringRef p = it->path();
    if (p.contains("/__pycache__/") || !p.endswith(".py")) continue;
    paths.push_back(p.str());
  }
  std::sort(paths.begin(), paths.end());
  for (const std::string& p : paths) {
    auto buf = llvm::MemoryBuffer::getFile(p);
    if (!buf) continue;
    code.files.emplace_back(p.substr(m.moduleDir.size() + 1), (*buf)->getBuffer().str());
  }
  if (auto req = llvm::MemoryBuffer::getFile(m.moduleDir + "/requirements.txt")) {
    llvm::SmallVector<llvm::StringRef, 8> lines;
    (*req)->getBuffer().split(lines, '\n');
    for (llvm::StringRef l : lines) {
      l = l.split('#').first.trim();
      if (!l.empty()) code.requirements.push_back(l.str());
    }
  }
  return code;
}

} // namespace

std::vector<PythonModule> findPythonModules(const frontend::Project& project) {
  std::vector<PythonModule> out;
  llvm::StringSet<> seen;
  for (const frontend::SourceFile& f : project.files) {
    if (f.moduleName == "__config__" || !seen.insert(f.moduleName).second) continue;
    if (f.moduleName == "std" && !project.ownStd) continue; // the built-in std: native plugins
    if (isFile(f.moduleDir + "/plugins/__init__.py")) out.push_back({f.moduleName, f.moduleDir});
  }
  return out;
}

void loadPython(const frontend::Project& project, const std::vector<PythonModule>& modules, SourceManager& sm,
                DiagnosticEngine& diags, PythonSetup& out) {
  if (modules.empty()) return;
  std::string error;
  if (!startInterpreter(error)) {
    diags.error(DiagKind::ModuleLoading, SourceRange{}, modules.front().name)
        .causedBy(makeDiag(DiagKind::NoteText, SourceRange{}, error));
    return;
  }
  out.active = true;
  if (std::any_of(modules.begin(), modules.end(), [](const PythonModule& m) { return m.name == "std"; })) {
    // The project's own std: its Python registrations are the std resources, none of the native ones.
    out.ownStd = true;
    out.resources = exporter::ResourceRegistry();
    gNativeStd = false;
  }
  PyObject* list = PyList_New(0);
  for (const PythonModule& m : modules) {
    PyObject* t = Py_BuildValue("(ss)", m.name.c_str(), (m.moduleDir + "/plugins").c_str());
    PyList_Append(list, t);
    Py_DECREF(t);
    out.code.push_back(collectCode(m));
  }
  PyObject* res = PyObject_CallOneArg(refs().bridgeLoad, list);
  Py_DECREF(list);
  if (!res) {
    diags.error(DiagKind::ModuleLoading, SourceRange{}, modules.front().name)
        .causedBy(makeDiag(DiagKind::NoteText, SourceRange{}, takePythonError()));
    return;
  }
  PyObject* plugins = PyTuple_GET_ITEM(res, 0);
  PyObject* resources = PyTuple_GET_ITEM(res, 1);
  PyObject* errors = PyTuple_GET_ITEM(res, 2);
  for (Py_ssize_t i = 0; i < PyList_Size(errors); ++i) {
    const char *module, *kind, *text, *file;
    int line;
    if (!PyArg_ParseTuple(PyList_GET_ITEM(errors, i), "sss(si)", &module, &kind, &text, &file, &line)) {
      PyErr_Clear();
      continue;
    }
    SourceRange at = *file ? rangeAt(sm, file, uint32_t(line)) : SourceRange{};
    if (std::string(kind) == "InvalidTypeAnnotation") {
      diags.error(DiagKind::InvalidTypeAnnotation, at, text);
    } else if (std::string(kind) == "UnannotatedArgument") {
      // text: "<plugin full name>\n<parameter>"; the reference reports it without a location.
      auto [plugin, param] = llvm::StringRef(text).split('\n');
      diags.error(DiagKind::PluginArgumentNotAnnotated, SourceRange{}, plugin.str(), param.str());
    } else {
      Diagnostic& d = diags.error(DiagKind::ModuleLoading, at, module);
      d.causedBy(makeDiag(DiagKind::PluginLoadFailed, SourceRange{}, module, text));
    }
  }
  for (Py_ssize_t i = 0; i < PyList_Size(plugins); ++i) {
    const char *fullName, *signature, *file;
    int allowUnknown, deprecated, line;
    if (!PyArg_ParseTuple(PyList_GET_ITEM(plugins, i), "ssppsi", &fullName, &signature, &allowUnknown,
                          &deprecated, &file, &line)) {
      PyErr_Clear();
      continue;
    }
    out.signatures.emplace_back(signature);
    ir::PluginSpec spec;
    spec.signature = out.signatures.back().c_str();
    spec.allowUnknown = allowUnknown;
    spec.deprecated = deprecated;
    spec.range = rangeAt(sm, file, uint32_t(line));
    out.pluginSpecs.push_back(spec);
    std::string name = fullName;
    size_t index = size_t(i);
    out.plugins.add(name, [index, name](PluginContext& ctx, llvm::ArrayRef<Value> args) {
      return callPlugin(index, name, ctx, args);
    });
  }
  for (Py_ssize_t i = 0; i < PyList_Size(resources); ++i) {
    const char *entity, *agent, *idAttr;
    PyObject *fields, *mapped;
    int purgeable, managed;
    if (!PyArg_ParseTuple(PyList_GET_ITEM(resources, i), "sssOOpp", &entity, &agent, &idAttr, &fields,
                          &mapped, &purgeable, &managed)) {
      PyErr_Clear();
      continue;
    }
    std::vector<std::string> mappedNames = strings(mapped);
    std::vector<exporter::FieldSpec> specs;
    for (const std::string& f : strings(fields)) {
      exporter::FieldSpec fs{f, {}};
      if (std::find(mappedNames.begin(), mappedNames.end(), f) != mappedNames.end()) {
        size_t index = size_t(i);
        fs.mapper = [index, f](exporter::MapperContext& ctx, runtime::InstanceId inst) {
          return callMapper(index, f, ctx, inst);
        };
      }
      specs.push_back(std::move(fs));
    }
    if (llvm::Error e = out.resources.add(entity, agent, idAttr, std::move(specs),
                                          exporter::BaseFields{bool(purgeable), bool(managed)}))
      diags.error(DiagKind::ModuleLoading, SourceRange{}, entity)
          .causedBy(makeDiag(DiagKind::NoteText, SourceRange{}, llvm::toString(std::move(e))));
  }
  PyObject* managers = PyTuple_GET_ITEM(res, 3);
  for (Py_ssize_t i = 0; i < PyList_Size(managers); ++i) {
    const exporter::ResourceRegistry* registry = &out.resources;
    size_t index = size_t(i);
    out.resources.addDependencyManager(PyUnicode_AsUTF8(PyList_GET_ITEM(managers, i)),
                                       [index, registry](const exporter::DependencyView& view,
                                                         std::vector<std::pair<uint32_t, uint32_t>>& edges) {
                                         runDependencyManager(index, *registry, view, edges);
                                       });
  }
  Py_DECREF(res);
}

} // namespace inm::pybridge
