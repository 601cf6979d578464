// The attribute hash of a resource (orchestrator.md §3.6): md5 hex of the unversioned resource id followed by
// Python's `json.dumps(attributes, sort_keys=True)` text, where attributes exclude id, requires, provides and
// version. The scheduler compares these hashes to decide what changed, so the text must be byte-identical to
// Python's for every JSON value: default separators ", " and ": ", ensure_ascii escaping (\uXXXX, surrogate
// pairs above the BMP), keys sorted by code point, floats as Python's repr.
#pragma once

#include <nlohmann/json.hpp>

#include <string>

namespace inm::artifact {

/// Python's `json.dumps(value, sort_keys=True)` for a JSON value; with indent > 0, `json.dumps(value,
/// indent=indent, sort_keys=True)` (items separated by "," and a newline, nested levels indented).
std::string pythonJsonDumps(const nlohmann::json& value, int indent = 0);

/// md5 hex of `unversionedId` + pythonJsonDumps(attributes without id/requires/provides/version).
std::string attributeHash(const std::string& unversionedId, const nlohmann::json& attributes);

/// The same hash from the text attributeHash would dump: for a caller that already holds
/// pythonJsonDumps(attributes without id/requires/provides/version) and also uses that text.
std::string attributeHashOfDump(const std::string& unversionedId, const std::string& dumped);

} // namespace inm::artifact
