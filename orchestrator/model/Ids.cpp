// Parsing and printing of the typed ids of model/Ids.h. The resource id grammar and the `,v=` suffix are
// artifact/ResourceId.h's (parseResourceId, splitVersion, appendVersionSuffix); this file adds the types,
// the uuid form and the orchestrator's error messages. Invariant: parse(x.str()) == x.
#include "model/Ids.h"

#include <llvm/ADT/StringExtras.h>

#include <cctype>

namespace inm::model {

namespace {

llvm::Error fail(const std::string& message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

} // namespace

bool isUuid(std::string_view s) {
  if (s.size() != 36) return false;
  for (size_t i = 0; i < s.size(); ++i) {
    if (i == 8 || i == 13 || i == 18 || i == 23) {
      if (s[i] != '-') return false;
    } else if (!std::isxdigit(static_cast<unsigned char>(s[i]))) {
      return false;
    }
  }
  return true;
}

template <class Tag>
llvm::Expected<UuidId<Tag>> UuidId<Tag>::parse(std::string_view text) {
  if (!isUuid(text))
    return fail(std::string(Tag::what) + " '" + std::string(text) +
                "' is not a uuid (8-4-4-4-12 hex digits)");
  UuidId id;
  id.text_ = llvm::StringRef(text).lower();
  return id;
}
template class UuidId<EnvironmentTag>;
template class UuidId<ActionTag>;

llvm::Expected<VersionNumber> parseVersionNumber(std::string_view text) {
  VersionNumber v;
  if (text.empty() || text.size() > 18 || !llvm::all_of(text, [](char c) { return llvm::isDigit(c); }))
    return fail("version '" + std::string(text) + "' is not a number (1 to 18 decimal digits)");
  llvm::StringRef(text).getAsInteger(10, v.value);
  return v;
}

llvm::Expected<ResourceId> ResourceId::parse(std::string_view text) {
  llvm::Expected<artifact::ResourceId> parts = artifact::parseResourceId(text);
  if (!parts) return parts.takeError();
  if (parts->hasVersion)
    return fail("resource id '" + std::string(text) +
                "' has a version suffix; expected an id without ,v=<version>");
  return ResourceId(std::string(text));
}

artifact::ResourceId ResourceId::parts() const {
  llvm::Expected<artifact::ResourceId> parts = artifact::parseResourceId(text_);
  if (!parts) {
    llvm::consumeError(parts.takeError()); // unreachable: text_ was parsed or printed
    return {};
  }
  return std::move(*parts);
}

llvm::Expected<ResourceVersionId> ResourceVersionId::parse(std::string_view text) {
  std::optional<VersionedText> split = splitResourceVersionId(text);
  if (!split) return fail("resource version id '" + std::string(text) + "' has no ,v=<version> suffix");
  llvm::Expected<artifact::ResourceId> parts = artifact::parseResourceId(split->resourceId);
  if (!parts) return parts.takeError();
  return ResourceVersionId(std::string(text), split->resourceId.size(), split->version);
}

ResourceVersionId::ResourceVersionId(const ResourceId& id, VersionNumber v)
    : text_(resourceVersionId(id.str(), v)), idSize_(id.str().size()), version_(v) {}

std::optional<VersionedText> splitResourceVersionId(std::string_view text) {
  std::optional<artifact::VersionSplit> split = artifact::splitVersion(text);
  if (!split) return std::nullopt;
  return VersionedText{std::string_view(split->id.data(), split->id.size()), VersionNumber{split->version}};
}

std::string_view withoutVersion(std::string_view text) {
  llvm::StringRef id = artifact::stripVersion(text);
  return std::string_view(id.data(), id.size());
}

void appendResourceVersionId(std::string& out, std::string_view resourceId, VersionNumber version) {
  out += resourceId;
  artifact::appendVersionSuffix(out, version.value);
}

std::string resourceVersionId(std::string_view resourceId, VersionNumber version) {
  std::string out;
  out.reserve(resourceId.size() + 24);
  appendResourceVersionId(out, resourceId, version);
  return out;
}

std::string versionSuffix(VersionNumber version) {
  std::string out;
  artifact::appendVersionSuffix(out, version.value);
  return out;
}

std::string sqlResourceVersionId(std::string_view idExpr, std::string_view versionExpr) {
  std::string out(idExpr);
  out += " || '";
  out += artifact::kVersionSeparator;
  out += "' || ";
  out += versionExpr;
  return out;
}

} // namespace inm::model
