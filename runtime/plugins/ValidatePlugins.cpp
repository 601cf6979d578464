// Native std validation plugins (std.md §5 "Validation"): validate_type for the Python/pydantic type
// names the std typedefs use (ipaddress.*, pydantic.*, uuid.UUID, datetime.*) and is_base64_encoded.
// Each check is a native approximation of the reference's accepted set on ordinary inputs.
// Invariant: validate_type answers true/false for supported names, an error for unsupported ones.
#include "IpAddress.h"
#include "PluginUtil.h"

#include <re2/re2.h>

namespace inm::runtime::plugins {

namespace {

bool allDigits(llvm::StringRef s) {
  if (s.empty()) return false;
  for (char c : s)
    if (c < '0' || c > '9') return false;
  return true;
}

int num(llvm::StringRef s) {
  int v = 0;
  s.getAsInteger(10, v);
  return v;
}

bool isDate(llvm::StringRef s) {
  if (s.size() != 10 || s[4] != '-' || s[7] != '-') return false;
  llvm::StringRef y = s.substr(0, 4), m = s.substr(5, 2), d = s.substr(8, 2);
  if (!allDigits(y) || !allDigits(m) || !allDigits(d)) return false;
  int year = num(y), month = num(m), day = num(d);
  if (year < 1 || month < 1 || month > 12 || day < 1) return false;
  static const int days[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  int max = days[month - 1];
  if (month == 2 && ((year % 4 == 0 && year % 100 != 0) || year % 400 == 0)) max = 29;
  return day <= max;
}

/// "Z", "+HH:MM", "+HHMM", "-HH" or empty.
bool isTz(llvm::StringRef s) {
  if (s.empty() || s == "Z" || s == "z") return true;
  if (s[0] != '+' && s[0] != '-') return false;
  s = s.drop_front();
  if (s.size() == 2) return allDigits(s) && num(s) < 24;
  if (s.size() == 4) return allDigits(s) && num(s.substr(0, 2)) < 24 && num(s.substr(2)) < 60;
  if (s.size() == 5 && s[2] == ':')
    return allDigits(s.substr(0, 2)) && allDigits(s.substr(3)) && num(s.substr(0, 2)) < 24 &&
           num(s.substr(3)) < 60;
  return false;
}

bool isTime(llvm::StringRef s) {
  size_t tz = s.find_first_of("Zz+-");
  llvm::StringRef zone = tz == llvm::StringRef::npos ? llvm::StringRef() : s.substr(tz);
  s = s.substr(0, tz);
  if (!isTz(zone)) return false;
  if (s.size() < 5 || s[2] != ':') return false;
  if (!allDigits(s.substr(0, 2)) || !allDigits(s.substr(3, 2)) || num(s.substr(0, 2)) > 23 ||
      num(s.substr(3, 2)) > 59)
    return false;
  s = s.substr(5);
  if (s.empty()) return true;
  if (s[0] != ':' || s.size() < 3 || !allDigits(s.substr(1, 2)) || num(s.substr(1, 2)) > 59) return false;
  s = s.substr(3);
  if (s.empty()) return true;
  if (s[0] != '.' && s[0] != ',') return false;
  s = s.drop_front();
  return allDigits(s) && s.size() <= 6;
}

bool isDateTime(llvm::StringRef s) {
  llvm::StringRef t = s.trim();
  if (allDigits(t) || (t.size() > 1 && t[0] == '-' && allDigits(t.drop_front()))) return true; // unix time
  if (isDate(s)) return true;
  if (s.size() < 12 || (s[10] != 'T' && s[10] != 't' && s[10] != ' ')) return false;
  return isDate(s.substr(0, 10)) && isTime(s.substr(11));
}

bool isUuid(llvm::StringRef s) {
  std::string h = s.str();
  auto eraseAll = [&](const std::string& what) {
    for (size_t p; (p = h.find(what)) != std::string::npos;) h.erase(p, what.size());
  };
  eraseAll("urn:");
  eraseAll("uuid:");
  while (!h.empty() && (h.front() == '{' || h.front() == '}')) h.erase(h.begin());
  while (!h.empty() && (h.back() == '{' || h.back() == '}')) h.pop_back();
  eraseAll("-");
  if (h.size() != 32) return false;
  for (char c : h)
    if (!isxdigit(static_cast<unsigned char>(c))) return false;
  return true;
}

bool isEmail(llvm::StringRef s) {
  static const RE2 re(
      R"(^[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+(\.[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+)*@([A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?\.)+[A-Za-z]{2,}$)");
  return s.size() <= 254 && RE2::FullMatch(re2::StringPiece(s.data(), s.size()), re);
}

bool isNameEmail(llvm::StringRef s) {
  if (isEmail(s)) return true;
  size_t lt = s.rfind('<');
  if (lt == llvm::StringRef::npos || !s.endswith(">")) return false;
  return isEmail(s.slice(lt + 1, s.size() - 1).trim());
}

/// kind 0: any scheme; 1: http(s); 2: http(s), TLD or IP host, <= 2083 chars.
bool isUrl(llvm::StringRef s, int kind) {
  static const RE2 re(
      R"(^([A-Za-z][A-Za-z0-9+.-]*)://(([^@/?#\s]*)@)?(\[[0-9A-Fa-f:.]+\]|[^:/?#\s\[\]@]*)(:([0-9]{1,5}))?([/?#][^\s]*)?$)");
  re2::StringPiece m[8];
  if (!re.Match(re2::StringPiece(s.data(), s.size()), 0, s.size(), RE2::ANCHOR_BOTH, m, 8)) return false;
  std::string scheme = llvm::StringRef(m[1].data(), m[1].size()).lower();
  std::string host(m[4].data() ? m[4].data() : "", m[4].size());
  if (kind >= 1 && scheme != "http" && scheme != "https") return false;
  if (m[6].data() && std::stoi(std::string(m[6].data(), m[6].size())) > 65535) return false;
  if (kind >= 1 && host.empty()) return false;
  if (kind == 2) {
    if (s.size() > 2083) return false;
    IpAddr ip;
    bool isIp = parseIpv4(host, ip) || (host.size() > 2 && host[0] == '[');
    if (!isIp) {
      size_t dot = llvm::StringRef(host).rtrim('.').rfind('.');
      if (dot == std::string::npos) return false;
      llvm::StringRef tld = llvm::StringRef(host).rtrim('.').substr(dot + 1);
      if (tld.size() < 2) return false;
      for (char c : tld)
        if (!isalpha(static_cast<unsigned char>(c)) && c != '-') return false;
    }
  }
  if (scheme == "http" || scheme == "https" || scheme == "ftp" || scheme == "ws" || scheme == "wss")
    return !host.empty();
  return true;
}

/// Numeric value of v for the pydantic number types; false for non-numbers.
bool numeric(const Value& v, double& out, bool intOnly) {
  switch (v.kind) {
  case ValueKind::Int: out = double(v.i); return true;
  case ValueKind::BigInt:
    if (!intToDouble(v, out)) out = intIsNegative(v) ? -HUGE_VAL : HUGE_VAL;
    return true;
  case ValueKind::Bool: out = v.b ? 1 : 0; return true;
  case ValueKind::Float: out = v.f; return !intOnly || out == double(int64_t(out));
  case ValueKind::String: {
    llvm::StringRef s = v.str().trim();
    int64_t i;
    if (!s.getAsInteger(10, i)) {
      out = double(i);
      return true;
    }
    if (intOnly) return false;
    return !s.getAsDouble(out);
  }
  default: return false;
  }
}

} // namespace

bool isBase64(llvm::StringRef s) {
  size_t pad = 0;
  for (char c : s) {
    bool alpha = isalnum(static_cast<unsigned char>(c)) || c == '+' || c == '/';
    if (c == '=')
      ++pad;
    else if (!alpha || pad)
      return false;
  }
  if (pad > 2) return false;
  return s.size() % 4 == 0;
}

/// 1 valid, 0 invalid, -1 unsupported type name.
int validateType(llvm::StringRef type, const Value& v, const Value& params, std::string& err) {
  bool isStr = v.kind == ValueKind::String;
  llvm::StringRef s = isStr ? v.str() : llvm::StringRef();
  IpAddr a;
  IpIface i;
  double d;
  if (type == "ipaddress.IPv4Address") return isStr && parseIpAddress(s, IpFamily::V4, a);
  if (type == "ipaddress.IPv6Address") return isStr && parseIpAddress(s, IpFamily::V6, a);
  if (type == "pydantic.IPvAnyAddress" || type == "ipaddress.ip_address")
    return isStr && parseIpAddress(s, IpFamily::Any, a);
  if (type == "ipaddress.IPv4Interface") return isStr && parseIpInterface(s, IpFamily::V4, i);
  if (type == "ipaddress.IPv6Interface") return isStr && parseIpInterface(s, IpFamily::V6, i);
  if (type == "pydantic.IPvAnyInterface" || type == "ipaddress.ip_interface")
    return isStr && parseIpInterface(s, IpFamily::Any, i);
  if (type == "ipaddress.IPv4Network") return isStr && parseIpNetwork(s, IpFamily::V4, i);
  if (type == "ipaddress.IPv6Network") return isStr && parseIpNetwork(s, IpFamily::V6, i);
  if (type == "pydantic.IPvAnyNetwork" || type == "ipaddress.ip_network")
    return isStr && parseIpNetwork(s, IpFamily::Any, i);
  if (type == "pydantic.PositiveInt" || type == "pydantic.types.PositiveInt")
    return numeric(v, d, true) && d > 0;
  if (type == "pydantic.NegativeInt" || type == "pydantic.types.NegativeInt")
    return numeric(v, d, true) && d < 0;
  if (type == "pydantic.PositiveFloat" || type == "pydantic.types.PositiveFloat")
    return numeric(v, d, false) && d > 0;
  if (type == "pydantic.NegativeFloat" || type == "pydantic.types.NegativeFloat")
    return numeric(v, d, false) && d < 0;
  if (type == "pydantic.StrictInt") return v.isInt();
  if (type == "pydantic.StrictStr" || type == "str") return isStr;
  if (type == "uuid.UUID") return isStr && isUuid(s);
  if (type == "datetime.date") return isStr && isDate(s);
  if (type == "datetime.time") return isStr && isTime(s);
  if (type == "datetime.datetime") return isStr && isDateTime(s);
  if (type == "pydantic.EmailStr") return isStr && isEmail(s);
  if (type == "pydantic.NameEmail") return isStr && isNameEmail(s);
  if (type == "pydantic.AnyUrl") return isStr && isUrl(s, 0);
  if (type == "pydantic.AnyHttpUrl") return isStr && isUrl(s, 1);
  if (type == "pydantic.HttpUrl") return isStr && isUrl(s, 2);
  if (type == "pydantic.constr" || type == "pydantic.types.constr") {
    if (!isStr) return 0;
    const Value* re = params.kind == ValueKind::Dict ? params.d->find("regex") : nullptr;
    if (!re && params.kind == ValueKind::Dict) re = params.d->find("pattern");
    if (params.kind == ValueKind::Dict) {
      const Value* mn = params.d->find("min_length");
      const Value* mx = params.d->find("max_length");
      if (mn && mn->kind == ValueKind::Int && int64_t(s.size()) < mn->i) return 0;
      if (mx && mx->kind == ValueKind::Int && int64_t(s.size()) > mx->i) return 0;
    }
    if (re && re->kind == ValueKind::String) {
      RE2::Options ro;
      ro.set_log_errors(false);
      RE2 rx(re2::StringPiece(re->str().data(), re->str().size()), ro);
      if (!rx.ok()) {
        err = "invalid regex " + re->str().str() + ": " + rx.error();
        return -1;
      }
      return RE2::PartialMatch(re2::StringPiece(s.data(), s.size()), rx) ? 1 : 0;
    }
    return 1;
  }
  err = "Unsupported type for validate_type: " + type.str();
  return -1;
}

void registerValidatePlugins(PluginRegistry& r) {
  r.add("std::validate_type", [](PluginContext&, Args a) {
    std::string err;
    int res = validateType(strArg(a, 0), a[1], a.size() > 2 ? a[2] : Value::null(), err);
    if (res < 0) return externalError(err);
    return okBool(res == 1);
  });
  r.add("std::is_base64_encoded", [](PluginContext&, Args a) { return okBool(isBase64(strArg(a, 0))); });
}

} // namespace inm::runtime::plugins
