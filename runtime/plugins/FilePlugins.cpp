// Native std plugins that read the project or module tree (std.md §5 "Files and templates", "Secrets"):
// template (rendering in Template*.cpp), file, source, list_files, generate_password, password.
// Paths "mod/rest" name `<module dir>/files/rest`; "./rest" names the calling module. Secrets live in
// `<project>/data/std/passwordfile.txt` as `id=value` lines; a generated password is appended once and
// returned unchanged on later compiles.
#include "PluginUtil.h"
#include "support/Limits.h"

#include <llvm/Support/FileSystem.h>
#include <llvm/Support/Path.h>
#include <llvm/Support/raw_ostream.h>

#include <algorithm>
#include <random>

namespace inm::runtime::plugins {

namespace {

/// Resolves "mod/rest" to `<mod dir>/<sub>/rest` ("./rest" and "/rest": the calling module's folder),
/// confined to that folder (confinedPath). False with `err` set when the module is unknown or the path leaves
/// the folder; false with `err` empty when the path does not exist (`out` is then the path looked for).
bool modulePath(PluginContext& ctx, llvm::StringRef path, llvm::StringRef sub, std::string& out,
                std::string& err) {
  llvm::StringRef mod, rest;
  if (path.startswith("/")) {
    mod = "";
    rest = path.drop_front(1);
  } else if (path.startswith("./")) {
    mod = "";
    rest = path.drop_front(2);
  } else {
    std::tie(mod, rest) = path.split('/');
  }
  std::string modName = mod.empty() ? ctx.callerModule() : mod.str();
  modName = llvm::StringRef(modName).split("::").first.str();
  std::string dir = ctx.moduleDir(modName);
  if (dir.empty()) {
    err = "Unable to locate module " + modName + " for path " + path.str();
    return false;
  }
  llvm::SmallString<256> base(dir);
  llvm::sys::path::append(base, sub);
  return confinedPath(base, rest, out, err);
}

PluginResult readModuleFile(PluginContext& ctx, Args a) {
  std::string file, err, content;
  if (!modulePath(ctx, strArg(a, 0), "files", file, err)) {
    if (!err.empty()) return explicitError(err);
    return explicitError(strArg(a, 0).str() + " isn't a valid file (" + file + ")");
  }
  if (!readConfinedFile(file, content, err))
    return explicitError(strArg(a, 0).str() + " isn't a valid file (" + file + "): " + err);
  return okStr(ctx, content);
}

std::string passwordFile(PluginContext& ctx) {
  llvm::SmallString<256> p(ctx.projectDir());
  llvm::sys::path::append(p, "data", "std", "passwordfile.txt");
  return std::string(p.str());
}

/// Parses `id=value` lines (value may contain '=', surrounding spaces are stripped).
std::vector<std::pair<std::string, std::string>> readPasswords(const std::string& file) {
  std::vector<std::pair<std::string, std::string>> out;
  std::string text;
  if (!readFile(file, text)) return out;
  llvm::StringRef rest(text);
  while (!rest.empty()) {
    llvm::StringRef line;
    std::tie(line, rest) = rest.split('\n');
    line = line.trim();
    size_t eq = line.find('=');
    if (line.empty() || eq == llvm::StringRef::npos) continue;
    out.emplace_back(line.substr(0, eq).trim().str(), line.substr(eq + 1).trim().str());
  }
  return out;
}

} // namespace

void registerFilePlugins(PluginRegistry& r) {
  r.add("std::template", renderTemplatePlugin);
  r.add("std::file", readModuleFile);
  r.add("std::source", readModuleFile);
  r.add("std::list_files", [](PluginContext& ctx, Args a) {
    std::string dir, err;
    if (!modulePath(ctx, strArg(a, 0), "files", dir, err)) {
      if (!err.empty()) return explicitError(err);
      return explicitError(strArg(a, 0).str() + " isn't a valid directory (" + dir + ")");
    }
    std::vector<std::string> names;
    std::error_code ec;
    for (llvm::sys::fs::directory_iterator it(dir, ec), end; it != end && !ec; it.increment(ec))
      if (llvm::sys::fs::is_regular_file(it->path()))
        names.push_back(llvm::sys::path::filename(it->path()).str());
    if (ec) return explicitError(strArg(a, 0).str() + " isn't a valid directory (" + dir + ")");
    std::sort(names.begin(), names.end());
    std::vector<Value> out;
    for (const std::string& n : names) out.push_back(ctx.arena().str(n));
    return ok(ctx.arena().list(out));
  });
  r.add("std::generate_password", [](PluginContext& ctx, Args a) {
    llvm::StringRef id = strArg(a, 0);
    if (id.contains('=')) return explicitError("The password id can not contain =");
    std::string file = passwordFile(ctx);
    for (auto& [k, v] : readPasswords(file))
      if (k == id) return okStr(ctx, v);
    int64_t length = intArg(a, 1, 20);
    if (length < 0 || uint64_t(length) > limits().maxStringBytes)
      return explicitError("password length " + std::to_string(length) + " is out of range (0 to " +
                           std::to_string(limits().maxStringBytes) + ", --max-string-bytes)");
    static const char alphabet[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
    std::random_device rd;
    std::uniform_int_distribution<size_t> pick(0, sizeof(alphabet) - 2);
    std::string pw;
    for (int64_t i = 0; i < length; ++i) pw += alphabet[pick(rd)];
    llvm::sys::fs::create_directories(llvm::sys::path::parent_path(file));
    std::error_code ec;
    llvm::raw_fd_ostream os(file, ec, llvm::sys::fs::OF_Append);
    if (ec) return externalError("cannot write " + file + ": " + ec.message());
    os << id << "=" << pw << "\n";
    return okStr(ctx, pw);
  });
  r.add("std::password", [](PluginContext& ctx, Args a) {
    std::string file = passwordFile(ctx);
    for (auto& [k, v] : readPasswords(file))
      if (k == strArg(a, 0)) return okStr(ctx, v);
    return explicitError("Password " + strArg(a, 0).str() + " does not exist in file " + file);
  });
}

} // namespace inm::runtime::plugins
