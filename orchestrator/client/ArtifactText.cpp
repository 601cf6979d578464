// The artifact rewrite of ArtifactText.h: a small JSON scanner (strings with escapes, nested values skipped
// by bracket depth) that records byte ranges, and a builder that copies those ranges. Small values (files,
// resource_sets, ids of undefined resources) are parsed with nlohmann.
#include "client/ArtifactText.h"

#include "model/Ids.h"
#include "model/Vocabulary.h"

#include <llvm/Support/xxhash.h>

#include <cstring>
#include <string_view>
#include <vector>

namespace inm::client::detail {

namespace {

class Scanner {
 public:
  explicit Scanner(std::string_view s) : s_(s) {}
  size_t pos() const { return i_; }
  bool ok() const { return err_.empty(); }
  const std::string& error() const { return err_; }

  void ws() {
    while (i_ < s_.size() && (s_[i_] == ' ' || s_[i_] == '\n' || s_[i_] == '\t' || s_[i_] == '\r')) ++i_;
  }
  bool expect(char c) {
    ws();
    if (i_ < s_.size() && s_[i_] == c) {
      ++i_;
      return true;
    }
    return fail(std::string("expected '") + c + "'");
  }
  /// Consumes `c` if it is next (after whitespace).
  bool accept(char c) {
    ws();
    if (i_ < s_.size() && s_[i_] == c) {
      ++i_;
      return true;
    }
    return false;
  }
  /// A string token; returns its raw text including the quotes.
  bool string(std::string_view& raw) {
    ws();
    if (i_ >= s_.size() || s_[i_] != '"') return fail("expected a string");
    size_t b = i_++;
    // The closing quote is the first '"' preceded by an even number of backslashes (memchr: this is the hot
    // loop).
    for (;;) {
      const void* q = i_ < s_.size() ? std::memchr(s_.data() + i_, '"', s_.size() - i_) : nullptr;
      if (!q) return fail("unterminated string");
      size_t at = size_t(static_cast<const char*>(q) - s_.data());
      size_t slashes = 0;
      while (at - slashes > b + 1 && s_[at - slashes - 1] == '\\') ++slashes;
      i_ = at + 1;
      if (slashes % 2 == 0) break;
    }
    raw = s_.substr(b, i_ - b);
    return true;
  }
  /// Any value; returns its raw text.
  bool value(std::string_view& raw) {
    ws();
    if (i_ >= s_.size()) return fail("expected a value");
    size_t b = i_;
    if (s_[i_] == '"') return string(raw);
    if (s_[i_] == '{' || s_[i_] == '[') {
      int depth = 0;
      while (i_ < s_.size()) {
        char c = s_[i_];
        if (c == '"') {
          std::string_view ignored;
          if (!string(ignored)) return false;
          continue;
        }
        ++i_;
        if (c == '{' || c == '[') ++depth;
        if ((c == '}' || c == ']') && --depth == 0) {
          raw = s_.substr(b, i_ - b);
          return true;
        }
      }
      return fail("unterminated object or array");
    }
    while (i_ < s_.size() && s_[i_] != ',' && s_[i_] != '}' && s_[i_] != ']' && s_[i_] != ' ' &&
           s_[i_] != '\n')
      ++i_;
    if (i_ == b) return fail("expected a value");
    raw = s_.substr(b, i_ - b);
    return true;
  }
  bool fail(const std::string& what) {
    if (err_.empty()) err_ = what + " at byte " + std::to_string(i_);
    return false;
  }

 private:
  std::string_view s_;
  size_t i_ = 0;
  std::string err_;
};

llvm::Error malformed(const Scanner& sc) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), "the export artifact is malformed: %s",
                                 sc.error().c_str());
}

/// Rewrites one resource object (raw text) onto `out`.
bool rewriteResource(std::string_view obj, const std::string& suffix, ArtifactParts& parts, std::string& out,
                     std::string& err) {
  Scanner sc(obj);
  if (!sc.expect('{')) return err = sc.error(), false;
  out += '{';
  bool first = true;
  std::string_view id;
  bool undefined = false;
  ResourceEntry entry;
  entry.begin = out.size() - 1;    // at the object's opening brace
  std::string& fp = parts.scratch; // the members but id and version, for the fingerprint
  fp.clear();
  if (!sc.accept('}')) {
    do {
      std::string_view key, val;
      if (!sc.string(key) || !sc.expect(':') || !sc.value(val)) return err = sc.error(), false;
      if (key != "\"id\"" && key != "\"version\"") {
        fp.append(key);
        fp += '\x1f';
        fp.append(val);
        fp += '\x1e';
      }
      if (key == "\"undefined\"") {
        undefined = val == "true";
        continue;
      }
      if (key == "\"id\"") id = val;
      if (!first) out += ", ";
      first = false;
      out += key;
      out += ": ";
      if (key == "\"requires\"" && !val.empty() && val.front() == '[') {
        // Each element is a string: insert the suffix before its closing quote.
        Scanner rs(val);
        rs.expect('[');
        out += '[';
        if (!rs.accept(']')) {
          bool firstDep = true;
          do {
            std::string_view dep;
            if (!rs.string(dep)) return err = "requires: " + rs.error(), false;
            if (!firstDep) out += ", ";
            firstDep = false;
            out.append(dep.data(), dep.size() - 1);
            out += suffix;
            out += '"';
          } while (rs.accept(','));
          if (!rs.expect(']')) return err = "requires: " + rs.error(), false;
        }
        out += ']';
      } else {
        out += val;
      }
    } while (sc.accept(','));
    if (!sc.expect('}')) return err = sc.error(), false;
  }
  out += '}';
  if (id.empty()) return err = "a resource without an `id`", false;
  std::string_view raw = id.substr(1, id.size() - 2);
  parts.types.insert(std::string(raw.substr(0, raw.find('['))));
  // Ids without escapes (all but the rarest) are their JSON text without quotes.
  std::string full = raw.find('\\') == std::string_view::npos ? std::string(raw)
                                                              : nlohmann::json::parse(id).get<std::string>();
  entry.id = std::string(model::withoutVersion(full));
  if (undefined) parts.resourceState[entry.id] = model::spelling(model::DeployStatus::Undefined);
  // Two xxHash64 values (of the text, and of the text behind a marker byte): 128 bits against collisions.
  entry.fingerprint[0] = llvm::xxHash64(fp);
  fp += '\x1d';
  entry.fingerprint[1] = llvm::xxHash64(fp);
  entry.undefined = undefined;
  entry.end = out.size();
  parts.entries.push_back(std::move(entry));
  return true;
}

} // namespace

