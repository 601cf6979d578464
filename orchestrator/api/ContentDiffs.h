// Content diffs in diff answers (private to inm_api): for a `hash` attribute (std::File and other file-like
// resources) whose old and new contents the server's file store has, the attribute entry of a dry-run report
// or a desired-state diff gains `diff`, the unified text diff of the two contents (support/TextDiff.h; binary
// and oversized contents as a one-line summary). The hashes stay where they are. Invariant: a content the
// store lacks, or more than 200 of them in one answer, gives a note instead of a diff, never a failed
// request.
#pragma once

#include "service/Service.h"

#include <boost/asio/awaitable.hpp>
#include <nlohmann/json.hpp>

#include <string>

namespace inm::api {

/// `entries`: [{"resource_id", "status", "attributes": {name: {from_value, to_value, …}}}, …]; the names of
/// the two sides in the diff header lines are `fromName` and `toName`.
boost::asio::awaitable<void> addContentDiffs(service::Service& svc, nlohmann::json& entries,
                                             const std::string& fromName, const std::string& toName);

} // namespace inm::api
