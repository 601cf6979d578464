// Python `@provider` handlers behind the executor's C++ handler API (see PyHandlers.h). A CRUDHandler
// subclass becomes a C++ CRUDHandler whose read/create/update/delete (and pre/post/facts/reload) call the
// Python methods, so the §8.2 algorithm, the dependency gate and the error handling are the C++ framework's;
// other providers run their Python `execute`. One handler is registered per resource type; the Python
// provider is chosen when the action's handler is made, by `available(resource)` (inmanta._handlers.new). The
// Python HandlerContext of an action writes into the C++ context through `_inm.ctx_*`; the handler reaches
// the executor's file frames through `_inm.handler_*` (get_file/stat_file/upload_file). Invariants: every
// Python call holds the GIL; a Python signal (ResourcePurged, SkipResource…) becomes the C++ exception of
// the same meaning, any other Python exception an executor::HandlerException carrying its type name, message
// and the Python traceback.
#include "Bridge.h"
#include "pybridge/PyHandlers.h"
#include "support/JsonScan.h"

#include <llvm/Support/FileSystem.h>
#include <llvm/Support/MemoryBuffer.h>
#include <llvm/Support/Path.h>

#include <fstream>
#include <map>

namespace inm::pybridge {

namespace {

using executor::HandlerContext;
using executor::Json;
using executor::Resource;

/// Holds the GIL for a scope.
class Gil {
 public:
  Gil() : state_(PyGILState_Ensure()) {}
  ~Gil() { PyGILState_Release(state_); }

