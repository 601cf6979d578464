// PEP 440 versions and version specifiers for module requirements (projectmgr library, used by the resolver
// in Install.cpp, by the compile-time check and by the `project`/`module` verbs). Covers what module tags and
// `requires:` entries use: epochs, release numbers, a/b/rc pre-releases, post and dev releases, local labels,
// and the operators ==, !=, <, <=, >, >=, ~=, === with `==X.*` prefix matches. Invariant: parse functions
// never throw; an unparsable text comes back as std::nullopt or an error string naming the text.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace inm::projectmgr {

/// A parsed PEP 440 version. Ordering and equality follow PEP 440 (1.0 == 1.0.0, 1.0rc1 < 1.0 < 1.0.post1).
struct Version {
  int epoch = 0;
  std::vector<long> release; ///< at least one number
  int preKind = -1;          ///< -1 none, 0 a, 1 b, 2 rc
  long preNum = 0;
  long post = -1;    ///< -1 none
  long dev = -1;     ///< -1 none
  std::string local; ///< "" none
  std::string text;  ///< as written (a tag such as "v1.2.0" keeps its v)

  bool isPrerelease() const { return preKind >= 0 || dev >= 0; }
  /// The normalised form: "1.2.0rc1", "1!2.0.post3.dev1+abc".
  std::string str() const;
  /// The same version without pre/post/dev/local parts.
  Version base() const;
};

std::optional<Version> parseVersion(const std::string& text);
/// <0, 0, >0 as PEP 440 orders a and b (local labels included).
int compare(const Version& a, const Version& b);
inline bool operator<(const Version& a, const Version& b) { return compare(a, b) < 0; }
inline bool operator==(const Version& a, const Version& b) { return compare(a, b) == 0; }

/// One clause such as `>=1.2` or `==2.*`.
struct Specifier {
  std::string op;      ///< "==", "!=", "<", "<=", ">", ">=", "~=", "==="
  std::string text;    ///< the version text after the operator
  Version version;     ///< parsed `text` without a trailing ".*"
  bool prefix = false; ///< `==X.*` / `!=X.*`
  bool contains(const Version& v) const;
  std::string str() const { return op + text; }
};

/// `name`, `name>=1.0,<2.0`, `name ~= 1.2`: a module name and the clauses that must all hold.
struct Requirement {
  std::string name;
  std::vector<Specifier> specs;
  bool contains(const Version& v) const;
  /// "name>=1.0,<2.0" (just "name" without clauses).
  std::string str() const;
  std::string constraintStr() const; ///< ">=1.0,<2.0" or "" (any)
};

/// Parses a requirement; on error returns std::nullopt and sets `error` to a message naming the text.
std::optional<Requirement> parseRequirement(const std::string& text, std::string& error);

} // namespace inm::projectmgr
