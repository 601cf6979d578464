// IPv4/IPv6 address, interface and network parsing and formatting with Python `ipaddress` rules, for
// the network plugins and the ip typedefs of std (via validate_type). Invariant: an address is a
// 128-bit integer plus a family; parsing never throws and rejects what Python rejects on ordinary input
// (leading zeros in IPv4 octets, more than 8 IPv6 groups, host bits set in a strict network).
#pragma once

#include <llvm/ADT/StringRef.h>

#include <cstdint>
#include <string>

namespace inm::runtime::plugins {

using u128 = unsigned __int128;

struct IpAddr {
  bool v6 = false;
  u128 value = 0;
  unsigned bits() const { return v6 ? 128 : 32; }
  u128 maxValue() const { return v6 ? ~u128(0) : u128(0xffffffffu); }
};

struct IpIface {
  IpAddr addr;
  unsigned prefix = 0;
  u128 mask() const;      // netmask as integer
  IpAddr network() const; // address with host bits cleared
};

enum class IpFamily { V4, V6, Any };

bool parseIpv4(llvm::StringRef s, IpAddr& out);
bool parseIpv6(llvm::StringRef s, IpAddr& out);
bool parseIpAddress(llvm::StringRef s, IpFamily fam, IpAddr& out);
/// "addr", "addr/prefix" or (IPv4) "addr/netmask" / "addr/hostmask".
bool parseIpInterface(llvm::StringRef s, IpFamily fam, IpIface& out);
/// Like an interface, but (strict) host bits must be zero.
bool parseIpNetwork(llvm::StringRef s, IpFamily fam, IpIface& out);

std::string formatIp(const IpAddr& a);
u128 prefixMask(unsigned bits, unsigned prefix);

} // namespace inm::runtime::plugins