 private:
  PyGILState_STATE state_;
};

PyObject* handlersModule() {
  static PyObject* mod = PyImport_ImportModule("inmanta._handlers");
  return mod;
}

HandlerContext* ctxOf(PyObject* capsule) {
  return static_cast<HandlerContext*>(PyCapsule_GetPointer(capsule, "inm.ctx"));
}

/// Runs `fn` on the context in `capsule`, turning a C++ exception (InvalidOperation, bad JSON) into a Python
/// one.
template <typename Fn>
PyObject* withCtx(PyObject* capsule, Fn&& fn) {
  HandlerContext* ctx = ctxOf(capsule);
  if (!ctx) return nullptr;
  try {
    fn(*ctx);
  } catch (const std::exception& e) {
    PyErr_SetString(PyExc_RuntimeError, e.what());
    return nullptr;
  }
  Py_RETURN_NONE;
}

PyObject* ctxLog(PyObject*, PyObject* args) {
  PyObject* cap;
  const char *level, *msg, *kwargs;
  if (!PyArg_ParseTuple(args, "Osss", &cap, &level, &msg, &kwargs)) return nullptr;
  return withCtx(cap, [&](HandlerContext& c) { c.log(level, msg, Json::parse(kwargs)); });
}
PyObject* ctxStatus(PyObject*, PyObject* args) {
  PyObject* cap;
  const char* name;
  if (!PyArg_ParseTuple(args, "Os", &cap, &name)) return nullptr;
  return withCtx(cap, [&](HandlerContext& c) { c.setStatus(name); });
}
PyObject* ctxChange(PyObject*, PyObject* args) {
  PyObject* cap;
  const char* change;
  if (!PyArg_ParseTuple(args, "Os", &cap, &change)) return nullptr;
  std::optional<model::Change> ch = model::parseChange(change);
  return withCtx(cap, [&](HandlerContext& c) {
    if (ch == model::Change::Created)
      c.setCreated();
    else if (ch == model::Change::Updated)
      c.setUpdated();
    else if (ch == model::Change::Purged)
      c.setPurged();
  });
}
PyObject* ctxChanges(PyObject*, PyObject* args) {
  PyObject* cap;
  const char* changes;
  if (!PyArg_ParseTuple(args, "Os", &cap, &changes)) return nullptr;
  return withCtx(cap, [&](HandlerContext& c) { c.updateChanges(Json::parse(changes)); });
}
PyObject* ctxFact(PyObject*, PyObject* args) {
  PyObject* cap;
  const char *name, *value;
  int expires;
  if (!PyArg_ParseTuple(args, "Ossp", &cap, &name, &value, &expires)) return nullptr;
  return withCtx(cap, [&](HandlerContext& c) { c.setFact(name, value, expires != 0); });
}

executor::HandlerAPI* handlerOf(PyObject* capsule) {
  return static_cast<executor::HandlerAPI*>(PyCapsule_GetPointer(capsule, "inm.handler"));
}

/// handler_get_file(capsule, sha1) -> bytes | None: the file store's content (sha1 verified), fetched through
/// the executor's `get_file` frames with the GIL released while waiting.
PyObject* handlerGetFile(PyObject*, PyObject* args) {
  PyObject* cap;
  const char* hash;
  if (!PyArg_ParseTuple(args, "Os", &cap, &hash)) return nullptr;
  executor::HandlerAPI* h = handlerOf(cap);
  if (!h) return nullptr;
  executor::FileSource* files = h->services().files;
  if (!files) {
    PyErr_SetString(PyExc_RuntimeError, "no file source in this process: cannot fetch files from the server");
    return nullptr;
  }
  std::optional<std::string> content;
  std::string error;
  std::string sha = hash;
  Py_BEGIN_ALLOW_THREADS;
  try {
    content = files->getFile(sha);
  } catch (const std::exception& e) {
    error = e.what();
  }
  Py_END_ALLOW_THREADS;
  if (!error.empty()) {
    PyErr_SetString(PyExc_RuntimeError, error.c_str());
    return nullptr;
  }
  if (!content) Py_RETURN_NONE;
  return PyBytes_FromStringAndSize(content->data(), Py_ssize_t(content->size()));
}

/// handler_put_file(capsule, sha1, bytes): offers content to the server's file store.
PyObject* handlerPutFile(PyObject*, PyObject* args) {
  PyObject* cap;
  const char* hash;
  const char* data;
  Py_ssize_t size;
  if (!PyArg_ParseTuple(args, "Osy#", &cap, &hash, &data, &size)) return nullptr;
  executor::HandlerAPI* h = handlerOf(cap);
  if (!h) return nullptr;
  executor::FileSource* files = h->services().files;
  if (!files) {
    PyErr_SetString(PyExc_RuntimeError, "no file source in this process: cannot upload files to the server");
    return nullptr;
  }
  files->putFile(hash, std::string(data, size_t(size)));
  Py_RETURN_NONE;
}

/// handler_agent(capsule) -> str: the agent this handler instance works for.
PyObject* handlerAgent(PyObject*, PyObject* args) {
  PyObject* cap;
  if (!PyArg_ParseTuple(args, "O", &cap)) return nullptr;
  executor::HandlerAPI* h = handlerOf(cap);
  if (!h) return nullptr;
  return PyUnicode_FromString(h->services().agent.c_str());
}

/// handler_io(capsule) -> None for an agent on this host, or the URI of its ssh:// host with its options
/// (run_as, known_hosts, …; nothing connects).
PyObject* handlerIo(PyObject*, PyObject* args) {
  PyObject* cap;
  if (!PyArg_ParseTuple(args, "O", &cap)) return nullptr;
  executor::HandlerAPI* h = handlerOf(cap);
  if (!h) return nullptr;
  if (!h->io().remote()) Py_RETURN_NONE;
  return PyUnicode_FromString(h->io().uri().c_str());
}

/// handler_ssh(capsule) -> [argv prefix] that runs one command string on the agent's ssh:// host over its
/// master (started here on first use); an unreachable host raises ConnectionError with ssh's reason.
PyObject* handlerSsh(PyObject*, PyObject* args) {
  PyObject* cap;
  if (!PyArg_ParseTuple(args, "O", &cap)) return nullptr;
  executor::HandlerAPI* h = handlerOf(cap);
  if (!h) return nullptr;
  std::vector<std::string> prefix;
  std::string error;
  PyThreadState* saved = PyEval_SaveThread(); // connecting may take seconds: other threads run meanwhile
  try {
    prefix = h->io().commandPrefix();
  } catch (const std::exception& e) {
    error = e.what();
  }
  PyEval_RestoreThread(saved);
  if (!error.empty()) {
    PyErr_SetString(PyExc_ConnectionError, error.c_str());
    return nullptr;
  }
  PyObject* list = PyList_New(0);
  for (const auto& a : prefix) {
    PyObject* s = PyUnicode_FromString(a.c_str());
    PyList_Append(list, s);
    Py_DECREF(s);
  }
  return list;
}

PyMethodDef kCtxMethods[] = {
    {"handler_io", handlerIo, METH_VARARGS, "None, or the ssh:// URI of the agent's host"},
    {"handler_ssh", handlerSsh, METH_VARARGS, "argv prefix running a command on the agent's ssh:// host"},
    {"handler_get_file", handlerGetFile, METH_VARARGS, "file content by sha1 from the server, or None"},
    {"handler_put_file", handlerPutFile, METH_VARARGS, "offer content to the server's file store"},
    {"handler_agent", handlerAgent, METH_VARARGS, "the agent name of the handler"},
    {"ctx_log", ctxLog, METH_VARARGS, "log line with JSON kwargs into the action's context"},
    {"ctx_status", ctxStatus, METH_VARARGS, "set the action's resource state"},
    {"ctx_change", ctxChange, METH_VARARGS, "created / updated / purged"},
    {"ctx_changes", ctxChanges, METH_VARARGS, "record changes given as JSON"},
    {"ctx_fact", ctxFact, METH_VARARGS, "report a fact"},
    {nullptr, nullptr, 0, nullptr}};

std::string resourceJson(const Resource& r) {
  return Json{{"id", r.id}, {"attributes", r.attributes}}.dump();
}

/// The Python handler instance of one action and its Python HandlerContext.
class PyHandlerState {
 public:
  PyHandlerState(size_t index, executor::HandlerAPI* owner) : index_(index), owner_(owner) {}
  /// Uses an already chosen provider instance (ChoiceHandler); the caller holds the GIL.
  void adopt(PyObject* self) {
    Py_INCREF(self);
    self_ = self;
  }
  ~PyHandlerState() {
    if (!self_ && !ctx_) return;
    Gil gil;
    Py_XDECREF(self_);
    Py_XDECREF(ctx_);
    Py_XDECREF(capsule_);
    Py_XDECREF(handlerCapsule_);
  }

