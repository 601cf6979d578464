// The free helpers of the work protocol (include/scheduler/Work.h): the dependency gate an executor applies
// before running a handler, and the log-line shape shared by the scheduler's and the executors' messages.
// Pure functions over plain values; no I/O and no scheduler state.
#include "scheduler/Work.h"

#include <cctype>
#include <chrono>
#include <cstdio>
#include <ctime>

namespace inm::scheduler {

std::optional<std::string> gateDependencies(const std::vector<std::pair<std::string, std::string>>& deps,
                                            std::string* why) {
  for (const auto& [id, state] : deps) {
    model::DependencyGate gate = model::dependencyGate(state);
    if (gate == model::DependencyGate::Ready) continue;
    if (why) {
      if (gate == model::DependencyGate::Undefined)
        *why = "Resource skipped because a dependency is undefined or skipped for undefined: " + id;
      else if (gate == model::DependencyGate::Stale)
        *why = "Resource skipped because a dependency has a newer intent that is not deployed yet: " + id;
      else
        *why = "Resource skipped because of failed dependencies: " + id + " is " + state;
    }
    return std::string(model::spelling(model::DeployStatus::SkippedForDependency));
  }
  return std::nullopt;
}

nlohmann::json allMessages(const WorkResult& r) {
  nlohmann::json out = nlohmann::json::array();
  if (!r.messagesText.empty()) {
    nlohmann::json lines = nlohmann::json::parse(r.messagesText, nullptr, false);
    if (lines.is_array()) out = std::move(lines);
  }
  if (r.messages.is_array())
    for (const auto& m : r.messages) out.push_back(m);
  return out;
}

void appendLine(std::string& arrayText, const nlohmann::json& line) {
  size_t end = arrayText.find_last_not_of(" \t\n\r");
  size_t open = arrayText.find_first_not_of(" \t\n\r");
  bool empty = end == std::string::npos || arrayText[end] != ']' ||
               arrayText.find_first_not_of(" \t\n\r", open + 1) == end;
  if (empty) {
    arrayText = "[" + line.dump() + "]";
    return;
  }
  arrayText.resize(end); // drop the closing bracket (and whatever space follows it)
  arrayText += ',';
  arrayText += line.dump();
  arrayText += ']';
}

std::string lastMessageText(const std::string& arrayText) {
  size_t key = arrayText.rfind("\"msg\":");
  if (key == std::string::npos) return {};
  size_t i = key + 6;
  while (i < arrayText.size() && arrayText[i] == ' ') ++i;
  if (i >= arrayText.size() || arrayText[i] != '"') return {};
  std::string out;
  for (++i; i < arrayText.size() && arrayText[i] != '"'; ++i) {
    if (arrayText[i] == '\\') return out; // an escape: the prefix read so far is enough for our checks
    out += arrayText[i];
  }
  return out;
}

nlohmann::json logLine(const std::string& level, const std::string& msg, nlohmann::json kwargs) {
  auto now = std::chrono::system_clock::now();
  auto t = std::chrono::system_clock::to_time_t(now);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[40];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S", &tm);
  auto us = std::chrono::duration_cast<std::chrono::microseconds>(now.time_since_epoch()).count() % 1000000;
  char ts[64];
  std::snprintf(ts, sizeof ts, "%s.%06lld+00:00", buf, static_cast<long long>(us));
  std::string upper = level;
  for (char& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return {{"level", upper},
          {"msg", msg},
          {"args", nlohmann::json::array()},
          {"kwargs", std::move(kwargs)},
          {"timestamp", ts}};
}
} // namespace inm::scheduler
