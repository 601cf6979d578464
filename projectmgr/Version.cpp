// PEP 440 parsing, ordering and specifier matching (see projectmgr/Version.h). Written from the rules of
// PEP 440 ("Version specifiers"): implicit zero padding of release numbers, pre-releases sort below the
// release, a dev release below its pre-releases, and the exclusive comparisons `<V` / `>V` never admit a
// pre-release respectively post-release of V itself unless V is one.
#include "projectmgr/Version.h"

#include <algorithm>
#include <cctype>
#include <climits>

namespace inm::projectmgr {
namespace {

std::string lower(std::string s) {
  for (char& c : s) c = char(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

bool readNum(const std::string& s, size_t& i, long& out) {
  size_t start = i;
  long v = 0;
  while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]))) {
    if (v > 100000000000L) return false;
    v = v * 10 + (s[i] - '0');
    ++i;
  }
  out = v;
  return i > start;
}

/// Skips one optional separator ('.', '-', '_').
void skipSep(const std::string& s, size_t& i) {
  if (i < s.size() && (s[i] == '.' || s[i] == '-' || s[i] == '_')) ++i;
}

bool startsAt(const std::string& s, size_t i, const char* w) {
  return s.compare(i, std::char_traits<char>::length(w), w) == 0;
}

int cmpRelease(const std::vector<long>& a, const std::vector<long>& b) {
  size_t n = std::max(a.size(), b.size());
  for (size_t k = 0; k < n; ++k) {
    long x = k < a.size() ? a[k] : 0, y = k < b.size() ? b[k] : 0;
    if (x != y) return x < y ? -1 : 1;
  }
  return 0;
}

int cmpLocal(const std::string& a, const std::string& b) {
  if (a == b) return 0;
  if (a.empty()) return -1;
  if (b.empty()) return 1;
  auto split = [](const std::string& s) {
    std::vector<std::string> out(1);
    for (char c : s) {
      if (c == '.' || c == '-' || c == '_')
        out.emplace_back();
      else
        out.back() += c;
    }
    return out;
  };
  auto pa = split(a), pb = split(b);
  for (size_t k = 0; k < std::min(pa.size(), pb.size()); ++k) {
    bool na = !pa[k].empty() && std::all_of(pa[k].begin(), pa[k].end(), ::isdigit);
    bool nb = !pb[k].empty() && std::all_of(pb[k].begin(), pb[k].end(), ::isdigit);
    if (na && nb) {
      long x = std::stol(pa[k]), y = std::stol(pb[k]);
      if (x != y) return x < y ? -1 : 1;
    } else if (na != nb) {
      return na ? 1 : -1; // numeric segments sort above alphanumeric ones
    } else if (pa[k] != pb[k]) {
      return pa[k] < pb[k] ? -1 : 1;
    }
  }
  return pa.size() == pb.size() ? 0 : (pa.size() < pb.size() ? -1 : 1);
}

} // namespace