  /// Calls `method`; returns its JSON result or throws the matching C++ exception.
  Json call(HandlerContext* ctx, const char* method, const Resource* r, const std::string& extra = "") {
    Gil gil;
    PyObject* mod = handlersModule();
    if (!mod) throw std::runtime_error("cannot import inmanta._handlers: " + takePythonError());
    std::string rj = r ? resourceJson(*r) : std::string("{}");
    if (!self_) {
      if (!handlerCapsule_) handlerCapsule_ = PyCapsule_New(owner_, "inm.handler", nullptr);
      // The provider is chosen here, with the resource: `available(resource)` of each candidate.
      PyObject* made =
          PyObject_CallMethod(mod, "new", "nOs", Py_ssize_t(index_), handlerCapsule_, rj.c_str());
      if (!made) throw std::runtime_error(takePythonError());
      try {
        checkTuple(made);
      } catch (const executor::HandlerException& e) {
        Py_DECREF(made);
        throw executor::NoProviderException(e.type, e.what(), e.traceback);
      } catch (...) {
        Py_DECREF(made);
        throw;
      }
      self_ = PyTuple_GET_ITEM(made, 1);
      Py_INCREF(self_);
      Py_DECREF(made);
    }
    if (ctx && ctx != ctxPtr_) {
      Py_XDECREF(ctx_);
      Py_XDECREF(capsule_);
      capsule_ = PyCapsule_New(ctx, "inm.ctx", nullptr);
      ctx_ = PyObject_CallMethod(mod, "context", "OO", capsule_, ctx->isDryRun() ? Py_True : Py_False);
      ctxPtr_ = ctx;
      if (!ctx_) throw std::runtime_error(takePythonError());
    }
    PyObject* res = PyObject_CallMethod(mod, "call", "OsOss", self_, method, ctx_ ? ctx_ : Py_None,
                                        rj.c_str(), extra.c_str());
    if (!res) throw std::runtime_error(takePythonError());
    Json out = checkTuple(res);
    Py_DECREF(res);
    return out;
  }

 private:
  /// Turns a tagged outcome tuple of `_handlers` into its JSON payload or the matching C++ exception:
  /// ("ok", json, …) | ("purged",) | ("skip", msg) | ("skipdep", msg) | ("error", type, message, traceback).
  static Json checkTuple(PyObject* res) {
    auto item = [&](Py_ssize_t i) {
      return PyTuple_Size(res) > i ? std::string(PyUnicode_AsUTF8(PyTuple_GET_ITEM(res, i))) : std::string();
    };
    std::string tag = item(0);
    if (tag == "ok") return PyUnicode_Check(PyTuple_GET_ITEM(res, 1)) ? Json::parse(item(1)) : Json();
    if (tag == "purged") throw executor::ResourcePurged();
    if (tag == "skip") throw executor::SkipResource(item(1));
    if (tag == "skipdep") throw executor::SkipResourceForDependencies(item(1));
    throw executor::HandlerException(item(1), item(2), item(3));
  }

