// Native std network plugins (std.md §5 "Network"): prefixlength_to_netmask, prefixlen,
// network_address, netmask, ipindex, add_to_ip, ip_address_from_interface. Addresses are parsed and
// printed with Python `ipaddress` rules (IpAddress.h); invalid input is a plugin error naming the value.
#include "IpAddress.h"
#include "PluginUtil.h"

namespace inm::runtime::plugins {

namespace {

PluginResult badValue(llvm::StringRef v, llvm::StringRef what) {
  return externalError("ValueError: '" + v.str() + "' does not appear to be an " + what.str());
}

} // namespace

void registerNetPlugins(PluginRegistry& r) {
  r.add("std::prefixlength_to_netmask", [](PluginContext& ctx, Args a) {
    int64_t p = intArg(a, 0);
    if (p < 0 || p > 32) return externalError("ValueError: " + std::to_string(p) + " is not a valid netmask");
    IpAddr m;
    m.value = prefixMask(32, unsigned(p));
    return okStr(ctx, formatIp(m));
  });
  r.add("std::prefixlen", [](PluginContext&, Args a) {
    IpIface i;
    if (!parseIpInterface(strArg(a, 0), IpFamily::Any, i))
      return badValue(strArg(a, 0), "IPv4 or IPv6 interface");
    return okInt(i.prefix);
  });
  r.add("std::network_address", [](PluginContext& ctx, Args a) {
    IpIface i;
    if (!parseIpInterface(strArg(a, 0), IpFamily::Any, i))
      return badValue(strArg(a, 0), "IPv4 or IPv6 interface");
    return okStr(ctx, formatIp(i.network()));
  });
  r.add("std::netmask", [](PluginContext& ctx, Args a) {
    IpIface i;
    if (!parseIpInterface(strArg(a, 0), IpFamily::Any, i))
      return badValue(strArg(a, 0), "IPv4 or IPv6 interface");
    IpAddr m;
    m.v6 = i.addr.v6;
    m.value = i.mask();
    return okStr(ctx, formatIp(m));
  });
  r.add("std::ipindex", [](PluginContext& ctx, Args a) {
    IpIface n;
    if (!parseIpNetwork(strArg(a, 0), IpFamily::Any, n))
      return badValue(strArg(a, 0), "IPv4 or IPv6 network");
    unsigned hostBits = n.addr.bits() - n.prefix;
    u128 size = hostBits >= 128 ? ~u128(0) : (u128(1) << hostBits);
    int64_t pos = intArg(a, 1);
    u128 off;
    if (pos >= 0) {
      if (u128(pos) >= size) return externalError("IndexError: address out of range");
      off = u128(pos);
    } else {
      u128 back = u128(-(pos + 1)) + 1;
      if (back > size) return externalError("IndexError: address out of range");
      off = size - back;
    }
    IpAddr ip = n.network();
    ip.value += off;
    std::string out = formatIp(ip);
    if (boolArg(a, 2, false)) out += "/" + std::to_string(n.prefix);
    return okStr(ctx, out);
  });
  r.add("std::add_to_ip", [](PluginContext& ctx, Args a) {
    IpIface i;
    if (!parseIpInterface(strArg(a, 0), IpFamily::Any, i))
      return badValue(strArg(a, 0), "IPv4 or IPv6 address");
    int64_t n = intArg(a, 1);
    u128 v = i.addr.value;
    if (n >= 0) {
      if (u128(n) > i.addr.maxValue() - v) return externalError("AddressValueError: result out of range");
      v += u128(n);
    } else {
      if (u128(-n) > v) return externalError("AddressValueError: result out of range");
      v -= u128(-n);
    }
    i.addr.value = v;
    std::string out = formatIp(i.addr);
    if (strArg(a, 0).contains('/')) out += "/" + std::to_string(i.prefix);
    return okStr(ctx, out);
  });
  r.add("std::ip_address_from_interface", [](PluginContext& ctx, Args a) {
    IpIface i;
    if (!parseIpInterface(strArg(a, 0), IpFamily::Any, i))
      return badValue(strArg(a, 0), "IPv4 or IPv6 interface");
    return okStr(ctx, formatIp(i.addr));
  });
}

} // namespace inm::runtime::plugins
