// The scheduler <-> executor protocol (docs/deploy.md, "Executor protocol"): length-prefixed JSON frames on
// the executor's stdin/stdout. A frame is a 4-byte big-endian body length followed by that many bytes of
// UTF-8 JSON (one object with a "type"). Version kProtocolVersion is exchanged in the first frame each way
// (`hello`). This header holds the frame codec and the request/result records both sides share; invariant:
// decode(encode(x)) == x for every record, and a frame longer than kMaxFrameBytes is a protocol error.
#pragma once

#include "executor/HandlerContext.h"

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace inm::executor {

/// Bumped on any incompatible change to frames or records.
inline constexpr int kProtocolVersion = 1;
/// Upper bound of one frame body (a batch of resources with their attributes).
inline constexpr uint32_t kMaxFrameBytes = 256u << 20;

/// The bytes of one frame carrying `message`.
std::string encodeFrame(const Json& message);
/// The bytes of one frame whose body is `body`, already serialised JSON.
std::string encodeFrameBody(const std::string& body);

/// Incremental frame decoder: feed bytes as they arrive, take complete messages out.
class FrameDecoder {
 public:
  void feed(const char* data, size_t size) { buffer_.append(data, size); }
  /// The next complete message, nullopt when more bytes are needed. Throws std::runtime_error on an oversized
  /// frame or a body that is not a JSON object (the stream cannot be resynchronised after that). With
  /// `logsText`, a top-level "logs" array is not decoded into a tree: its text (validated JSON) goes into
  /// *logsText and the message holds "logs": [] instead (result frames: the scheduler stores log lines as
  /// received).
  std::optional<Json> next(std::string* logsText = nullptr);
  /// The body of the next complete frame, undecoded, nullopt when more bytes are needed (valid until the next
  /// call of feed, next or nextBody). Throws std::runtime_error on an oversized frame.
  std::optional<std::string_view> nextBody();

 private:
  std::string buffer_;
  size_t offset_ = 0;
};

/// A frame body as `FrameDecoder::next` decodes it (same `logsText` handling and errors).
Json decodeFrameBody(std::string_view body, std::string* logsText = nullptr);

struct ActionResult;
/// The fast path for the frame the scheduler receives most, one per resource: a `result` frame of the shape
/// ActionResult::toJson writes (a flat object of exactly its keys; action_id, id, status and change printable
/// ASCII without escapes). Reads it without building a JSON tree: "logs" is validated and kept as text in
/// `logsText`, "changes" and "facts" are parsed only when not `{}`. False for anything else (another type, an
/// unknown or repeated key, an escape, non-ASCII in those fields, invalid JSON): the caller then decodes the
/// body with decodeFrameBody, so the fast path never accepts what the general one would reject.
bool decodeResultFrame(std::string_view body, ActionResult& out);

/// One resource action asked of an executor (an element of a `deploy` frame's "requests").
struct DeployRequest {
  std::string actionId;   ///< uuid of the action log row
  std::string resourceId; ///< versioned id
  Json attributes = Json::object();
  /// When set, the attributes as the text of a JSON object (the scheduler's stored copy): sent verbatim as
  /// "attributes" instead of `attributes`, so the sender never parses or copies them. Decoding always fills
  /// `attributes`.
  std::shared_ptr<const std::string> attributesText;
  std::string reason;                              ///< "Start run because <reason>"
  std::map<std::string, std::string> dependencies; ///< unversioned id -> state (§5.2)
  bool dependencyChanged = false;                  ///< a dependency changed since the last success (reload)
  bool dryRun = false;

  Json toJson() const;
  /// Appends the serialised request (toJson's object, with `attributesText` spliced in when set) to `out`.
  void appendJson(std::string& out) const;
  /// Throws std::runtime_error naming the missing/ill-typed field.
  static DeployRequest fromJson(const Json& j);
  /// Same, moving the attributes out of `j` (large batches are not copied).
  static DeployRequest fromJson(Json&& j);
};

/// The outcome of one action (a `result` frame).
struct ActionResult {
  std::string actionId;
  std::string resourceId;
  std::string status; ///< a ResourceState name, or `unavailable` (model/DeployStatus.def)
  std::string change{model::spelling(model::Change::NoChange)};
  Json changes = Json::object(); ///< {attr: {current, desired}}
  Json logs = Json::array();     ///< LogLine::toJson() objects
  /// When non-empty, more log lines (before those of `logs`) as the text of a JSON array, as received in the
  /// frame (FrameDecoder::next with logsText): never parsed on the scheduler's side.
  std::string logsText;
  Json facts = Json::object(); ///< {name: {value, expires}}

  /// The `result` frame; its "logs" are `logsText`'s lines, then `logs`.
  Json toJson() const;
  static ActionResult fromJson(const Json& j);
  /// An `unavailable` result with one ERROR line carrying `message` (executor died, no handler, …).
  static ActionResult unavailable(const std::string& actionId, const std::string& resourceId,
                                  const std::string& message);
};

/// Standard base64 with padding (file contents travel base64-encoded; JSON strings must be UTF-8).
std::string base64Encode(const std::string& bytes);
/// Decodes standard base64; throws std::runtime_error on a character outside the alphabet.
std::string base64Decode(const std::string& text);

} // namespace inm::executor