  size_t index_;
  executor::HandlerAPI* owner_;
  PyObject* handlerCapsule_ = nullptr;
  PyObject* self_ = nullptr;
  PyObject* ctx_ = nullptr;
  PyObject* capsule_ = nullptr;
  HandlerContext* ctxPtr_ = nullptr;
};

class PyCrudHandler final : public executor::CRUDHandler {
 public:
  explicit PyCrudHandler(size_t index, PyObject* chosen = nullptr) : py_(index, this) {
    if (chosen) py_.adopt(chosen);
  }
  void readResource(HandlerContext& ctx, Resource& current) override {
    Json attrs = py_.call(&ctx, "read_resource", &current);
    for (auto& [k, v] : attrs.items()) current.attributes[k] = v;
  }
  void createResource(HandlerContext& ctx, const Resource& desired) override {
    py_.call(&ctx, "create_resource", &desired);
  }
  void updateResource(HandlerContext& ctx, const Json& changes, const Resource& desired) override {
    py_.call(&ctx, "update_resource", &desired, changes.dump());
  }
  void deleteResource(HandlerContext& ctx, const Resource& desired) override {
    py_.call(&ctx, "delete_resource", &desired);
  }
  void pre(HandlerContext& ctx, const Resource& r) override { py_.call(&ctx, "pre", &r); }
  void post(HandlerContext& ctx, const Resource& r) override { py_.call(&ctx, "post", &r); }
  Json facts(HandlerContext& ctx, const Resource& r) override { return py_.call(&ctx, "facts", &r); }
  bool canReload() const override {
    return const_cast<PyHandlerState&>(py_).call(nullptr, "can_reload", nullptr) == true;
  }
  void doReload(HandlerContext& ctx, const Resource& r) override { py_.call(&ctx, "do_reload", &r); }
  void close() override { py_.call(nullptr, "close", nullptr); }

 private:
  PyHandlerState py_;
};

/// A ResourceHandler subclass: its Python `execute` (check/list/do) runs the action.
class PyResourceHandler final : public executor::HandlerAPI {
 public:
  explicit PyResourceHandler(size_t index, PyObject* chosen = nullptr) : py_(index, this) {
    if (chosen) py_.adopt(chosen);
  }
  void execute(HandlerContext& ctx, const Resource& r, bool dryRun) override {
    py_.call(&ctx, "execute", &r, dryRun ? "true" : "false");
  }
  Json facts(HandlerContext& ctx, const Resource& r) override { return py_.call(&ctx, "facts", &r); }
  bool canReload() const override {
    return const_cast<PyHandlerState&>(py_).call(nullptr, "can_reload", nullptr) == true;
  }
  void doReload(HandlerContext& ctx, const Resource& r) override { py_.call(&ctx, "do_reload", &r); }
  void close() override { py_.call(nullptr, "close", nullptr); }

 private:
  PyHandlerState py_;
};

/// A type with a native C++ handler and Python providers: the native handler takes part in the `available`
/// choice as the provider `nativeName_`, always available (unless a Python provider of that name replaced
/// it). The choice is made with the first resource; the chosen handler then serves the action.
class ChoiceHandler final : public executor::HandlerAPI {
 public:
  ChoiceHandler(size_t index, bool crud, executor::HandlerRegistry::Factory native, std::string nativeName)
      : index_(index), crud_(crud), native_(std::move(native)), nativeName_(std::move(nativeName)) {}
  ~ChoiceHandler() override {
    inner_.reset(); // a Python handler releases its objects under the GIL itself
    if (capsule_) {
      Gil gil;
      Py_DECREF(capsule_);
    }
  }
  void execute(HandlerContext& ctx, const Resource& r, bool dryRun) override {
    choose(r).execute(ctx, r, dryRun);
  }
  Json facts(HandlerContext& ctx, const Resource& r) override { return choose(r).facts(ctx, r); }
  bool canReload() const override { return inner_ && inner_->canReload(); }
  void doReload(HandlerContext& ctx, const Resource& r) override { choose(r).doReload(ctx, r); }
  void pre(HandlerContext& ctx, const Resource& r) override { choose(r).pre(ctx, r); }
  void post(HandlerContext& ctx, const Resource& r) override { choose(r).post(ctx, r); }
  void close() override {
    if (inner_) inner_->close();
  }

