// The orchestrator's closed vocabularies as enums: deploy status, change, action kind and scheduler request
// kind, each listed once in a .def file (DeployStatus.def, Change.def, ActionKind.def,
// SchedulerRequestKind.def) with its wire/database spelling. Writers print with `spelling(x)`, readers parse
// with `parseX(text)`; no other code spells these words. Invariant: parseX(spelling(x)) == x for every
// enumerator, and every spelling is distinct within its list. Plain values, no I/O.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace inm::model {

enum class DeployStatus : uint8_t {
#define INM_DEPLOY_STATUS(E, S) E,
#include "model/DeployStatus.def"
#undef INM_DEPLOY_STATUS
};

enum class Change : uint8_t {
#define INM_CHANGE(E, S) E,
#include "model/Change.def"
#undef INM_CHANGE
};

enum class ActionKind : uint8_t {
#define INM_ACTION_KIND(E, S) E,
#include "model/ActionKind.def"
#undef INM_ACTION_KIND
};

enum class SchedulerRequestKind : uint8_t {
#define INM_SCHEDULER_REQUEST(E, S, Payload) E,
#include "model/SchedulerRequestKind.def"
#undef INM_SCHEDULER_REQUEST
};

/// The wire/database spelling (a string literal: the view's data is NUL-terminated and static).
std::string_view spelling(DeployStatus s);
std::string_view spelling(Change c);
std::string_view spelling(ActionKind k);
std::string_view spelling(SchedulerRequestKind k);

/// The enumerator spelled `text` exactly (case-sensitive); nullopt for anything else.
std::optional<DeployStatus> parseDeployStatus(std::string_view text);
std::optional<Change> parseChange(std::string_view text);
std::optional<ActionKind> parseActionKind(std::string_view text);
std::optional<SchedulerRequestKind> parseSchedulerRequestKind(std::string_view text);

/// What a scheduler request's payload holds (SchedulerRequestKind.def), for error messages.
std::string_view payloadShape(SchedulerRequestKind k);

/// Whether `s` is one of the reference's ResourceState values (all but the handler-only
/// SkippedForDependency).
inline bool isReferenceStatus(DeployStatus s) { return s != DeployStatus::SkippedForDependency; }

/// The spellings of a list, in .def order (filter validation, messages).
template <class E, size_t N>
std::vector<std::string> spellings(const E (&all)[N]) {
  std::vector<std::string> out;
  out.reserve(N);
  for (E e : all) out.emplace_back(spelling(e));
  return out;
}
/// The reference's ResourceState spellings (kDeployStatuses without SkippedForDependency), in its order.
const std::vector<std::string>& referenceStatusSpellings();

/// How a direct dependency's status gates a deploy (the handler framework's rule, orchestrator.md §6.5):
/// `deployed` lets it run; `undefined`, `skipped_for_undefined` and `dry` are Undefined; `available` and
/// `deploying` (a newer intent not deployed yet) are Stale; anything else, unknown text included, is Failed.
enum class DependencyGate : uint8_t { Ready, Undefined, Stale, Failed };
DependencyGate dependencyGate(std::string_view status);

/// Whether `text` is the spelling of `s` (for JSON and database text read without parsing).
inline bool is(std::string_view text, DeployStatus s) { return text == spelling(s); }
inline bool is(std::string_view text, Change c) { return text == spelling(c); }

/// Every enumerator of a list, in .def order.
inline constexpr DeployStatus kDeployStatuses[] = {
#define INM_DEPLOY_STATUS(E, S) DeployStatus::E,
#include "model/DeployStatus.def"
#undef INM_DEPLOY_STATUS
};
inline constexpr Change kChanges[] = {
#define INM_CHANGE(E, S) Change::E,
#include "model/Change.def"
#undef INM_CHANGE
};
inline constexpr ActionKind kActionKinds[] = {
#define INM_ACTION_KIND(E, S) ActionKind::E,
#include "model/ActionKind.def"
#undef INM_ACTION_KIND
};
inline constexpr SchedulerRequestKind kSchedulerRequestKinds[] = {
#define INM_SCHEDULER_REQUEST(E, S, Payload) SchedulerRequestKind::E,
#include "model/SchedulerRequestKind.def"
#undef INM_SCHEDULER_REQUEST
};

} // namespace inm::model
