// Parsing and formatting of IP addresses, interfaces and networks (see IpAddress.h) following Python's
// `ipaddress` module: compressed lowercase IPv6 output, strict networks, IPv4 netmask/hostmask prefixes.
#include "IpAddress.h"

#include <llvm/ADT/SmallVector.h>

namespace inm::runtime::plugins {

u128 prefixMask(unsigned bits, unsigned prefix) {
  if (prefix == 0) return 0;
  u128 all = bits == 128 ? ~u128(0) : ((u128(1) << bits) - 1);
  return all & ~((u128(1) << (bits - prefix)) - 1) & all;
}

u128 IpIface::mask() const { return prefixMask(addr.bits(), prefix); }
IpAddr IpIface::network() const {
  IpAddr a = addr;
  a.value &= mask();
  return a;
}

bool parseIpv4(llvm::StringRef s, IpAddr& out) {
  llvm::SmallVector<llvm::StringRef, 4> parts;
  s.split(parts, '.', -1, true);
  if (parts.size() != 4) return false;
  uint32_t v = 0;
  for (llvm::StringRef p : parts) {
    if (p.empty() || p.size() > 3) return false;
    for (char c : p)
      if (c < '0' || c > '9') return false;
    if (p.size() > 1 && p[0] == '0') return false; // Python rejects ambiguous leading zeros
    unsigned octet = 0;
    p.getAsInteger(10, octet);
    if (octet > 255) return false;
    v = (v << 8) | octet;
  }
  out.v6 = false;
  out.value = v;
  return true;
}

bool parseIpv6(llvm::StringRef s, IpAddr& out) {
  size_t pct = s.find('%'); // scope id (Python >= 3.9) is accepted and dropped
  if (pct != llvm::StringRef::npos) {
    if (pct + 1 == s.size()) return false;
    s = s.substr(0, pct);
  }
  if (s.size() < 2) return false;
  llvm::SmallVector<llvm::StringRef, 10> parts;
  s.split(parts, ':', -1, true);
  if (parts.size() < 3 || parts.size() > 9) return false;
  // An embedded IPv4 tail counts as two groups.
  uint32_t tail4 = 0;
  bool hasTail4 = false;
  if (parts.back().contains('.')) {
    IpAddr t;
    if (!parseIpv4(parts.back(), t)) return false;
    tail4 = uint32_t(t.value);
    hasTail4 = true;
    parts.pop_back();
    parts.push_back("0");
    parts.push_back("0");
  }
  // Locate the "::" (an empty part not at the ends, or empty first/last pairs).
  int skip = -1;
  for (size_t i = 1; i + 1 < parts.size(); ++i)
    if (parts[i].empty()) {
      if (skip >= 0) return false;
      skip = int(i);
    }
  size_t lo = 0, hi = parts.size();
  if (skip >= 0) {
    if (parts.front().empty()) {
      if (skip != 1) return false;
      lo = 1;
    }
    if (parts.back().empty()) {
      if (size_t(skip) != parts.size() - 2) return false;
      hi = parts.size() - 1;
    }
  } else {
    if (parts.front().empty() || parts.back().empty()) return false;
  }
  size_t groups = 0;
  for (size_t i = lo; i < hi; ++i)
    if (int(i) != skip) ++groups;
  if (skip >= 0 ? groups > 7 : groups != 8) return false;
  u128 v = 0;
  for (size_t i = lo; i < hi; ++i) {
    if (int(i) == skip) {
      v <<= 16 * (8 - groups);
      continue;
    }
    llvm::StringRef p = parts[i];
    if (p.empty() || p.size() > 4) return false;
    unsigned g = 0;
    for (char c : p)
      if (!isxdigit(static_cast<unsigned char>(c))) return false;
    p.getAsInteger(16, g);
    v = (v << 16) | g;
  }
  if (hasTail4) v = (v & ~u128(0xffffffffu)) | tail4;
  out.v6 = true;
  out.value = v;
  return true;
}

bool parseIpAddress(llvm::StringRef s, IpFamily fam, IpAddr& out) {
  if (fam != IpFamily::V6 && parseIpv4(s, out)) return true;
  if (fam != IpFamily::V4 && parseIpv6(s, out)) return true;
  return false;
}

bool parseIpInterface(llvm::StringRef s, IpFamily fam, IpIface& out) {
  llvm::StringRef addr = s, pre;
  size_t slash = s.find('/');
  if (slash != llvm::StringRef::npos) {
    addr = s.substr(0, slash);
    pre = s.substr(slash + 1);
    if (pre.empty()) return false;
  }
  if (!parseIpAddress(addr, fam, out.addr)) return false;
  unsigned bits = out.addr.bits();
  if (slash == llvm::StringRef::npos) {
    out.prefix = bits;
    return true;
  }
  bool digits = true;
  for (char c : pre)
    if (c < '0' || c > '9') digits = false;
  if (digits) {
    if (pre.size() > 3) return false;
    unsigned p = 0;
    pre.getAsInteger(10, p);
    if (p > bits) return false;
    out.prefix = p;
    return true;
  }
  if (out.addr.v6) return false;
  IpAddr m; // IPv4 netmask or hostmask
  if (!parseIpv4(pre, m)) return false;
  for (unsigned p = 0; p <= 32; ++p) {
    u128 mask = prefixMask(32, p);
    if (m.value == mask || m.value == (~mask & 0xffffffffu)) {
      out.prefix = p;
      return true;
    }
  }
  return false;
}

bool parseIpNetwork(llvm::StringRef s, IpFamily fam, IpIface& out) {
  if (!parseIpInterface(s, fam, out)) return false;
  return (out.addr.value & ~out.mask() & out.addr.maxValue()) == 0;
}

std::string formatIp(const IpAddr& a) {
  if (!a.v6) {
    uint32_t v = uint32_t(a.value);
    return std::to_string(v >> 24) + "." + std::to_string((v >> 16) & 255) + "." +
           std::to_string((v >> 8) & 255) + "." + std::to_string(v & 255);
  }
  unsigned g[8];
  for (int i = 0; i < 8; ++i) g[i] = unsigned((a.value >> (16 * (7 - i))) & 0xffff);
  int bestStart = -1, bestLen = 0;
  for (int i = 0; i < 8;) {
    if (g[i] != 0) {
      ++i;
      continue;
    }
    int j = i;
    while (j < 8 && g[j] == 0) ++j;
    if (j - i > bestLen && j - i >= 2) {
      bestStart = i;
      bestLen = j - i;
    }
    i = j;
  }
  static const char* hex = "0123456789abcdef";
  auto grp = [&](unsigned x) {
    std::string s;
    bool lead = true;
    for (int sh = 12; sh >= 0; sh -= 4) {
      unsigned d = (x >> sh) & 15;
      if (d == 0 && lead && sh) continue;
      lead = false;
      s += hex[d];
    }
    return s;
  };
  std::string out;
  for (int i = 0; i < 8; ++i) {
    if (i == bestStart) {
      out += "::";
      i += bestLen - 1;
      continue;
    }
    if (!out.empty() && out.back() != ':') out += ":";
    out += grp(g[i]);
  }
  return out;
}

} // namespace inm::runtime::plugins