 private:
  executor::HandlerAPI& choose(const Resource& r) {
    if (inner_) return *inner_;
    Gil gil;
    PyObject* mod = handlersModule();
    if (!mod) throw std::runtime_error("cannot import inmanta._handlers: " + takePythonError());
    if (!capsule_) capsule_ = PyCapsule_New(this, "inm.handler", nullptr);
    std::string rj = resourceJson(r);
    PyObject* made = PyObject_CallMethod(mod, "new", "nOss", Py_ssize_t(index_), capsule_, rj.c_str(),
                                         nativeName_.c_str());
    if (!made) throw std::runtime_error(takePythonError());
    auto item = [&](Py_ssize_t i) {
      return PyTuple_Size(made) > i && PyUnicode_Check(PyTuple_GET_ITEM(made, i))
                 ? std::string(PyUnicode_AsUTF8(PyTuple_GET_ITEM(made, i)))
                 : std::string();
    };
    std::string tag = item(0);
    if (tag == "native") {
      inner_ = native_();
    } else if (tag == "ok") {
      PyObject* chosen = PyTuple_GET_ITEM(made, 1);
      if (crud_)
        inner_ = std::make_unique<PyCrudHandler>(index_, chosen);
      else
        inner_ = std::make_unique<PyResourceHandler>(index_, chosen);
    } else {
      executor::NoProviderException e(item(1), item(2), item(3));
      Py_DECREF(made);
      throw e;
    }
    Py_DECREF(made);
    inner_->attach(&services());
    return *inner_;
  }

  size_t index_;
  bool crud_;
  executor::HandlerRegistry::Factory native_;
  std::string nativeName_;
  std::unique_ptr<executor::HandlerAPI> inner_;
  PyObject* capsule_ = nullptr;
};

/// The name the native handler of a type has among its providers: the public std's provider name where our
/// native handler does the same work, else "native".
std::string nativeProviderName(llvm::StringRef type) {
  llvm::StringRef local = type.rsplit("::").second;
  if (local == "File") return "posix_file";
  if (local == "Directory") return "posix_directory";
  if (local == "Symlink") return "posix_symlink";
  if (local == "AgentConfig") return "agentrest";
  if (local == "NullResource") return "null";
  return "native";
}

llvm::Error makeError(const std::string& msg) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), "%s", msg.c_str());
}

bool writeFile(const std::string& path, const std::string& content) {
  llvm::sys::fs::create_directories(llvm::sys::path::parent_path(path));
  std::ofstream out(path, std::ios::binary);
  out << content;
  return bool(out);
}

} // namespace

PyMethodDef* handlerContextMethods() { return kCtxMethods; }

std::vector<PythonModule> modulesInDir(const std::string& dir) {
  std::vector<PythonModule> out;
  std::error_code ec;
  for (llvm::sys::fs::directory_iterator it(dir, ec), end; it != end && !ec; it.increment(ec))
    if (llvm::sys::fs::is_regular_file(it->path() + "/plugins/__init__.py"))
      out.push_back({llvm::sys::path::filename(it->path()).str(), it->path()});
  std::sort(out.begin(), out.end(),
            [](const PythonModule& a, const PythonModule& b) { return a.name < b.name; });
  return out;
}

