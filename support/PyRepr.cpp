// Python renderings (support/PyRepr.h). Invariant: pyStrRepr picks the quote character as CPython does
// (single quotes unless the text holds a single quote and no double quote).
#include "support/PyRepr.h"

#include <fmt/format.h>

#include <cmath>

namespace inm {

std::string pyStrRepr(llvm::StringRef s) {
  bool hasSingle = s.contains('\'');
  bool hasDouble = s.contains('"');
  char q = (hasSingle && !hasDouble) ? '"' : '\'';
  std::string out(1, q);
  for (char c : s) {
    if (c == q || c == '\\') {
      out += '\\';
      out += c;
    } else if (c == '\n')
      out += "\\n";
    else if (c == '\t')
      out += "\\t";
    else if (c == '\r')
      out += "\\r";
    else
      out += c;
  }
  out += q;
  return out;
}

std::string pyFloatRepr(double f) {
  if (std::isnan(f)) return "nan";
  if (std::isinf(f)) return f > 0 ? "inf" : "-inf";
  std::string s = fmt::format("{}", f); // shortest round-trip, as Python; 1e+16 as Python writes it
  if (s.find_first_of(".eE") == std::string::npos) s += ".0";
  return s;
}

} // namespace inm
