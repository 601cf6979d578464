// The exporter's delta state file (see include/client/DeltaState.h). Text, one record a line, so it is cheap
// to read at 100k resources and easy to inspect:
//   inmanta-delta-state 1
//   S <server> <environment> <version> <token>
//   R <fingerprint hex 32> <resource set> <resource id>
//   F <sha1>
// Fields are separated by tabs; `\`, tab and newline inside a field are escaped as `\\`, `\t`, `\n`.
#include "client/DeltaState.h"

#include <llvm/Support/FileSystem.h>
#include <llvm/Support/MemoryBuffer.h>
#include <llvm/Support/Path.h>
#include <llvm/Support/raw_ostream.h>

#include <cinttypes>
#include <cstdio>
#include <vector>

namespace inm::client {

namespace {

constexpr const char* kHeader = "inmanta-delta-state 1";

void putField(std::string& out, const std::string& v) {
  for (char c : v) {
    if (c == '\\')
      out += "\\\\";
    else if (c == '\t')
      out += "\\t";
    else if (c == '\n')
      out += "\\n";
    else
      out += c;
  }
}

std::string getField(llvm::StringRef v) {
  std::string out;
  out.reserve(v.size());
  for (size_t i = 0; i < v.size(); ++i) {
    if (v[i] == '\\' && i + 1 < v.size()) {
      char n = v[++i];
      out += n == 't' ? '\t' : n == 'n' ? '\n' : n;
    } else {
      out += v[i];
    }
  }
  return out;
}

bool parseHex64(llvm::StringRef s, uint64_t& v) { return s.size() == 16 && !s.getAsInteger(16, v); }

} // namespace

std::string deltaStatePath(const std::string& projectDir, const std::string& environment) {
  llvm::SmallString<256> p(projectDir);
  llvm::sys::path::append(p, ".inmanta_export", environment + ".state");
  return std::string(p.str());
}

std::optional<DeltaState> readDeltaState(const std::string& path) {
  auto buf = llvm::MemoryBuffer::getFile(path, /*IsText=*/false, /*RequiresNullTerminator=*/false);
  if (!buf) return std::nullopt;
  llvm::StringRef text = (*buf)->getBuffer();
  DeltaState st;
  bool header = false, session = false;
  while (!text.empty()) {
    auto [line, rest] = text.split('\n');
    text = rest;
    if (!header) {
      if (line != kHeader) return std::nullopt;
      header = true;
      continue;
    }
    if (line.empty()) continue;
    llvm::SmallVector<llvm::StringRef, 5> f;
    line.split(f, '\t');
    if (f[0] == "S" && f.size() == 5) {
      st.server = getField(f[1]);
      st.environment = getField(f[2]);
      if (f[3].getAsInteger(10, st.version)) return std::nullopt;
      st.token = getField(f[4]);
      session = true;
    } else if (f[0] == "R" && f.size() == 4 && f[1].size() == 32) {
      DeltaResource r;
      if (!parseHex64(f[1].substr(0, 16), r.fingerprint[0]) || !parseHex64(f[1].substr(16), r.fingerprint[1]))
        return std::nullopt;
      r.resourceSet = getField(f[2]);
      st.resources.emplace(getField(f[3]), std::move(r));
    } else if (f[0] == "F" && f.size() == 2) {
      st.files.insert(f[1].str());
    } else {
      return std::nullopt;
    }
  }
  if (!session) return std::nullopt;
  return st;
}

llvm::Error writeDeltaState(const std::string& path, const DeltaState& state) {
  auto fail = [&](const std::string& what, std::error_code ec) {
    return llvm::createStringError(ec, "writing the delta state %s: %s: %s", path.c_str(), what.c_str(),
                                   ec.message().c_str());
  };
  std::string out;
  out.reserve(64 + state.resources.size() * 120 + state.files.size() * 43);
  out += kHeader;
  out += "\nS\t";
  putField(out, state.server);
  out += '\t';
  putField(out, state.environment);
  out += '\t' + std::to_string(state.version) + '\t';
  putField(out, state.token);
  out += '\n';
  char hex[40];
  for (const auto& [id, r] : state.resources) {
    std::snprintf(hex, sizeof hex, "%016" PRIx64 "%016" PRIx64, r.fingerprint[0], r.fingerprint[1]);
    out += "R\t";
    out += hex;
    out += '\t';
    putField(out, r.resourceSet);
    out += '\t';
    putField(out, id);
    out += '\n';
  }
  for (const std::string& f : state.files) {
    out += "F\t";
    out += f;
    out += '\n';
  }
  llvm::StringRef dir = llvm::sys::path::parent_path(path);
  if (std::error_code ec = llvm::sys::fs::create_directories(dir)) return fail("creating its folder", ec);
  llvm::SmallString<256> tmp;
  int fd = -1;
  if (std::error_code ec = llvm::sys::fs::createUniqueFile(path + ".tmp-%%%%%%", fd, tmp))
    return fail("creating a temporary file", ec);
  {
    llvm::raw_fd_ostream os(fd, /*shouldClose=*/true);
    os << out;
    os.close();
    if (os.has_error()) {
      std::error_code ec = os.error();
      os.clear_error();
      llvm::sys::fs::remove(tmp);
      return fail("writing", ec);
    }
  }
  if (std::error_code ec = llvm::sys::fs::rename(tmp, path)) {
    llvm::sys::fs::remove(tmp);
    return fail("renaming the temporary file", ec);
  }
  return llvm::Error::success();
}

} // namespace inm::client