llvm::Expected<std::vector<PythonModule>> materializeCode(const std::string& artifactPath,
                                                          const std::string& dir) {
  auto buf = llvm::MemoryBuffer::getFile(artifactPath);
  if (!buf) return makeError("cannot read " + artifactPath + ": " + buf.getError().message());
  // The streaming reader keeps the two members needed as text (resources, if any, are skipped), and of
  // `files` only the entries python_code names are parsed.
  std::string_view codeText, filesText;
  llvm::Error scanned = support::forEachMember(
      std::string_view((*buf)->getBufferStart(), (*buf)->getBufferSize()), "the export artifact",
      [&](std::string_view key, std::string_view raw) -> llvm::Error {
        if (key == "python_code") codeText = raw;
        if (key == "files") filesText = raw;
        return llvm::Error::success();
      });
  if (scanned)
    return makeError("malformed artifact " + artifactPath + ": " + llvm::toString(std::move(scanned)));
  if (codeText.empty()) return std::vector<PythonModule>{};
  try {
    Json code = Json::parse(codeText);
    std::map<std::string, std::vector<std::string>> wanted; // sha1 -> destination paths
    for (const Json& m : code) {
      std::string module = m.at("module").get<std::string>();
      if (module.empty() || module.find('/') != std::string::npos || module[0] == '.')
        return makeError("python_code of " + artifactPath + " names an invalid module '" + module + "'");
      for (auto& [path, sha] : m.at("files").items()) {
        if (path.find("..") != std::string::npos || path.empty() || path[0] == '/')
          return makeError("python_code of module " + module + " has an invalid path '" + path + "'");
        wanted[sha.get<std::string>()].push_back(module + "/" + path);
      }
    }
    std::string failure;
    if (!filesText.empty())
      if (llvm::Error e =
              support::forEachMember(filesText, "the artifact's files",
                                     [&](std::string_view key, std::string_view raw) -> llvm::Error {
                                       auto it = wanted.find(std::string(key));
                                       if (it == wanted.end()) return llvm::Error::success();
                                       Json content = Json::parse(raw);
                                       for (const std::string& dest : it->second) {
                                         if (!content.is_string())
                                           failure = "python_code file " + dest + " is not UTF-8 text";
                                         else if (!writeFile(dir + "/" + dest, content.get<std::string>()))
                                           failure = "cannot write " + dir + "/" + dest;
                                         if (!failure.empty()) return makeError(failure);
                                       }
                                       wanted.erase(it);
                                       return llvm::Error::success();
                                     }))
        return makeError(failure.empty()
                             ? "malformed artifact " + artifactPath + ": " + llvm::toString(std::move(e))
                             : (llvm::consumeError(std::move(e)), failure));
    if (!wanted.empty())
      return makeError("python_code file " + wanted.begin()->second.front() + " (" + wanted.begin()->first +
                       ") is not in the artifact's files");
  } catch (const Json::exception& e) {
    return makeError("malformed artifact " + artifactPath + ": " + e.what());
  }
  return modulesInDir(dir);
}

llvm::Error registerPythonHandlers(const std::vector<PythonModule>& modules,
                                   executor::HandlerRegistry& registry) {
  if (modules.empty()) return llvm::Error::success();
  std::string error;
  if (!startInterpreter(error)) return makeError(error);
  PyObject* list = PyList_New(0);
  for (const PythonModule& m : modules) {
    PyObject* t = Py_BuildValue("(ss)", m.name.c_str(), (m.moduleDir + "/plugins").c_str());
    PyList_Append(list, t);
    Py_DECREF(t);
  }
  PyObject* res = PyObject_CallOneArg(refs().bridgeLoad, list);
  Py_DECREF(list);
  if (!res) return makeError(takePythonError());
  PyObject* errors = PyTuple_GET_ITEM(res, 2);
  if (PyList_Size(errors) > 0) {
    std::string text;
    for (Py_ssize_t i = 0; i < PyList_Size(errors); ++i) {
      PyObject* e = PyList_GET_ITEM(errors, i);
      text += std::string("module ") + PyUnicode_AsUTF8(PyTuple_GET_ITEM(e, 0)) + ": " +
              PyUnicode_AsUTF8(PyTuple_GET_ITEM(e, 2)) + "\n";
    }
    Py_DECREF(res);
    return makeError("cannot load the Python code:\n" + text);
  }
  Py_DECREF(res);
  PyObject* mod = handlersModule();
  PyObject* providers = mod ? PyObject_CallMethod(mod, "providers", nullptr) : nullptr;
  if (!providers) return makeError(takePythonError());
  for (Py_ssize_t i = 0; i < PyList_Size(providers); ++i) {
    const char* type;
    Py_ssize_t index;
    int crud;
    if (!PyArg_ParseTuple(PyList_GET_ITEM(providers, i), "snp", &type, &index, &crud)) {
      PyErr_Clear();
      continue;
    }
    size_t idx = size_t(index);
    if (executor::HandlerRegistry::Factory native = registry.factory(type)) {
      // A native handler of this type (std's): it takes part in the provider choice.
      registry.add(type, [idx, crud = bool(crud), native, name = nativeProviderName(type)] {
        return std::make_unique<ChoiceHandler>(idx, crud, native, name);
      });
    } else if (crud)
      registry.add(type, [idx] { return std::make_unique<PyCrudHandler>(idx); });
    else
      registry.add(type, [idx] { return std::make_unique<PyResourceHandler>(idx); });
  }
  Py_DECREF(providers);
  // Executor workers call handlers from their own threads: give the GIL up on this one.
  PyEval_SaveThread();
  return llvm::Error::success();
}

} // namespace inm::pybridge
