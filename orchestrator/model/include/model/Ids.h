// The orchestrator's typed ids: EnvironmentId and ActionId (uuids), VersionNumber, ResourceId (unversioned,
// built on artifact::ResourceId) and ResourceVersionId (`<resource id>,v=<version>`). Every id is parsed
// from and printed to its wire/database text here and nowhere else: the `,v=` suffix is split and appended
// only through these functions (which use artifact/ResourceId.h's splitVersion/appendVersionSuffix) and
// SQL that forms it in the database uses sqlResourceVersionId. Invariant: parse(x.str()) == x for every id,
// including resource ids whose values hold escaped `\`, `,` and `]`; parse errors quote the text and
// name what is missing. The string_view helpers at the end neither allocate nor validate the resource id
// part (hot paths: put_version and the scheduler handle 100k resources).
#pragma once

#include "artifact/ResourceId.h"

#include <llvm/Support/Error.h>

#include <compare>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace inm::model {

/// Whether `text` is a uuid in its 8-4-4-4-12 hexadecimal form (either case).
bool isUuid(std::string_view text);

/// A uuid id; `Tag` keeps environment and action ids apart. Held lower-case (the database's spelling).
template <class Tag>
class UuidId {
 public:
  /// A uuid in either case; an error naming `what` ("environment id", "action id") and quoting the text.
  static llvm::Expected<UuidId> parse(std::string_view text);
  const std::string& str() const { return text_; }
  friend auto operator<=>(const UuidId&, const UuidId&) = default;

 private:
  std::string text_;
};
struct EnvironmentTag {
  static constexpr const char* what = "environment id";
};
struct ActionTag {
  static constexpr const char* what = "action id";
};
using EnvironmentId = UuidId<EnvironmentTag>;
using ActionId = UuidId<ActionTag>;

/// A configuration model version (positive in a versioned id; 0 never names a stored version).
struct VersionNumber {
  int64_t value = 0;
  friend auto operator<=>(VersionNumber, VersionNumber) = default;
};
/// Decimal digits only (1 to 18 of them); the error quotes the text.
llvm::Expected<VersionNumber> parseVersionNumber(std::string_view text);

/// An unversioned resource id, held as its printed (escaped) text.
class ResourceId {
 public:
  /// A valid id without a version suffix (artifact::parseResourceId's errors; a versioned id is an error
  /// saying so).
  static llvm::Expected<ResourceId> parse(std::string_view text);
  /// The printed form of parsed parts (their version, if any, is dropped).
  static ResourceId of(const artifact::ResourceId& parts) { return ResourceId(parts.str()); }
  const std::string& str() const { return text_; }
  /// The parts, unescaped (parses again; never fails for an id made by parse/of).
  artifact::ResourceId parts() const;
  friend auto operator<=>(const ResourceId&, const ResourceId&) = default;

 private:
  explicit ResourceId(std::string text) : text_(std::move(text)) {}
  std::string text_;
};

/// A resource id with its version, held as its printed text `<id>,v=<n>`.
class ResourceVersionId {
 public:
  /// A valid resource id followed by `,v=<n>`: "resource version id 'x' has no ,v=<version> suffix" without
  /// one, else the id parser's error.
  static llvm::Expected<ResourceVersionId> parse(std::string_view text);
  ResourceVersionId(const ResourceId& id, VersionNumber v);
  const std::string& str() const { return text_; }
  std::string_view resourceId() const { return std::string_view(text_).substr(0, idSize_); }
  VersionNumber version() const { return version_; }
  friend bool operator==(const ResourceVersionId& a, const ResourceVersionId& b) {
    return a.text_ == b.text_;
  }

 private:
  ResourceVersionId(std::string text, size_t idSize, VersionNumber v)
      : text_(std::move(text)), idSize_(idSize), version_(v) {}
  std::string text_;
  size_t idSize_ = 0;
  VersionNumber version_;
};

// --- Hot-path helpers over printed text (no allocation, the resource id part not validated) ---

/// `text` split at a trailing `,v=<n>` after the closing `]`; nullopt without one.
struct VersionedText {
  std::string_view resourceId;
  VersionNumber version;
};
std::optional<VersionedText> splitResourceVersionId(std::string_view text);
/// `text` without its trailing `,v=<n>` (itself when it has none).
std::string_view withoutVersion(std::string_view text);
/// Appends `<resourceId>,v=<version>` to `out`.
void appendResourceVersionId(std::string& out, std::string_view resourceId, VersionNumber version);
/// `<resourceId>,v=<version>` (one allocation).
std::string resourceVersionId(std::string_view resourceId, VersionNumber version);
inline std::string resourceVersionId(std::string_view resourceId, int64_t version) {
  return resourceVersionId(resourceId, VersionNumber{version});
}
/// The text appended to a resource id to version it, `,v=<version>` (for text spliced without parsing).
std::string versionSuffix(VersionNumber version);
/// The SQL expression forming a resource version id in the database from two SQL expressions, e.g.
/// sqlResourceVersionId("r.resource_id", "r.model") == "r.resource_id || ',v=' || r.model".
std::string sqlResourceVersionId(std::string_view idExpr, std::string_view versionExpr);

} // namespace inm::model
