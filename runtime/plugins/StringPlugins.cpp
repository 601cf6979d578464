// Native std string plugins (std.md §5 "String"): replace, upper, lower, capitalize, limit, length,
// split, hostname, unique_file. Pure functions of their arguments; lengths count Unicode code points
// like Python's str.
#include "PluginUtil.h"

#include <llvm/Support/MD5.h>

#include <cctype>

namespace inm::runtime::plugins {

namespace {

/// Number of UTF-8 code points in s.
size_t codePoints(llvm::StringRef s) {
  size_t n = 0;
  for (unsigned char c : s)
    if ((c & 0xC0) != 0x80) ++n;
  return n;
}

/// Byte offset of the code point with index `cp` (s.size() when past the end).
size_t byteOffset(llvm::StringRef s, size_t cp) {
  size_t n = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    if ((static_cast<unsigned char>(s[i]) & 0xC0) != 0x80) {
      if (n == cp) return i;
      ++n;
    }
  }
  return s.size();
}

std::string mapAscii(llvm::StringRef s, int (*f)(int)) {
  std::string out = s.str();
  for (char& c : out)
    if (static_cast<unsigned char>(c) < 0x80) c = char(f(static_cast<unsigned char>(c)));
  return out;
}

} // namespace

std::string pyReplace(llvm::StringRef s, llvm::StringRef from, llvm::StringRef to) {
  std::string out;
  if (from.empty()) { // Python inserts `to` around every character
    out += to.str();
    for (size_t i = 0; i < s.size(); ++i) {
      out += s[i];
      if (i + 1 == s.size() || (static_cast<unsigned char>(s[i + 1]) & 0xC0) != 0x80) out += to.str();
    }
    return s.empty() ? to.str() : out;
  }
  size_t pos = 0;
  while (true) {
    size_t hit = s.find(from, pos);
    if (hit == llvm::StringRef::npos) break;
    out += s.slice(pos, hit).str();
    out += to.str();
    pos = hit + from.size();
  }
  out += s.substr(pos).str();
  return out;
}

void registerStringPlugins(PluginRegistry& r) {
  r.add("std::replace", [](PluginContext& ctx, Args a) {
    return okStr(ctx, pyReplace(strArg(a, 0), strArg(a, 1), strArg(a, 2)));
  });
  r.add("std::upper",
        [](PluginContext& ctx, Args a) { return okStr(ctx, mapAscii(strArg(a, 0), ::toupper)); });
  r.add("std::lower",
        [](PluginContext& ctx, Args a) { return okStr(ctx, mapAscii(strArg(a, 0), ::tolower)); });
  r.add("std::capitalize", [](PluginContext& ctx, Args a) {
    std::string s = mapAscii(strArg(a, 0), ::tolower);
    if (!s.empty() && static_cast<unsigned char>(s[0]) < 0x80)
      s[0] = char(::toupper(static_cast<unsigned char>(s[0])));
    return okStr(ctx, s);
  });
  r.add("std::limit", [](PluginContext& ctx, Args a) {
    llvm::StringRef s = strArg(a, 0);
    int64_t n = intArg(a, 1);
    int64_t total = int64_t(codePoints(s));
    if (n < 0) n = std::max<int64_t>(0, total + n); // Python slice s[:n] with negative n
    return okStr(ctx, s.substr(0, byteOffset(s, size_t(std::min(n, total)))));
  });
  r.add("std::length", [](PluginContext&, Args a) { return okInt(int64_t(codePoints(strArg(a, 0)))); });
  r.add("std::split", [](PluginContext& ctx, Args a) {
    llvm::StringRef s = strArg(a, 0), delim = strArg(a, 1);
    if (delim.empty()) return externalError("ValueError: empty separator");
    std::vector<Value> parts;
    size_t pos = 0;
    while (true) {
      size_t hit = s.find(delim, pos);
      if (hit == llvm::StringRef::npos) break;
      parts.push_back(ctx.arena().str(s.slice(pos, hit)));
      pos = hit + delim.size();
    }
    parts.push_back(ctx.arena().str(s.substr(pos)));
    return ok(ctx.arena().list(parts));
  });
  r.add("std::hostname", [](PluginContext& ctx, Args a) {
    llvm::StringRef s = strArg(a, 0);
    return okStr(ctx, s.substr(0, s.find('.')));
  });
  r.add("std::unique_file", [](PluginContext& ctx, Args a) {
    llvm::MD5 md5;
    md5.update(strArg(a, 1));
    llvm::MD5::MD5Result res;
    md5.final(res);
    llvm::SmallString<32> hex;
    llvm::MD5::stringifyResult(res, hex);
    return okStr(ctx, (strArg(a, 0) + hex.str() + strArg(a, 2)).str());
  });
}

} // namespace inm::runtime::plugins
