// Agent URI parsing (see model/AgentUri.h). The accepted characters are deliberately narrow (host names, IPv4
// and bracketed IPv6 addresses, POSIX user names, URL-safe option values) so a URI can never smuggle an
// option into the ssh command line built from it.
#include "model/AgentUri.h"

#include <cctype>

namespace inm::model {

namespace {

llvm::Error bad(const std::string& text, const std::string& why) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), "agent uri '%s' is not valid: %s",
                                 text.c_str(), why.c_str());
}

bool hostChars(const std::string& s) {
  if (s.empty() || s[0] == '-' || s[0] == '.') return false;
  for (char c : s)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '.' && c != '_') return false;
  return true;
}

bool userChars(const std::string& s) {
  if (s.empty() || s[0] == '-') return false;
  for (char c : s)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '.' && c != '_') return false;
  return true;
}

/// %XX decoding of a query component; false on a broken escape.
bool percentDecode(const std::string& in, std::string& out) {
  out.clear();
  for (size_t i = 0; i < in.size(); ++i) {
    if (in[i] == '+') {
      out += ' ';
    } else if (in[i] == '%') {
      if (i + 2 >= in.size() || !std::isxdigit(static_cast<unsigned char>(in[i + 1])) ||
          !std::isxdigit(static_cast<unsigned char>(in[i + 2])))
        return false;
      out += static_cast<char>(std::stoi(in.substr(i + 1, 2), nullptr, 16));
      i += 2;
    } else {
      out += in[i];
    }
  }
  return true;
}

} // namespace

std::string AgentUri::target() const {
  std::string t = user.empty() ? host : user + "@" + host;
  return t + ":" + std::to_string(port);
}

std::string AgentUri::str() const {
  if (local()) return "local:";
  std::string host_ = host.find(':') != std::string::npos ? "[" + host + "]" : host;
  std::string s = "ssh://" + (user.empty() ? "" : user + "@") + host_ + ":" + std::to_string(port);
  char sep = '?';
  for (const auto& [k, v] : options) {
    s += sep + k + "=" + v;
    sep = '&';
  }
  return s;
}

llvm::Expected<AgentUri> parseAgentUri(const std::string& text) {
  AgentUri uri;
  if (text.empty() || text == "local:" || text == "localhost" || text == "local://" || text == "local")
    return uri;
  std::string rest;
  if (text.rfind("ssh://", 0) == 0) {
    rest = text.substr(6);
  } else if (text.find(':') == std::string::npos && text.find('/') == std::string::npos) {
    rest = text; // a bare host name (reference behaviour)
  } else {
    size_t colon = text.find(':');
    return bad(text, "unknown scheme '" + text.substr(0, colon) + "' (expected local: or ssh://)");
  }
  uri.scheme = AgentUri::Scheme::Ssh;
  std::string query;
  if (size_t q = rest.find('?'); q != std::string::npos) {
    query = rest.substr(q + 1);
    rest = rest.substr(0, q);
  }
  if (!rest.empty() && rest.back() == '/') rest.pop_back();
  if (rest.find('/') != std::string::npos) return bad(text, "a path is not allowed after the host");
  if (size_t at = rest.rfind('@'); at != std::string::npos) {
    uri.user = rest.substr(0, at);
    rest = rest.substr(at + 1);
    if (!userChars(uri.user)) return bad(text, "'" + uri.user + "' is not a user name");
  }
  std::string port;
  if (!rest.empty() && rest[0] == '[') {
    size_t close = rest.find(']');
    if (close == std::string::npos) return bad(text, "unterminated '[' in the host");
    uri.host = rest.substr(1, close - 1);
    for (char c : uri.host)
      if (!std::isxdigit(static_cast<unsigned char>(c)) && c != ':' && c != '.')
        return bad(text, "'" + uri.host + "' is not an IPv6 address");
    rest = rest.substr(close + 1);
    if (!rest.empty()) {
      if (rest[0] != ':') return bad(text, "unexpected '" + rest + "' after the host");
      port = rest.substr(1);
      if (port.empty()) return bad(text, "the port is empty");
    }
  } else {
    if (size_t colon = rest.find(':'); colon != std::string::npos) {
      port = rest.substr(colon + 1);
      rest = rest.substr(0, colon);
      if (port.empty()) return bad(text, "the port is empty");
    }
    uri.host = rest;
    if (uri.host.empty()) return bad(text, "the host is missing");
    if (!hostChars(uri.host)) return bad(text, "'" + uri.host + "' is not a host name or address");
  }
  if (uri.host.empty()) return bad(text, "the host is missing");
  if (!port.empty()) {
    if (port.size() > 5) return bad(text, "port '" + port + "' is not a number between 1 and 65535");
    for (char c : port)
      if (!std::isdigit(static_cast<unsigned char>(c)))
        return bad(text, "port '" + port + "' is not a number between 1 and 65535");
    uri.port = std::stoi(port);
    if (uri.port < 1 || uri.port > 65535)
      return bad(text, "port '" + port + "' is not a number between 1 and 65535");
  }
  size_t start = 0;
  while (start < query.size()) {
    size_t amp = query.find('&', start);
    std::string pair = query.substr(start, amp == std::string::npos ? std::string::npos : amp - start);
    start = amp == std::string::npos ? query.size() : amp + 1;
    if (pair.empty()) continue;
    size_t eq = pair.find('=');
    std::string key, value;
    if (!percentDecode(pair.substr(0, eq), key) ||
        !percentDecode(eq == std::string::npos ? "" : pair.substr(eq + 1), value))
      return bad(text, "broken %-escape in option '" + pair + "'");
    if (key.empty()) return bad(text, "an option has no name ('" + pair + "')");
    if (eq == std::string::npos)
      return bad(text, "option '" + key + "' has no value (expected " + key + "=…)");
    if (key == "run_as" && !userChars(value)) return bad(text, "run_as '" + value + "' is not a user name");
    uri.options[key] = value;
  }
  return uri;
}

} // namespace inm::model