llvm::Expected<nlohmann::json> artifactFiles(const std::string& text) {
  Scanner sc(text);
  if (!sc.expect('{')) return malformed(sc);
  nlohmann::json files = nlohmann::json::object();
  if (!sc.accept('}')) {
    do {
      std::string_view key, val;
      if (!sc.string(key) || !sc.expect(':') || !sc.value(val)) return malformed(sc);
      if (key != "\"files\"") continue;
      files = nlohmann::json::parse(val, nullptr, false);
      if (!files.is_object())
        return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                       "the export artifact's files must be an object");
    } while (sc.accept(','));
    if (!sc.expect('}')) return malformed(sc);
  }
  return files;
}

llvm::Expected<ArtifactParts> rewriteArtifact(const std::string& text, int64_t version, bool withFiles) {
  ArtifactParts parts;
  const std::string suffix = model::versionSuffix(model::VersionNumber{version});
  Scanner sc(text);
  if (!sc.expect('{')) return malformed(sc);
  bool sawResources = false;
  parts.resourcesJson.reserve(text.size() + text.size() / 16);
  if (!sc.accept('}')) {
    do {
      std::string_view key;
      if (!sc.string(key) || !sc.expect(':')) return malformed(sc);
      if (key == "\"resources\"") {
        sawResources = true;
        if (!sc.expect('[')) return malformed(sc);
        std::string& out = parts.resourcesJson;
        out += '[';
        if (!sc.accept(']')) {
          do {
            std::string_view obj;
            if (!sc.value(obj)) return malformed(sc);
            if (parts.resources++) out += ",\n";
            std::string err;
            if (!rewriteResource(obj, suffix, parts, out, err))
              return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                             "the export artifact is malformed: resource %zu: %s",
                                             parts.resources, err.c_str());
          } while (sc.accept(','));
          if (!sc.expect(']')) return malformed(sc);
        }
        out += ']';
        continue;
      }
      std::string_view val;
      if (!sc.value(val)) return malformed(sc);
      if (key == "\"format_version\"" || (key == "\"files\"" && withFiles) || key == "\"resource_sets\"" ||
          key == "\"python_code\"") {
        nlohmann::json j = nlohmann::json::parse(val, nullptr, false);
        if (j.is_discarded())
          return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                         "the export artifact's %s is not JSON", std::string(key).c_str());
        if (key == "\"format_version\"")
          parts.formatVersion = j.is_number_integer() ? j.get<int64_t>() : -1;
        else if (key == "\"files\"")
          parts.files = withFiles ? std::move(j) : nlohmann::json::object();
        else if (key == "\"resource_sets\"")
          parts.resourceSets = std::move(j);
        else if (key == "\"python_code\"" && j.is_array())
          parts.pythonCode = std::move(j);
      }
    } while (sc.accept(','));
    if (!sc.expect('}')) return malformed(sc);
  }
  if (parts.formatVersion != 1)
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "the export artifact has format_version %lld, this client reads 1",
                                   (long long)parts.formatVersion);
  if (!sawResources)
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "the export artifact has no `resources` array");
  if (!parts.files.is_object() || !parts.resourceSets.is_object())
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "the export artifact's files and resource_sets must be objects");
  return parts;
}

nlohmann::json codeSources(const nlohmann::json& pythonCode) {
  nlohmann::json sources = nlohmann::json::object();
  for (const nlohmann::json& m : pythonCode) {
    if (!m.is_object() || !m.value("module", nlohmann::json()).is_string() ||
        !m.value("files", nlohmann::json()).is_object())
      continue;
    std::string module = m["module"].get<std::string>();
    nlohmann::json requirements = m.value("requirements", nlohmann::json::array());
    for (auto it = m["files"].begin(); it != m["files"].end(); ++it) {
      if (!it.value().is_string()) continue;
      std::string path = it.key(); // "plugins/sub/x.py"
      std::string name = path.rfind("plugins/", 0) == 0 ? path.substr(8) : path;
      if (name.size() > 3 && name.compare(name.size() - 3, 3, ".py") == 0) name.resize(name.size() - 3);
      if (name == "__init__")
        name.clear();
      else if (name.size() > 9 && name.compare(name.size() - 9, 9, "/__init__") == 0)
        name.resize(name.size() - 9);
      for (char& c : name)
        if (c == '/') c = '.';
      std::string pyModule = "inmanta_plugins." + module + (name.empty() ? "" : "." + name);
      sources[it.value().get<std::string>()] = nlohmann::json::array({path, pyModule, requirements});
    }
  }
  return sources;
}

} // namespace inm::client::detail
