// The spellings of the vocabularies of model/Vocabulary.h, generated from their .def lists (the only place
// the words are written), and their parsers: a linear scan over a handful of literals, cheaper than a map
// for lists this short. Invariant: parseX(spelling(x)) == x (test/unit/ModelIdsTest.cpp checks every
// enumerator).
#include "model/Vocabulary.h"

namespace inm::model {

namespace {

template <class E, size_t N>
std::optional<E> parseIn(const E (&all)[N], std::string_view text) {
  for (E e : all)
    if (spelling(e) == text) return e;
  return std::nullopt;
}

} // namespace

std::string_view spelling(DeployStatus s) {
  switch (s) {
#define INM_DEPLOY_STATUS(E, S)                                                                              \
  case DeployStatus::E:                                                                                      \
    return S;
#include "model/DeployStatus.def"
#undef INM_DEPLOY_STATUS
  }
  return "failed"; // unreachable: every enumerator has a case
}

std::string_view spelling(Change c) {
  switch (c) {
#define INM_CHANGE(E, S)                                                                                     \
  case Change::E:                                                                                            \
    return S;
#include "model/Change.def"
#undef INM_CHANGE
  }
  return "nochange";
}

std::string_view spelling(ActionKind k) {
  switch (k) {
#define INM_ACTION_KIND(E, S)                                                                                \
  case ActionKind::E:                                                                                        \
    return S;
#include "model/ActionKind.def"
#undef INM_ACTION_KIND
  }
  return "other";
}

std::string_view spelling(SchedulerRequestKind k) {
  switch (k) {
#define INM_SCHEDULER_REQUEST(E, S, Payload)                                                                 \
  case SchedulerRequestKind::E:                                                                              \
    return S;
#include "model/SchedulerRequestKind.def"
#undef INM_SCHEDULER_REQUEST
  }
  return "read_version";
}

std::string_view payloadShape(SchedulerRequestKind k) {
  switch (k) {
#define INM_SCHEDULER_REQUEST(E, S, Payload)                                                                 \
  case SchedulerRequestKind::E:                                                                              \
    return Payload;
#include "model/SchedulerRequestKind.def"
#undef INM_SCHEDULER_REQUEST
  }
  return "{}";
}

std::optional<DeployStatus> parseDeployStatus(std::string_view text) {
  return parseIn(kDeployStatuses, text);
}
std::optional<Change> parseChange(std::string_view text) { return parseIn(kChanges, text); }
std::optional<ActionKind> parseActionKind(std::string_view text) { return parseIn(kActionKinds, text); }
std::optional<SchedulerRequestKind> parseSchedulerRequestKind(std::string_view text) {
  return parseIn(kSchedulerRequestKinds, text);
}

const std::vector<std::string>& referenceStatusSpellings() {
  static const std::vector<std::string> all = [] {
    std::vector<std::string> out;
    for (DeployStatus s : kDeployStatuses)
      if (isReferenceStatus(s)) out.emplace_back(spelling(s));
    return out;
  }();
  return all;
}

DependencyGate dependencyGate(std::string_view status) {
  std::optional<DeployStatus> s = parseDeployStatus(status);
  if (!s) return DependencyGate::Failed;
  switch (*s) {
  case DeployStatus::Deployed: return DependencyGate::Ready;
  case DeployStatus::Undefined:
  case DeployStatus::SkippedForUndefined:
  case DeployStatus::Dry: return DependencyGate::Undefined;
  case DeployStatus::Available:
  case DeployStatus::Deploying: return DependencyGate::Stale;
  default: return DependencyGate::Failed;
  }
}

} // namespace inm::model
