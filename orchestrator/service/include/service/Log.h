// Structured log lines for the orchestrator's processes: `<UTC time> <level> <event> key=value …` on stderr,
// one line per call, values quoted when they hold spaces. Thread-safe (one write per line).
#pragma once

#include <initializer_list>
#include <string>
#include <utility>

namespace inm::service {

/// Writes one log line; `level` is info|warning|error|debug.
void logLine(const char* level, const std::string& event,
             std::initializer_list<std::pair<const char*, std::string>> fields = {});

} // namespace inm::service