std::optional<Version> parseVersion(const std::string& textIn) {
  std::string t = textIn;
  while (!t.empty() && std::isspace(static_cast<unsigned char>(t.back()))) t.pop_back();
  size_t b = 0;
  while (b < t.size() && std::isspace(static_cast<unsigned char>(t[b]))) ++b;
  std::string s = lower(t.substr(b));
  Version v;
  v.text = t.substr(b);
  size_t i = 0;
  if (i < s.size() && s[i] == 'v') ++i;
  long n = 0;
  if (!readNum(s, i, n)) return std::nullopt;
  if (i < s.size() && s[i] == '!') {
    v.epoch = int(n);
    ++i;
    if (!readNum(s, i, n)) return std::nullopt;
  }
  v.release.push_back(n);
  while (i + 1 < s.size() && s[i] == '.' && std::isdigit(static_cast<unsigned char>(s[i + 1]))) {
    ++i;
    readNum(s, i, n);
    v.release.push_back(n);
  }
  // pre-release
  {
    size_t j = i;
    skipSep(s, j);
    static const std::pair<const char*, int> kinds[] = {{"alpha", 0}, {"beta", 1}, {"preview", 2}, {"pre", 2},
                                                        {"rc", 2},    {"a", 0},    {"b", 1},       {"c", 2}};
    for (auto [w, k] : kinds) {
      if (!startsAt(s, j, w)) continue;
      j += std::char_traits<char>::length(w);
      skipSep(s, j);
      long pn = 0;
      readNum(s, j, pn);
      v.preKind = k;
      v.preNum = pn;
      i = j;
      break;
    }
  }
  // post-release
  {
    size_t j = i;
    if (j < s.size() && s[j] == '-' && j + 1 < s.size() &&
        std::isdigit(static_cast<unsigned char>(s[j + 1]))) {
      ++j;
      readNum(s, j, v.post);
      i = j;
    } else {
      skipSep(s, j);
      for (const char* w : {"post", "rev", "r"}) {
        if (!startsAt(s, j, w)) continue;
        j += std::char_traits<char>::length(w);
        skipSep(s, j);
        long pn = 0;
        readNum(s, j, pn);
        v.post = pn;
        i = j;
        break;
      }
    }
  }
  // dev-release
  {
    size_t j = i;
    skipSep(s, j);
    if (startsAt(s, j, "dev")) {
      j += 3;
      skipSep(s, j);
      long dn = 0;
      readNum(s, j, dn);
      v.dev = dn;
      i = j;
    }
  }
  if (i < s.size() && s[i] == '+') {
    v.local = s.substr(i + 1);
    if (v.local.empty()) return std::nullopt;
    for (char c : v.local)
      if (!std::isalnum(static_cast<unsigned char>(c)) && c != '.' && c != '-' && c != '_')
        return std::nullopt;
    i = s.size();
  }
  if (i != s.size()) return std::nullopt;
  return v;
}

int compare(const Version& a, const Version& b) {
  if (a.epoch != b.epoch) return a.epoch < b.epoch ? -1 : 1;
  if (int c = cmpRelease(a.release, b.release)) return c;
  // pre-release key: a dev release with nothing else sorts below every pre-release; a final release above.
  auto preKey = [](const Version& v) -> std::pair<long, long> {
    if (v.preKind < 0 && v.post < 0 && v.dev >= 0) return {-1, 0};
    if (v.preKind < 0) return {3, 0};
    return {v.preKind, v.preNum};
  };
  if (auto x = preKey(a), y = preKey(b); x != y) return x < y ? -1 : 1;
  if (a.post != b.post) return a.post < b.post ? -1 : 1;
  long da = a.dev < 0 ? LONG_MAX : a.dev, db = b.dev < 0 ? LONG_MAX : b.dev;
  if (da != db) return da < db ? -1 : 1;
  return cmpLocal(a.local, b.local);
}

std::string Version::str() const {
  std::string s;
  if (epoch) s += std::to_string(epoch) + "!";
  for (size_t k = 0; k < release.size(); ++k) s += (k ? "." : "") + std::to_string(release[k]);
  if (preKind >= 0) s += std::string(preKind == 0 ? "a" : preKind == 1 ? "b" : "rc") + std::to_string(preNum);
  if (post >= 0) s += ".post" + std::to_string(post);
  if (dev >= 0) s += ".dev" + std::to_string(dev);
  if (!local.empty()) s += "+" + local;
  return s;
}

Version Version::base() const {
  Version v;
  v.epoch = epoch;
  v.release = release;
  v.text = v.str();
  return v;
}

