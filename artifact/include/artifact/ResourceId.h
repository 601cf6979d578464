// Resource ids: `<type>[<agent>,<attribute>=<value>]`, versioned `…],v=<n>`. Printed by the exporter into
// the artifact, parsed again by the orchestrator (next round), so the pair must round-trip for any text.
// Escaping (docs/artifact.md §Resource ids): a backslash precedes `\` and `]` in the value, `\` `,` `]` in
// the agent, and `\` `,` `=` `]` in the attribute; nothing else changes, so every id without those
// characters is byte-identical to the reference's. Invariant: parse(print(id)) == id for every id whose
// type is a valid entity name (`ns::Name`, at least one `::`, no `[`).
#pragma once

#include <llvm/ADT/StringRef.h>
#include <llvm/Support/Error.h>

#include <cstdint>
#include <optional>
#include <string>

namespace inm::artifact {

/// The parts of a resource id, unescaped.
struct ResourceId {
  std::string type;      ///< fully qualified entity name of the registration, e.g. "std::File"
  std::string agent;     ///< value at the agent path, e.g. "web1"
  std::string attribute; ///< id attribute name, e.g. "path"
  std::string value;     ///< id attribute value as text, e.g. "/etc/motd"
  int64_t version = 0;   ///< ",v=N"; 0 when absent (= unversioned)
  bool hasVersion = false;

  /// The unversioned id `type[agent,attribute=value]` with escaping applied.
  std::string str() const;
  /// The id with `,v=<version>` appended.
  std::string versioned(int64_t v) const;
  /// str() or versioned(version), whichever this id carries.
  std::string print() const { return hasVersion ? versioned(version) : str(); }

  friend bool operator==(const ResourceId&, const ResourceId&) = default;
};

/// Parses a printed id (versioned or not). Errors name the problem and the offending text.
llvm::Expected<ResourceId> parseResourceId(llvm::StringRef text);

/// Appends `text` escaped for the given id part to `out`.
enum class IdPart : uint8_t { Agent, Attribute, Value };
void appendEscaped(std::string& out, llvm::StringRef text, IdPart part);

/// The separator between a resource id and its version, as the wire and the database spell it. Every
/// other piece of code builds and splits versioned ids through the functions below (or, in the
/// orchestrator, model/Ids.h, which is built on them); SQL that forms them in the database uses this text.
inline constexpr llvm::StringLiteral kVersionSeparator = ",v=";

/// Strips a trailing `,v=N` from a printed id (no other validation); used to key state by unversioned id.
llvm::StringRef stripVersion(llvm::StringRef printedId);

/// A printed id split at its version suffix: `id` is the unversioned text (not validated) and `version`
/// the number after `,v=`.
struct VersionSplit {
  llvm::StringRef id;
  int64_t version = 0;
};
/// Splits `printedId` at a trailing `,v=<1 to 18 digits>` after the closing (unescaped) `]`, without copying;
/// nullopt when there is no such suffix. stripVersion(x) == splitVersion(x)->id whenever this has a value.
std::optional<VersionSplit> splitVersion(llvm::StringRef printedId);

/// Appends `,v=<version>` to `out` (a printed unversioned id).
void appendVersionSuffix(std::string& out, int64_t version);

} // namespace inm::artifact
