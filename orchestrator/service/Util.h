// Private helpers of service/: uuids, base64, the pool-running of store calls into Results.
#pragma once

#include "model/Ids.h"

#include <string>

namespace inm::service {

/// A random version-4 uuid in canonical lower-case text.
std::string newUuid();
/// True for canonical uuid text (any case): model::isUuid, for the json values callers pass.
inline bool isUuid(const std::string& s) { return model::isUuid(s); }
/// Lower-case canonical form of a uuid.
std::string lowerUuid(std::string s);
/// Standard base64 (padding accepted, whitespace ignored); false on invalid text.
bool decodeBase64(const std::string& in, std::string& out);
std::string encodeBase64(const std::string& in);

} // namespace inm::service