bool Specifier::contains(const Version& vIn) const {
  if (op == "===") return lower(vIn.text) == lower(text) || lower(vIn.str()) == lower(text);
  Version v = vIn;
  if (version.local.empty()) v.local.clear(); // a specifier without a local label ignores the candidate's
  if (op == "==" || op == "!=") {
    bool eq;
    if (prefix) {
      // ==1.2.* : the candidate's release padded/truncated to the prefix length must match.
      eq = v.epoch == version.epoch;
      for (size_t k = 0; eq && k < version.release.size(); ++k)
        eq = (k < v.release.size() ? v.release[k] : 0) == version.release[k];
      if (eq && (version.preKind >= 0 || version.post >= 0 || version.dev >= 0)) {
        Version vb = v;
        vb.release.resize(std::max(vb.release.size(), version.release.size()), 0);
        eq = compare(vb, version) >= 0;
      }
    } else {
      eq = compare(v, version) == 0;
    }
    return op == "==" ? eq : !eq;
  }
  int c = compare(v, version);
  if (op == "<=") return c <= 0;
  if (op == ">=") return c >= 0;
  if (op == "<") {
    if (c >= 0) return false;
    if (!version.isPrerelease() && v.isPrerelease() && compare(v.base(), version.base()) == 0) return false;
    return true;
  }
  if (op == ">") {
    if (c <= 0) return false;
    if (version.post < 0 && v.post >= 0 && compare(v.base(), version.base()) == 0) return false;
    return true;
  }
  if (op == "~=") {
    if (c < 0) return false;
    std::vector<long> pre(version.release.begin(), version.release.end() - 1);
    for (size_t k = 0; k < pre.size(); ++k)
      if ((k < v.release.size() ? v.release[k] : 0) != pre[k]) return false;
    return v.epoch == version.epoch;
  }
  return false;
}

bool Requirement::contains(const Version& v) const {
  for (const Specifier& s : specs)
    if (!s.contains(v)) return false;
  return true;
}

std::string Requirement::constraintStr() const {
  std::string s;
  for (size_t k = 0; k < specs.size(); ++k) s += (k ? "," : "") + specs[k].str();
  return s;
}

std::string Requirement::str() const { return name + constraintStr(); }

std::optional<Requirement> parseRequirement(const std::string& text, std::string& error) {
  Requirement r;
  size_t i = 0;
  auto ws = [&] {
    while (i < text.size() && std::isspace(static_cast<unsigned char>(text[i]))) ++i;
  };
  ws();
  size_t start = i;
  while (i < text.size() && (std::isalnum(static_cast<unsigned char>(text[i])) || text[i] == '_' ||
                             text[i] == '-' || text[i] == '.'))
    ++i;
  r.name = text.substr(start, i - start);
  if (r.name.empty()) {
    error = "'" + text + "' is not a requirement: it must start with a module name";
    return std::nullopt;
  }
  ws();
  if (i < text.size() && text[i] == '[') { // extras: accepted and ignored, as for v1 modules
    size_t close = text.find(']', i);
    if (close == std::string::npos) {
      error = "'" + text + "': unclosed '['";
      return std::nullopt;
    }
    i = close + 1;
    ws();
  }
  while (i < text.size()) {
    static const char* ops[] = {"===", "~=", "==", "!=", "<=", ">=", "<", ">"};
    Specifier sp;
    for (const char* op : ops)
      if (startsAt(text, i, op)) {
        sp.op = op;
        break;
      }
    if (sp.op.empty()) {
      error = "'" + text + "': expected one of ==, !=, <, <=, >, >=, ~= at '" + text.substr(i) + "'";
      return std::nullopt;
    }
    i += sp.op.size();
    ws();
    size_t vs = i;
    while (i < text.size() && text[i] != ',' && !std::isspace(static_cast<unsigned char>(text[i]))) ++i;
    sp.text = text.substr(vs, i - vs);
    std::string vt = sp.text;
    if (vt.size() > 2 && vt.compare(vt.size() - 2, 2, ".*") == 0) {
      if (sp.op != "==" && sp.op != "!=") {
        error = "'" + text + "': a '.*' suffix is only allowed with == and !=";
        return std::nullopt;
      }
      sp.prefix = true;
      vt.resize(vt.size() - 2);
    }
    auto v = parseVersion(vt);
    if (sp.op != "===" && !v) {
      error = "'" + text + "': '" + sp.text + "' is not a valid version";
      return std::nullopt;
    }
    if (v) sp.version = *v;
    if (sp.op == "~=" && sp.version.release.size() < 2) {
      error = "'" + text + "': ~= needs a version with at least two parts (~=1.0)";
      return std::nullopt;
    }
    r.specs.push_back(sp);
    ws();
    if (i < text.size()) {
      if (text[i] != ',') {
        error = "'" + text + "': expected ',' between constraints at '" + text.substr(i) + "'";
        return std::nullopt;
      }
      ++i;
      ws();
    }
  }
  return r;
}

} // namespace inm::projectmgr
